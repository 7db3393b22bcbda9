"""Isolation of one run: which user it runs as, which cgroup it joins, what it may reach.

:class:`Isolation` is made once per executor from :class:`~judgebox.sandbox.config.SandboxSettings` and
probes what the host allows; :meth:`Isolation.for_run` returns a :class:`RunIsolation` for one
request (its compile step and every run step). It composes one small module per mechanism:
:mod:`judgebox.sandbox.isolation.view` (the filesystem view), :mod:`judgebox.sandbox.isolation.pidns` (the PID namespace),
:mod:`judgebox.sandbox.isolation.disk` (the disk tmpfs), :mod:`judgebox.sandbox.isolation.seccomp` (no-new-privs and the syscall
filter), :mod:`judgebox.sandbox.isolation.cgroups` (memory, pids, CPU accounting).

``settings.isolation == "full"`` (the default) promises every protection below in its strongest
form, plus the view, the PID and IPC namespaces, the disk quota and seccomp, and raises
:class:`IsolationUnavailable` when the host cannot give one of them (not root, no cgroup, a
namespace refused, no libseccomp binding, the interpreter not starting inside the view).
``"minimal"`` (the explicit container mode) takes what the host allows:

* memory: a memory cgroup (v2 ``memory.max`` or v1 ``memory.limit_in_bytes``, swap included;
  an OOM kill there is reported as ``memory_exceeded``); else ``RLIMIT_DATA`` at the limit plus
  512 MiB (never ``RLIMIT_AS``, which stops threaded runtimes from starting), where a hit shows
  only as the program's own allocation error (``memory_exceeded`` stays ``False``).
* processes: a pids cgroup; else ``RLIMIT_NPROC`` under the per-run uid (or, when not root, the
  server user's current task count plus ``max_processes * max_concurrency``).
* privileges: when root, each run has its own uid from a pool (``uid_base + slot``), leased with
  an ``flock`` so that two servers on one host never share one; the working directory is chown'ed
  to it and mode 0700 (with a view, whatever folder the interpreter lives in; without, only when
  other users can execute it). The uid cannot read root's 0600 files, other runs' folders or
  ``/proc/<server>/environ``. The environment is an allow-list (see :mod:`judgebox.sandbox.executor`).
* network: a fresh network namespace (``unshare(CLONE_NEWNET)``, loopback up) unless
  ``allow_network``; only possible with ``CAP_SYS_ADMIN``.
* cleanup: every process of the run (cgroup members, else every task of the run uid) is killed, the
  cgroup removed, and what the run uid left in ``/tmp``, ``/var/tmp`` and ``/dev/shm`` deleted
  when the request ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterator, Optional, Sequence

from judgebox.sandbox.config import SandboxSettings
from judgebox.sandbox.limits import RunLimits, command_rlimits
from judgebox.sandbox.runfs import remove_tree

from . import cgroups, linux, pidns, seccomp
from .budget import MemoryBudget
from .childsetup import ChildSetup, compose, unshare_network
from .disk import RunDisk
from .disk import remove_stale as remove_stale_disks
from .users import UidPool, blocked_for_others, kill_uid, remove_files_of, remove_ipc_of, tasks_of_uid
from .view import FilesystemView

#: The program the start-up probes run (found on the system path: the server's PATH may be anything).
_TRUE = shutil.which("true", path="/usr/bin:/bin") or "/bin/true"
log = logging.getLogger("judgebox.isolation")
#: Bytes added to ``RLIMIT_DATA`` in the no-cgroup fallback: it counts reserved, never-touched
#: mappings (JVM heap and code cache, thread stacks), and the JVM does not start under 256 MiB.
_DATA_HEADROOM = 512 << 20


@dataclass
class RunIsolation:
    """Isolation handles for one request, passed straight to :func:`judgebox.sandbox.process.run_process`.

    Attributes:
        workdir: the request's working folder (empty, owned by ``user``, mode 0700; on the run's
            disk-quota tmpfs in full isolation); removed when the request ends.
        spawning: a context manager to start the command inside (server side): with full
            isolation it makes a fresh PID namespace for the thread's next child
            (:class:`judgebox.sandbox.isolation.pidns.PidNamespace`); a no-op otherwise.
        preexec: runs in the child before exec (joins the cgroup, enters the namespaces and the
            filesystem view, sets the memory/process rlimits); runs as root, before the switch to
            ``user``.
        seal: runs in the child last, after the switch to ``user``: ``PR_SET_NO_NEW_PRIVS`` and
            the seccomp filter.
        user, group: uid/gid the program runs as (``None``: the server's own).
        kill_all: kills every process of the run (cgroup members or uid tasks); idempotent.
        memory_exceeded: ``True`` when the memory limit was hit since its previous call.
        disk_exceeded: ``True`` when the disk quota is full (see :mod:`judgebox.sandbox.isolation.disk`).
        disk_used: bytes the run's files take on its disk now (tmpfs pages: they count towards its
            memory limit too); ``None`` without a disk of its own.
        cpu_seconds: CPU seconds used so far by every process of the run (cgroup accounting).
        pids: the run's processes now (its cgroup's members, as host pids).
        freeze, thaw: stop every process of the run (they use no CPU) and let them run again
            (cgroup freezer; sessions between cells); ``None`` where no freezer is available.
        env: extra environment variables for the program.
        scratch: the run's own folders the view shows as ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (full
            isolation; emptied between the cases of a ``/run_tests`` request).
        setup: :attr:`preexec` and :attr:`seal` as plain data (:class:`judgebox.sandbox.isolation.childsetup.ChildSetup`),
            which the Python fork-server's children apply exactly as a spawned child does.
    """

    workdir: str = ""
    spawning: Callable[[], ContextManager[None]] = contextlib.nullcontext
    preexec: Optional[Callable[[], None]] = None
    seal: Optional[Callable[[], None]] = None
    user: Optional[int] = None
    group: Optional[int] = None
    kill_all: Optional[Callable[[], None]] = None
    memory_exceeded: Optional[Callable[[], bool]] = None
    disk_exceeded: Optional[Callable[[], bool]] = None
    disk_used: Optional[Callable[[], int]] = None
    cpu_seconds: Optional[Callable[[], float]] = None
    pids: Optional[Callable[[], set[int]]] = None
    freeze: Optional[Callable[[], object]] = None
    thaw: Optional[Callable[[], None]] = None
    env: dict[str, str] = field(default_factory=dict)
    scratch: tuple[str, ...] = ()
    setup: Optional[ChildSetup] = None

    def child_setup(self, limits: RunLimits) -> Callable[[], None]:
        """The complete pre-exec function of a child under ``limits`` and this isolation (for a
        process started by other code than :func:`~judgebox.sandbox.process.run_process`, e.g. a kernel;
        start it inside :attr:`spawning`, and call :attr:`kill_all` when it is done)."""
        return compose(command_rlimits(limits), self.preexec, self.user, self.group, self.seal)


class IsolationUnavailable(RuntimeError):
    """A protection that ``isolation="full"`` promises cannot be applied on this host.

    Raised by :class:`Isolation` (so by ``LocalSandbox(...)``, ``Executor(...)`` and
    ``judgebox serve`` at start). The message names the protection, the reason and the flag that
    accepts less (``--isolation minimal`` / ``JUDGEBOX_ISOLATION=minimal``).

    Attributes:
        protection: the name of the missing protection, as in ``GET /health``.
    """

    def __init__(self, protection: str, why: str) -> None:
        self.protection = protection
        super().__init__(
            f"isolation 'full' cannot be applied on this host: {protection} is unavailable ({why}). "
            f"Run the server as root with CAP_SYS_ADMIN (in a container: see compose.yaml), or accept "
            f"less with --isolation minimal (JUDGEBOX_ISOLATION=minimal; LocalSandbox(isolation="
            f"'minimal')), which runs programs without the filesystem view, PID namespace, disk quota"
            f" and the protections this host lacks (GET /health lists what stays on).")


#: The host's ``fs.protected_*`` settings that keep a run from planting files, links and FIFOs in a
#: shared sticky folder for another run (``/proc/sys/fs/<name>``) -> the value they need.
SHARED_TMP_SYSCTLS = {"protected_symlinks": 1, "protected_hardlinks": 1, "protected_regular": 2,
                      "protected_fifos": 2}


#: MiB of the executor's memory never lent to runs: the server's own (requests, answers, kernels'
#: clients); at most an eighth of the ceiling.
SERVER_HEADROOM_MB = 512


def shared_tmp_sysctls() -> dict[str, Optional[int]]:
    """The host's :data:`SHARED_TMP_SYSCTLS` (``None``: unreadable); checked at start in minimal
    isolation, where runs share ``/tmp``: a lower value is logged as a warning."""
    found: dict[str, Optional[int]] = {}
    for name in SHARED_TMP_SYSCTLS:
        try:
            with open(f"/proc/sys/fs/{name}") as f:
                found[name] = int(f.read().strip())
        except (OSError, ValueError):
            found[name] = None
    return found


def _probe_network_namespace() -> bool:
    try:
        return subprocess.run([_TRUE], preexec_fn=unshare_network, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


class Isolation:
    """Host capabilities, probed once, and the per-run isolation built from them.

    Args:
        settings: ``isolation`` (``"full"`` or ``"minimal"``), ``use_cgroups``, ``isolate_user``
            (with ``uid_base``/``uid_count``), ``allow_network``, ``max_processes``,
            ``max_concurrency`` and ``disk_limit_MB`` are read.
        toolchains: programs (compilers, interpreters) the runs execute; in full isolation their
            install folders are bound into every run's view; in minimal isolation the per-run uid is
            used only when the python interpreter is executable by other users, and the others that
            are not are listed by :meth:`describe` (they fail as ``SandboxError`` under the run uid).
        root: the executor's workdir root (runs' folders and the view's skeleton are made there).
        shared: folders under ``root`` that every run sees read-only (the Go build cache).
        homes: toolchain home folders bound into the view as well (``RUSTUP_HOME``, ``CARGO_HOME``,
            ``JAVA_HOME``, ``GOROOT``: :func:`judgebox.sandbox.languages.toolchain_env`).

    Raises:
        IsolationUnavailable: ``settings.isolation == "full"`` and a protection it promises cannot be
            applied (not root, no cgroup, a namespace refused, no seccomp binding, …).
    """

    def __init__(self, settings: SandboxSettings, toolchains: Sequence[str] = (), root: Optional[str] = None,
                 shared: Sequence[str] = (), homes: Sequence[str] = ()) -> None:
        self.settings = settings
        self.full = settings.isolation == "full"
        toolchains = tuple(dict.fromkeys((settings.python, *toolchains)))  # each probed once
        is_root = os.geteuid() == 0
        if self.full and not is_root:
            raise IsolationUnavailable("every namespace-based protection",
                                       f"the server runs as uid {os.geteuid()}, not root")
        self.cgroups = cgroups.detect() if settings.use_cgroups else None
        if self.full and settings.use_cgroups and self.cgroups is None:
            raise IsolationUnavailable("memory_cgroup", "no writable cgroup v2 or v1 memory hierarchy "
                                       "(cgroup mount read-only or the memory controller missing)")
        if self.cgroups:
            self.cgroups.remove_stale()
        if self.full and self.cgroups is not None and not self.cgroups.can_freeze:
            raise IsolationUnavailable("cgroup_freezer", "no cgroup v2 cgroup.freeze and no v1 freezer hierarchy "
                                       "(an idle session's processes could keep computing)")
        self.bpf, self.seccomp_note = seccomp.try_build_filter()
        if self.full and self.bpf is None:
            raise IsolationUnavailable("seccomp", f"{self.seccomp_note}; pip install pyseccomp "
                                       f"(needs libseccomp2)")
        self.view: Optional[FilesystemView] = None
        if self.full:
            self._require(linux.CLONE_NEWNS | linux.CLONE_NEWPID | linux.CLONE_NEWIPC, "pid_namespace")
            self._require(linux.CLONE_NEWUTS | linux.CLONE_NEWCGROUP, "uts_and_cgroup_namespaces")
            self.view = FilesystemView(root or tempfile.gettempdir(), [*_install_dirs(toolchains), *homes], shared)
            remove_stale_disks(root or tempfile.gettempdir())
            pidns.remove_stale()
        #: the argv of each run's PID-namespace init (full isolation)
        self.init = (pidns.native_init(os.path.join(root or tempfile.gettempdir(), ".init")) or pidns.INIT
                     if self.view else pidns.INIT)
        self.unreachable = {} if self.view else \
            {p: b for p in toolchains if (b := blocked_for_others(p)) and shutil.which(p)}
        self.uid_note = self._uid_obstacle() if is_root and settings.isolate_user else None
        if self.uid_note:
            if self.full:
                raise IsolationUnavailable("unprivileged_user", self.uid_note)
            log.warning("per-run uid %s", self.uid_note)
        self.uids = (UidPool(settings.uid_base, settings.uid_count,
                             settings.uid_lock_dir or os.path.join(tempfile.gettempdir(), "judgebox-uids"))
                     if is_root and settings.isolate_user and not self.uid_note else None)
        self.network_namespace = not settings.allow_network and _probe_network_namespace()
        if self.full and not settings.allow_network and not self.network_namespace:
            raise IsolationUnavailable("network_namespace", "unshare(CLONE_NEWNET) was refused")
        self.memory_ceiling_MB = cgroups.memory_ceiling_bytes(self.cgroups) >> 20
        #: the memory limits of the requests in progress never add up to more than the ceiling less
        #: a share for the server itself (:data:`SERVER_HEADROOM_MB`, at most an eighth)
        self.memory_budget = MemoryBudget((self.memory_ceiling_MB - min(SERVER_HEADROOM_MB, self.memory_ceiling_MB // 8))
                                          << 20)
        self._nproc_shared: Optional[int] = None
        self._reachable_roots: set[str] = set()
        if not is_root and not (self.cgroups and "pids" in self.cgroups.dirs):
            # RLIMIT_NPROC counts every task of the real uid: leave room for the server and its peers
            self._nproc_shared = (len(tasks_of_uid(os.getuid())) + 64
                                  + settings.max_processes * settings.max_concurrency)
        if self.view:
            self._probe_view(root or tempfile.gettempdir())
        else:
            on = self.describe()
            off = [k for k in ("filesystem_view", "pid_namespace", "ipc_namespace", "disk_quota", "network_namespace",
                               "unprivileged_user", "memory_cgroup", "pids_cgroup", "seccomp") if not on[k]
                   and not (k == "network_namespace" and settings.allow_network)]
            log.warning("isolation minimal: off: %s", ", ".join(off) or "nothing")
            weak = {k: v for k, v in shared_tmp_sysctls().items() if v is None or v < SHARED_TMP_SYSCTLS[k]}
            if weak:
                log.warning("isolation minimal: runs share /tmp, and the host's fs.protected_* settings %s are below "
                            "%s: one run can plant files or links there for another (set them on the host with "
                            "sysctl)", weak, {k: SHARED_TMP_SYSCTLS[k] for k in weak})

    @staticmethod
    def _require(flags: int, protection: str) -> None:
        """Raise :class:`IsolationUnavailable` unless a child may ``unshare(flags)``."""
        pid = os.fork()
        if pid == 0:  # the child only calls unshare and exits with its errno
            try:
                linux.unshare(flags)
                os._exit(0)
            except OSError as exc:
                os._exit(exc.errno or 255)
            finally:
                os._exit(255)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code:
            raise IsolationUnavailable(protection, f"unshare({flags:#x}) was refused: {os.strerror(code)}")

    def _probe_view(self, root: str) -> None:
        """Run the interpreter once under the whole full isolation; raise naming what failed."""
        python = self.settings.python
        try:
            with self.for_run(root, 64) as iso:
                with iso.spawning():
                    proc = subprocess.Popen([python, "-c", "import os; print(os.getpid())"], cwd=iso.workdir,
                                            env={"PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                            preexec_fn=iso.child_setup(RunLimits.for_timeout(60)))
                try:
                    out, err = proc.communicate(timeout=60)
                finally:
                    if iso.kill_all is not None:
                        iso.kill_all()
                    proc.wait()
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            raise IsolationUnavailable("filesystem_view", f"a run could not start: {exc}") from None
        if proc.returncode != 0 or out.strip() != b"2":
            why = f"exit {proc.returncode}: {err.decode(errors='replace')[-500:]}"
            raise IsolationUnavailable("filesystem_view", f"{python} did not run inside the view ({why})")

    def _uid_obstacle(self) -> Optional[str]:
        """Why per-run uids cannot be used here (``None`` if they can): the interpreter is not
        executable by other users (without a view), or switching uid is refused (no ``CAP_SETUID``)."""
        python = self.settings.python
        blocked = self.unreachable.get(python)
        if blocked:
            return (f"disabled: the python interpreter {python} is not executable by other users "
                    f"({blocked} lacks o+x); chmod o+x {blocked} or pass --python")
        uid = self.settings.uid_base
        try:
            subprocess.run([_TRUE], user=uid, group=uid, extra_groups=[], check=True, timeout=10)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"disabled: switching to uid {uid} failed ({exc}); the server lacks CAP_SETUID/CAP_SETGID"
        return None

    def describe(self) -> dict[str, object]:
        """Which protections are active (served at ``GET /health``)."""
        cg = self.cgroups
        has_pids_cgroup = bool(cg and "pids" in cg.dirs)
        return {
            "isolation": self.settings.isolation,
            "process_group_kill": True,
            "rlimits": True,
            "cgroup_version": cg.version if cg else None,
            "memory_cgroup": cg is not None,
            "memory_limit": "cgroup" if cg else "rlimit_data",
            "pids_cgroup": has_pids_cgroup,
            "process_limit": ("cgroup" if has_pids_cgroup else "rlimit_nproc" if self.uids
                              or self._nproc_shared else None),
            "cpu_accounting": "cgroup" if cg and cg.cpu_accounting else "rusage",
            "cgroup_freezer": bool(cg and cg.can_freeze),
            "unprivileged_user": self.uids is not None,
            "unprivileged_user_note": self.uid_note,
            "toolchains_not_executable_by_run_uid": sorted(self.unreachable) if self.uids else [],
            "filesystem_view": self.view is not None,
            "pid_namespace": self.view is not None,
            "ipc_namespace": self.view is not None,
            "disk_quota": "tmpfs" if self.view else None,
            "disk_limit_MB": self.settings.disk_limit_MB if self.view else None,
            "no_new_privs": True,
            "seccomp": self.bpf is not None,
            "seccomp_note": self.seccomp_note,
            "network_namespace": self.network_namespace,
            "network_allowed": self.settings.allow_network,
            "environment_scrubbed": True,
            "memory_ceiling_MB": self.memory_ceiling_MB,
            # minimal: runs share /tmp-like folders, where these host settings stop one run from
            # planting a file or link for another (full: each run has its own)
            "shared_tmp_sysctls": None if self.view else shared_tmp_sysctls(),
        }

    def clamp_memory_MB(self, memory_limit_MB: int) -> int:
        """A requested limit in MiB clamped to what the host (RAM or the server's cgroup) allows."""
        return max(16, min(memory_limit_MB, self.memory_ceiling_MB))

    def disk_MB(self, requested: Optional[int]) -> int:
        """The disk quota in MiB for a request's ``disk_limit_MB`` (``None``/``<= 0``: the default),
        clamped to ``settings.max_disk_limit_MB``."""
        s = self.settings
        return s.disk_limit_MB if requested is None or requested <= 0 else min(requested, s.max_disk_limit_MB)

    @contextlib.contextmanager
    def for_run(self, workdir: str, memory_limit_MB: int, disk_limit_MB: Optional[int] = None,
                reserve: bool = True) -> Iterator[RunIsolation]:
        """Isolation and a fresh working folder for one request; on exit, kills and cleans up.

        Args:
            workdir: the folder in which the request's own folder is made; run uids must be able
                to traverse it (without a view).
            memory_limit_MB: MiB, clamped by :meth:`clamp_memory_MB`; the run's files on its disk
                tmpfs count towards it too (see :mod:`judgebox.sandbox.isolation.disk`).
            disk_limit_MB: MiB (see :meth:`disk_MB`); used in full isolation only.
            reserve: hold the memory limit from :attr:`memory_budget` while the request runs (waiting
                for it to come free), so that the limits of the requests in progress never add up to
                more than the executor's memory less the server's share: each run's limit is its
                own, but their sum is the executor's, and a run's tmpfs files and socket buffers
                count there without being any process's (a container's OOM killer then killed an
                innocent run, or the server, issue 46). Sessions, which live long, hold nothing.

        Raises:
            RuntimeError: ``workdir`` is not reachable by run uids (a misconfiguration, reported as
                an infrastructure failure rather than a failed program), no run uid came free
                within 60 s, or no memory within 600 s.
            OSError: the run's disk could not be mounted.
        """
        disk_bytes = self.disk_MB(disk_limit_MB) << 20 if self.view else 0
        memory = self.clamp_memory_MB(memory_limit_MB) << 20
        if self.uids and not self.view and workdir not in self._reachable_roots:
            blocked = blocked_for_others(workdir)
            if blocked:
                raise RuntimeError(f"workdir root {workdir} is not reachable by run uids ({blocked} "
                                   f"lacks o+x): chmod o+x {blocked} or set workdir_root elsewhere")
            self._reachable_roots.add(workdir)
        with contextlib.ExitStack() as stack:
            if reserve:  # admission by the sum of memory limits
                stack.enter_context(self.memory_budget.hold(memory))
            uid = stack.enter_context(self.uids.lease()) if self.uids else None
            if uid is not None and not self.view:  # a view's /tmp-like folders and IPC are the run's own
                stack.callback(remove_files_of, uid)  # runs after the kill below (LIFO)
                stack.callback(remove_ipc_of, uid)
            disk = None
            if self.view:
                disk = RunDisk.create(workdir, disk_bytes, uid)
                stack.callback(disk.remove)
                folder = disk.workdir
            else:
                folder = tempfile.mkdtemp(prefix="run-", dir=workdir)
                stack.callback(remove_tree, folder)  # any depth, no link followed
                if uid is not None:
                    os.chown(folder, uid, uid)
            cg = None
            if self.cgroups:
                try:
                    cg = self.cgroups.create(memory, self.settings.max_processes)
                except OSError:
                    if self.full:
                        raise
                    log.warning("could not create a cgroup; using rlimits for this run")
                else:
                    stack.callback(cg.remove)
            if uid is not None and cg is None:
                kill_uid(uid)  # a crashed server may have left tasks of this uid behind
                stack.callback(self._end_uid, uid)
            pid_ns = None
            if self.view:
                pid_ns = pidns.PidNamespace(self.init)
                stack.callback(pid_ns.reap)
            yield self._build(folder, uid, cg, memory, disk, pid_ns)

    def _end_uid(self, uid: int) -> None:
        """Kill every process of the run uid; a uid with a survivor leaves the pool (logged)."""
        if not kill_uid(uid) and self.uids is not None:
            self.uids.retire(uid)
            log.error("run uid %d kept a process after the end-of-run kill: it is retired from the pool", uid)

    def _build(self, folder: str, uid: Optional[int], cg: Optional[cgroups.RunCgroup], memory: int,
               disk: Optional[RunDisk], pid_ns: Optional[pidns.PidNamespace]) -> RunIsolation:
        pids_cgroup = cg is not None and "pids" in cg.paths
        nproc = None if pids_cgroup else (self.settings.max_processes if uid is not None
                                          else self._nproc_shared)
        data = None if cg is not None else memory + _DATA_HEADROOM
        netns, view, bpf = self.network_namespace, self.view, self.bpf
        # UTS: a hostname of the run's own; cgroup: /proc/self/cgroup shows "/" (unshared after the join)
        flags = (linux.CLONE_NEWNS | linux.CLONE_NEWIPC | linux.CLONE_NEWUTS | linux.CLONE_NEWCGROUP
                 | (linux.CLONE_NEWNET if netns else 0))

        setup = ChildSetup(
            pid2=pid_ns is not None, cgroup_join=cg.join_files if cg is not None else (), data_bytes=data,
            nproc=nproc, unshare_flags=flags if view is not None else 0, loopback=bool(view is not None and netns),
            view=view.spec(disk.path, folder) if view is not None else None,
            network_only=view is None and netns, bpf=bpf)

        env: dict[str, str] = {}
        if cg is None:
            # RLIMIT_DATA counts thread stacks: keep BLAS pools to one thread so numpy can start
            env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

        memory_exceeded = cpu_seconds = kill_all = None
        if cg is not None:
            seen = [cg.oom_kills()]

            def memory_exceeded() -> bool:
                now = cg.oom_kills()
                hit, seen[0] = now > seen[0], now
                return hit

            kill_all = cg.kill
            if cg.cpu_accounting:
                cpu_seconds = cg.cpu_seconds
        elif uid is not None:
            kill_all = lambda: kill_uid(uid)  # noqa: E731
        if pid_ns is not None:
            kill_unit = kill_all

            def kill_all() -> None:
                pid_ns.kill()  # the kernel kills every process of the namespace
                if kill_unit is not None:
                    kill_unit()

        return RunIsolation(workdir=folder, spawning=pid_ns.spawning if pid_ns else contextlib.nullcontext,
                            preexec=setup.preexec, seal=setup.seal, setup=setup, user=uid,
                            group=uid, kill_all=kill_all, memory_exceeded=memory_exceeded,
                            disk_exceeded=disk.exceeded if disk else None,
                            disk_used=disk.used_bytes if disk else None, cpu_seconds=cpu_seconds,
                            pids=cg.pids if cg is not None else None,
                            freeze=cg.freeze if cg is not None and cg.can_freeze else None,
                            thaw=cg.thaw if cg is not None and cg.can_freeze else None, env=env,
                            scratch=disk.scratch() if disk else ())


def _install_dirs(programs: Sequence[str]) -> list[str]:
    """Folders a run's view must show for ``programs``: each program's install prefix (the folder
    above its ``bin``, for its path and its real path), a python's ``sys.prefix``/``base_prefix``
    (a venv and the interpreter it points to)."""
    out: list[str] = []
    for program in programs:
        found = shutil.which(program)
        if not found:
            continue
        for path in (os.path.abspath(found), os.path.realpath(found)):
            out.append(os.path.dirname(os.path.dirname(path)))
        if "python" in os.path.basename(program):
            try:
                res = subprocess.run([found, "-c", "import sys; print(sys.prefix); print(sys.base_prefix);"
                                      "print(sys.exec_prefix); print(sys.base_exec_prefix)"],
                                     capture_output=True, text=True, timeout=60)
                out += res.stdout.split()
            except (OSError, subprocess.SubprocessError):
                pass
    return out
