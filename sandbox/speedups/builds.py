"""The background builds of the speed-ups (``go build std``, a precompiled header, javac's archive):
started as the server's own processes and ended with it.

Each build runs in a process group of its own, at idle priority (:func:`background`), and dies with
the thread that started it (``PR_SET_PDEATHSIG``: a server killed outright takes the build's main
process along). :func:`stop_builds` kills every build of this process (its whole group, the
compilers it started included) and refuses new ones: ``judgebox serve`` calls it when it shuts
down (SIGTERM, Ctrl-C: uvicorn then raises the signal again, so no exit handler would run), and an
embedded sandbox's interpreter at exit, before it joins the build threads (which would otherwise
wait out a ``go build std`` of minutes); no build outlives the server as an orphan. A stopped build is only a missing speed-up: a compile without it gives the same program.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
from typing import Sequence

from ..isolation.linux import PR_SET_PDEATHSIG, prctl

__all__ = ["BuildsStopped", "background", "run_build", "stop_builds"]

_lock = threading.Lock()
_live: set[subprocess.Popen] = set()
_stopped = False


class BuildsStopped(OSError):
    """A build was asked for after :func:`stop_builds` (the server is shutting down)."""


def background() -> None:
    """``preexec_fn`` of an artifact build: run only on CPU the runs leave idle (``SCHED_IDLE``, else
    ``nice 19``), so a fresh server's first requests do not share their cores with the builds."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)


def _build_child() -> None:
    background()
    with contextlib.suppress(OSError):
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def run_build(argv: Sequence[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """Run one build command to its end, as :func:`subprocess.run` with ``capture_output=True,
    text=True, stdin=DEVNULL`` would, in its own process group at idle priority.

    Args:
        argv: the command.
        timeout: seconds before the build's whole group is killed.
        **kwargs: ``env``, ``cwd``.

    Raises:
        BuildsStopped: :func:`stop_builds` was called (before or while it ran).
        OSError: the command could not be started.
        subprocess.TimeoutExpired: it ran past ``timeout`` (its group was killed).
    """
    with _lock:
        if _stopped:
            raise BuildsStopped(f"{argv[0]}: not started, the server is shutting down")
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, preexec_fn=_build_child, **kwargs)
        _live.add(proc)
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            raise
    finally:
        with _lock:
            _live.discard(proc)
    if _stopped:
        raise BuildsStopped(f"{argv[0]}: stopped, the server is shutting down")
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the build's process group (its pid: it leads a session of its own)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def stop_builds() -> int:
    """Kill every running build of this process (each whole process group) and refuse new ones;
    returns how many were running. Their threads then see :class:`BuildsStopped`."""
    global _stopped
    with _lock:
        _stopped = True
        live = list(_live)
    for proc in live:
        _kill(proc)
    return len(live)


# before the interpreter joins its threads at exit (``concurrent.futures`` waits there for each
# worker, a build's too); ``atexit`` handlers run only after that join
getattr(threading, "_register_atexit", atexit.register)(stop_builds)
