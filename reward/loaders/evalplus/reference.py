"""The canonical solution's outputs on a task's inputs: evalplus computes the expected outputs by
running ``prompt + canonical_solution`` (``evaluate.py`` ``get_groundtruth``, ``trusted_exec``) and
caches them; judgebox does the same, in the sandbox, once per task.

The first load of a task runs :func:`~judgebox.reward.loaders.evalplus.programs.reference_program` in
the sandbox (the process's default client: embedded, or ``JUDGEBOX_SANDBOX_URL``), at most
:data:`REFERENCE_TIMEOUT` seconds and :data:`REFERENCE_MEMORY_MB` MiB; the outputs (typed JSON,
:mod:`~judgebox.reward.loaders.evalplus.codec`) and the reference's time are kept in
``$JUDGEBOX_EVALPLUS_CACHE`` (default ``~/.cache/judgebox/evalplus``), one file per task, named by
the sha256 of everything they depend on (the source, the entry point, the inputs, this format's
version), so later loads read them. A failing reference (an exception, a time-out, an output that is
not data) raises :class:`ReferenceFailed` (the task becomes ``test_data_error``, never a wrong verdict)
and is not cached; an unreachable sandbox raises
:class:`~judgebox.sandbox.errors.SandboxInfraError` (the load stops: run it again).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from judgebox.reward.spec import TestDataError
from judgebox.sandbox.errors import SandboxInfraError
from judgebox.sandbox.models import CommandRunStatus, RunCodeRequest, RunStatus

from .programs import reference_program

#: seconds the reference may take on all of a task's inputs
REFERENCE_TIMEOUT = 120.0
#: MiB the reference may use (evalplus's default limit, ``EVALPLUS_MAX_MEMORY_BYTES``: 4 GiB)
REFERENCE_MEMORY_MB = 4096
#: bump when the cached files' meaning changes
CACHE_VERSION = 1

logger = logging.getLogger("judgebox.reward")


class ReferenceFailed(TestDataError):
    """The canonical solution could not produce the expected outputs (the message says where and why)."""


@dataclass(frozen=True)
class Reference:
    """A task's expected outputs: ``outputs[g][i]`` is the encoded output on input ``i`` of group
    ``g`` (``base_input``, ``plus_input``); ``seconds`` is the reference's time on all of them."""

    outputs: list[list[Any]]
    seconds: float


def cache_dir() -> Path:
    """``$JUDGEBOX_EVALPLUS_CACHE``, else ``~/.cache/judgebox/evalplus``."""
    return Path(os.environ.get("JUDGEBOX_EVALPLUS_CACHE") or Path.home() / ".cache" / "judgebox" / "evalplus")


def reference_outputs(source: str, entry_point: str, groups: list[list[Any]], not_none: bool,
                      client: Optional[Any] = None) -> Reference:
    """The expected outputs of a task, from the cache or from one sandbox run.

    Args:
        source: ``prompt + canonical_solution``.
        entry_point: the function to call.
        groups: ``[[name, encoded inputs], ...]``.
        not_none: keep only whether each output is not ``None`` (evalplus's MBPP+ "not None" tasks).
        client: a :class:`~judgebox.sandbox.client.client.SandboxClient` (default: the judge's).

    Raises:
        ReferenceFailed: the reference raised, timed out, ran out of memory or returned something
            that is not data (the message names the input).
        SandboxInfraError: the sandbox could not run it.
    """
    task = {"entry_point": entry_point, "not_none": not_none, "groups": groups}
    key = hashlib.sha256(json.dumps([CACHE_VERSION, source, task], sort_keys=True).encode()).hexdigest()
    path = cache_dir() / f"{key}.json"
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        return Reference(cached["outputs"], float(cached["seconds"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if client is None:
        from judgebox.reward.judge import default_client

        client = default_client()
    _announce()
    result = _run(client, source, task)
    _store(path, result)
    return Reference(result["outputs"], float(result["seconds"]))


def _announce() -> None:
    from judgebox.reward.judge import warn_once

    warn_once(f"evalplus: computing the canonical solutions' outputs in the sandbox (once per task; kept in "
              f"{cache_dir()})")


def _run(client: Any, source: str, task: dict[str, Any]) -> dict[str, Any]:
    files = {"reference.py": source, "task.json": json.dumps(task, allow_nan=False)}
    request = RunCodeRequest(code=reference_program(), language="python", run_timeout=REFERENCE_TIMEOUT,
                             memory_limit_MB=REFERENCE_MEMORY_MB, fetch_files=["result.json"],
                             files={k: base64.b64encode(v.encode()).decode() for k, v in files.items()})
    response = client.run_code(request)
    run = response.run_result
    if response.status == RunStatus.SandboxError or run is None or run.status == CommandRunStatus.Error:
        raise SandboxInfraError(f"the sandbox could not run the canonical solution: {response.message}")
    if run.status == CommandRunStatus.TimeLimitExceeded:
        raise ReferenceFailed(f"canonical_solution did not finish its inputs in {REFERENCE_TIMEOUT:g} s")
    if run.memory_exceeded:
        raise ReferenceFailed(f"canonical_solution went over {REFERENCE_MEMORY_MB} MiB")
    written = response.files.get("result.json")
    try:
        result = json.loads(base64.b64decode(written or "").decode("utf-8"))
    except ValueError:
        result = None
    if not isinstance(result, dict):
        raise ReferenceFailed(f"canonical_solution's run ended without its outputs (exit status "
                              f"{run.return_code}): {(run.stderr or '').strip()[-500:]}")
    if "error" in result:
        raise ReferenceFailed(f"canonical_solution fails on {result.get('where')}: {result['error']}")
    return result


def _store(path: Path, result: dict[str, Any]) -> None:
    """Write ``result`` to ``path`` atomically; a cache that cannot be written is only logged."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"outputs": result["outputs"], "seconds": result["seconds"]}, f, allow_nan=False)
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("evalplus: could not cache reference outputs in %s (%s)", path.parent, exc)
