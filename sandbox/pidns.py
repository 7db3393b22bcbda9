"""A run's own PID namespace, made by the server thread that starts the run.

The program must not be the namespace's init (pid 1 ignores signals it has no handler for, so
``abort()`` or ``kill(getpid(), SIGTERM)`` would behave differently), and an extra fork of the
server's whole image per run costs milliseconds. So :meth:`PidNamespace.spawning` wraps the start
of a command in the server thread:

1. ``unshare(CLONE_NEWPID)`` in that thread only: its next children go into a new namespace;
2. the namespace's init, ``sleep infinity`` with ``SIGCHLD`` ignored (:data:`INIT`: coreutils'
   ``env --ignore-signal=CHLD`` execs it, no fork), is started (``vfork``: cheap) and becomes pid 1;
3. the caller starts the program, which becomes pid 2 (still the server's direct child, so its
   exit status, ``wait4`` rusage and pidfd are exactly those of an ordinary child); its pre-exec
   set-up checks that it is pid 2 (:func:`sandbox.childsetup.check_program_pid`) and mounts ``/proc`` there;
4. ``setns`` puts the thread back in the server's namespace.

Inside :meth:`PidNamespace.spawning` the thread must not start threads (``clone(CLONE_THREAD)`` is
``EINVAL`` while its children's namespace differs from its own): start only the process there.

:meth:`PidNamespace.kill` kills every init this run started (:meth:`PidNamespace.reap` reaps them
when the request ends): the kernel then kills every process left in that namespace and reaps them, so nothing of a run outlives it and no zombie is left
in the server. Orphans of the program are re-parented to the init; because the init ignores
``SIGCHLD``, the kernel reaps them as they exit (POSIX: the children of a process that ignores
``SIGCHLD`` do not become zombies), so a program that leaves many short-lived orphans never runs out
of its pids cgroup on zombies. The
program's parent is outside its namespace, so it sees ``getppid() == 0``; it cannot see or signal
the server (``ESRCH``) and cannot signal the init (root, pid 1).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from typing import Iterator

from . import linux
from .process import pid_alive

#: The namespace's pid 1: a process that only waits to be killed, with ``SIGCHLD`` ignored (an
#: ignored disposition survives ``exec``) so that the kernel reaps the orphans re-parented to it. Its
#: environment names the server (:func:`remove_stale` finds the inits of servers that died).
INIT = [shutil.which("env", path="/usr/bin:/bin") or "/usr/bin/env", "--ignore-signal=CHLD",
        shutil.which("sleep", path="/usr/bin:/bin") or "/bin/sleep", "infinity"]
_TAG = "JUDGEBOX_INIT_OF="


class PidNamespace:
    """The PID namespaces of one request (a fresh one per command); thread-safe per run."""

    def __init__(self) -> None:
        self._inits: list[subprocess.Popen] = []

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Around the start of one command (server side): children started inside go into a new
        PID namespace whose init is already running; the program started first is pid 2.

        Raises:
            OSError: ``unshare``/``setns`` refused (needs ``CAP_SYS_ADMIN``) or the init failed to start.
        """
        own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        try:
            linux.unshare(linux.CLONE_NEWPID)
            try:
                self._inits.append(subprocess.Popen(
                    INIT, env={_TAG[:-1]: str(os.getpid())}, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
                yield
            finally:
                linux.setns(own, linux.CLONE_NEWPID)
        finally:
            os.close(own)

    def kill(self) -> None:
        """SIGKILL every init started so far: the kernel kills the rest of each namespace. Does not
        wait: an init's exit completes only once its program (the server's child) is reaped."""
        for init in self._inits:
            if init.returncode is None:
                try:
                    init.send_signal(signal.SIGKILL)
                except OSError:
                    pass

    def reap(self) -> None:
        """Kill and reap every init (when the request ends, after its programs were reaped)."""
        self.kill()
        inits, self._inits = self._inits, []
        for init in inits:
            init.wait()


def remove_stale() -> int:
    """SIGKILL the namespace inits left by servers that died (re-parented away, environment
    ``JUDGEBOX_INIT_OF=<dead pid>``); returns how many. Called once when an executor starts."""
    killed = 0
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        owner = next((e[len(_TAG):].decode(errors="replace") for e in environ if e.startswith(_TAG.encode())), "")
        if owner.isdigit() and not pid_alive(int(owner)):
            try:
                os.kill(int(name), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed
