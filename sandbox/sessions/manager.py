"""Sandbox sessions: one long-lived IPython kernel per session, the state behind ``code_interpreter``.

A session is one :class:`~judgebox.sandbox.sessions.jupyter.Kernel` (the launcher ``/run_jupyter`` uses, so the
same child set-up, rlimits and isolation as ``run_code``) in its own working directory, under its
own :meth:`~judgebox.sandbox.isolation.unit.Isolation.for_run` (run uid, memory/pids cgroup, network namespace)
held for the session's whole life. Variables, imports and files persist from cell to cell.

Lifecycle and limits (one :class:`SessionManager` per executor; the server and ``LocalSandbox``
each own one):

* at most ``max_sessions`` live sessions (kernels being started included), and only while the
  server's file descriptors hold one more (:mod:`~judgebox.sandbox.sessions.descriptors`); one more
  raises :class:`~judgebox.sandbox.errors.Overloaded` (HTTP 504 + ``Retry-After``);
* a session uses CPU only while a cell runs: between cells every process of the session is frozen
  (cgroup v2 ``cgroup.freeze``, v1 ``freezer.state``), so a thread or daemon a cell left behind
  computes nothing while the session is idle; callers hold an execution slot only while a cell
  runs (and while the kernel starts);
* ``session_cpu_limit`` is the CPU seconds of the whole session (every process of its cgroup,
  every kernel it had): a cell that reaches it ends with its kernel killed
  (``KernelDied``, state lost), and every later cell fails the same way at once;
* a cell's ``timeout`` first interrupts the kernel (SIGINT: ``KeyboardInterrupt`` in the cell,
  state kept); a cell still busy ``interrupt_grace`` seconds later gets its kernel killed (state
  lost). Output printed before the timeout is returned either way;
* a kernel that dies (``os._exit``, the memory limit, the CPU budget ``session_cpu_limit``) or is
  killed is replaced by a fresh one at the next call, in the same working directory (files stay);
  the first result after the loss says ``state="lost"`` with the reason in ``message``. A session
  whose own files leave no room for a kernel (they fill its memory limit, or its disk when the
  kernel's files are written) answers ``Failed`` at once (``MemoryLimitExceeded``, or ``KernelDied``
  for the disk), never ``SandboxError``: it is the program's doing;
* a session idle for its ``idle_timeout`` is closed by a reaper thread; a closed session's kernel,
  every process it started, its cgroup, uid lease and working directory are gone.

Session ids are ``<replica>-<boot>-<token>`` (see :class:`~judgebox.sandbox.models.SessionInfo`), so a
gateway can route a session's calls to the replica holding it and a restarted server can say
that an id belongs to its predecessor.

Sessions are capabilities: ``create`` answers a ``session_token`` (32 random bytes, URL-safe) that
only its creator receives, and every call of the session needs it (the id alone opens nothing:
an id can be seen, a token is never shown again); the server keeps only its SHA-256. A session is
listed only to a caller who presents its token.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import hmac
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import replace
from typing import TYPE_CHECKING, AsyncIterator, Iterable, Iterator, Optional

from judgebox.sandbox.errors import Overloaded, SandboxRequestError, SessionNotFound
from judgebox.sandbox.executor import Executor
from judgebox.sandbox.models import (
    CellRunResult,
    CreateSessionRequest,
    RunStatus,
    SessionInfo,
    SessionList,
    SessionRunRequest,
    SessionRunResult,
)

from .descriptors import SESSION_FDS, fd_limit, headroom, reserve, session_fits

if TYPE_CHECKING:
    from .kernel import Kernel

log = logging.getLogger("judgebox.sessions")


def token_hash(token: str) -> bytes:
    """What the server keeps of a session token (its SHA-256): the token itself is only its creator's."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

