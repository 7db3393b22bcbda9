"""Host side of the Python harness: build the ``/run_tests`` request around :mod:`reward.harness.runner`.

The runner is sent as ``main.py`` (the program the sandbox runs); the candidate is ``solution.py``
(in ``files``); each case's stdin is ``<nonce>\\n<task JSON>`` (see the runner's docstring), so the
solution never sees the tests or the nonce on disk.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from sandbox.models import RunTestsRequest

#: Source of the in-sandbox runner (a module of this package, sent as text).
RUNNER_SOURCE = (Path(__file__).resolve().parent / "runner.py").read_text(encoding="utf-8")


def runner_request(source: str, tasks: list[dict[str, Any]], nonce: str, *, run_timeout: float,
                   memory_limit_MB: int, stop_on_first_failure: bool = False,
                   process: bool = False) -> RunTestsRequest:
    """One ``/run_tests`` request that runs ``tasks`` (one per case) against ``source``.

    Args:
        source: the Python module under test (the candidate, or a checker program), UTF-8 text.
        tasks: runner task objects (``{"mode": ..., ...}``), one per case, JSON-serialisable.
        nonce: the completion marker for this run (random, never shown to the solution on disk).
        run_timeout: seconds per case; memory_limit_MB: MiB per case.
        process: run the tests and the solution in two processes (``main.py --process``).

    Raises:
        TypeError: a task is not JSON-serialisable (a test-data problem for the caller to report).
    """
    return RunTestsRequest(
        code=RUNNER_SOURCE, language="python", run_timeout=run_timeout, memory_limit_MB=memory_limit_MB,
        files={"solution.py": base64.b64encode(source.encode("utf-8")).decode()},
        cases=[{"stdin": f"{nonce}\n{json.dumps(task)}"} for task in tasks],
        stop_on_first_failure=stop_on_first_failure, args=["--process"] if process else [],
    )
