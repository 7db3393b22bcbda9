"""The child side of every run: what a command's process does between its fork and the program.

One set-up for every way a run starts: :func:`judgebox.sandbox.process.run_process` calls it as the
``preexec_fn`` of a spawned command, notebook and session kernels (:mod:`judgebox.sandbox.sessions.jupyter`) the same
way, and the Python fork-server (:mod:`judgebox.sandbox.speedups.forkserver`) calls it in each forked child before the
program's code runs. So the set-up is plain data (:class:`ChildSetup`, built by
:mod:`judgebox.sandbox.isolation.unit` for one request) plus the functions below, and this module imports only the
standard library and :mod:`judgebox.sandbox.isolation.linux`: the fork-server loads both into a bare interpreter
without the ``sandbox`` package.

Order of :func:`compose` (each step needs the one before): ``ChildSetup.preexec`` (pid check,
cgroup join, memory/process rlimits, namespaces, filesystem view; needs root), the time, file-size,
descriptor and stack rlimits, the switch to the run uid (no supplementary groups), then
``ChildSetup.seal`` (no-new-privs, seccomp) last.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import socket
import stat
import struct
from typing import Callable, Optional, Sequence

from . import linux
from .linux import MNT_DETACH, MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_DEVICES = (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7), ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0))
_DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
              ("stderr", "/proc/self/fd/2"))
#: resolved here, in the parent: a first look-up in each child would cost more than the call
_setdomainname = ctypes.CDLL(None, use_errno=True).setdomainname
try:  # the NIS domain name a new UTS namespace inherits ("(none)" unless the host set one)
    with open("/proc/sys/kernel/domainname") as _f:
        _INHERITED_DOMAIN = _f.read().strip()
except OSError:
    _INHERITED_DOMAIN = ""
_RO = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
#: The run's hostname (its own UTS namespace), also in the view's ``/etc/hosts``.
HOSTNAME = "sandbox"
#: Where the skeleton keeps the files bound over masked ``/proc`` entries: under its ``/tmp``, which
#: the run's own ``/tmp`` covers, so the program never sees them there.
MASKS = "/tmp/.masks"


def set_rlimit(res: int, want: Optional[int]) -> None:
    """Set soft and hard rlimit ``res`` to ``min(want, current hard)`` (its unit: bytes, seconds or a
    count), so the program cannot raise it again; ``None`` leaves it alone. Never raises: a limit the
    host does not allow must not fail the run (SandboxFusion#70 failed every request on ``RLIMIT_STACK``)."""
    if want is None:
        return
    try:
        _, hard = resource.getrlimit(res)
        value = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        pass


#: Every rlimit of this platform (``resource.RLIMIT_*``).
_ALL_RLIMITS = sorted({getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")})


def lock_rlimits(keep: Sequence[int] = ()) -> None:
    """Lower the hard limit of every rlimit but ``keep`` to its soft limit, so that a program cannot
    raise a limit the server's own hard limit would still allow (e.g. ``RLIMIT_MEMLOCK``)."""
    for res in _ALL_RLIMITS:
        if res in keep:
            continue
        try:
            soft, hard = resource.getrlimit(res)
            if soft != hard:
                resource.setrlimit(res, (soft, soft))
        except (ValueError, OSError):
            pass


def apply_rlimits(rlimits: dict) -> None:
    """The per-command rlimits (see :func:`judgebox.sandbox.process.command_rlimits`): ``cpu`` seconds,
    ``fsize`` bytes, ``nofile`` count, ``stack`` bytes (``None``: unchanged); no core files; every
    hard limit at its soft limit (:func:`lock_rlimits`); ``SIGPIPE`` back to its default (the
    server ignores it); and the OOM killer's first choice (:func:`oom_first`)."""
    oom_first()
    set_rlimit(resource.RLIMIT_CPU, rlimits.get("cpu"))
    set_rlimit(resource.RLIMIT_FSIZE, rlimits.get("fsize"))
    set_rlimit(resource.RLIMIT_NOFILE, rlimits.get("nofile"))
    set_rlimit(resource.RLIMIT_STACK, rlimits.get("stack"))
    set_rlimit(resource.RLIMIT_CORE, 0)
    lock_rlimits()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def oom_first() -> None:
    """``oom_score_adj`` 1000: when the memory a cgroup above the run holds runs out (a container's
    ``mem_limit``, the host), the kernel kills the run's processes before the server's, whatever
    their size (a run's tmpfs files and socket buffers count against the container but belong to no
    process: the largest process, killed otherwise, was the server, issue 46). Inherited by what the
    run starts; raising it needs no privilege. Errors are ignored."""
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)
    except OSError:
        pass


def switch_user(user: int, group: Optional[int] = None) -> None:
    """Become ``user``/``group`` (``group`` defaults to ``user``) with no supplementary groups."""
    gid = user if group is None else group
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(user, user, user)


def compose(rlimits: dict, preexec: Optional[Callable[[], None]] = None, user: Optional[int] = None,
            group: Optional[int] = None, seal: Optional[Callable[[], None]] = None) -> Callable[[], None]:
    """The whole child set-up of one command, in the order of the module docstring.

    ``preexec`` runs before the rlimits because it opens files (``cgroup.procs``, a socket for the
    loopback) while the child still holds every descriptor of the server (they are closed after the
    set-up): under ``RLIMIT_NOFILE`` a server with more open descriptors than ``max_open_files``
    (many live sessions or connections) failed every start with EMFILE."""

    def child_setup() -> None:
        if preexec is not None:
            preexec()
        apply_rlimits(rlimits)
        if user is not None:  # last: joining a cgroup and unsharing need root
            switch_user(user, group)
        if seal is not None:
            seal()

    return child_setup


def check_program_pid() -> None:
    """Raise unless this process is pid 2 of a fresh PID namespace (the command was started inside
    :meth:`judgebox.sandbox.isolation.pidns.PidNamespace.spawning`), so a view is never built over the server's processes."""
    if os.getpid() != 2:
        raise OSError(f"the program is pid {os.getpid()}, not pid 2 of its own PID namespace: start it "
                      f"inside RunIsolation.spawning()")


def loopback_up() -> None:
    """Bring ``lo`` up in the current network namespace."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, _SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0)))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP))


def unshare_network() -> None:
    """Enter a new, empty network namespace and bring its loopback up.

    Raises:
        OSError: ``unshare(2)`` was refused (needs ``CAP_SYS_ADMIN``).
    """
    linux.unshare(linux.CLONE_NEWNET)
    loopback_up()


def set_hostname(name: str = HOSTNAME) -> None:
    """Set the host name of the current (fresh) UTS namespace to ``name``, and its NIS domain name
    to ``(none)`` when it inherited another, so that neither shows the host's.

    Raises:
        OSError: refused (needs ``CAP_SYS_ADMIN`` over the UTS namespace).
    """
    socket.sethostname(name)
    if _INHERITED_DOMAIN not in ("(none)", "") and _setdomainname(b"(none)", ctypes.c_size_t(6)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setdomainname: {os.strerror(err)}")


def join_cgroup(files: Sequence[str]) -> None:
    """Move the calling (single-threaded) process into the cgroup(s) of ``files`` (their ``tasks``
    or ``cgroup.procs`` files) by writing ``0``: the caller itself."""
    for path in files:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


def seal(bpf: Optional[bytes]) -> None:
    """Last step: ``PR_SET_NO_NEW_PRIVS``, then load the seccomp program ``bpf`` if given.

    Raises:
        OSError: the kernel refused (the run does not start).
    """
    linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    if bpf:
        linux.load_seccomp_filter(bpf)


def enter_view(root: str, binds: Sequence[str], workdir_root: str, extra: Sequence[str], run_dir: str,
               workdir: str, masks: Sequence[str] = ()) -> None:
    """Build a run's filesystem view in the current (fresh) mount namespace and make it the root.

    What the program then sees is the table of :mod:`judgebox.sandbox.isolation.view`. The order matters: the
    skeleton is bound onto itself and made read-only first, so that each mask file or folder under
    its ``/tmp`` (:data:`MASKS`) covers its ``/proc`` entry, read-only, by a single ``mount`` (a bind
    keeps its source mount's flags), before the run's ``/tmp`` hides them. Every mount point but the
    working folder's (made in the tmpfs that hides the rest of ``workdir_root``) is a folder of the
    skeleton, ``/sys`` included: an empty read-only folder where only the ``/sys`` entries among
    ``binds`` show. About 50 ``mount`` calls in all, 15 of them the masks on a typical host.

    Args:
        root: the read-only skeleton (:class:`judgebox.sandbox.isolation.view.FilesystemView`).
        binds: host folders bound read-only at their own path (system folders, toolchains, the
            ``/sys`` entries of :data:`judgebox.sandbox.isolation.view.SYS_ENTRIES`).
        workdir_root: the executor's root, shown as an empty tmpfs but for ``workdir``.
        extra: host folders under ``workdir_root`` bound read-only (the Go build cache).
        run_dir: the run's disk tmpfs (:class:`judgebox.sandbox.isolation.disk.RunDisk`), holding ``tmp``,
            ``var-tmp``, ``shm`` and ``mnt``.
        workdir: the run's working folder (read-write at the same path); becomes the working directory,
            or the folder inside it that the process was started in (a ``tests_program``'s).
        masks: ``/proc`` entries (relative paths, e.g. ``loadavg``, ``sys/kernel/random/boot_id``)
            covered by the skeleton's files or empty folders of the same relative path under :data:`MASKS`.

    Raises:
        OSError: a mount failed (the run does not start).
    """
    here = os.getcwd()
    r = root
    linux.mount(None, "/", None, MS_REC | MS_PRIVATE)
    linux.mount(r, r, None, MS_BIND)
    linux.mount(None, r, None, _RO)
    linux.mount("proc", r + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in masks:  # before the run's /tmp hides their sources
        linux.mount(r + MASKS + "/" + name, r + "/proc/" + name, None, MS_BIND)
    _make_dev(r + "/dev", os.path.join(run_dir, "shm"))
    _bind(os.path.join(run_dir, "tmp"), r + "/tmp", writable=True)
    _bind(os.path.join(run_dir, "var-tmp"), r + "/var/tmp", writable=True)
    _bind(os.path.join(run_dir, "mnt"), r + "/mnt", writable=True)
    for d in binds:  # after /tmp: a toolchain under /tmp gets its mount point in the run's /tmp
        _mkdirs(r + d)
        _bind(d, r + d)
    top = r + workdir_root
    os.makedirs(top, 0o755, exist_ok=True)  # inside the run's /tmp when the root is under /tmp
    linux.mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
    for e in extra:
        _mkdirs(r + e)
        _bind(e, r + e)
    _mkdirs(r + workdir)
    _bind(workdir, r + workdir, writable=True)
    os.chdir(r)
    linux.pivot_root(".", ".")
    linux.umount(".", MNT_DETACH)
    os.chdir(here if here.startswith(workdir.rstrip("/") + "/") else workdir)


def _bind(src: str, dst: str, writable: bool = False) -> None:
    linux.mount(src, dst, None, MS_BIND)
    linux.mount(None, dst, None, (_RO & ~MS_RDONLY) if writable else _RO)


def _mkdirs(path: str) -> None:
    os.makedirs(path, 0o755, exist_ok=True)


def _make_dev(dev: str, shm: str) -> None:
    linux.mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for name, major, minor in _DEVICES:
        path = os.path.join(dev, name)
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))
        os.chmod(path, 0o666)
    for name, target in _DEV_LINKS:
        os.symlink(target, os.path.join(dev, name))
    os.mkdir(os.path.join(dev, "shm"))
    _bind(shm, os.path.join(dev, "shm"), writable=True)
    linux.mount(None, dev, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)


class ChildSetup:
    """The isolation part of one request's child set-up, as plain data (see :mod:`judgebox.sandbox.isolation.unit`).

    Attributes:
        pid2: the program must be pid 2 of its own PID namespace (full isolation).
        cgroup_join: the cgroup files to write ``0`` to, to join (:attr:`~judgebox.sandbox.isolation.cgroups.RunCgroup.join_files`).
        data_bytes, nproc: ``RLIMIT_DATA`` (bytes) and ``RLIMIT_NPROC`` (count) when no cgroup
            enforces memory / processes; ``None``: unchanged.
        unshare_flags: ``CLONE_NEW*`` flags to unshare before the view, after the cgroup join (0:
            none); with ``CLONE_NEWUTS`` the hostname becomes :data:`HOSTNAME` (:func:`set_hostname`).
        loopback: bring ``lo`` up after unsharing (a fresh network namespace).
        view: ``(root, binds, workdir_root, extra, run_dir, workdir)`` for :func:`enter_view`, or ``None``.
        network_only: without a view, enter a fresh network namespace (:func:`unshare_network`).
        bpf: the seccomp program loaded by :meth:`seal` (``None``: no-new-privs only).
    """

    FIELDS = ("pid2", "cgroup_join", "data_bytes", "nproc", "unshare_flags", "loopback", "view",
              "network_only", "bpf")

    def __init__(self, pid2: bool = False, cgroup_join: Sequence[str] = (), data_bytes: Optional[int] = None,
                 nproc: Optional[int] = None, unshare_flags: int = 0, loopback: bool = False,
                 view: Optional[Sequence] = None, network_only: bool = False, bpf: Optional[bytes] = None) -> None:
        self.pid2, self.cgroup_join, self.data_bytes, self.nproc = pid2, list(cgroup_join), data_bytes, nproc
        self.unshare_flags, self.loopback, self.network_only, self.bpf = unshare_flags, loopback, network_only, bpf
        self.view = None if view is None else [list(v) if isinstance(v, (list, tuple)) else v for v in view]

    def preexec(self) -> None:
        """Child side, as root: pid check, cgroup join, memory/process rlimits, namespaces (then the
        hostname of a new UTS namespace), view."""
        if self.pid2:
            check_program_pid()
        join_cgroup(self.cgroup_join)
        set_rlimit(resource.RLIMIT_DATA, self.data_bytes)
        set_rlimit(resource.RLIMIT_NPROC, self.nproc)
        if self.unshare_flags:  # after the cgroup join: a new cgroup namespace is rooted at the run's
            linux.unshare(self.unshare_flags)
            if self.unshare_flags & linux.CLONE_NEWUTS:
                set_hostname()
            if self.loopback:
                loopback_up()
        if self.view is not None:
            enter_view(*self.view)
        elif self.network_only:
            unshare_network()

    def seal(self) -> None:
        """Child side, last: no-new-privs and the seccomp filter (:func:`seal`)."""
        seal(self.bpf)

    def to_wire(self) -> dict:
        """The fields as a dict of plain values (``marshal``-able), for the fork-server."""
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_wire(cls, data: dict) -> "ChildSetup":
        """The inverse of :meth:`to_wire`."""
        return cls(**{name: data[name] for name in cls.FIELDS})
