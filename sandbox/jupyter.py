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

:class:`Kernel` is the one kernel launcher: sandbox sessions (:mod:`sandbox.sessions`) use it too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
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
from .process import RunLimits

#: RLIMIT_STACK (bytes) of a kernel where memory is capped by RLIMIT_DATA (no memory cgroup): the
#: default thread stack size, so the kernel's threads fit in the data limit.
KERNEL_FALLBACK_STACK = 8 << 20
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
        kernel = Kernel(executor, iso, workdir, executor.limits(request.total_timeout + KERNEL_STARTUP_TIMEOUT))
        try:
            kernel.start()
        except Exception as exc:  # the kernel could not start: infrastructure, not a verdict
            kernel.stop()
            return RunJupyterResponse(status=RunStatus.SandboxError, executor_pod_name=pod,
                                      message=f"kernel failed to start: {type(exc).__name__}: {exc}"
                                              f"{kernel.log_tail()}")
        cells: list[CellRunResult] = []
        try:
            driver = _run_cells(kernel, request, cells)
        finally:
            kernel.stop()
        status = RunStatus.Success if driver.status == CommandRunStatus.Finished and driver.return_code == 0 \
            else RunStatus.Failed
        return RunJupyterResponse(status=status, driver=driver, cells=cells, executor_pod_name=pod,
                                  files=fetch(workdir, request.fetch_files, executor.settings.fetch_limit_bytes))


def _run_cells(kernel: "Kernel", request: RunJupyterRequest, cells: list[CellRunResult]) -> CommandRunResult:
    """Run every cell into ``cells``; returns the driver result (Finished rc 0, TimeLimitExceeded,
    or the kernel's exit code when it died)."""
    start = time.monotonic()
    total_deadline = start + request.total_timeout
    for index, code in enumerate(request.cells):
        cell = CellRunResult()
        cells.append(cell)
        cell_deadline = total_deadline
        if request.cell_timeout > 0:
            cell_deadline = min(total_deadline, time.monotonic() + request.cell_timeout)
        outcome = kernel.run_cell(code, cell, cell_deadline)
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


