"""One IPython kernel under a run's isolation: the one kernel launcher of ``/run_jupyter`` and sessions.

The kernel is a run's program like any other (same child set-up, rlimits, uid, cgroup and
namespaces as ``run_code``, :meth:`judgebox.sandbox.isolation.unit.RunIsolation.child_setup`); it talks to the server through
ZeroMQ IPC sockets in a folder of the run's working folder, so a kernel in its own network
namespace is still reachable.

**The server never follows a path the run can write.** The run owns its working folder, so
everything there may be replaced by a link at any moment. Hence:

* the kernel's log is an unnamed file of the server (``O_TMPFILE``), inherited as stdout/stderr;
* each start makes a fresh folder ``.judgebox-kernel-<random>`` in the working folder (``mkdir``
  fails on anything already there); the connection file is created in it through that folder's
  descriptor with ``O_CREAT | O_EXCL | O_NOFOLLOW``; the folder is deleted with ``rmtree``'s
  descriptor-based walk once every process of the kernel is dead;
* the server's ZeroMQ sockets connect to ``/proc/self/fd/<n>``, where ``n`` is an ``O_PATH |
  O_NOFOLLOW`` descriptor of the kernel's socket file, checked to be a socket on the run's own
  filesystem owned by the run's uid: reconnects reach that socket inode and nothing else, whatever
  the run later puts at its name;
* jupyter_client's ``KernelManager`` is not used (it reads, rewrites and removes the connection
  file and socket files by name).

**The kernel runs no code of the run before its first cell.** Its working folder at start is the
fresh kernel folder and nothing of the run is on ``sys.path`` (a planted ``ipykernel_launcher.py``
or any other module name is never imported), the user
site-packages are off (``python -s``: no ``usercustomize``), ``IPYTHONDIR``,
``JUPYTER_CONFIG_DIR``, ``JUPYTER_DATA_DIR`` and ``JUPYTER_RUNTIME_DIR`` point into the fresh folder
(no start-up file, profile or config of the run's files), and only the last start-up step (IPython's
``exec_lines``) moves it into the working folder. ``JPY_PARENT_PID`` (the server's pid) is not set.

**Caps:** each cell's stdout and stderr, its display bundles together, and its error text are
each capped at ``output_limit_bytes`` bytes, cut at a character boundary, with a flag per kind;
one ZeroMQ message larger than :data:`MAX_MESSAGE_BYTES` (or 16 × the cap) is refused by the
server's socket (the connection is reset and the message lost: every flag of the cell is set),
so the server holds at most :data:`IOPUB_QUEUE` + 1 messages of at most that size per kernel.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import secrets
import signal
import stat
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Optional

import zmq
from jupyter_client.blocking.client import BlockingKernelClient

from judgebox.sandbox.executor import Executor
from judgebox.sandbox.isolation.unit import RunIsolation
from judgebox.sandbox.languages import RECIPES
from judgebox.sandbox.limits import RunLimits
from judgebox.sandbox.models import CellRunResult
from judgebox.sandbox.runfs import remove_tree
from judgebox.sandbox.textcap import Budget, text_bytes

#: RLIMIT_STACK (bytes) of a kernel where memory is capped by RLIMIT_DATA (no memory cgroup): the
#: default thread stack size, so the kernel's threads fit in the data limit.
KERNEL_FALLBACK_STACK = 8 << 20
#: Seconds a kernel may take to start and answer ``kernel_info`` (its start-up runs judgebox's and
#: IPython's code only, never the run's).
KERNEL_STARTUP_TIMEOUT = 60.0
#: Bytes one ZeroMQ message from the kernel may have: ``max(MAX_MESSAGE_BYTES, 16 * output_limit_bytes)``.
#: (A print loop flushed every 0.2 s by ipykernel sent 44 MB messages on a 2-core test machine.)
MAX_MESSAGE_BYTES = 64 << 20
#: Messages the server's IOPub socket queues; past that the kernel's side holds them (in the run's
#: memory) and drops what overflows its own queue.
IOPUB_QUEUE = 4
#: Seconds spent collecting output still in flight when a cell times out.
_DRAIN_S = 0.3
#: Seconds a kernel gets to answer again after its IOPub socket was made anew (within the cell's deadline).
_RESUBSCRIBE_S = 10.0
#: Seconds to wait for the IOPub ``idle`` status after the cell's ``execute_reply`` and a reset of the IOPub socket.
_IDLE_AFTER_REPLY_S = 1.0
_CHANNELS = ("shell", "iopub", "stdin", "control", "hb")
#: The kernel's ``python -c`` program: start in the fresh kernel folder (the child set-up leaves it in
#: the working folder) with nothing of it on ``sys.path``, then ipykernel's own launcher. tempfile's
#: folder is set (``TMPDIR``), not probed: the probe writes a file, and ipykernel asks for it before
#: every cell (even ``exec_lines``), so on a full disk every cell failed ("No usable temporary
#: directory"), the one that would free space too.
_BOOT = ("import os, sys, tempfile; os.chdir(sys.argv.pop(1)); del sys.path[0]\n"
         "tempfile.tempdir = os.environ.get('TMPDIR') or None\n"
         "from ipykernel import kernelapp; kernelapp.launch_new_instance()")
#: An exception name is cut to this many characters.
_ERROR_NAME_CHARS = 256
#: Bytes a display entry or an error record costs against its budget besides its text.
_ENTRY_BYTES = 64


def _parent_id(msg: Any) -> Optional[str]:
    """The ``msg_id`` a kernel message answers, or ``None`` when the message has no such shape."""
    parent = msg.get("parent_header") if isinstance(msg, dict) else None
    return parent.get("msg_id") if isinstance(parent, dict) else None


class KernelFiles:
    """The run-side folder of one kernel start (see the module docstring).

    Args:
        workdir: the run's working folder (its parents belong to the server).
        uid: the run's uid (``None``: the server's own); the folder and connection file become its.

    Raises:
        OSError: the folder could not be made (e.g. the working folder is gone).
    """

    def __init__(self, workdir: str, uid: Optional[int]) -> None:
        self.uid = uid
        self.name = f".judgebox-kernel-{secrets.token_hex(6)}"
        self.path = os.path.join(workdir, self.name)
        top = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            # the working folder as the isolation made it (a cell may have run chmod(".", 0))
            os.fchmod(top, 0o700)
            if uid is not None:
                os.fchown(top, uid, uid)
            os.mkdir(self.name, 0o700, dir_fd=top)
            self.fd = os.open(self.name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
            if uid is not None:
                os.chown(self.name, uid, uid, dir_fd=top, follow_symlinks=False)
        finally:
            os.close(top)
        self.dev = os.fstat(self.fd).st_dev
        self._sockets: dict[int, int] = {}

    @property
    def connection_file(self) -> str:
        return os.path.join(self.path, "connection.json")

    @property
    def ip(self) -> str:
        """The IPC path prefix: the kernel binds ``<ip>-<port>``."""
        return os.path.join(self.path, "ipc")

    def write_connection(self, info: dict[str, Any]) -> None:
        """Create ``connection.json`` (mode 0600, the run's) with ``info``; never through a link."""
        fd = os.open("connection.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=self.fd)
        with os.fdopen(fd, "w") as f:
            if self.uid is not None:
                os.fchown(f.fileno(), self.uid, self.uid)
            json.dump(info, f)

    def socket_url(self, port: int, alive: Callable[[], bool], deadline: float) -> str:
        """``ipc:///proc/self/fd/<n>`` for the kernel's socket file ``ipc-<port>``, once it exists.

        Raises:
            RuntimeError: the kernel died or the deadline passed before the socket appeared, or the
                name holds something else than the kernel's own socket (a link, a file, another
                filesystem's or another user's socket).
        """
        if port not in self._sockets:
            name = f"ipc-{port}"
            while True:
                try:
                    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
                    break
                except FileNotFoundError:
                    if not alive():
                        raise RuntimeError("the kernel exited during start-up") from None
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the kernel did not open its sockets within "
                                           f"{KERNEL_STARTUP_TIMEOUT:g}s") from None
                    time.sleep(0.01)
            st = os.fstat(fd)
            if not stat.S_ISSOCK(st.st_mode) or st.st_dev != self.dev or \
                    (self.uid is not None and st.st_uid != self.uid):
                os.close(fd)
                raise RuntimeError(f"{name} in the kernel folder is not the kernel's socket")
            self._sockets[port] = fd
        return f"ipc:///proc/self/fd/{self._sockets[port]}"

    def close(self) -> None:
        """Close the descriptors and delete the folder (call once the kernel's processes are dead)."""
        for fd in (*self._sockets.values(), self.fd):
            os.close(fd)
        self._sockets.clear()
        remove_tree(self.path)  # descriptor-based, no recursion: never follows a link out, any depth


class _Client(BlockingKernelClient):
    """jupyter_client's blocking client whose sockets reach only the kernel's own socket files and
    refuse messages over the size cap."""

    files: KernelFiles
    alive: Callable[[], bool]
    deadline: float = 0.0
    max_message: int = -1

    def _make_url(self, channel: str) -> str:
        return self.files.socket_url(getattr(self, f"{channel}_port"), self.alive, self.deadline)

    def _create_connected_socket(self, channel: str, identity: Optional[bytes] = None):
        url = self._make_url(channel)
        sock = self.context.socket(zmq.SUB if channel == "iopub" else
                                   zmq.REQ if channel == "hb" else zmq.DEALER)
        sock.linger = 1000
        sock.setsockopt(zmq.MAXMSGSIZE, self.max_message)
        sock.setsockopt(zmq.RCVHWM, IOPUB_QUEUE)  # what the server queues: the kernel's side holds the rest
        if channel == "iopub":
            self.stop_iopub_monitor()
            self.iopub_events = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        if identity:
            sock.identity = identity
        sock.connect(url)
        return sock

    iopub_events: Any = None

    def stop_iopub_monitor(self) -> None:
        """Stop the IOPub socket's monitor, then close its receiving end. In that order: a monitored
        socket sends each event from the context's I/O thread, blocking while no one receives, so an
        event of a socket still closing (its kernel killed) after the receiver was closed stalled
        that thread and with it every kernel client of the shared context (each later session start
        waited for a ``kernel_info`` reply that sat unread in the server's socket)."""
        channel = getattr(self, "_iopub_channel", None)
        sock = getattr(channel, "socket", None)
        if sock is not None and not sock.closed:
            try:
                sock.disable_monitor()
            except zmq.ZMQError:
                pass
        if self.iopub_events is not None:
            self.iopub_events.close(linger=0)
            self.iopub_events = None

    def iopub_reset(self) -> bool:
        """Whether the IOPub connection was reset since the last call (an oversized message was
        refused, or the kernel went away)."""
        reset = False
        while self.iopub_events is not None:
            try:
                self.iopub_events.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            reset = True
        return reset

    def close(self) -> None:
        """Stop the channels that were started and close the IOPub monitor (``stop_channels`` would
        make the missing ones first, waiting for sockets of a kernel that may be gone); the context
        is the process's (:func:`shared_context`), destroyed only if this client made its own."""
        self.stop_iopub_monitor()
        for name in _CHANNELS:
            channel = getattr(self, f"_{name}_channel", None)
            if channel is not None and channel.is_alive():
                channel.stop()
        if self._created_context and not self.context.closed:
            self.context.destroy(linger=0)


_context: Optional[zmq.Context] = None
_context_lock = threading.Lock()


def shared_context() -> zmq.Context:
    """The one ZeroMQ context of every kernel client of this process, made on first use.

    A context per kernel cost each session a poller and three mailboxes (4 more descriptors), and
    a context made when no descriptor was left aborted the whole process (libzmq asserts on
    ``epoll_create``: ``Too many open files (src/epoll.cpp:38)``); sockets of an existing context
    fail with ``ZMQError(EMFILE)`` instead."""
    global _context
    with _context_lock:
        if _context is None or _context.closed:
            _context = zmq.Context()
        return _context


class Kernel:
    """One IPython kernel process under a run's isolation: start, run cells, interrupt, stop.

    Args:
        executor: environment, settings (``python``, ``output_limit_bytes``) and the root folder.
        iso: the run's isolation (uid, cgroup, namespaces); it outlives the kernel, so a session
            can restart its kernel in the same cgroup and working directory.
        workdir: the kernel's working directory once started (the run's folder).
        limits: rlimits of the kernel process; ``limits.wall_limit`` bounds its total CPU seconds.

    Not thread-safe: one caller at a time (sessions hold a lock); :meth:`kill` may be called from
    any thread.
    """

    def __init__(self, executor: Executor, iso: RunIsolation, workdir: str, limits: RunLimits):
        if iso.memory_exceeded is None and limits.stack_bytes and limits.stack_bytes > KERNEL_FALLBACK_STACK:
            # No memory cgroup: memory is capped by RLIMIT_DATA, which counts every thread's stack,
            # and each thread gets RLIMIT_STACK of it; ipykernel's threads at 256 MiB each exhausted
            # a 2 GiB limit before the kernel answered ("can't start new thread" in compose).
            limits = dataclasses.replace(limits, stack_bytes=KERNEL_FALLBACK_STACK)
        self.executor, self.iso, self.workdir, self.limits = executor, iso, workdir, limits
        self.cap = executor.settings.output_limit_bytes
        self.proc: Optional[subprocess.Popen] = None
        self.kc: Optional[_Client] = None
        self.files: Optional[KernelFiles] = None
        # unnamed (nothing of the run can reach it), on the run's own disk where it has one, so what
        # the kernel prints to its descriptors 1 and 2 counts against the run's disk quota
        self._log = tempfile.TemporaryFile(dir=iso.scratch[0] if iso.scratch else executor.root)
        self._iopub_broken = False

    # ---------------------------------------------------------------- lifecycle
    def start(self, give_up: Optional[Callable[[], Optional[str]]] = None) -> None:
        """Launch the kernel and wait until it answers ``kernel_info``.

        Args:
            give_up: asked while waiting; a reason (text) ends the wait at once with it (the run's
                memory killed the kernel: no need to wait out :data:`KERNEL_STARTUP_TIMEOUT`).

        Raises:
            Exception: whatever kept it from starting (see :meth:`log_tail`); call :meth:`stop`.
        """
        ex, iso = self.executor, self.iso
        self.files = files = KernelFiles(self.workdir, iso.user)
        info = {"transport": "ipc", "ip": files.ip, "key": secrets.token_hex(32),
                "signature_scheme": "hmac-sha256", "kernel_name": "judgebox-python3",
                **{f"{c}_port": i + 1 for i, c in enumerate(_CHANNELS)}}
        files.write_connection(info)
        env = ex.env(self.workdir, iso, RECIPES["python"])
        env.update(IPYTHONDIR=os.path.join(files.path, "ipython"),
                   JUPYTER_CONFIG_DIR=os.path.join(files.path, "jupyter"),
                   JUPYTER_DATA_DIR=os.path.join(files.path, "jupyter-data"),
                   JUPYTER_RUNTIME_DIR=os.path.join(files.path, "jupyter-runtime"))
        argv = [ex.settings.python, "-s", "-c", _BOOT, files.path, "-f", files.connection_file,
                "--HistoryManager.enabled=False", "--IPKernelApp.parent_handle=0",
                f"--IPKernelApp.exec_lines=__import__('os').chdir({self.workdir!r})"]
        with iso.spawning():
            self.proc = subprocess.Popen(argv, cwd=files.path, env=env, stdin=subprocess.DEVNULL,
                                         stdout=self._log, stderr=self._log, start_new_session=True,
                                         preexec_fn=iso.child_setup(self.limits))
        kc = _Client(context=shared_context())
        kc.load_connection_info(info)
        kc.files, kc.alive = files, self.alive
        kc.deadline = time.monotonic() + KERNEL_STARTUP_TIMEOUT
        kc.max_message = max(MAX_MESSAGE_BYTES, 16 * self.cap)
        self.kc = kc
        # shell and IOPub only: stdin (no input() is allowed) and control (interrupts are signals)
        # would be sockets the kernel could fill with messages nobody reads
        kc.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=False)
        self._wait_ready(kc.deadline, give_up)

    def _wait_ready(self, deadline: float, give_up: Optional[Callable[[], Optional[str]]] = None) -> None:
        """Until the kernel answers ``kernel_info`` and its IOPub messages arrive (jupyter_client's
        ``wait_for_ready`` rule), then drop the start-up messages.

        Raises:
            RuntimeError: the kernel exited or did not answer by ``deadline``, or ``give_up`` gave a reason.
        """
        kc = self.kc
        assert kc is not None
        while True:
            why = give_up() if give_up is not None else None
            if why:
                raise RuntimeError(f"the kernel did not start: {why}")
            if not self.alive():
                raise RuntimeError(f"the kernel exited during start-up (exit code {self.exit_code()})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the kernel did not answer within {KERNEL_STARTUP_TIMEOUT:g}s")
            msg_id = kc.kernel_info()
            try:
                reply = kc.get_shell_msg(timeout=1)
            except queue.Empty:
                continue
            if _parent_id(reply) != msg_id:
                continue
            try:
                kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            break
        while True:
            try:
                kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                return

    def _resubscribe(self, deadline: float) -> None:
        """A new IOPub socket after a refused message closed the old one (ZeroMQ does not reconnect
        after a protocol error), subscribed before the next cell is sent."""
        kc = self.kc
        assert kc is not None
        kc.stop_iopub_monitor()
        old, kc._iopub_channel = kc._iopub_channel, None
        if old is not None:
            old.close()
        kc.iopub_channel.start()
        self._iopub_broken = False
        self._wait_ready(deadline)

    def stop(self) -> None:
        """Kill the kernel's process group and every process of the run; reap; close sockets and
        remove the kernel folder."""
        self.kill()
        kc, self.kc = self.kc, None
        if kc is not None:
            kc.close()
        if self.proc is not None:
            self.proc.wait()
        files, self.files = self.files, None
        if files is not None:
            files.close()

    def kill(self) -> None:
        """SIGKILL the kernel's process group and every process of the run (may be called from
        another thread while a cell runs: that cell then ends as ``"died"``)."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.iso.kill_all is not None:
            self.iso.kill_all()

    def interrupt(self) -> None:
        """SIGINT the kernel's process group (a running cell gets ``KeyboardInterrupt``)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError):
                pass

    def alive(self) -> bool:
        """Whether the kernel process is running."""
        return self.proc is not None and self.proc.poll() is None

    def wait_if_killed(self, timeout: float = 5.0) -> None:
        """Wait (at most ``timeout`` seconds) for the kernel to exit if a SIGKILL is pending for it:
        a frozen cgroup v1 task killed while frozen dies only once thawed."""
        if self.proc is None or not self.alive():
            return
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                pending = [int(line.split()[1], 16) for line in f if line.startswith(("SigPnd:", "ShdPnd:"))]
        except (OSError, ValueError, IndexError):
            return
        if any(mask & (1 << (signal.SIGKILL - 1)) for mask in pending):
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass

    def log_tail(self) -> str:
        """The kernel's own stderr tail (at most 2000 bytes, for a start failure message), or ``""``."""
        try:
            size = self._log.seek(0, os.SEEK_END)
            self._log.seek(max(0, size - 2000))
            text = self._log.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return f"\n{text}" if text else ""

    def exit_code(self) -> Optional[int]:
        """The dead kernel's exit status (negative: killed by that signal), ``None`` if unknown."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None

    def close_log(self) -> None:
        """Release the log file (after the last :meth:`log_tail`)."""
        self._log.close()

    # ---------------------------------------------------------------- cells
    def run_cell(self, code: str, cell: CellRunResult, deadline: float,
                 interrupt_grace: Optional[float] = None, over_budget: Optional[Callable[[], bool]] = None,
                 cap: Optional[int] = None) -> str:
        """Execute one cell, collecting its output into ``cell`` until the kernel is idle.

        Args:
            code: the cell's source.
            cell: receives stdout/stderr, display bundles (``execute_result`` and ``display_data``)
                and error records, each kind capped at ``output_limit_bytes`` bytes (its
                ``*_truncated`` flag set when something was cut).
            deadline: ``time.monotonic()`` value at which the cell is out of time.
            interrupt_grace: ``None``: at the deadline collect the output in flight and return
                ``"timeout"`` (the caller kills the kernel). Seconds: at the deadline send SIGINT
                and wait that long for the kernel to go idle (the ``KeyboardInterrupt`` record is
                dropped from ``cell.error``).
            over_budget: called while waiting; ``True`` ends the cell as ``"budget"`` (the caller
                kills the kernel).
            cap: bytes each kind of output may take in this cell (default ``output_limit_bytes``).

        Returns:
            ``"ok"`` (idle), ``"interrupted"`` (stopped by the interrupt, kernel alive, state kept),
            ``"timeout"`` (still busy: the caller must kill the kernel), ``"budget"`` or ``"died"``.
        """
        kc = self.kc
        assert kc is not None
        if self._iopub_broken:
            try:
                self._resubscribe(min(deadline, time.monotonic() + _RESUBSCRIBE_S))
            except RuntimeError:  # the kernel does not answer any more: as good as dead
                self.kill()
                return "died"
        self._drain_shell(None)
        msg_id = kc.execute(code, allow_stdin=False, stop_on_error=False)
        budgets = _CellBudgets(self.cap if cap is None else cap)
        outcome = self._collect(msg_id, cell, budgets, deadline, over_budget)
        if outcome in ("ok", "died", "budget"):
            return outcome
        if interrupt_grace is None:
            self._drain(msg_id, cell, budgets, time.monotonic() + _DRAIN_S)
            return "timeout"
        errors = len(cell.error)
        self.interrupt()
        outcome = self._collect(msg_id, cell, budgets, time.monotonic() + interrupt_grace, over_budget)
        if outcome == "ok":
            cell.error[errors:] = [e for e in cell.error[errors:] if e.get("ename") != "KeyboardInterrupt"]
            return "interrupted"
        return outcome

    def _collect(self, msg_id: str, cell: CellRunResult, budgets: "_CellBudgets", deadline: float,
                 over_budget: Optional[Callable[[], bool]]) -> str:
        """Record ``msg_id``'s IOPub messages until idle (``"ok"``), the deadline (``"timeout"``),
        death (``"died"``) or the budget (``"budget"``). A cell whose ``execute_reply`` came but
        whose ``idle`` status was lost (a refused oversized message reset the socket) ends
        :data:`_IDLE_AFTER_REPLY_S` after the reply or the reset, whichever came later. Without a
        reset the idle status is on its way, however late a loaded server reads it: the cell waits
        for it (a reply alone never marks output as lost)."""
        kc = self.kc
        assert kc is not None
        replied: Optional[float] = None
        reset: Optional[float] = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if replied is None and self._drain_shell(msg_id):
                replied = now
            if replied is not None and reset is not None and now - max(replied, reset) > _IDLE_AFTER_REPLY_S:
                return "ok"  # the output that never came (its idle status among it) was refused
            if over_budget is not None and over_budget():
                return "budget"
            if kc.iopub_reset() and self.alive():  # a refused message: that output is lost
                budgets.lost(cell)
                reset = now
                self._iopub_broken = True
            try:
                msg = kc.get_iopub_msg(timeout=min(deadline - now, 0.1))
            except queue.Empty:
                if not self.alive():
                    return "died"
                continue
            except Exception:  # noqa: BLE001 - a message the kernel forged (unsigned, malformed): dropped
                continue
            if _parent_id(msg) == msg_id and self._record(msg, cell, budgets):
                return "ok"

    def _drain_shell(self, msg_id: Optional[str], most: int = 64) -> bool:
        """Read at most ``most`` shell replies waiting (a kernel flooding its shell socket cannot hold
        the caller past its deadline); ``True`` if one answers ``msg_id`` (earlier cells' replies are
        discarded, so a long session does not pile them up)."""
        kc = self.kc
        assert kc is not None
        found = False
        for _ in range(most):
            if not kc.shell_channel.msg_ready():
                break
            try:
                reply = kc.get_shell_msg(timeout=0)
            except queue.Empty:
                break
            except Exception:  # noqa: BLE001 - a message the kernel forged: not an answer
                continue
            found |= msg_id is not None and _parent_id(reply) == msg_id
        return found

    def _drain(self, msg_id: str, cell: CellRunResult, budgets: "_CellBudgets", until: float) -> None:
        """Collect output already sent by a cell that is about to be killed."""
        kc = self.kc
        assert kc is not None
        while time.monotonic() < until:
            try:
                msg = kc.get_iopub_msg(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                return
            except Exception:  # noqa: BLE001 - a forged message: dropped
                continue
            if _parent_id(msg) == msg_id and self._record(msg, cell, budgets):
                return

    @staticmethod
    def _record(msg: dict[str, Any], cell: CellRunResult, budgets: "_CellBudgets") -> bool:
        """Add one IOPub message to ``cell`` under the caps; ``True`` when the kernel went idle.

        Every byte kept counts against its kind's budget, names included (a MIME type, an
        ``ename``), plus :data:`_ENTRY_BYTES` per display entry and per error record, so neither
        many small entries nor long names pass a cap. A message of the wrong shape is dropped."""
        header, content = msg.get("header"), msg.get("content")
        if not isinstance(header, dict) or not isinstance(content, dict):
            return False
        kind = header.get("msg_type")
        if kind == "stream":
            name = "stdout" if content.get("name") == "stdout" else "stderr"
            text = getattr(budgets, name).take(str(content.get("text", "")))
            if text:
                setattr(cell, name, getattr(cell, name) + text)
        elif kind in ("execute_result", "display_data"):
            data = content.get("data")
            bundle = {}
            for mime, value in (data.items() if isinstance(data, dict) else ()):
                display = budgets.display
                if not display.fits(_ENTRY_BYTES + text_bytes(str(mime))):
                    break
                size = 0 if isinstance(value, str) else text_bytes(json.dumps(value))
                kept = display.take_json(value, size)
                if kept is not None and (kept or not isinstance(value, str) or not value):
                    bundle[str(mime)] = kept
            if bundle:
                cell.display.append(bundle)
        elif kind == "error":
            err = budgets.error
            if err.fits(_ENTRY_BYTES):
                ename = err.take(str(content.get("ename", ""))[:_ERROR_NAME_CHARS])
                evalue = err.take(str(content.get("evalue", "")))
                traceback = []
                lines = content.get("traceback")
                for line in lines if isinstance(lines, list) else ():
                    line = err.take(str(line))
                    if not line:
                        break
                    traceback.append(line)
                cell.error.append({"ename": ename, "evalue": evalue, "traceback": traceback})
        elif kind == "status" and content.get("execution_state") == "idle":
            budgets.flag(cell)
            return True
        budgets.flag(cell)
        return False


class _CellBudgets:
    """The byte budgets of one cell: stdout, stderr, display bundles together, error text together."""

    def __init__(self, cap: int) -> None:
        self.stdout, self.stderr, self.display, self.error = Budget(cap), Budget(cap), Budget(cap), Budget(cap)

    def lost(self, cell: CellRunResult) -> None:
        """Output of unknown kind was lost: flag every kind."""
        for budget in (self.stdout, self.stderr, self.display, self.error):
            budget.truncated = True
        self.flag(cell)

    def flag(self, cell: CellRunResult) -> None:
        cell.stdout_truncated = self.stdout.truncated
        cell.stderr_truncated = self.stderr.truncated
        cell.display_truncated = self.display.truncated
        cell.error_truncated = self.error.truncated
