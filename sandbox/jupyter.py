"""``/run_jupyter``: run notebook cells in order in one fresh IPython kernel per request.

The kernel is started with ``jupyter_client`` (``ipykernel`` inside) under the same isolation as a
``run_code`` program: the request's own working directory (``files`` written there first,
``fetch_files`` read from it afterwards), the executor's environment allow-list, its rlimits and
:meth:`sandbox.isolation.Isolation.for_run` (run uid, cgroup, network namespace). The kernel talks
to the server over Unix sockets in that directory (``transport="ipc"``), so a kernel in its own
network namespace is still reachable.

Semantics (SandboxFusion's wire format; ``cell_timeout`` honoured, unlike SandboxFusion):

* cells run one after another; a cell that raises records its error in ``cells[i].error`` and the
  next cell still runs (the request is ``Success``: the notebook ran);
* ``cell_timeout`` (seconds, 0 = none) bounds each cell, ``total_timeout`` all of them. When one
  is hit, the cells that finished and the partial cell are returned, the partial cell's ``error``
  gets ``{"ename": "TimeLimitExceeded", ...}``, later cells do not run, ``driver.status`` is
  ``TimeLimitExceeded`` and the request is ``Failed``;
* a kernel that dies mid-cell (``os._exit``, out of memory) gives ``ename="KernelDied"`` and
  ``Failed``; a kernel that cannot start at all is ``SandboxError`` (infrastructure, not a verdict);
* the kernel's process group and every process of the run are killed when the request ends.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import tempfile
import time
from typing import Any, Optional

import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from .executor import Executor, fetch
from .isolation import RunIsolation
from .languages import RECIPES
from .models import (
    CellRunResult,
    CommandRunResult,
    CommandRunStatus,
    RunJupyterRequest,
    RunJupyterResponse,
    RunStatus,
    decode_files,
)

#: Seconds a kernel may take to start and answer ``kernel_info`` (not counted in ``total_timeout``).
KERNEL_STARTUP_TIMEOUT = 60.0
#: Seconds spent collecting output still in flight when a cell times out.
_DRAIN_S = 0.3
_KERNEL_NAME = "judgebox-python3"


def kernel_spec_manager(root: str, python: str, pid_namespace: bool = False) -> KernelSpecManager:
    """A kernel-spec manager whose only kernel, ``judgebox-python3``, runs ``python -m ipykernel``.

    Args:
        root: the executor's root folder (the spec is written under ``<root>/kernels``).
        python: the interpreter that runs cells (``settings.python``).
        pid_namespace: kernels start in their own PID namespace, where their parent is the
            namespace's init (pid 1), not the server: ipykernel's parent poller (``JPY_PARENT_PID``)
            would shut the kernel down at once, so it is switched off (the init dies with the
            server's child and takes the kernel with it).

    The spec file is (re)written atomically on every call, so a cleaned-up root never breaks
    notebooks and concurrent requests never read a half-written file. IPython history is off
    (faster start; nothing survives the request anyway).
    """
    kernels = os.path.join(root, "kernels")
    spec_dir = os.path.join(kernels, _KERNEL_NAME)
    os.makedirs(spec_dir, mode=0o755, exist_ok=True)
    spec = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                 "--HistoryManager.enabled=False", *(["--IPKernelApp.parent_handle=0"] if pid_namespace else [])],
        "display_name": "judgebox python3",
        "language": "python",
    }
    fd, tmp = tempfile.mkstemp(dir=spec_dir, suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(spec, f)
    os.chmod(tmp, 0o644)
    os.replace(tmp, os.path.join(spec_dir, "kernel.json"))
    return KernelSpecManager(kernel_dirs=[kernels])


def run_jupyter(request: RunJupyterRequest, executor: Executor) -> RunJupyterResponse:
    """Run ``request.cells`` in order in a fresh kernel and return every cell that ran.

    Args:
        request: cells, ``cell_timeout``/``total_timeout`` (seconds), ``files``, ``fetch_files``.
        executor: supplies isolation, environment, limits and working directories.

    Returns:
        a :class:`~sandbox.models.RunJupyterResponse` (see the module docstring for statuses).
        Never raises for what the cells do.
    """
    pod = executor.settings.pod_name
    missing = executor.unsupported("python")
    if missing:
        return RunJupyterResponse(status=RunStatus.SandboxError, message=missing, executor_pod_name=pod)
    with executor.isolation.for_run(executor.root, executor.memory_MB(-1)) as iso, \
            executor.workdir(decode_files(request.files), iso) as workdir:
        session = _Session(request, executor, iso, workdir)
        try:
            session.start()
        except Exception as exc:  # the kernel could not start: infrastructure, not a verdict
            session.stop()
            return RunJupyterResponse(status=RunStatus.SandboxError, executor_pod_name=pod,
                                      message=f"kernel failed to start: {type(exc).__name__}: {exc}"
                                              f"{session.kernel_log()}")
        try:
            driver = session.run_cells()
        finally:
            session.stop()
        status = RunStatus.Success if driver.status == CommandRunStatus.Finished and driver.return_code == 0 \
            else RunStatus.Failed
        return RunJupyterResponse(status=status, driver=driver, cells=session.cells, executor_pod_name=pod,
                                  files=fetch(workdir, request.fetch_files))


class _Session:
    """One kernel for one request: start, run cells with deadlines, always stop."""

    def __init__(self, request: RunJupyterRequest, executor: Executor, iso: RunIsolation, workdir: str):
        self.request, self.executor, self.iso, self.workdir = request, executor, iso, workdir
        self.cells: list[CellRunResult] = []
        self.cap = executor.settings.output_limit_bytes
        self.km: Optional[KernelManager] = None
        self.kc: Any = None
        self.log_path = os.path.join(workdir, ".kernel.log")

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> None:
        ex, iso = self.executor, self.iso
        km = KernelManager(
            kernel_name=_KERNEL_NAME, kernel_spec_manager=kernel_spec_manager(ex.root, ex.settings.python,
                                                                    ex.isolation.view is not None),
            transport="ipc", ip=os.path.join(self.workdir, ".kernel"),
            connection_file=os.path.join(self.workdir, ".kernel.json"),
        )
        self.km = km
        km.write_connection_file()
        if iso.user is not None:
            os.chown(km.connection_file, iso.user, iso.group if iso.group is not None else iso.user)
        child_setup = iso.child_setup(ex.limits(self.request.total_timeout + KERNEL_STARTUP_TIMEOUT))
        env = ex.env(self.workdir, iso, RECIPES["python"])
        # A thread cannot be created while this thread's children go into a new PID namespace
        # (clone(CLONE_THREAD) is EINVAL there; zmq aborts): start the context's I/O threads first.
        km.context.socket(zmq.PAIR).close(linger=0)
        with open(self.log_path, "wb") as log, iso.spawning():
            km.start_kernel(cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            preexec_fn=child_setup)
        self.kc = km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=KERNEL_STARTUP_TIMEOUT)

    def stop(self) -> None:
        """Kill the kernel's process group and every process of the run; reap; close sockets."""
        if self.kc is not None:
            self.kc.stop_channels()
        km = self.km
        proc = getattr(getattr(km, "provisioner", None), "process", None)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.iso.kill_all is not None:
            self.iso.kill_all()
        if km is not None:
            try:
                km.shutdown_kernel(now=True)
            except Exception:  # already dead and reaped: only the cleanup is left
                km.cleanup_resources()
        if proc is not None:
            proc.wait()

    def kernel_log(self) -> str:
        """The kernel's own stderr tail (for a start failure message), or ``""``."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read()[-2000:].decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return f"\n{text}" if text else ""

    # ---------------------------------------------------------------- cells
    def run_cells(self) -> CommandRunResult:
        """Run every cell; returns the driver result (Finished rc 0, TimeLimitExceeded, or the
        kernel's exit code when it died)."""
        start = time.monotonic()
        total_deadline = start + self.request.total_timeout
        for index, code in enumerate(self.request.cells):
            cell = CellRunResult()
            self.cells.append(cell)
            cell_deadline = total_deadline
            if self.request.cell_timeout > 0:
                cell_deadline = min(total_deadline, time.monotonic() + self.request.cell_timeout)
            outcome = self._run_cell(code, cell, cell_deadline)
            elapsed = round(time.monotonic() - start, 6)
            if outcome == "timeout":
                which = ("total_timeout", self.request.total_timeout) if cell_deadline == total_deadline \
                    else ("cell_timeout", self.request.cell_timeout)
                cell.error.append({"ename": "TimeLimitExceeded", "traceback": [],
                                   "evalue": f"cell {index} did not finish within {which[0]}={which[1]}s"})
                return CommandRunResult(status=CommandRunStatus.TimeLimitExceeded, execution_time=elapsed,
                                        stdout="", stderr="")
            if outcome == "died":
                rc = self._kernel_exit_code()
                cell.error.append({"ename": "KernelDied", "traceback": [],
                                   "evalue": f"the kernel exited with code {rc} during cell {index}"})
                return CommandRunResult(status=CommandRunStatus.Finished, execution_time=elapsed,
                                        return_code=rc if rc else -1, stdout="", stderr="")
        return CommandRunResult(status=CommandRunStatus.Finished, execution_time=round(time.monotonic() - start, 6),
                                return_code=0, stdout="", stderr="")

    def _run_cell(self, code: str, cell: CellRunResult, deadline: float) -> str:
        """Execute one cell, collecting its iopub messages until idle; ``"ok"``, ``"timeout"``
        or ``"died"``."""
        msg_id = self.kc.execute(code, allow_stdin=False, stop_on_error=False)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._drain(msg_id, cell, time.monotonic() + _DRAIN_S)
                return "timeout"
            try:
                msg = self.kc.get_iopub_msg(timeout=min(remaining, 0.25))
            except queue.Empty:
                if not self.km.is_alive():
                    return "died"
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if self._record(msg, cell):
                return "ok"

    def _drain(self, msg_id: str, cell: CellRunResult, until: float) -> None:
        """Collect output already sent by a cell that is about to be killed."""
        while time.monotonic() < until:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                return
            if msg.get("parent_header", {}).get("msg_id") == msg_id and self._record(msg, cell):
                return

    def _record(self, msg: dict[str, Any], cell: CellRunResult) -> bool:
        """Add one iopub message to ``cell``; ``True`` when the kernel went idle (cell done)."""
        kind, content = msg["header"]["msg_type"], msg["content"]
        if kind == "stream":
            name = "stdout" if content.get("name") == "stdout" else "stderr"
            text = getattr(cell, name)
            if len(text) < self.cap:
                setattr(cell, name, text + content.get("text", "")[: self.cap - len(text)])
        elif kind in ("execute_result", "display_data"):
            cell.display.append(content.get("data", {}))
        elif kind == "error":
            cell.error.append({"ename": content.get("ename", ""), "evalue": content.get("evalue", ""),
                               "traceback": content.get("traceback", [])})
        elif kind == "status" and content.get("execution_state") == "idle":
            return True
        return False

    def _kernel_exit_code(self) -> Optional[int]:
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        if proc is None:
            return None
        try:
            return proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None