class Kernel:
    """One IPython kernel process in ``workdir`` under a run's isolation: start, run cells, interrupt, stop.

    The one kernel launcher of judgebox: ``/run_jupyter`` (one kernel per request) and sandbox
    sessions (:mod:`sandbox.sessions`, one long-lived kernel per session) both start kernels here,
    so both get exactly the child set-up of ``run_code`` (:func:`sandbox.process.child_preexec` with
    the run's :class:`~sandbox.isolation.RunIsolation`).

    Args:
        executor: environment, settings (``python``, ``output_limit_bytes``) and the root folder.
        iso: the run's isolation (uid, cgroup, namespaces); it outlives the kernel, so a session
            can restart its kernel in the same cgroup and working directory.
        workdir: the kernel's working directory (also holds its sockets and connection file).
        limits: rlimits of the kernel process; ``limits.wall_limit`` bounds its total CPU seconds.

    Not thread-safe: one caller at a time (sessions hold a lock).
    """

    def __init__(self, executor: Executor, iso: RunIsolation, workdir: str, limits: RunLimits):
        if iso.memory_exceeded is None and limits.stack_bytes and limits.stack_bytes > KERNEL_FALLBACK_STACK:
            # No memory cgroup: memory is capped by RLIMIT_DATA, which counts every thread's stack,
            # and each thread gets RLIMIT_STACK of it; ipykernel's threads at 256 MiB each exhausted
            # a 2 GiB limit before the kernel answered ("can't start new thread" in compose).
            limits = dataclasses.replace(limits, stack_bytes=KERNEL_FALLBACK_STACK)
        self.executor, self.iso, self.workdir, self.limits = executor, iso, workdir, limits
        self.cap = executor.settings.output_limit_bytes
        self.km: Optional[KernelManager] = None
        self.kc: Any = None
        self.log_path = os.path.join(workdir, ".kernel.log")
        #: streams of the last cell cut at ``output_limit_bytes`` characters (``"stdout"``, ``"stderr"``)
        self.truncated: set[str] = set()
        self._died = False

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Launch the kernel and wait until it answers ``kernel_info``.

        Raises:
            Exception: whatever kept it from starting (see :meth:`log_tail`); call :meth:`stop`.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._start()
        # Called from an event loop's thread (e.g. LocalSandbox.create_session inside async code):
        # jupyter_client would then start the kernel on a runner thread that it creates while this
        # thread's children go into a new PID namespace, where no thread can be created. Start the
        # kernel from a plain thread instead.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebox-kernel") as pool:
            return pool.submit(self._start).result()

    def _start(self) -> None:
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
        child_setup = iso.child_setup(self.limits)
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
            self.kc = None
        self.kill()
        km, self.km = self.km, None
        proc = getattr(getattr(km, "provisioner", None), "process", None)
        if km is not None:
            try:
                km.shutdown_kernel(now=True)
            except Exception:  # already dead and reaped: only the cleanup is left
                km.cleanup_resources()
        if proc is not None:
            proc.wait()

    def kill(self) -> None:
        """SIGKILL the kernel's process group and every process of the run (may be called from
        another thread while a cell runs: that cell then ends as ``"died"``)."""
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.iso.kill_all is not None:
            self.iso.kill_all()

    def alive(self) -> bool:
        """Whether the kernel process is running."""
        return self.km is not None and self.km.is_alive()

    def log_tail(self) -> str:
        """The kernel's own stderr tail (for a start failure message), or ``""``."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read()[-2000:].decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return f"\n{text}" if text else ""

    def exit_code(self) -> Optional[int]:
        """The dead kernel's exit status (negative: killed by that signal), ``None`` if unknown."""
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        if proc is None:
            return None
        try:
            return proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None

    # ---------------------------------------------------------------- cells
    def run_cell(self, code: str, cell: CellRunResult, deadline: float,
                 interrupt_grace: Optional[float] = None) -> str:
        """Execute one cell, collecting its iopub messages into ``cell`` until the kernel is idle.

        Args:
            code: the cell's source.
            cell: receives stdout/stderr (each capped at ``output_limit_bytes`` characters), display
                bundles (``execute_result`` and ``display_data``) and error records.
            deadline: ``time.monotonic()`` value at which the cell is out of time.
            interrupt_grace: ``None``: at the deadline collect the output in flight and return
                ``"timeout"`` (the caller kills the kernel). Seconds: at the deadline send SIGINT
                and wait that long for the kernel to go idle (the ``KeyboardInterrupt`` record is
                dropped from ``cell.error``).

        Returns:
            ``"ok"`` (idle), ``"interrupted"`` (stopped by the interrupt, kernel alive, state kept),
            ``"timeout"`` (still busy: the caller must kill the kernel) or ``"died"``.
        """
        self._drain_shell()
        msg_id = self.kc.execute(code, allow_stdin=False, stop_on_error=False)
        self.truncated = set()
        if self._collect(msg_id, cell, deadline):
            return "ok"
        if self._died:
            return "died"
        if interrupt_grace is None:
            self._drain(msg_id, cell, time.monotonic() + _DRAIN_S)
            return "timeout"
        errors = len(cell.error)
        self.km.interrupt_kernel()
        if self._collect(msg_id, cell, time.monotonic() + interrupt_grace):
            cell.error[errors:] = [e for e in cell.error[errors:] if e.get("ename") != "KeyboardInterrupt"]
            return "interrupted"
        return "died" if self._died else "timeout"

    def _collect(self, msg_id: str, cell: CellRunResult, deadline: float) -> bool:
        """Record ``msg_id``'s iopub messages until idle (``True``), the deadline or death (``False``;
        ``self._died`` tells which)."""
        self._died = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                msg = self.kc.get_iopub_msg(timeout=min(remaining, 0.25))
            except queue.Empty:
                if not self.km.is_alive():
                    self._died = True
                    return False
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if self._record(msg, cell):
                return True

    def _drain_shell(self) -> None:
        """Discard the ``execute_reply`` messages of earlier cells (a long session would pile them up)."""
        while self.kc.shell_channel.msg_ready():
            self.kc.get_shell_msg(timeout=0)

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
            text, new = getattr(cell, name), content.get("text", "")
            room = self.cap - len(text)
            if len(new) > room:
                self.truncated.add(name)
            if room > 0:
                setattr(cell, name, text + new[:room])
        elif kind in ("execute_result", "display_data"):
            cell.display.append(content.get("data", {}))
        elif kind == "error":
            cell.error.append({"ename": content.get("ename", ""), "evalue": content.get("evalue", ""),
                               "traceback": content.get("traceback", [])})
        elif kind == "status" and content.get("execution_state") == "idle":
            return True
        return False
