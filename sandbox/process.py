"""Run one command under limits: the heart of the executor.

The parent enforces every time limit on the child (never signals in the caller's thread): a
``selectors`` loop feeds stdin, drains stdout/stderr while the program runs (capped per stream, so a
flood never deadlocks or exhausts memory), and watches a pidfd for the exit. On a timeout, and after
any exit, the whole process group and every process of the run's isolation unit (cgroup or uid) are
SIGKILLed and reaped, so no survivor or zombie outlives the call; the output printed so far is kept.

The function is synchronous and thread-safe; async callers run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, ContextManager, Iterable, Optional, Sequence

from .isolation.childsetup import ChildSetup, compose
from .limits import RunLimits, command_rlimits
from .speedups.forkserver import ForkServer, ForkServerUnavailable

#: After the main process exits, how long to wait for the pipes to reach EOF (seconds).
_DRAIN_GRACE = 0.5
#: The wall cap stretches by the program's CPU starvation, up to this multiple of itself (see
#: :class:`Clock`); 10x lets 8 runnable programs per core finish with their honest verdict.
_STARVED_CAP = 10.0
#: Seconds between CPU-time checks once a command's wall time passed its time limit.
_POLL_S = 0.05
#: Attempts to start a program whose file is briefly busy (ETXTBSY, see run_process).
_ETXTBSY_TRIES = 5
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def runqueue_wait(pid: int) -> float:
    """Seconds the main thread of ``pid`` was runnable but waiting for a CPU (0.0 if unknown).

    Read from ``/proc/<pid>/schedstat`` (second field, ``run_delay`` in ns; see the kernel's
    ``Documentation/scheduler/sched-stats.rst``).
    """
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def process_cpu(pid: int, reaped_children: bool = False) -> float:
    """CPU seconds (user + system) of ``pid`` from ``/proc/<pid>/stat``, plus those of its reaped
    children when ``reaped_children``; 0.0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return sum(int(v) for v in fields[11:15 if reaped_children else 13]) / _CLK_TCK


class Clock:
    """When a running command is out of time (see :class:`RunLimits` for the two rules); the CPU
    half counts the command's whole tree: every process of its cgroup (``cpu_seconds``), else the
    main process and its reaped children.

    The time a command waited for a CPU (:meth:`waited`) is, by the run step's rule, the largest
    run-queue wait of any of its processes (the main one, and each in its cgroup when ``pids`` lists
    them; the largest seen at any check, so a worker that ended keeps its share): a program starved
    by a loaded host keeps its honest verdict (BUG-031), whether it computes itself or waits for its
    workers. A program cannot buy time by loading the CPU itself: that load is its own CPU time,
    which the rule caps at the limit. The compile step's stretch is the main process's wait **less
    the CPU time the run's other processes used** (:meth:`starved`). Checks run every 50 ms once the
    wall time passed ``time_limit``; nothing runs past the hard cap ``10 * wall_limit``.
    """

    def __init__(self, limits: "RunLimits", cpu_seconds: Optional[Callable[[], float]] = None,
                 pids: Optional[Callable[[], Iterable[int]]] = None) -> None:
        """Made before the command starts (the cgroup's CPU time is read then); set :attr:`pid`
        and :attr:`start` (``time.monotonic()``) once it runs."""
        self.pid, self.limits, self.start = 0, limits, 0.0
        self._cgroup, self._pids, self._waited = cpu_seconds, pids, 0.0
        self._cpu0 = cpu_seconds() if cpu_seconds else 0.0

    def tree_cpu(self) -> float:
        """CPU seconds used so far by the command's processes."""
        if self._cgroup:
            return self._cgroup() - self._cpu0
        return process_cpu(self.pid, reaped_children=True)

    def waited(self) -> float:
        """Seconds the command waited for a CPU by the run step's rule (see above). Readable until
        the main process is reaped (a zombie keeps its counters)."""
        others = self._pids() if self._pids else ()
        self._waited = max(self._waited, runqueue_wait(self.pid), *(runqueue_wait(p) for p in others))
        return self._waited

    def starved(self, used: float) -> float:
        """Seconds the command waited for a CPU by the compile step's rule, given ``used``, its tree's
        CPU seconds (see above)."""
        return max(0.0, runqueue_wait(self.pid) - max(0.0, used - process_cpu(self.pid)))

    def allowance(self, used: float) -> float:
        """The wait that does not count against the limit: :meth:`waited` or :meth:`starved`."""
        return self.waited() if self.limits.wall_clock else self.starved(used)

    def out_of_time(self, wall: float, cpu: float, waited: float) -> bool:
        """Whether a command that ran ``wall`` seconds, used ``cpu`` CPU seconds and waited
        ``waited`` seconds for a CPU (:meth:`allowance`) is past its time limit."""
        limit = self.limits.time_limit
        if self.limits.wall_clock:
            return cpu > limit or wall - waited > limit
        return min(cpu, wall) > limit

    def next_check(self, now: float) -> Optional[float]:
        """``None`` when the command must be stopped now, else the time of the next check."""
        limits, elapsed = self.limits, now - self.start
        if elapsed < limits.time_limit:
            return self.start + limits.time_limit
        used = self.tree_cpu()
        hard = self.start + limits.wall_limit * _STARVED_CAP
        if limits.wall_clock:
            if now >= hard or self.out_of_time(elapsed, used, self.waited()):
                return None
            return min(now + _POLL_S, hard)
        if used > limits.time_limit:
            return None
        if elapsed < limits.wall_limit:
            return min(now + _POLL_S, self.start + limits.wall_limit)
        cap = min(self.start + limits.wall_limit + self.starved(used), hard)
        return min(now + _POLL_S, cap) if cap > now + 0.005 else None


@dataclass
class ProcessResult:
    """What happened to one command. ``return_code`` follows subprocess: negative = killed by signal."""

    return_code: Optional[int]
    timed_out: bool
    wall_time: float
    cpu_time: float
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    memory_exceeded: bool = False
    disk_exceeded: bool = False
    spawn_error: Optional[str] = None
    cpu_wait: Optional[float] = None  #: a stopped command's longest run-queue wait of any of its processes


class _Capped:
    """A byte buffer that keeps the first ``cap`` bytes and counts the rest."""

    __slots__ = ("parts", "size", "cap", "truncated")

    def __init__(self, cap: int) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.cap = cap
        self.truncated = False

    def add(self, data: bytes) -> None:
        room = self.cap - self.size
        if room <= 0:
            self.truncated = True
            return
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        self.parts.append(data)
        self.size += len(data)

    def value(self) -> bytes:
        return b"".join(self.parts)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Started:
    """A started command: its pid and the server's ends of its pipes (unbuffered file objects)."""

    def __init__(self, pid: int, stdin, stdout, stderr) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr


class _SetupFailed(Exception):
    """A forked child's set-up failed (its message); the child is reaped."""


def _closing(setup: Callable[[], None], exec_fds: Sequence[int]) -> Callable[[], None]:
    """``setup``, then close-on-exec on each of ``exec_fds`` (``subprocess`` made them inheritable)."""
    if not exec_fds:
        return setup

    def child() -> None:
        setup()
        for fd in exec_fds:
            os.set_inheritable(fd, False)
    return child


def _spawn(argv: Sequence[str], cwd: str, env: dict[str, str], child_setup: Callable[[], None],
           spawning: Callable[[], ContextManager[None]], pass_fds: Sequence[int] = ()) -> _Started:
    """Start ``argv`` with ``subprocess`` (fork + set-up + exec).

    Raises:
        OSError: the exec failed (``filename`` is ``argv[0]``), or the change to ``cwd`` did.
        subprocess.SubprocessError: the child's set-up failed.
    """
    for attempt in range(_ETXTBSY_TRIES):
        try:
            with spawning():
                proc = subprocess.Popen(
                    list(argv), cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True, pass_fds=tuple(pass_fds),
                    preexec_fn=child_setup,
                )
            proc.returncode = 0  # reaped by run_process itself (os.wait4), never by Popen
            return _Started(proc.pid, proc.stdin, proc.stdout, proc.stderr)
        except OSError as exc:
            # ETXTBSY: the program file was just written (compiled, restored from the cache) and
            # another thread's fork still holds a copy of its write descriptor until that child's
            # exec; it goes away in milliseconds, so it is retried, never reported.
            if exc.errno == errno.ETXTBSY and attempt + 1 < _ETXTBSY_TRIES:
                time.sleep(0.01 * (attempt + 1))
                continue
            raise
    raise AssertionError("unreachable")


#: The exit status a shell gives a command it cannot execute (126) or cannot find (127), by errno.
_EXEC_STATUS = {errno.EACCES: 126, errno.ENOEXEC: 126, errno.ENOENT: 127}


def program_exec_status(argv: Sequence[str], cwd: str, exc: OSError) -> Optional[int]:
    """The exit status of a command whose exec failed because of the run's own program file.

    When ``argv[0]`` is a path inside ``cwd`` (the run's working folder: the compiled ``./main``),
    the file is the program's own output, which a program can make unexecutable (``chmod``, a
    rewrite, a removal); that is the run's failure, reported as a shell does: 126 for ``EACCES``
    or ``ENOEXEC``, 127 for ``ENOENT``. ``None`` for anything else: an interpreter or toolchain
    outside the working folder, or a set-up failure, is the sandbox's error.
    """
    status = _EXEC_STATUS.get(exc.errno)
    if status is None or not argv or exc.filename != argv[0] or "/" not in argv[0]:
        return None
    root = os.path.normpath(cwd)
    path = os.path.normpath(os.path.join(root, argv[0]))
    return status if path.startswith(root + os.sep) else None


def _fork(forkserver: "ForkServer", argv: Sequence[str], cwd: str, env: dict[str, str], limits: RunLimits,
          setup: Optional[ChildSetup], user: Optional[int], group: Optional[int],
          spawning: Callable[[], ContextManager[None]]) -> _Started:
    """Start ``argv`` as a child of the fork-server; wait until its set-up is done.

    Raises:
        ForkServerUnavailable: nothing was started (spawn it instead).
        _SetupFailed: the child's set-up failed (as ``preexec_fn`` raising in a spawned child).
    """
    pipes = [os.pipe2(os.O_CLOEXEC) for _ in range(4)]  # stdin, stdout, stderr, set-up errors
    theirs = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]]
    ours = [pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0]]
    try:
        forkserver.ready()  # outside the run's PID namespace: a fork-server started there would be in it
        with spawning():
            pid = forkserver.start(argv, cwd, env, command_rlimits(limits), setup, user, group, theirs)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    with open(ours[3], "rb", buffering=0) as errors:
        failed = errors.read()
    if failed:
        for fd in ours[:3]:
            os.close(fd)
        os.waitpid(pid, 0)
        raise _SetupFailed(f"SubprocessError: the child's set-up failed: {failed.decode(errors='replace')}")
    return _Started(pid, open(ours[0], "wb", buffering=0), open(ours[1], "rb", buffering=0),
                    open(ours[2], "rb", buffering=0))


