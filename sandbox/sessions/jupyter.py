"""``/run_jupyter``: run notebook cells in order in one fresh IPython kernel per request.

The kernel (:class:`judgebox.sandbox.sessions.kernel.Kernel`, ``ipykernel`` inside) runs under the same isolation as
a ``run_code`` program: the request's own working directory (``files`` written there first,
``fetch_files`` read from it afterwards), the executor's environment allow-list, its rlimits and
:meth:`judgebox.sandbox.isolation.unit.Isolation.for_run` (run uid, cgroup, namespaces). What the server keeps
in the run's folder and how it never follows a link there: :mod:`judgebox.sandbox.sessions.kernel`.

Semantics (SandboxFusion's wire format; ``cell_timeout`` honoured, unlike SandboxFusion):

* cells run one after another; a cell that raises records its error in ``cells[i].error`` and the
  next cell still runs (the request is ``Success``: the notebook ran);
* ``cell_timeout`` (seconds, 0 = none) bounds each cell, ``total_timeout`` all of them. When one
  is hit, the cells that finished and the partial cell are returned, the partial cell's ``error``
  gets ``{"ename": "TimeLimitExceeded", ...}``, later cells do not run, ``driver.status`` is
  ``TimeLimitExceeded`` and the request is ``Failed``;
* a kernel that dies mid-cell (``os._exit``, out of memory) gives ``ename="KernelDied"`` and
  ``Failed``; a kernel that cannot start at all is ``SandboxError`` (infrastructure, not a verdict);
* each cell's stdout, stderr, display bundles and error text are capped at ``output_limit_bytes``
  bytes each (flags ``stdout_truncated`` … ``error_truncated``), and all cells together at
  ``response_limit_bytes``;
* the kernel's process group and every process of the run are killed when the request ends.
"""

from __future__ import annotations

import contextlib
import time
from typing import Optional

from judgebox.sandbox.cancel import Cancel, Cancelled
from judgebox.sandbox.executor import Executor
from judgebox.sandbox.models import (
    CellRunResult,
    CommandRunResult,
    CommandRunStatus,
    RunJupyterRequest,
    RunJupyterResponse,
    RunStatus,
    decode_files,
)
from judgebox.sandbox.runfs import fetch

from .kernel import KERNEL_STARTUP_TIMEOUT, Kernel


def run_jupyter(request: RunJupyterRequest, executor: Executor, cancel: Optional[Cancel] = None) -> RunJupyterResponse:
    """Run ``request.cells`` in order in a fresh kernel and return every cell that ran.

    Args:
        request: cells, ``cell_timeout``/``total_timeout`` (seconds, both clamped to the server's
            ``max_run_timeout``), ``files``, ``fetch_files``.
        executor: supplies isolation, environment, limits and working directories.
        cancel: when cancelled (the client went away), the kernel and every process of the run are
            killed and the request ends as ``SandboxError``.

    Returns:
        a :class:`~judgebox.sandbox.models.RunJupyterResponse` (see the module docstring for statuses).
        Never raises for what the cells do.
    """
    pod = executor.settings.pod_name
    missing = executor.unsupported("python")
    if missing:
        return RunJupyterResponse(status=RunStatus.SandboxError, message=missing, executor_pod_name=pod)
    limit = executor.settings.max_run_timeout
    request = request.model_copy(update={"total_timeout": min(request.total_timeout, limit),
                                         "cell_timeout": min(request.cell_timeout, limit)})
    with executor.isolation.for_run(executor.root, executor.memory_MB(-1)) as iso, \
            executor.workdir(decode_files(request.files), iso) as workdir:
        kernel = Kernel(executor, iso, workdir, executor.limits(request.total_timeout + KERNEL_STARTUP_TIMEOUT))
        try:
            if cancel is not None:
                cancel.check()
            try:
                kernel.start()
            except Exception as exc:  # the kernel could not start: infrastructure, not a verdict
                kernel.stop()
                return RunJupyterResponse(status=RunStatus.SandboxError, executor_pod_name=pod,
                                          message=f"kernel failed to start: {type(exc).__name__}: {exc}"
                                                  f"{kernel.log_tail()}")
            cells: list[CellRunResult] = []
            try:
                with cancel.watching(kernel.kill) if cancel is not None else contextlib.nullcontext():
                    driver = _run_cells(kernel, request, cells)
            finally:
                kernel.stop()
        except Cancelled as exc:
            return RunJupyterResponse(status=RunStatus.SandboxError, message=str(exc), executor_pod_name=pod)
        finally:
            kernel.close_log()
        if cancel is not None and cancel.cancelled:
            return RunJupyterResponse(status=RunStatus.SandboxError, executor_pod_name=pod,
                                      message="the request was cancelled (the client disconnected)")
        status = RunStatus.Success if driver.status == CommandRunStatus.Finished and driver.return_code == 0 \
            else RunStatus.Failed
        return RunJupyterResponse(status=status, driver=driver, cells=cells, executor_pod_name=pod,
                                  files=fetch(workdir, request.fetch_files, executor.settings.fetch_limit_bytes))


def _run_cells(kernel: Kernel, request: RunJupyterRequest, cells: list[CellRunResult]) -> CommandRunResult:
    """Run every cell into ``cells``; returns the driver result (Finished rc 0, TimeLimitExceeded,
    or the kernel's exit code when it died)."""
    start = time.monotonic()
    total_deadline = start + request.total_timeout
    per_kind, output_left = kernel.cap, kernel.executor.settings.response_limit_bytes
    for index, code in enumerate(request.cells):
        cell = CellRunResult()
        cells.append(cell)
        cell_deadline = total_deadline
        if request.cell_timeout > 0:
            cell_deadline = min(total_deadline, time.monotonic() + request.cell_timeout)
        # 4 capped kinds (stdout, stderr, display, error) share what the response has left
        outcome = kernel.run_cell(code, cell, cell_deadline, cap=max(0, min(per_kind, output_left // 4)))
        output_left -= len(cell.model_dump_json().encode())
        elapsed = round(time.monotonic() - start, 6)
        if outcome == "timeout":
            which = ("total_timeout", request.total_timeout) if cell_deadline == total_deadline \
                else ("cell_timeout", request.cell_timeout)
            cell.error.append({"ename": "TimeLimitExceeded", "traceback": [],
                               "evalue": f"cell {index} did not finish within {which[0]}={which[1]}s"})
            return CommandRunResult(status=CommandRunStatus.TimeLimitExceeded, execution_time=elapsed,
                                    stdout="", stderr="")
        if outcome == "died":
            rc = kernel.exit_code()
            cell.error.append({"ename": "KernelDied", "traceback": [],
                               "evalue": f"the kernel exited with code {rc} during cell {index}"})
            return CommandRunResult(status=CommandRunStatus.Finished, execution_time=elapsed,
                                    return_code=rc if rc else -1, stdout="", stderr="")
    return CommandRunResult(status=CommandRunStatus.Finished, execution_time=round(time.monotonic() - start, 6),
                            return_code=0, stdout="", stderr="")
