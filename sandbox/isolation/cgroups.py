"""Memory and pids cgroups for one run, on cgroup v2 or v1, whichever the host mounts.

:func:`detect` finds where this process may create child cgroups (the server's own cgroup, as read
from ``/proc/self/cgroup`` and ``/proc/self/mountinfo``) and returns a :class:`CgroupHost`, or
``None`` where none can be made (not root, read-only mount, controller missing). Each run gets a
:class:`RunCgroup` under ``<own cgroup>/judgebox/run-<server pid>-<n>``.

File names follow the kernel documentation: v2 ``Documentation/admin-guide/cgroup-v2.rst``
(``memory.max``, ``memory.swap.max``, ``memory.events``, ``memory.oom.group``, ``pids.max``,
``cgroup.kill``, ``cgroup.freeze``, ``cgroup.events``); v1 ``Documentation/admin-guide/cgroup-v1/``
``memory.rst``, ``pids.rst`` and ``freezer-subsystem.rst`` (``memory.limit_in_bytes``,
``memory.memsw.limit_in_bytes``, ``memory.oom_control``, ``pids.max``, ``freezer.state``).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import time
from dataclasses import dataclass
from typing import Optional

from .kill import kill_until_gone, left_by_dead_server

#: Name of the folder (under the server's own cgroup) that holds every run cgroup.
PARENT = "judgebox"


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """``(root, mount point, fstype, super options)`` of every mount, from ``/proc/self/mountinfo``."""
    out = []
    for line in _read("/proc/self/mountinfo").splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3:
            out.append((fields[3], fields[4], tail[0], tail[2].split(",")))
    return out


def _own_paths() -> dict[str, str]:
    """Controller -> cgroup path of this process (``""`` is the v2 entry), from ``/proc/self/cgroup``."""
    out: dict[str, str] = {}
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _join(mount_point: str, mount_root: str, path: str) -> str:
    """Folder of cgroup ``path`` (as in ``/proc/self/cgroup``) under a mount of ``mount_root``."""
    if mount_root != "/" and (path == mount_root or path.startswith(mount_root + "/")):
        path = path[len(mount_root):]
    return os.path.join(mount_point, path.lstrip("/"))


@dataclass(frozen=True)
class CgroupHost:
    """Where run cgroups are made. ``version`` is 1 or 2; ``dirs`` maps controller -> parent folder."""

    version: int
    dirs: dict[str, str]

    @property
    def cpu_accounting(self) -> bool:
        """Whether run cgroups count their CPU time (v2 always; v1 with a ``cpuacct`` hierarchy)."""
        return self.version == 2 or "cpuacct" in self.dirs

    @property
    def can_freeze(self) -> bool:
        """Whether run cgroups can be frozen (v2: ``cgroup.freeze``, kernel >= 5.2; v1: a ``freezer``
        hierarchy)."""
        if self.version == 1:
            return "freezer" in self.dirs
        return os.path.exists(os.path.join(next(iter(self.dirs.values())), "cgroup.freeze"))

    def create(self, memory_bytes: int, max_processes: Optional[int]) -> "RunCgroup":
        """Make the cgroup(s) of one run with a memory limit in bytes and a process cap.

        Raises:
            OSError: the folders or limit files could not be written.
        """
        name = f"run-{os.getpid()}-{next(_counter)}"
        paths = {c: os.path.join(d, name) for c, d in self.dirs.items()}
        made: list[str] = []
        try:
            for path in dict.fromkeys(paths.values()):
                os.mkdir(path, 0o755)
                made.append(path)
            run = RunCgroup(self.version, paths)
            run.set_limits(memory_bytes, max_processes)
            return run
        except OSError:
            for path in made:
                _rmdir(path)
            raise


    def remove_stale(self) -> int:
        """Kill and remove run cgroups left by servers that died (their pid no longer exists, or it is
        this process's and they are older: :func:`~judgebox.sandbox.isolation.kill.left_by_dead_server`).

        Returns the number of folders removed. Called once when an executor starts.
        """
        removed = 0
        for version_dir in dict.fromkeys(self.dirs.values()):
            for name in os.listdir(version_dir):
                parts = name.split("-")
                if len(parts) != 3 or parts[0] != "run" or not parts[1].isdigit():
                    continue
                try:
                    made_at = os.lstat(os.path.join(version_dir, name)).st_mtime
                except OSError:
                    continue
                if not left_by_dead_server(int(parts[1]), made_at):
                    continue
                paths = {c: os.path.join(d, name) for c, d in self.dirs.items()
                         if os.path.isdir(os.path.join(d, name))}
                RunCgroup(self.version, paths).remove()
                removed += len(set(paths.values()))
        return removed


_counter = itertools.count()


class RunCgroup:
    """The cgroup(s) of one run: join from the child, count OOM kills, kill everything, remove."""

    def __init__(self, version: int, paths: dict[str, str]) -> None:
        self.version = version
        self.paths = paths
        self.folders = list(dict.fromkeys(paths.values()))
        self._procs = [os.path.join(p, "cgroup.procs") for p in self.folders]
        self.cpu_accounting = version == 2 or "cpuacct" in paths
        cpu_dir = paths.get("cpuacct") or paths.get("memory", "")
        self._cpu_file = os.path.join(cpu_dir, "cpu.stat" if version == 2 else "cpuacct.usage")
        self.can_freeze = version == 2 or "freezer" in paths
        self._frozen = False

    def freeze(self, wait_s: float = 2.0) -> bool:
        """Stop every process of the cgroup until :meth:`thaw` (they use no CPU meanwhile); waits
        until the kernel reports the cgroup frozen. ``True`` when frozen within ``wait_s`` seconds."""
        if not self.can_freeze:
            return False
        self._frozen = True
        end = time.monotonic() + wait_s
        if self.version == 2:
            folder = self.folders[0]
            _try_write(os.path.join(folder, "cgroup.freeze"), "1")
            while time.monotonic() < end:
                with contextlib.suppress(OSError):
                    if "frozen 1" in _read(os.path.join(folder, "cgroup.events")).splitlines():
                        return True
                time.sleep(0.002)
            return False
        state = os.path.join(self.paths["freezer"], "freezer.state")
        while time.monotonic() < end:
            _try_write(state, "FROZEN")  # again while FREEZING: a forking task may have been missed
            with contextlib.suppress(OSError):
                if _read(state).strip() == "FROZEN":
                    return True
            time.sleep(0.002)
        return False

    def thaw(self) -> None:
        """Let the processes of a frozen cgroup run again (a no-op when not frozen)."""
        if not self._frozen:
            return
        self._frozen = False
        if self.version == 2:
            _try_write(os.path.join(self.folders[0], "cgroup.freeze"), "0")
        else:
            _try_write(os.path.join(self.paths["freezer"], "freezer.state"), "THAWED")

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) used by every process that ever ran in the cgroup
        (v2 ``cpu.stat`` ``usage_usec``; v1 ``cpuacct.usage``, ns); 0.0 if unreadable."""
        try:
            text = _read(self._cpu_file)
        except OSError:
            return 0.0
        if self.version == 1:
            return int(text) / 1e9
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return 0.0

    def set_limits(self, memory_bytes: int, max_processes: Optional[int]) -> None:
        """Write the memory limit (bytes, swap included) and the process cap. Raises ``OSError``."""
        mem = self.paths.get("memory")
        if mem:
            if self.version == 2:
                _write(os.path.join(mem, "memory.max"), str(memory_bytes))
                _try_write(os.path.join(mem, "memory.swap.max"), "0")
                _try_write(os.path.join(mem, "memory.oom.group"), "1")
            else:
                _write(os.path.join(mem, "memory.limit_in_bytes"), str(memory_bytes))
                _try_write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(memory_bytes))
        pids = self.paths.get("pids")
        if pids and max_processes:
            _write(os.path.join(pids, "pids.max"), str(max_processes))

    @property
    def join_files(self) -> list[str]:
        """The files a new, still single-threaded child writes ``0`` to, to join
        (:func:`judgebox.sandbox.isolation.childsetup.join_cgroup`): v1's ``tasks``, v2's ``cgroup.procs``.

        v1 ``tasks`` moves the writing thread alone, which for a child that has one thread is the
        whole process; the kernel then skips the global ``cgroup_threadgroup_rwsem``, whose write
        side waits for an RCU grace period (``cgroup_procs_write_start``: a ``0`` written for a
        single thread takes no lock). Through ``cgroup.procs`` a join took 0.13 ms at the median
        but 12 ms at the 90th percentile and up to 26 ms here, in every run's start-up. v2 allows
        ``cgroup.threads`` only inside one threaded domain, so it keeps ``cgroup.procs``."""
        return [os.path.join(p, "tasks") for p in self.folders] if self.version == 1 else list(self._procs)

    def pids(self) -> set[int]:
        """Processes now in the run's cgroup(s)."""
        out: set[int] = set()
        for procs in self._procs:
            try:
                out.update(int(x) for x in _read(procs).split())
            except OSError:
                pass
        return out

    def oom_kills(self) -> int:
        """How many processes the kernel OOM-killed in this cgroup for hitting its memory limit."""
        mem = self.paths.get("memory")
        if not mem:
            return 0
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            for line in _read(os.path.join(mem, name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def kill(self, deadline_s: float = 5.0) -> bool:
        """SIGKILL every process in the cgroup(s) until none is left; ``True`` when empty.

        Uses v2 ``cgroup.kill`` where present, else repeated ``kill(2)`` of ``cgroup.procs``
        (the pids limit bounds how fast a fork bomb can refill it). A frozen cgroup is thawed first
        (a frozen v1 task does not die until thawed), also one this object did not freeze: a stale
        cgroup left frozen by an owner that was killed (an idle session's kernel).
        """
        self._frozen = self.can_freeze
        self.thaw()
        if self.version == 2:
            for folder in self.folders:
                _try_write(os.path.join(folder, "cgroup.kill"), "1")
        return kill_until_gone(self.pids, deadline_s)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup folder(s)."""
        self.kill()
        for folder in self.folders:
            _rmdir(folder)


def _try_write(path: str, value: str) -> bool:
    try:
        _write(path, value)
        return True
    except OSError:
        return False


def _rmdir(path: str, attempts: int = 50) -> None:
    """Remove an empty cgroup folder, retrying while exiting tasks still count as members."""
    for _ in range(attempts):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
            time.sleep(0.01)


def _v2(mounts, own) -> Optional[CgroupHost]:
    if "" not in own:
        return None
    for root, point, fstype, _ in mounts:
        if fstype != "cgroup2":
            continue
        base = _join(point, root, own[""])
        try:
            available = _read(os.path.join(base, "cgroup.controllers")).split()
        except OSError:
            continue
        if "memory" not in available:
            continue
        parent = os.path.join(base, PARENT)
        # cpu: each run a cgroup of equal weight, so a run's 240 busy threads get no more CPU than
        # another run's one (CFS shares per thread otherwise, issue 46); not essential: left out
        # where it cannot be enabled
        for wanted in ([c for c in ("memory", "pids", "cpu") if c in available],
                       [c for c in ("memory", "pids") if c in available]):
            try:
                _delegate(base, wanted)
                os.makedirs(parent, exist_ok=True)
                _write(os.path.join(parent, "cgroup.subtree_control"), " ".join("+" + c for c in wanted))
            except OSError:
                continue
            return CgroupHost(2, {c: parent for c in wanted})
    return None


def _delegate(base: str, controllers: list[str]) -> None:
    """Enable ``controllers`` for children of ``base`` (cgroup v2).

    v2 forbids a cgroup with processes from handing controllers to children ("no internal
    processes"), so when ``base`` holds processes (this server, typically in a container) they are
    moved into the leaf ``base/judgebox.server`` first. Raises ``OSError`` if that is not allowed.
    """
    control = os.path.join(base, "cgroup.subtree_control")
    enable = " ".join("+" + c for c in controllers)
    try:
        _write(control, enable)
        return
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
    leaf = os.path.join(base, PARENT + ".server")
    os.makedirs(leaf, exist_ok=True)
    for pid in _read(os.path.join(base, "cgroup.procs")).split():
        try:
            _write(os.path.join(leaf, "cgroup.procs"), pid)
        except OSError:
            pass
    _write(control, enable)


def _v1(mounts, own) -> Optional[CgroupHost]:
    dirs: dict[str, str] = {}
    for controller in ("memory", "pids", "cpuacct", "freezer", "cpu"):  # cpu: equal weight per run (above)
        for root, point, fstype, opts in mounts:
            if fstype != "cgroup" or controller not in opts or controller not in own:
                continue
            parent = os.path.join(_join(point, root, own[controller]), PARENT)
            try:
                os.makedirs(parent, exist_ok=True)
                probe = os.path.join(parent, f"probe-{os.getpid()}")
                os.mkdir(probe)
                os.rmdir(probe)
            except OSError:
                continue
            dirs[controller] = parent
            break
    return CgroupHost(1, dirs) if "memory" in dirs else None


def detect() -> Optional[CgroupHost]:
    """Find a writable memory cgroup hierarchy (v2 preferred, then v1); ``None`` if there is none."""
    try:
        mounts, own = _mounts(), _own_paths()
    except (OSError, ValueError):
        return None
    return _v2(mounts, own) or _v1(mounts, own)


def memory_ceiling_bytes(host: Optional[CgroupHost]) -> int:
    """The most memory a run can be given: ``MemTotal``, or the server's own cgroup limit if lower.

    The limit is read from the server's own memory cgroup whether or not it can be written (a
    container's read-only cgroup mount still says its ``mem_limit``: without it, minimal isolation
    clamped requests to the host's RAM, issue 46), and from the hierarchy ``host`` found otherwise."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in _own_memory_limit_files(host):
        try:
            value = _read(path).strip()
        except OSError:
            continue
        if value.isdigit():
            total = min(total, int(value))
    return total


def _own_memory_limit_files(host: Optional[CgroupHost]) -> list[str]:
    """The limit files of this process's memory cgroup (v2 ``memory.max``, v1 ``memory.limit_in_bytes``)."""
    files = []
    if host and "memory" in host.dirs:
        name = "memory.max" if host.version == 2 else "memory.limit_in_bytes"
        files.append(os.path.join(os.path.dirname(host.dirs["memory"]), name))
    try:
        mounts, own = _mounts(), _own_paths()
    except (OSError, ValueError):
        return files
    for root, point, fstype, options in mounts:
        if fstype == "cgroup2" and "" in own:
            files.append(os.path.join(_join(point, root, own[""]), "memory.max"))
        elif fstype == "cgroup" and "memory" in options and "memory" in own:
            files.append(os.path.join(_join(point, root, own["memory"]), "memory.limit_in_bytes"))
    return files