#: Seconds between two passes of the idle reaper.
REAP_INTERVAL_S = 1.0
#: Seconds a close waits for a running cell to end after its kernel was killed (then cleans up anyway).
CLOSE_WAIT_S = 10.0
#: MiB of its memory limit under which a session's kernel is not even started (ipykernel alone
#: takes about 45 MiB): its files fill the rest. Above it, a start the memory limit kills is seen
#: at once (the wait for the kernel gives up), never after the start-up timeout.
KERNEL_START_MB = 32
#: Closed session ids remembered (with the reason) for the 404 message.
_REMEMBER_CLOSED = 4096


class SessionStartError(RuntimeError):
    """The session's kernel could not start (infrastructure, HTTP 500)."""


def _is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` or an exception it was raised from is ``ENOSPC``/``EDQUOT`` (a full disk)."""
    return _errno_in_chain(exc, (errno.ENOSPC, errno.EDQUOT))


def out_of_descriptors(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, is ``EMFILE``/``ENFILE`` (an ``OSError``
    or a ``zmq.ZMQError``): the process or the host ran out of file descriptors."""
    return _errno_in_chain(exc, (errno.EMFILE, errno.ENFILE))


def _errno_in_chain(exc: Optional[BaseException], numbers: tuple[int, ...]) -> bool:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if getattr(exc, "errno", None) in numbers:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class KernelSession:
    """One session: an isolation unit, a working directory and (while alive) one kernel.

    Cells run one at a time, in the order they arrive: a face holds the session's turn
    (:meth:`turn` for threads, :meth:`aturn` on the server's event loop) before it takes an
    execution slot and calls :meth:`run`, so a cell sent while another runs waits for it (BUG-207),
    without holding a slot meanwhile. :meth:`run` itself still refuses a second concurrent call
    (HTTP 409) from a caller that took no turn. :meth:`close` may be called from any thread, also
    while a cell runs (the kernel is killed).
    """

    def __init__(self, session_id: str, executor: Executor, memory_MB: int, idle_timeout: float) -> None:
        self.session_id, self.executor = session_id, executor
        self.token_hash = b""  #: set by the manager: the hash of the token its creator received
        self.memory_MB, self.idle_timeout = memory_MB, idle_timeout
        self.cells = 0
        self.last_used = time.monotonic()
        self.busy = False
        self.closed = False
        self.kernel: Optional[Kernel] = None
        self._lost = ""  # a loss not yet reported to the caller
        self._run_lock = threading.Lock()
        self._turns = threading.Condition()
        self._waiting: deque[object] = deque()  # the threads' turns, first in line first
        self._aturns: Optional[asyncio.Lock] = None  # the event loop's (asyncio.Lock is first come, first served)
        #: cells waiting for their turn (``SessionInfo.queued``)
        self.queued = 0
        self._state_lock = threading.Lock()
        self._cleanup_lock = threading.Lock()
        self._stack = contextlib.ExitStack()
        self._cleaned = False
        self._oom_at_start = False  # the memory limit killed the kernel being started

    # ---------------------------------------------------------------- lifecycle
    def open(self) -> None:
        """Enter the isolation, make the working directory and start the kernel.

        Raises:
            SessionStartError: the kernel did not start (everything made so far is released).
        """
        ex = self.executor
        try:
            self.iso = self._stack.enter_context(ex.isolation.for_run(ex.root, self.memory_MB, reserve=False))
            self.workdir = self._stack.enter_context(ex.workdir({}, self.iso))
            self._start_kernel()
            self._freeze()
        except SessionStartError:
            self._cleanup()
            raise
        except Exception as exc:  # no run uid free, workdir root unreachable: infrastructure
            self._cleanup()
            raise SessionStartError(f"the session could not be set up: {type(exc).__name__}: {exc}") from exc
        except BaseException:
            self._cleanup()
            raise

    def _start_kernel(self) -> None:
        from .kernel import Kernel  # jupyter_client is imported on first use only

        s = self.executor.settings
        limits = replace(self.executor.limits(s.max_run_timeout), wall_limit=s.session_cpu_limit)
        kernel = Kernel(self.executor, self.iso, self.workdir, limits)
        self._oom_at_start = False

        def killed_for_memory() -> Optional[str]:
            self._oom_at_start = self._oom_at_start or self._memory_exceeded()
            return "the session's memory limit killed it" if self._oom_at_start else None

        try:
            kernel.start(killed_for_memory)
        except Exception as exc:
            kernel.stop()
            tail = kernel.log_tail()
            kernel.close_log()
            raise SessionStartError(f"kernel failed to start: {type(exc).__name__}: {exc}{tail}") from exc
        self.kernel = kernel

    def _freeze(self) -> None:
        """Freeze every process of the session (between cells)."""
        if self.iso.freeze is not None:
            self.iso.freeze()

    def _thaw(self) -> None:
        if self.iso.thaw is not None:
            self.iso.thaw()

    def _cpu_used(self) -> Optional[float]:
        """CPU seconds the session used so far (all its processes), ``None`` where not counted."""
        return self.iso.cpu_seconds() if self.iso.cpu_seconds is not None else None

    def _over_budget(self) -> bool:
        used = self._cpu_used()
        return used is not None and used >= self.executor.settings.session_cpu_limit

    def close(self) -> None:
        """Close the session: kill its kernel and every process it started, remove its folder,
        cgroup and uid lease. Idempotent; during a running cell the cell ends as killed."""
        with self._state_lock:
            if self.closed:
                return
            self.closed = True
            running = self.busy
        if running and self.kernel is not None:
            self.kernel.kill()  # the running cell sees the death and ends as killed
            # wait for it (bounded), so that when close returns every process of the session is gone
            if self._run_lock.acquire(timeout=CLOSE_WAIT_S):
                self._run_lock.release()
        self._cleanup()

    def _cleanup(self) -> None:
        with self._cleanup_lock:  # a second caller waits until the first has finished cleaning
            if self._cleaned:
                return
            self._cleaned = True
            self._stop_kernel()
            self._stack.close()

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """Hold this session's turn: wait until every cell that arrived before has finished."""
        me = object()
        with self._turns:
            self._waiting.append(me)
            self.queued += 1
            while self._waiting[0] is not me:
                self._turns.wait()
            self.queued -= 1
        try:
            yield
        finally:
            with self._turns:
                self._waiting.popleft()
                self._turns.notify_all()

    @contextlib.asynccontextmanager
    async def aturn(self) -> AsyncIterator[None]:
        """:meth:`turn` for coroutines of one event loop (the server's)."""
        if self._aturns is None:
            self._aturns = asyncio.Lock()
        self.queued += 1
        try:
            await self._aturns.acquire()
        finally:
            self.queued -= 1
        try:
            yield
        finally:
            self._aturns.release()

    def info(self) -> SessionInfo:
        """This session as the API describes it."""
        return SessionInfo(session_id=self.session_id, memory_limit_MB=self.memory_MB,
                           idle_timeout=self.idle_timeout, idle_s=round(self.idle_s(), 3), cells=self.cells,
                           busy=self.busy, queued=self.queued, executor_pod_name=self.executor.settings.pod_name)

    def idle_s(self) -> float:
        """Seconds since the last call ended (0 while a cell runs)."""
        return 0.0 if self.busy else time.monotonic() - self.last_used

    # ---------------------------------------------------------------- cells
    def run(self, code: str, timeout: float) -> SessionRunResult:
        """Run one cell for at most ``timeout`` seconds (see the module docstring).

        Raises:
            SandboxRequestError: (409) another cell of this session is running (a caller that took
                no :meth:`turn`).
            SessionNotFound: the session was closed.
        """
        if not self._run_lock.acquire(blocking=False):
            raise SandboxRequestError(f"session {self.session_id!r} is already running a cell: "
                                      "send one cell at a time", 409)
        try:
            with self._state_lock:
                if self.closed:
                    raise SessionNotFound(f"session {self.session_id!r} is closed", self.session_id)
                self.busy = True
            return self._run(code, timeout)
        finally:
            with self._state_lock:
                self.busy = False
                self.cells += 1
                self.last_used = time.monotonic()
                closed = self.closed
            self._run_lock.release()
            if closed:
                self._cleanup()

    def _run(self, code: str, timeout: float) -> SessionRunResult:
        self._thaw()
        if self.kernel is not None:
            self.kernel.wait_if_killed()  # killed while frozen: it exits now, before the cell is sent
        try:
            return self._run_thawed(code, timeout)
        finally:
            if self.kernel is not None and not self.closed:
                self._freeze()

    def _budget_spent(self) -> str:
        limit = self.executor.settings.session_cpu_limit
        return (f"the kernel was killed: the session used its CPU budget of {limit:g} CPU seconds "
                "(session_cpu_limit); create a new session")

    def _run_thawed(self, code: str, timeout: float) -> SessionRunResult:
        pod = self.executor.settings.pod_name
        if self._over_budget():
            lost = self.kernel is not None
            if self.kernel is not None:
                self._stop_kernel()
            why = self._budget_spent()
            return SessionRunResult(status=RunStatus.Failed, error={"ename": "KernelDied", "evalue": why,
                                                                    "traceback": []},
                                    state="lost" if lost or self._lost else "kept", message=why,
                                    executor_pod_name=pod)
        if self.kernel is not None and not self.kernel.alive():
            rc = self.kernel.exit_code()
            memory = self._memory_exceeded()
            self._lost = ("the kernel was killed for exceeding the memory limit while idle" if memory
                          else f"the kernel died while idle (exit code {rc})")
            self._stop_kernel()
        if self.kernel is None:
            full = self._no_room_for_a_kernel()
            if not full:
                try:
                    self._start_kernel()
                except SessionStartError as exc:
                    full = self._no_room_for_a_kernel(exc)
                    if not full:
                        return SessionRunResult(status=RunStatus.SandboxError, message=str(exc),
                                                executor_pod_name=pod, state="lost" if self._lost else "kept")
            if full:  # the session's own doing: the program's failure, at once, never SandboxError
                ename, why = full
                state, message = ("lost", f"state lost before this cell: {self._lost}; {why}") if self._lost \
                    else ("kept", why)  # as after session_cpu_limit: a loss is said once
                self._lost = ""
                return SessionRunResult(status=RunStatus.Failed, error={"ename": ename, "evalue": why, "traceback": []},
                                        memory_exceeded=ename == "MemoryLimitExceeded", state=state,
                                        message=message, executor_pod_name=pod)
        state, message = ("lost", f"state lost before this cell: {self._lost}") if self._lost else ("kept", "")
        self._lost = ""
        kernel = self.kernel
        assert kernel is not None
        cell = CellRunResult()
        start = time.monotonic()
        outcome = kernel.run_cell(code, cell, start + timeout, self.executor.settings.interrupt_grace,
                                  self._over_budget)
        elapsed = round(time.monotonic() - start, 6)
        if self.closed:
            outcome = "closed"
        memory = self._memory_exceeded()
        error = cell.error[-1] if cell.error else None
        rc = kernel.exit_code() if outcome in ("died", "closed") else None
        if outcome == "interrupted":
            error = {"ename": "TimeLimitExceeded", "traceback": [],
                     "evalue": f"the cell did not finish within {timeout:g}s; it was interrupted and the "
                               "session state is kept"}
        elif outcome in ("timeout", "died", "closed", "budget"):
            self._stop_kernel()  # every process of the session goes; the folder stays
            state = "lost"
            if outcome == "budget":
                why = self._budget_spent()
                error = {"ename": "KernelDied", "traceback": [], "evalue": why}
            elif outcome == "timeout":
                why = (f"the cell did not finish within {timeout:g}s and did not stop within "
                       f"{self.executor.settings.interrupt_grace:g}s of an interrupt; the kernel was killed")
                error = {"ename": "TimeLimitExceeded", "traceback": [], "evalue": why}
            elif outcome == "closed":
                why = "the session was closed while this cell ran"
                error = {"ename": "KernelDied", "traceback": [], "evalue": why}
            elif memory:
                why = f"the kernel was killed for exceeding the memory limit of {self.memory_MB} MiB"
                error = {"ename": "MemoryLimitExceeded", "traceback": [], "evalue": why}
            else:
                why = f"the kernel died during the cell (exit code {rc})"
                error = {"ename": "KernelDied", "traceback": [], "evalue": why}
            message = f"{message}; {why}" if message else why
        status = RunStatus.Success if error is None else RunStatus.Failed
        return SessionRunResult(
            status=status, stdout=cell.stdout, stderr=cell.stderr, display=cell.display, error=error,
            execution_time=elapsed, memory_exceeded=memory, timed_out=outcome in ("interrupted", "timeout"),
            state=state, stdout_truncated=cell.stdout_truncated, stderr_truncated=cell.stderr_truncated,
            display_truncated=cell.display_truncated, error_truncated=cell.error_truncated, message=message,
            executor_pod_name=pod)

    def _no_room_for_a_kernel(self, failed: Optional[BaseException] = None) -> Optional[tuple[str, str]]:
        """``(ename, why)`` when the session's own files leave no room for a kernel (checked before
        a restart, and after a start that ``failed``), else ``None``: its files fill its memory limit
        (tmpfs pages count towards it) so that less than :data:`KERNEL_START_MB` is left, the memory
        limit killed the starting kernel, or its disk was full when the kernel's files were written."""
        used = self.iso.disk_used() if self.iso.disk_used is not None else 0
        left_MB = (self.memory_MB << 20) - used >> 20
        if left_MB < KERNEL_START_MB or (failed is not None and self._oom_at_start):
            return "MemoryLimitExceeded", (
                f"no kernel can start: the session's files take {used >> 20} MiB of its memory limit of "
                f"{self.memory_MB} MiB (files on its disk count towards it), leaving {max(left_MB, 0)} MiB, "
                "too little for a kernel (about 45 MiB); the files stay, so create a new session")
        if failed is not None and (_is_disk_full(failed) or (self.iso.disk_exceeded is not None
                                                              and self.iso.disk_exceeded())):
            return "KernelDied", ("no kernel can start: the session's disk is full (disk_limit_MB) and the "
                                  "kernel's own files could not be written; create a new session")
        return None

    def _stop_kernel(self) -> None:
        """Stop the kernel (every process of the session goes; the folder stays)."""
        kernel, self.kernel = self.kernel, None
        if kernel is not None:
            kernel.stop()
            kernel.close_log()

    def _memory_exceeded(self) -> bool:
        return bool(self.iso.memory_exceeded and self.iso.memory_exceeded())


class SessionManager:
    """The live sessions of one executor: create, find, run, close, list, reap.

    Args:
        executor: supplies isolation, limits and settings (``max_sessions``, ``replica_id``,
            ``max_session_idle_timeout``, ``default_session_timeout``, ``max_run_timeout``,
            ``max_code_bytes``, ``interrupt_grace``, ``session_cpu_limit``).

    Thread-safe. Blocking methods (:meth:`create`, :meth:`run`, :meth:`delete`) belong in worker
    threads when called from an event loop.
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        s = executor.settings
        self.max_sessions = s.max_sessions
        self.replica = s.replica_id or re.sub(r"[^A-Za-z0-9.-]", ".", s.pod_name) or "judgebox"
        self.boot = secrets.token_hex(4)
        self._sessions: dict[str, KernelSession] = {}
        self._starting = 0
        self._closed: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper: Optional[threading.Thread] = None

    @property
    def live(self) -> int:
        """Live sessions, kernels being started included."""
        return len(self._sessions) + self._starting

    def create(self, request: CreateSessionRequest) -> SessionInfo:
        """Start a session.

        Raises:
            Overloaded: (HTTP 504 with ``Retry-After``) ``max_sessions`` are live
                (``reason="max_sessions"``), or the server's descriptors leave no room for one more
                session (``reason="fd_headroom"``: :mod:`~judgebox.sandbox.sessions.descriptors`; also
                when a descriptor could not be had while the kernel started).
            SessionStartError: the kernel did not start (infrastructure, HTTP 500).
        """
        s = self.executor.settings
        missing = self.executor.unsupported("python")
        if missing:
            raise SessionStartError(missing)
        with self._lock:
            self.check_room()
            self._starting += 1
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap_loop, name="judgebox-session-reaper",
                                                daemon=True)
                self._reaper.start()
        sid = f"{self.replica}-{self.boot}-{secrets.token_hex(12)}"
        token = secrets.token_urlsafe(32)
        session = KernelSession(sid, self.executor, self.executor.memory_MB(request.memory_limit_MB),
                                min(request.idle_timeout, s.max_session_idle_timeout))
        session.token_hash = token_hash(token)
        try:
            session.open()
        except SessionStartError as exc:
            if out_of_descriptors(exc):  # everything it made is released: it is a refusal, not a failure
                raise self._no_descriptors(f"a descriptor could not be had ({exc})") from None
            raise
        finally:
            with self._lock:
                self._starting -= 1
        with self._lock:
            self._sessions[sid] = session
        return session.info().model_copy(update={"session_token": token})

    def check_room(self) -> None:
        """Raise :class:`Overloaded` (HTTP 504, ``Retry-After``) unless one more session may start:
        fewer than ``max_sessions`` live, and descriptors left for it (:func:`session_fits`)."""
        if self.live >= self.max_sessions:
            raise Overloaded(f"{self.live} live sessions (max_sessions={self.max_sessions}): close "
                             "sessions or wait for idle ones to be reaped", "max_sessions",
                             retry_after=REAP_INTERVAL_S * 5)
        if not session_fits(self.executor.settings.max_concurrency, self._starting):
            raise self._no_descriptors(f"{headroom()} left of {fd_limit()}")

    def _no_descriptors(self, why: str) -> Overloaded:
        return Overloaded(f"no file descriptors left for one more session ({why}; a session holds about "
                          f"{SESSION_FDS}, {reserve(self.executor.settings.max_concurrency)} are kept for runs): "
                          f"close sessions, or raise the server's open-files limit (ulimit -n)",
                          "fd_headroom", retry_after=REAP_INTERVAL_S * 5)

    def get(self, session_id: str, token: Optional[str]) -> KernelSession:
        """The live session ``session_id``, for the holder of its ``token`` (what ``POST /sessions``
        answered: the id alone opens nothing).

        Raises:
            SandboxRequestError: (401) no token was given.
            SessionNotFound: the session is not live here (the message says why), or the token is not
                its token (then it reads as unknown: the answer says nothing of another's session).
        """
        if not token:
            raise SandboxRequestError(f"session {session_id!r}: no session token; send the session_token that "
                                      "POST /sessions answered (HTTP header X-Session-Token)", 401)
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            raise SessionNotFound(self.why_unknown(session_id), session_id)
        if not hmac.compare_digest(session.token_hash, token_hash(token)):
            raise SessionNotFound(f"session {session_id!r} is unknown on this server for this token: a session's "
                                  "calls need the session_token its creator received", session_id)
        return session

    def check_code(self, code: str) -> None:
        """Raise ``SandboxRequestError`` (422) when ``code`` exceeds ``max_code_bytes``."""
        limit = self.executor.settings.max_code_bytes
        size = len(code.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise SandboxRequestError(f"code: {size} bytes exceeds the limit of {limit} bytes per cell "
                                      "(max_code_bytes); send a shorter cell", 422)

    def run(self, session_id: str, request: SessionRunRequest, token: Optional[str]) -> SessionRunResult:
        """Run one cell in ``session_id`` for the holder of its ``token`` (``timeout`` defaulted and
        clamped; see :class:`KernelSession`). Raises as :meth:`get` does."""
        self.check_code(request.code)
        session = self.get(session_id, token)
        s = self.executor.settings
        timeout = min(request.timeout or s.default_session_timeout, s.max_run_timeout)
        return session.run(request.code, timeout)

    def delete(self, session_id: str, token: Optional[str]) -> None:
        """Close ``session_id`` for the holder of its ``token``. Raises as :meth:`get` does."""
        self.get(session_id, token)
        self._close(session_id, "closed by its owner (DELETE)")

    def _close(self, session_id: str, reason: str) -> None:
        """Close ``session_id`` (the server's own doing: reaped, shut down). Raises
        :class:`SessionNotFound` when it is not live."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
            if session is not None:
                self._remember(session_id, reason)
        if session is None:
            raise SessionNotFound(self.why_unknown(session_id), session_id)
        session.close()

    def list(self, tokens: Optional[Iterable[str]] = ()) -> SessionList:
        """The live sessions whose token is one of ``tokens`` (a client sees only its own; ``None``:
        all, for the embedded sandbox's own process; those still starting are not listed), their
        number whoever holds them (``live``), and ``max_sessions``."""
        live = list(self._sessions.values())
        mine = None if tokens is None else {token_hash(t) for t in tokens if t}
        return SessionList(sessions=[s.info() for s in live if mine is None or s.token_hash in mine], live=len(live),
                           max_sessions=self.max_sessions)

    def reap(self) -> int:
        """Close every session idle for longer than its ``idle_timeout``; returns how many."""
        expired = [sid for sid, s in list(self._sessions.items()) if s.idle_s() > s.idle_timeout]
        for sid in expired:
            timeout = self._sessions[sid].idle_timeout if sid in self._sessions else 0
            with contextlib.suppress(SessionNotFound):
                self._close(sid, f"reaped after {timeout:g}s idle (idle_timeout)")
        return len(expired)

    def close_all(self) -> None:
        """Close every session and stop the reaper (server shutdown)."""
        self._stop.set()
        for sid in list(self._sessions):
            with contextlib.suppress(SessionNotFound):
                self._close(sid, "closed when the server shut down")

    def why_unknown(self, session_id: str) -> str:
        """The 404 message for an id that is not live here: closed, reaped, restarted, elsewhere."""
        if session_id in self._closed:
            return (f"session {session_id!r} is closed ({self._closed[session_id]}); its state is lost: "
                    "create a new session")
        parts = session_id.rsplit("-", 2)
        if len(parts) != 3 or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
            return (f"session {session_id!r} is unknown: not a session id (<replica>-<boot>-<token>); "
                    "create a session with POST /sessions")
        replica, boot, _ = parts
        if replica != self.replica:
            return (f"session {session_id!r} is unknown here: it belongs to replica {replica!r}, this is "
                    f"{self.replica!r}; send a session's calls to the endpoint that created it")
        if boot != self.boot:
            return (f"session {session_id!r} was created before this server restarted; its state is lost: "
                    "create a new session")
        return f"session {session_id!r} is unknown on this server; its state is lost: create a new session"

    def _remember(self, session_id: str, reason: str) -> None:
        self._closed[session_id] = reason
        while len(self._closed) > _REMEMBER_CLOSED:
            self._closed.popitem(last=False)

    def _reap_loop(self) -> None:
        while not self._stop.wait(REAP_INTERVAL_S):
            try:
                n = self.reap()
            except Exception:  # noqa: BLE001 - the reaper must survive one bad session
                log.exception("session reaper pass failed")
                continue
            if n:
                log.info("reaped %d idle session(s)", n)
