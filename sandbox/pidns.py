"""A run's own PID namespace, entered from the child set-up before exec.

:func:`enter` is called in the forked child (the process the server watches, here called the
*waiter*) after ``unshare(CLONE_NEWPID)``. It forks twice and returns only in the program's process:

* the **waiter** (the server's child, in the server's namespace) forwards ``SIGINT``, ``SIGTERM``,
  ``SIGHUP``, ``SIGQUIT``, ``SIGUSR1``, ``SIGUSR2`` to the init, waits for it, and exits the way the
  program exited (same exit code, or killed by the same signal), so the server's pidfd, return code
  and ``wait4`` rusage stay those of an ordinary child;
* the **init** (pid 1 of the new namespace; it dies with the waiter through ``PR_SET_PDEATHSIG``)
  runs ``in_init`` (e.g. mounting ``/proc``, which must happen inside the namespace), tells the
  waiter it is ready (a failure is raised in the waiter, so the run fails to start), forks the
  program, forwards the same signals to it, reaps every orphan, and when the program exits kills
  every process left in the namespace, reaps them, reports the program's wait status to the waiter
  and exits. The kernel kills whatever is left when an init dies, so nothing of a run outlives it.

The program is pid 2: unlike a pid 1 it keeps the default signal semantics (``abort()`` and
``kill(getpid(), SIGTERM)`` behave as outside), and no zombie of it is left in the server: the init
reaps them all, the waiter reaps the init, the server reaps the waiter.
"""

from __future__ import annotations

import os
import signal
import struct
from typing import Callable, Optional

from . import linux

#: Signals a waiter or init passes on to the process below it (e.g. a notebook interrupt).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_WATCHED = {*FORWARDED, signal.SIGCHLD}


def enter(in_init: Callable[[], None]) -> None:
    """Fork the namespace's init and the program; return in the program (pid 2) only.

    Call after ``unshare(CLONE_NEWPID)`` in a child process, before exec. ``in_init`` runs in the
    init before the program is forked.

    Raises:
        OSError: ``in_init`` or a fork failed (raised in the waiter, so the run fails to start and
            is reported as an infrastructure error, never as the program's exit status).
    """
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    r, w = os.pipe()
    init = os.fork()
    if init:
        os.close(w)
        answer = os.read(r, 4096)
        if answer[:1] != b"R":
            os.waitpid(init, 0)
            raise OSError(f"run set-up failed: {answer[1:].decode(errors='replace') or 'init died'}")
        _keep_only(r)
        _waiter(init, r)
    os.close(r)
    try:
        linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
        in_init()
        program = os.fork()
    except BaseException as exc:  # noqa: BLE001 - handed to the waiter, which raises it
        os.write(w, b"F" + str(exc).encode(errors="replace")[:4000])
        os._exit(255)
    if program == 0:
        os.close(w)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return
    os.write(w, b"R")
    _keep_only(w)
    _init(program, w)


def program_pid(waiter: int) -> Optional[int]:
    """The program's pid (in the caller's namespace) under ``waiter``, the child :func:`enter`
    ran in: the init's first child, read from ``/proc/<pid>/task/<pid>/children``; ``None`` if gone."""
    pid = waiter
    for _ in range(2):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
    return pid


def _keep_only(fd: int) -> None:
    """Close every descriptor but ``fd`` (the run's pipes must reach EOF when the program exits)."""
    os.closerange(0, fd)
    os.closerange(fd + 1, 1 << 20)


def _waiter(init: int, r: int) -> None:
    while True:
        sig = signal.sigwaitinfo(_WATCHED).si_signo
        if sig != signal.SIGCHLD:
            _send(init, sig)
            continue
        pid, status = os.waitpid(init, os.WNOHANG)
        if pid:
            break
    data = os.read(r, 4)
    if len(data) == 4:
        status = struct.unpack("i", data)[0]
    _exit_like(status)


def _init(program: int, w: int) -> None:
    status = None
    while status is None:
        sig = signal.sigwaitinfo(_WATCHED).si_signo
        if sig != signal.SIGCHLD:
            _send(program, sig)
            continue
        for pid, st in _reap(os.WNOHANG):
            if pid == program:
                status = st
    _send(-1, signal.SIGKILL)  # every other process of the namespace
    for _ in _reap(0):
        pass
    os.write(w, struct.pack("i", status))
    os._exit(0)


def _reap(flags: int):
    """Yield ``(pid, status)`` of reaped children until none is left (or, with ``WNOHANG``, ready)."""
    while True:
        try:
            pid, status = os.waitpid(-1, flags)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def _send(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _exit_like(status: int) -> None:
    """Exit with the code, or die by the signal, recorded in wait ``status``."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig != signal.SIGKILL:
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 255)
