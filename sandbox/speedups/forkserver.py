"""The server's handle on the Python fork-server (zygote): start it, ask it for children, rotate it.

Starting a Python interpreter costs ~20 ms of CPU per run (``python -c pass`` here: 15-20 ms, most
of it the start-up imports), more than everything else of a small run. :class:`ForkServer` keeps one
warm interpreter of the configured runtime (:mod:`judgebox.sandbox.speedups.zygote`) and has it fork each run of a
``python <script>`` command instead. The child is the server's own child (``CLONE_PARENT``) and
goes through the same :func:`judgebox.sandbox.isolation.childsetup.compose` set-up as a spawned command, so
:func:`judgebox.sandbox.process.run_process` treats both alike.

Preload (``forkserver_preload`` of a request, as :func:`multiprocessing.set_forkserver_preload`): a
fork-server may import standard-library modules before it serves; its children keep them in
``sys.modules``, as if the script had imported them first. A program that imports them anyway (the
reward harness's runner: ``ast``, ``json``, ``traceback``, ``ctypes``...) then skips ~15 ms of CPU per
run. Modules that keep per-process state at import re-seed it after a fork (``random``'s own
``os.register_at_fork`` hook runs in the child, as after :func:`os.fork`).

Rotation: a fork-server serves :attr:`ForkServer.max_runs` runs or :attr:`ForkServer.max_age_s`
seconds, then a fresh one replaces it (its children share one string-hash seed; rotating keeps that
seed from living long). A fork-server that fails (dead, wedged past :attr:`ForkServer.reply_timeout_s`,
refused) is stopped and replaced at the next run; the run that saw it fail is started the ordinary
way (:class:`ForkServerUnavailable` tells the caller to), and counted in :attr:`ForkServer.fallbacks`.
"""

from __future__ import annotations

import logging
import marshal
import os
import resource
import signal
import socket
import subprocess
import threading
import time
from typing import Optional, Sequence

from judgebox.sandbox.isolation.childsetup import ChildSetup, set_rlimit

from .zygote import BOOT

log = logging.getLogger("judgebox.forkserver")
_HERE = os.path.dirname(os.path.abspath(__file__))
#: the folder of :mod:`judgebox.sandbox.isolation.childsetup`, which the fork-server loads by path
_ISOLATION = os.path.join(os.path.dirname(_HERE), "isolation")


class ForkServerUnavailable(RuntimeError):
    """The fork-server could not start this run (start it the ordinary way); nothing was started."""


def is_script_command(argv: Sequence[str], python: str) -> bool:
    """Whether ``argv`` is ``[python, <file>.py, *args]``: the commands the fork-server runs (a
    ``python`` run, the reward harness's runner with its ``--process`` flag)."""
    return len(argv) >= 2 and argv[0] == python and argv[1].endswith(".py") and not argv[1].startswith("-")


class _Zygote:
    """One running fork-server process and its socket."""

    def __init__(self, python: str, env: dict[str, str], home: str, stack_bytes: Optional[int],
                 reply_timeout_s: float, preload: Sequence[str] = ()) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [python, "-c", BOOT, str(theirs.fileno()), _HERE, _ISOLATION, ",".join(preload)],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                cwd=home, start_new_session=True, preexec_fn=lambda: set_rlimit(resource.RLIMIT_STACK, stack_bytes))
        finally:
            theirs.close()
        ours.settimeout(reply_timeout_s)
        self.sock = ours
        self.started = time.monotonic()
        self.runs = 0

    def stop(self) -> None:
        self.sock.close()  # EOF: it exits
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _kill_and_reap(pid: int) -> None:
    """Kill and wait for a child the fork-server made for a run that then falls back to spawning
    (it is this process's child, ``CLONE_PARENT``: left alone, it would run twice or stay a zombie)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


class ForkServer:
    """Forks ``python <script>`` runs from a warm interpreter (thread-safe; one per executor).

    Args:
        python: the interpreter (the executor's ``settings.python``).
        env: the environment the interpreter starts with: a run's environment (its ``PYTHON*``
            variables decide ``sys.flags``, the stdio encoding and buffering, as for a spawned run).
        home: an empty folder owned by the server: the fork-server's working folder and ``HOME``.
        stack_bytes: the runs' ``RLIMIT_STACK`` (bytes), set before the interpreter starts so that its
            memory layout (the room for the main thread's stack) is a spawned run's.
        max_runs, max_age_s: rotation (see the module docstring).
        reply_timeout_s: seconds to wait for the fork-server's answer before it counts as wedged.
        preload: standard-library modules (dotted names, validated by the caller) imported before it
            serves; a module that fails to import makes the fork-server fail to start.
    """

    def __init__(self, python: str, env: dict[str, str], home: str, stack_bytes: Optional[int] = None,
                 max_runs: int = 1000, max_age_s: float = 600.0, reply_timeout_s: float = 5.0,
                 preload: Sequence[str] = ()) -> None:
        self.python, self.env, self.home, self.stack_bytes = python, dict(env), home, stack_bytes
        self.preload = tuple(preload)
        self.max_runs, self.max_age_s, self.reply_timeout_s = max_runs, max_age_s, reply_timeout_s
        os.makedirs(home, mode=0o700, exist_ok=True)
        self.env.update(HOME=home, TMPDIR=home)
        self._lock = threading.Lock()
        self._zygote: Optional[_Zygote] = None
        self._retired: list[_Zygote] = []  # killed ones, reaped by ready()
        self._closed = False  # close() was called: no fork-server is started again
        #: runs started by forking, runs that fell back to spawning, fork-servers started
        self.forked = self.fallbacks = self.started = 0

    def start(self, argv: Sequence[str], cwd: str, env: dict[str, str], rlimits: dict,
              setup: Optional[ChildSetup], user: Optional[int], group: Optional[int],
              fds: Sequence[int]) -> int:
        """Fork a child that runs ``argv`` (``[python, script, *args]``) with ``fds`` (stdin, stdout, stderr,
        error pipe) and the given set-up; returns its pid (the caller's child).

        Called inside the run's :meth:`~judgebox.sandbox.isolation.pidns.PidNamespace.spawning` when it has one (the
        child is born in the calling thread's namespace for children), after :meth:`ready` outside it.

        Raises:
            ForkServerUnavailable: the fork-server failed (it is replaced at the next call); start
                the command the ordinary way.
        """
        ns_fd = _children_namespace()
        req = {"argv": list(argv), "cwd": cwd, "env": dict(env), "rlimits": dict(rlimits),
               "setup": setup.to_wire() if setup is not None else None, "user": user, "group": group,
               "ns": ns_fd is not None, "inherit": inherited_rlimits()}
        try:
            send = list(fds) + ([ns_fd] if ns_fd is not None else [])
            with self._lock:
                z = self._zygote
                if z is None:
                    raise OSError("no fork-server is running (call ready() first)")
                try:
                    socket.send_fds(z.sock, [marshal.dumps(req)], send)
                    reply = z.sock.recv(65536)
                    if not reply:
                        raise OSError("the fork-server exited")
                    answer = marshal.loads(reply)
                except (OSError, ValueError, EOFError) as exc:
                    self._drop(f"{type(exc).__name__}: {exc}")
                    raise ForkServerUnavailable(str(exc)) from None
                z.runs += 1
            if answer["error"] or answer["pid"] <= 0:
                if answer["pid"] > 0:  # made before the fork-server failed: it must not run beside the fallback
                    _kill_and_reap(answer["pid"])
                with self._lock:
                    self.fallbacks += 1
                raise ForkServerUnavailable(answer["error"] or "no child")
            with self._lock:
                self.forked += 1
            return answer["pid"]
        except ForkServerUnavailable:
            raise
        except OSError as exc:  # could not even start one
            with self._lock:
                self.fallbacks += 1
            raise ForkServerUnavailable(f"{type(exc).__name__}: {exc}") from None
        finally:
            if ns_fd is not None:
                os.close(ns_fd)

    def ready(self) -> None:
        """Make sure a fork-server is running: start one, or a fresh one in place of one due for
        rotation or dead. Call it outside any :meth:`~judgebox.sandbox.isolation.pidns.PidNamespace.spawning`: the
        fork-server must live in the server's own PID namespace.

        Raises:
            ForkServerUnavailable: it could not be started (spawn the run instead).
        """
        try:
            with self._lock:
                self._current()
        except OSError as exc:
            with self._lock:
                self.fallbacks += 1
            raise ForkServerUnavailable(f"{type(exc).__name__}: {exc}") from None

    def _current(self) -> _Zygote:
        self._retired = [r for r in self._retired if r.proc.poll() is None]
        if self._closed:
            raise OSError("the fork-server was closed")
        z = self._zygote
        if z is not None and (z.runs >= self.max_runs or time.monotonic() - z.started > self.max_age_s
                              or z.proc.poll() is not None):
            self._zygote = None
            threading.Thread(target=z.stop, daemon=True).start()
            z = None
        if z is None:
            z = self._zygote = _Zygote(self.python, self.env, self.home, self.stack_bytes, self.reply_timeout_s,
                                       self.preload)
            self.started += 1
        return z

    def _drop(self, why: str) -> None:
        """The current fork-server failed: stop it (the next call starts a fresh one)."""
        z, self._zygote = self._zygote, None
        self.fallbacks += 1
        log.warning("fork-server failed (%s): replaced; this run is spawned", why)
        if z is not None:  # no thread here: this runs inside a run's spawning() (see ready())
            z.proc.kill()
            z.sock.close()
            self._retired.append(z)

    def close(self) -> None:
        """Stop the fork-server for good: a later :meth:`ready` raises :class:`ForkServerUnavailable`."""
        with self._lock:
            z, self._zygote = self._zygote, None
            self._closed = True
        if z is not None:
            z.stop()

    def stats(self) -> dict[str, int]:
        """``forked``, ``fallbacks`` and ``started`` counts (served in ``/metrics``)."""
        return {"forked": self.forked, "fallbacks": self.fallbacks, "started": self.started}


#: Every rlimit a child inherits (``resource.RLIMIT_*``).
_RLIMITS = sorted({getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")})


def inherited_rlimits() -> list[tuple[int, int, int]]:
    """``(resource, soft, hard)`` of every rlimit of the server now: a forked child starts from them, as
    a spawned child inherits them (the fork-server's own were the server's when it started; e.g. a
    hard ``RLIMIT_STACK`` lowered since then must bound the child's)."""
    return [(r, *resource.getrlimit(r)) for r in _RLIMITS]


def _children_namespace() -> Optional[int]:
    """An fd of the calling thread's PID namespace for children when it differs from its own (it is
    inside :meth:`~judgebox.sandbox.isolation.pidns.PidNamespace.spawning`), else ``None``."""
    try:
        if os.stat("/proc/thread-self/ns/pid_for_children").st_ino == os.stat("/proc/thread-self/ns/pid").st_ino:
            return None
    except OSError:
        return None
    return os.open("/proc/thread-self/ns/pid_for_children", os.O_RDONLY | os.O_CLOEXEC)