def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: dict[str, str],
    limits: RunLimits,
    stdin: bytes = b"",
    preexec: Optional[Callable[[], None]] = None,
    user: Optional[int] = None,
    group: Optional[int] = None,
    kill_all: Optional[Callable[[], None]] = None,
    memory_exceeded: Optional[Callable[[], bool]] = None,
    seal: Optional[Callable[[], None]] = None,
    disk_exceeded: Optional[Callable[[], bool]] = None,
    cpu_seconds: Optional[Callable[[], float]] = None,
    spawning: Callable[[], ContextManager[None]] = contextlib.nullcontext,
    forkserver: Optional[ForkServer] = None,
    setup: Optional[ChildSetup] = None,
    started: Optional[Callable[[int], None]] = None,
    pids: Optional[Callable[[], Iterable[int]]] = None,
    pass_fds: Sequence[int] = (),
    exec_fds: Sequence[int] = (),
) -> ProcessResult:
    """Run ``argv`` to completion or timeout and return its outcome.

    Args:
        argv: program and arguments.
        cwd: working directory.
        env: the complete environment (nothing is inherited).
        limits: time, size and output limits (see :class:`RunLimits`).
        stdin: bytes written to the child's stdin pipe, which is then closed (never inherited).
        preexec: extra setup run in the child after the rlimits (cgroup join, namespaces), as the
            caller's user.
        user, group: uid/gid to switch to after ``preexec`` (needs root; supplementary groups are
            dropped). A refused switch is a ``spawn_error``, never a run as root.
        kill_all: kills every process of the run's isolation unit (cgroup or uid), called after exit.
        memory_exceeded: tells, after the run, whether the memory limit was hit.
        seal: last child step, after the user switch (no-new-privs, seccomp).
        disk_exceeded: tells, after the run, whether the disk quota is full.
        cpu_seconds: CPU seconds used so far by the whole run (cgroup); the command's CPU time is
            its growth during the command (else the rusage of the reaped process tree).
        spawning: context manager the child is started inside (a fresh PID namespace, see
            :mod:`judgebox.sandbox.isolation.pidns`).
        forkserver: fork the child from this warm interpreter (``argv`` must be ``[python, script, *args]``,
            :func:`judgebox.sandbox.speedups.forkserver.is_script_command`); it applies ``setup`` (the data form of
            ``preexec`` and ``seal``), the rlimits and the user switch exactly as a spawned child
            does. If the fork-server fails, the command is spawned.
        setup: see ``forkserver``.
        started: called with the child's pid once it is started (server side).
        pids: the run's processes now (its cgroup's), whose waits for a CPU the time rule forgives
            (:class:`Clock`); without it, only the main process's.
        pass_fds: descriptors the child keeps, at the same numbers (``subprocess``'s ``pass_fds``;
            such a command is never forked from ``forkserver``).
        exec_fds: those of ``pass_fds`` that the exec closes (close-on-exec set last in the child):
            the program may be one of them (``/proc/self/fd/<n>``), which is then open nowhere.

    Returns:
        a :class:`ProcessResult`; a program that could not be started has ``spawn_error`` set,
        except a program file inside ``cwd`` that could not be executed: then ``return_code`` is
        126 or 127 and ``stderr`` says why (:func:`program_exec_status`).
    """
    clock = Clock(limits, cpu_seconds, pids)
    proc: Optional[_Started] = None
    if forkserver is not None and not pass_fds:
        try:
            proc = _fork(forkserver, argv, cwd, env, limits, setup, user, group, spawning)
        except ForkServerUnavailable:
            proc = None  # started the ordinary way below
        except _SetupFailed as exc:
            return ProcessResult(None, False, 0.0, 0.0, b"", b"", spawn_error=str(exc))
    if proc is None:
        try:
            proc = _spawn(argv, cwd, env, _closing(compose(command_rlimits(limits), preexec, user, group, seal),
                                                   exec_fds), spawning, pass_fds)
        except OSError as exc:
            status = program_exec_status(argv, cwd, exc)
            if status is None:
                return ProcessResult(None, False, 0.0, 0.0, b"", b"", spawn_error=f"{type(exc).__name__}: {exc}")
            why = (f"{argv[0]}: {exc.strerror} (the program file in the working folder could not be "
                   f"executed; exit status {status}, as a shell reports)\n")
            return ProcessResult(status, False, 0.0, 0.0, b"", why.encode())
        except subprocess.SubprocessError as exc:
            return ProcessResult(None, False, 0.0, 0.0, b"", b"", spawn_error=f"{type(exc).__name__}: {exc}")
    # The clock starts once the program exists: waiting for the fork-server (its start, on a loaded
    # host, can take seconds) is the sandbox's time, not the program's, and no run-queue counter
    # of the program's covers it.
    clock.start = start = time.monotonic()
    if started is not None:
        started(proc.pid)

    out, err = _Capped(limits.output_limit), _Capped(limits.output_limit)
    sel = selectors.DefaultSelector()
    pidfd = os.pidfd_open(proc.pid)
    sel.register(pidfd, selectors.EVENT_READ, "exit")
    for pipe, buf in ((proc.stdout, out), (proc.stderr, err)):
        os.set_blocking(pipe.fileno(), False)
        sel.register(pipe.fileno(), selectors.EVENT_READ, buf)
    pending = memoryview(stdin)
    if pending:
        os.set_blocking(proc.stdin.fileno(), False)
        sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
    else:
        proc.stdin.close()

    clock.pid = proc.pid
    deadline = start + limits.time_limit
    timed_out = exited = False
    waited = 0.0  # seconds the command waited for a CPU, read at its exit when its wall time passed the limit
    stopped_wait: Optional[float] = None  # the same, read when the command was stopped at its limit
    ended: Optional[float] = None
    drain_deadline = None
    open_pipes = 2
    try:
        while open_pipes or not exited:
            now = time.monotonic()
            limit = drain_deadline if exited else deadline
            if now >= limit:
                if not exited:
                    check = clock.next_check(now)
                    if check is not None:
                        deadline = check
                        continue
                    timed_out = True
                    stopped_wait = clock.waited()  # before the kill: the counters are live
                    _kill_group(proc.pid)
                    if kill_all:
                        kill_all()
                    exited = True
                    drain_deadline = time.monotonic() + _DRAIN_GRACE
                    continue
                break  # pipes held open by an escaped process: give up on them
            for key, _ in sel.select(limit - now):
                tag = key.data
                if tag == "exit":
                    sel.unregister(pidfd)
                    exited = True
                    ended = time.monotonic()  # the verdict's wall time: draining the pipes is not the program's
                    if ended - start > limits.time_limit:  # within it, no wait can change the verdict
                        waited = clock.allowance(clock.tree_cpu())  # a zombie still has its counters
                    _kill_group(proc.pid)
                    if kill_all:
                        kill_all()
                    drain_deadline = time.monotonic() + _DRAIN_GRACE
                elif tag == "stdin":
                    try:
                        n = os.write(key.fd, pending[:65536])
                        pending = pending[n:]
                    except (BrokenPipeError, OSError):
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(key.fd)
                        proc.stdin.close()
                else:
                    try:
                        chunk = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if chunk:
                        tag.add(chunk)
                    else:
                        sel.unregister(key.fd)
                        open_pipes -= 1
    finally:
        sel.close()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            try:
                pipe.close()
            except OSError:
                pass
        os.close(pidfd)
        _kill_group(proc.pid)
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = (ended or time.monotonic()) - start
        rc = os.waitstatus_to_exitcode(status)
        if kill_all:
            kill_all()

    cpu = max(rusage.ru_utime + rusage.ru_stime, clock.tree_cpu() if cpu_seconds else 0.0)
    if rc in (-signal.SIGXCPU, -signal.SIGKILL) and cpu >= limits.time_limit:
        timed_out = True
    if clock.out_of_time(wall, cpu, waited):
        timed_out = True
    return ProcessResult(
        return_code=None if timed_out else rc,
        timed_out=timed_out,
        wall_time=wall,
        cpu_time=cpu,
        stdout=out.value(),
        stderr=err.value(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        memory_exceeded=bool(memory_exceeded and memory_exceeded()),
        disk_exceeded=bool(disk_exceeded and disk_exceeded()),
        cpu_wait=(stopped_wait if stopped_wait is not None else waited) if timed_out else None,
    )
