"""Isolation of one run: which user it runs as, which cgroup it joins, what it may reach.

:class:`Isolation` is made once per executor from :class:`~sandbox.config.SandboxSettings` and
probes what the host allows; :meth:`Isolation.for_run` returns a :class:`RunIsolation` for one
request (its compile step and every run step). This module is the only place that knows about
uids, cgroups and namespaces.

Protections, strongest available first:

* memory: a memory cgroup (v2 ``memory.max`` or v1 ``memory.limit_in_bytes``, swap included;
  an OOM kill there is reported as ``memory_exceeded``); else ``RLIMIT_DATA`` at the limit plus
  512 MiB (never ``RLIMIT_AS``, which stops threaded runtimes from starting), where a hit shows
  only as the program's own allocation error (``memory_exceeded`` stays ``False``).
* processes: a pids cgroup; else ``RLIMIT_NPROC`` under the per-run uid (or, when not root, the
  server user's current task count plus ``max_processes * max_concurrency``).
* privileges: when root, each run has its own uid from a pool (``uid_base + slot``), leased with
  an ``flock`` so that two servers on one host never share one; the working directory is chown'ed
  to it and mode 0700. The uid cannot read root's 0600 files, other runs' folders or
  ``/proc/<server>/environ``. The environment is an allow-list (see :mod:`sandbox.executor`).
* network: a fresh network namespace (``unshare(CLONE_NEWNET)``, loopback up) unless
  ``allow_network``; only possible with ``CAP_SYS_ADMIN``.
* cleanup: every process of the run (cgroup members, else every task of the run uid) is killed, the
  cgroup removed, and what the run uid left in ``/tmp``, ``/var/tmp`` and ``/dev/shm`` deleted
  when the request ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import os
import resource
import shutil
import socket
import stat
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

from . import cgroups
from .config import SandboxSettings
from .process import kill_until_gone, set_rlimit

CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_libc = ctypes.CDLL(None, use_errno=True)
log = logging.getLogger("judgebox.isolation")
#: Bytes added to ``RLIMIT_DATA`` in the no-cgroup fallback: it counts reserved, never-touched
#: mappings (JVM heap and code cache, thread stacks), and the JVM does not start under 256 MiB.
_DATA_HEADROOM = 512 << 20


@dataclass
class RunIsolation:
    """Isolation handles for one request, passed straight to :func:`sandbox.process.run_process`.

    Attributes:
        preexec: runs in the child before exec (joins the cgroup, unshares the network, sets the
            memory/process rlimits); runs as root, before the switch to ``user``.
        user, group: uid/gid the program runs as (``None``: the server's own).
        kill_all: kills every process of the run (cgroup members or uid tasks); idempotent.
        memory_exceeded: ``True`` when the memory limit was hit since its previous call.
        env: extra environment variables for the program.
    """

    preexec: Optional[Callable[[], None]] = None
    user: Optional[int] = None
    group: Optional[int] = None
    kill_all: Optional[Callable[[], None]] = None
    memory_exceeded: Optional[Callable[[], bool]] = None
    env: dict[str, str] = field(default_factory=dict)


def unshare_network() -> None:
    """Enter a new, empty network namespace and bring its loopback up (child side).

    Raises:
        OSError: ``unshare(2)`` was refused (needs ``CAP_SYS_ADMIN``).
    """
    if _libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, _SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0)))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP))


def blocked_for_others(program: str) -> Optional[str]:
    """The first path an unprivileged uid cannot traverse or execute on the way to ``program``.

    ``program`` is a name found on ``PATH`` or a path (a folder is checked for traversal). Checks
    the "other" execute bits of the path, of its real path and of every folder above both.
    Returns ``None`` when a run uid can reach it, or ``program`` itself when it does not exist.
    """
    found = program if os.path.isdir(program) else shutil.which(program)
    if not found:
        return program
    for path in dict.fromkeys((os.path.abspath(found), os.path.realpath(found))):
        parts = path.split(os.sep)
        for i in range(2, len(parts) + 1):
            step = os.sep.join(parts[:i])
            try:
                if not os.stat(step).st_mode & stat.S_IXOTH:
                    return step
            except OSError:
                return step
    return None


def _probe_network_namespace() -> bool:
    try:
        return subprocess.run(["true"], preexec_fn=unshare_network, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def tasks_of_uid(uid: int) -> list[int]:
    """Pids whose real uid is ``uid`` (read from ``/proc/<pid>/status``), zombies excluded.

    A zombie runs nothing and cannot be killed, only reaped by its parent (the server, or the
    container's init): counting it made :func:`kill_uid` spin until its deadline after every run.
    """
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                for line in f:
                    if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                        break
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            out.append(int(name))
                        break
        except (OSError, ValueError):
            pass
    return out


def kill_uid(uid: int, deadline_s: float = 5.0) -> bool:
    """SIGKILL every process of ``uid`` until none is left (``True``) or the deadline passes."""
    return kill_until_gone(lambda: tasks_of_uid(uid), deadline_s)


#: World-writable folders where a program can leave files outside its own folder.
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")


def remove_files_of(uid: int, folders: Sequence[str] = SHARED_TMP) -> int:
    """Delete the entries directly in ``folders`` that ``uid`` owns, with all they contain.

    Called when a request ends, after its processes are killed, so that a run uid leaves nothing
    behind in ``/tmp``-like folders (the run's own folder is removed by the executor). Returns the
    number of entries removed; errors are ignored (an entry may vanish meanwhile).
    """
    removed = 0
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


class UidPool:
    """Unprivileged uids ``first .. first+count-1``, one per running request.

    A uid is leased by taking an exclusive ``flock`` on ``<lock_dir>/<uid>.lock``: the lock is per
    open file, so leases are exclusive across threads and across server processes on one host, and
    are released by the kernel if a server dies.
    """

    def __init__(self, first: int, count: int, lock_dir: str) -> None:
        self.first, self.count, self.lock_dir = first, count, lock_dir
        os.makedirs(lock_dir, mode=0o700, exist_ok=True)
        self._cursor = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def lease(self, wait_s: float = 60.0) -> Iterator[int]:
        """Hold one free uid. Raises ``RuntimeError`` if none frees up within ``wait_s`` seconds."""
        end = time.monotonic() + wait_s
        while True:
            with self._lock:
                start, self._cursor = self._cursor, (self._cursor + 1) % self.count
            for i in range(self.count):
                uid = self.first + (start + i) % self.count
                fd = os.open(os.path.join(self.lock_dir, f"{uid}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                try:
                    yield uid
                finally:
                    os.close(fd)
                return
            if time.monotonic() > end:
                raise RuntimeError(f"no free run uid in {self.first}..{self.first + self.count - 1}")
            time.sleep(0.05)


class Isolation:
    """Host capabilities, probed once, and the per-run isolation built from them.

    Args:
        settings: ``use_cgroups``, ``isolate_user`` (with ``uid_base``/``uid_count``),
            ``allow_network``, ``max_processes`` and ``max_concurrency`` are read.
        toolchains: programs (compilers, interpreters) the runs execute; the per-run uid is used only
            when the python interpreter is executable by other users, and the others that are not
            are listed by :meth:`describe` (they fail as ``SandboxError`` under the run uid).
    """

    def __init__(self, settings: SandboxSettings, toolchains: Sequence[str] = ()) -> None:
        self.settings = settings
        toolchains = (settings.python, *toolchains)
        root = os.geteuid() == 0
        self.cgroups = cgroups.detect() if settings.use_cgroups else None
        if self.cgroups:
            self.cgroups.remove_stale()
        self.unreachable = {p: b for p in toolchains if (b := blocked_for_others(p)) and shutil.which(p)}
        self.uid_note = self._uid_obstacle() if root and settings.isolate_user else None
        if self.uid_note:
            log.warning("per-run uid %s", self.uid_note)
        self.uids = (UidPool(settings.uid_base, settings.uid_count,
                             os.path.join(tempfile.gettempdir(), "judgebox-uids"))
                     if root and settings.isolate_user and not self.uid_note else None)
        self.network_namespace = not settings.allow_network and _probe_network_namespace()
        self.memory_ceiling_MB = cgroups.memory_ceiling_bytes(self.cgroups) >> 20
        self._nproc_shared: Optional[int] = None
        self._reachable_roots: set[str] = set()
        if not root and not (self.cgroups and "pids" in self.cgroups.dirs):
            # RLIMIT_NPROC counts every task of the real uid: leave room for the server and its peers
            self._nproc_shared = (len(tasks_of_uid(os.getuid())) + 64
                                  + settings.max_processes * settings.max_concurrency)

    def _uid_obstacle(self) -> Optional[str]:
        """Why per-run uids cannot be used here (``None`` if they can): the interpreter is not
        executable by other users, or switching uid is refused (no ``CAP_SETUID``)."""
        python = self.settings.python
        blocked = self.unreachable.get(python)
        if blocked:
            return (f"disabled: the python interpreter {python} is not executable by other users "
                    f"({blocked} lacks o+x); chmod o+x {blocked} or pass --python")
        uid = self.settings.uid_base
        try:
            subprocess.run(["true"], user=uid, group=uid, extra_groups=[], check=True, timeout=10)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"disabled: switching to uid {uid} failed ({exc}); the server lacks CAP_SETUID/CAP_SETGID"
        return None

    def describe(self) -> dict[str, object]:
        """Which protections are active (served at ``GET /health``)."""
        cg = self.cgroups
        has_pids_cgroup = bool(cg and "pids" in cg.dirs)
        return {
            "process_group_kill": True,
            "rlimits": True,
            "cgroup_version": cg.version if cg else None,
            "memory_cgroup": cg is not None,
            "memory_limit": "cgroup" if cg else "rlimit_data",
            "pids_cgroup": has_pids_cgroup,
            "process_limit": ("cgroup" if has_pids_cgroup else "rlimit_nproc" if self.uids
                              or self._nproc_shared else None),
            "unprivileged_user": self.uids is not None,
            "unprivileged_user_note": self.uid_note,
            "toolchains_not_executable_by_run_uid": sorted(self.unreachable) if self.uids else [],
            "network_namespace": self.network_namespace,
            "network_allowed": self.settings.allow_network,
            "environment_scrubbed": True,
            "memory_ceiling_MB": self.memory_ceiling_MB,
        }

    def clamp_memory_MB(self, memory_limit_MB: int) -> int:
        """A requested limit in MiB clamped to what the host (RAM or the server's cgroup) allows."""
        return max(16, min(memory_limit_MB, self.memory_ceiling_MB))

    @contextlib.contextmanager
    def for_run(self, workdir: str, memory_limit_MB: int) -> Iterator[RunIsolation]:
        """Isolation for one request with a memory limit in MiB; on exit, kills and cleans up.

        Args:
            workdir: the folder in which the request's own folder is made; run uids must be able
                to traverse it.
            memory_limit_MB: MiB, clamped by :meth:`clamp_memory_MB`.

        Raises:
            RuntimeError: ``workdir`` is not reachable by run uids (a misconfiguration, reported as
                an infrastructure failure rather than a failed program), or no run uid came free
                within 60 s.
        """
        memory = self.clamp_memory_MB(memory_limit_MB) << 20
        if self.uids and workdir not in self._reachable_roots:
            blocked = blocked_for_others(workdir)
            if blocked:
                raise RuntimeError(f"workdir root {workdir} is not reachable by run uids ({blocked} "
                                   f"lacks o+x): chmod o+x {blocked} or set workdir_root elsewhere")
            self._reachable_roots.add(workdir)
        with contextlib.ExitStack() as stack:
            uid = stack.enter_context(self.uids.lease()) if self.uids else None
            if uid is not None:
                stack.callback(remove_files_of, uid)  # runs after the kill below (LIFO)
            cg = None
            if self.cgroups:
                try:
                    cg = self.cgroups.create(memory, self.settings.max_processes)
                except OSError:
                    cg = None  # host refused this one: fall back to rlimits for this run
                else:
                    stack.callback(cg.remove)
            if uid is not None and cg is None:
                kill_uid(uid)  # a crashed server may have left tasks of this uid behind
                stack.callback(kill_uid, uid)
            yield self._build(uid, cg, memory)

    def _build(self, uid: Optional[int], cg: Optional[cgroups.RunCgroup], memory: int) -> RunIsolation:
        pids_cgroup = cg is not None and "pids" in cg.paths
        nproc = None if pids_cgroup else (self.settings.max_processes if uid is not None
                                          else self._nproc_shared)
        data = None if cg is not None else memory + _DATA_HEADROOM
        netns = self.network_namespace

        def preexec() -> None:
            if cg is not None:
                cg.join()
            if netns:
                unshare_network()
            set_rlimit(resource.RLIMIT_DATA, data)
            set_rlimit(resource.RLIMIT_NPROC, nproc)

        env: dict[str, str] = {}
        if cg is None:
            # RLIMIT_DATA counts thread stacks: keep BLAS pools to one thread so numpy can start
            env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

        if cg is not None:
            seen = [cg.oom_kills()]

            def memory_exceeded() -> bool:
                now = cg.oom_kills()
                hit, seen[0] = now > seen[0], now
                return hit

            def kill_all() -> None:
                cg.kill()
        else:
            memory_exceeded = None  # type: ignore[assignment]
            kill_all = (lambda: kill_uid(uid)) if uid is not None else None  # type: ignore[assignment]

        return RunIsolation(preexec=preexec, user=uid, group=uid, kill_all=kill_all,
                            memory_exceeded=memory_exceeded, env=env)
