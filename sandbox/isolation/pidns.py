"""A run's own PID namespace, made by the server thread that starts the run.

The program must not be the namespace's init (pid 1 ignores signals it has no handler for, so
``abort()`` or ``kill(getpid(), SIGTERM)`` would behave differently), and an extra fork of the
server's whole image per run costs milliseconds. So :meth:`PidNamespace.spawning` wraps the start
of a command in the server thread:

1. ``unshare(CLONE_NEWPID)`` in that thread only: its next children go into a new namespace;
2. the namespace's init, a process that only waits with ``SIGCHLD`` ignored, is started (``vfork``:
   cheap) and becomes pid 1: the native init (:func:`native_init`, built once per workdir root
   when a C compiler is installed), else coreutils' ``env --ignore-signal=CHLD sleep infinity``
   (:data:`INIT`);
3. the caller starts the program, which becomes pid 2 (still the server's direct child, so its
   exit status, ``wait4`` rusage and pidfd are exactly those of an ordinary child); its pre-exec
   set-up checks that it is pid 2 (:func:`judgebox.sandbox.isolation.childsetup.check_program_pid`) and mounts ``/proc`` there;
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

A run cannot put a process outside its tree (the seccomp filter refuses ``clone(CLONE_PARENT)``);
should one still become the server's child (a zombie of the server keeps its namespace's init in
``zap_pid_ns_processes`` forever), :meth:`PidNamespace.reap` reaps such strays while it waits, and
waits at most :data:`REAP_DEADLINE_S` seconds: an init that still has not ended is handed to a
background reaper and logged, so a request never holds its slot, nor the server's shutdown, on it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from typing import Iterator, Optional, Sequence

from . import linux
from .kill import left_by_dead_server, process_start

#: The namespace's pid 1: a process that only waits to be killed, with ``SIGCHLD`` ignored (an
#: ignored disposition survives ``exec``) so that the kernel reaps the orphans re-parented to it. Its
#: environment names the server (:func:`remove_stale` finds the inits of servers that died).
INIT = [shutil.which("env", path="/usr/bin:/bin") or "/usr/bin/env", "--ignore-signal=CHLD",
        shutil.which("sleep", path="/usr/bin:/bin") or "/bin/sleep", "infinity"]
_TAG = "JUDGEBOX_INIT_OF="
#: The native init's source: ``SIGCHLD`` ignored, then ``ppoll`` with nothing to wait for, forever,
#: through raw system calls. No C library: its start is one ``exec`` with nothing loaded or probed
#: (``env`` then ``sleep``, two dynamically linked programs, cost ~1.5 ms of CPU per run on a
#: 2-core VM, most of it the C library's start-up; this ~0.1 ms).
INIT_SOURCE = r"""
#include <asm/unistd.h>
struct kernel_sigaction { unsigned long handler, flags, restorer, mask; };
static const struct kernel_sigaction ignore = {1 /* SIG_IGN */, 0, 0, 0};
#if defined(__x86_64__)
static long sys4(long n, long a, long b, long c, long d) {
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
static long sys4(long n, long a, long b, long c, long d) {
    register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c,
        x3 __asm__("x3") = d;
    __asm__ volatile ("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}
#else
#error "no native init for this architecture"
#endif
void _start(void) {
    sys4(__NR_rt_sigaction, 17 /* SIGCHLD */, (long)&ignore, 0, 8);
    for (;;)
        sys4(__NR_ppoll, 0, 0, 0, 0);
}
"""
#: Bit of ``SIGCHLD`` (17) in ``/proc/<pid>/status``'s ``SigIgn`` mask.
_SIGCHLD_BIT = 1 << (signal.SIGCHLD - 1)
#: Seconds a request waits for the PID namespaces of its commands to end.
REAP_DEADLINE_S = 5.0
log = logging.getLogger("judgebox.pidns")


def native_init(folder: str) -> Optional[list[str]]:
    """The native init (:data:`INIT_SOURCE`) as an argv, built into ``folder`` (once per source,
    compiler and machine type: the file name carries their hash) with the system C compiler, and
    checked: started, it must wait with ``SIGCHLD`` ignored. ``None`` (with a log line) when there is no compiler,
    the architecture has no code above, or the build or the check fails: :data:`INIT` serves then."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    key = "\0".join((INIT_SOURCE, os.path.realpath(cc), os.uname().machine))  # a shared root may serve two arches
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    path = os.path.join(folder, f"init-{digest}")
    if not os.path.exists(path):
        os.makedirs(folder, mode=0o755, exist_ok=True)
        part = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
        try:
            built = subprocess.run([cc, "-x", "c", "-O2", "-static", "-nostdlib", "-fno-stack-protector",
                                    "-fno-asynchronous-unwind-tables", "-o", part, "-"], input=INIT_SOURCE.encode(),
                                   capture_output=True, timeout=60)
            if built.returncode != 0:
                log.info("native PID-namespace init not built (%s); env+sleep serves",
                         built.stderr.decode(errors="replace").strip()[-300:])
                return None
            os.chmod(part, 0o755)
            os.replace(part, path)  # atomic: servers sharing the folder never run a partial file
        except (OSError, subprocess.SubprocessError) as exc:
            log.info("native PID-namespace init not built (%s); env+sleep serves", exc)
            return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(part)
    for p in (folder, path):  # run as root by the server: nobody else may have been able to write it
        st = os.stat(p)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            log.warning("native PID-namespace init not used: %s is owned by uid %d with mode %o; "
                        "env+sleep serves", p, st.st_uid, st.st_mode & 0o7777)
            return None
    return [path] if _waits_ignoring_sigchld([path]) else None


def _waits_ignoring_sigchld(argv: Sequence[str]) -> bool:
    """Whether ``argv``, started, stays alive and asleep with ``SIGCHLD`` ignored (checked for 2 s)."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        log.warning("native PID-namespace init %s does not start (%s); env+sleep serves", argv[0], exc)
        return False
    try:
        end = time.monotonic() + 2.0
        while time.monotonic() < end and proc.poll() is None:
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
                if fields["State"].split()[0] == "S" and int(fields["SigIgn"], 16) & _SIGCHLD_BIT:
                    return True
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(0.005)
        log.warning("native PID-namespace init %s does not wait with SIGCHLD ignored (exit %s); "
                    "env+sleep serves", argv[0], proc.poll())
        return False
    finally:
        proc.kill()
        proc.wait()


class PidNamespace:
    """The PID namespaces of one request (a fresh one per command); thread-safe per run.

    Args:
        init: the argv of each namespace's init (:func:`native_init`'s, or :data:`INIT`).
    """

    def __init__(self, init: Sequence[str] = INIT) -> None:
        self._init = list(init)
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
                    self._init, env={_TAG[:-1]: str(os.getpid())}, stdin=subprocess.DEVNULL,
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

    def reap(self, deadline_s: float = REAP_DEADLINE_S) -> None:
        """Kill and reap every init (when the request ends, after its programs were reaped),
        reaping strays meanwhile; after ``deadline_s`` seconds the inits still alive go to the
        background reaper (logged as an error)."""
        self.kill()
        inits, self._inits = self._inits, []
        end = time.monotonic() + deadline_s
        for init in inits:
            if not _wait_reaping(init, end):
                log.error("the PID namespace of init %d did not end within %.0f s; handed to the "
                          "background reaper", init.pid, deadline_s)
                _background.adopt(init)


def _wait_reaping(init: subprocess.Popen, end: float) -> bool:
    """Wait for ``init`` to exit until ``end`` (monotonic), reaping strays meanwhile; ``True`` if it exited."""
    try:
        init.wait(timeout=0.05)
        return True
    except subprocess.TimeoutExpired:
        pass
    while time.monotonic() < end:
        reap_strays()
        try:
            init.wait(timeout=0.02)
            return True
        except subprocess.TimeoutExpired:
            continue
    return False


def _nspid(status: str) -> list[int]:
    for line in status.splitlines():
        if line.startswith("NSpid:"):
            return [int(x) for x in line.split()[1:]]
    return []


def reap_strays() -> list[int]:
    """Reap the zombie children of this process that no caller waits for: those in a nested PID
    namespace whose pid there is 3 or more (pid 1 is an init and pid 2 a program, both waited for
    by their starters). Returns the pids reaped."""
    me = os.getpid()
    with open("/proc/self/status") as f:
        depth = len(_nspid(f.read()))
    reaped = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] != "Z" or int(fields[1]) != me:
                continue
            with open(f"/proc/{name}/status") as f:
                ns = _nspid(f.read())
        except (OSError, ValueError, IndexError):
            continue
        if len(ns) > depth and ns[-1] >= 3:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(name), os.WNOHANG)
                reaped.append(int(name))
    return reaped


class _Reaper:
    """Waits, on one daemon thread, for the inits a request gave up on, reaping strays meanwhile."""

    def __init__(self) -> None:
        self._inits: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def adopt(self, init: subprocess.Popen) -> None:
        with self._lock:
            self._inits.append(init)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="judgebox-pidns-reaper", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._lock:
                self._inits = [i for i in self._inits if i.poll() is None]
                if not self._inits:
                    self._thread = None
                    return
            reap_strays()
            time.sleep(0.5)


_background = _Reaper()


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
        if owner.isdigit() and left_by_dead_server(int(owner), process_start(name)):
            try:
                os.kill(int(name), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed
