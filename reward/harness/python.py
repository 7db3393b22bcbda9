"""Host side of the Python harness: build the ``/run_tests`` request around :mod:`judgebox.reward.harness.runner`.

The program the sandbox runs (``main.py``) is :data:`STUB`: it runs the runner, sent beside it as
``.judgebox/runner.py`` and, compiled by this host, as ``.judgebox/runner.<magic>.bin`` (zlib of
``marshal``; ``<magic>`` is this interpreter's bytecode magic number in hex). A sandbox interpreter
with the same magic (the embedded sandbox's, usually) loads the code (~0.3 ms) instead of compiling
the 700-line runner again for every run (~7 ms of CPU); any other one finds no file of its own
magic and compiles the source. The candidate is ``solution.py`` (in ``files``); each case's stdin is
``<nonce>\\n<task JSON>`` (see the runner's docstring), so the solution never sees the tests or the
nonce on disk.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import marshal
import zlib
from pathlib import Path
from typing import Any, Sequence

from judgebox.sandbox.models import RunTestsRequest

#: Source of the in-sandbox runner (a module of this package, sent as text).
RUNNER_SOURCE = (Path(__file__).resolve().parent / "runner.py").read_text(encoding="utf-8")
RUNNER_FILE = ".judgebox/runner.py"  # a hidden folder: the working folder lists main.py, solution.py
#: The runner's code object compiled here, for a sandbox interpreter of the same bytecode magic.
RUNNER_CODE_FILE = f".judgebox/runner.{importlib.util.MAGIC_NUMBER.hex()}.bin"

#: ``main.py``: load the runner's code (precompiled when this interpreter's magic matches the
#: host's, else compiled from the source) and run it as this program (``__name__ == "__main__"``).
STUB = f"""# judgebox test runner: {RUNNER_FILE} (see reward/harness/python.py)
import sys


def _judgebox_runner():
    magic = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", b"")
    try:
        import marshal
        import zlib
        with open(".judgebox/runner.%s.bin" % magic.hex(), "rb") as f:
            return marshal.loads(zlib.decompress(f.read()))
    except Exception:  # no file of this magic (another interpreter), no zlib: the source
        with open({RUNNER_FILE!r}, "rb") as f:
            return compile(f.read(), {RUNNER_FILE!r}, "exec", dont_inherit=True)


exec(_judgebox_runner())
"""

#: What the runner imports on every run (its module level, ``collections`` and ``ctypes`` for the
#: process split): a sandbox that supports ``forkserver_preload`` forks it with them imported
#: (judgebox: ~15 ms less CPU per run); ``unittest`` is added for unittest tasks and in-process runs.
RUNNER_PRELOAD = ("ast", "collections", "ctypes", "json", "sysconfig", "time", "traceback", "types")

_RUNNER_FILES = {
    RUNNER_FILE: base64.b64encode(RUNNER_SOURCE.encode("utf-8")).decode(),
    RUNNER_CODE_FILE: base64.b64encode(zlib.compress(marshal.dumps(
        compile(RUNNER_SOURCE, RUNNER_FILE, "exec", dont_inherit=True)), 6)).decode(),
}


def runner_request(source: str, tasks: list[dict[str, Any]], nonce: str, *, run_timeout: float,
                   memory_limit_MB: int, stop_on_first_failure: bool = False,
                   process: bool = False, preload: Sequence[str] = ()) -> RunTestsRequest:
    """One ``/run_tests`` request that runs ``tasks`` (one per case) against ``source``.

    Args:
        source: the Python module under test (the candidate, or a checker program), UTF-8 text.
        tasks: runner task objects (``{"mode": ..., ...}``), one per case, JSON-serialisable.
        nonce: the completion marker for this run (random, never shown to the solution on disk).
        run_timeout: seconds per case; memory_limit_MB: MiB per case.
        process: run the tests and the solution in two processes (``main.py --process``).
        preload: standard-library modules ``source`` imports (its prelude's), preloaded with the
            runner's own (:data:`RUNNER_PRELOAD`).

    Raises:
        TypeError: a task is not JSON-serialisable (a test-data problem for the caller to report).
    """
    return RunTestsRequest(
        code=STUB, language="python", run_timeout=run_timeout, memory_limit_MB=memory_limit_MB,
        files={**_RUNNER_FILES, "solution.py": base64.b64encode(source.encode("utf-8")).decode()},
        cases=[{"stdin": f"{nonce}\n{json.dumps(task)}"} for task in tasks],
        stop_on_first_failure=stop_on_first_failure, args=["--process"] if process else [],
        # the in-process runner (main()) imports unittest on every run, the split one for unittest tasks
        forkserver_preload=sorted({*RUNNER_PRELOAD, *preload, *(["unittest"] if not process or any(
            t.get("mode") == "unittest" for t in tasks) else [])}),
    )
