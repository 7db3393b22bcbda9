"""A run's minimal filesystem view: a private mount namespace whose root shows only what a program needs.

:class:`FilesystemView` is built once per executor (host side): it prepares a read-only *skeleton*
root folder (``<workdir root>/.view-<hash>``) holding a minimal copy of ``/etc``, the
``/bin``-style links of a merged-``/usr`` system, empty mount points and the files that mask host-wide
``/proc`` entries (:data:`PROC_MASKS`), and it lists the host folders to bind in.
:meth:`FilesystemView.enter` (:func:`judgebox.sandbox.isolation.childsetup.enter_view`) runs in the run's child (child
side, root, after ``unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP [| CLONE_NEWNET])``
in the fresh PID namespace, after the child joined its cgroup) and builds the view in well under a
millisecond of system calls:

==========================  =========================================================================
path in the view            what it is
==========================  =========================================================================
``/``                       the skeleton, read-only; ``/etc`` a copy of :data:`ETC_ENTRIES` only, and
                            an ``/etc/hosts`` of its own (``localhost`` and :data:`HOSTNAME`)
``/usr`` ``/lib*`` …        the host's system folders, bind-mounted read-only, ``nosuid``, ``nodev``
toolchain folders           every interpreter/compiler install prefix outside ``/usr`` (a pyenv, conda or
                            venv under a 0700 ``/root``, rustup, a JDK), same path, read-only
``/proc``                   a fresh ``proc`` of the run's PID namespace (only the run's processes);
                            ``stat``, ``meminfo``, ``cpuinfo`` and ``self`` as the kernel shows them
``/proc/loadavg`` …         host-wide entries no runtime needs (:data:`PROC_MASKS`), each covered by a
                            read-only file or empty folder of the skeleton: ``loadavg`` reads
                            ``0.00 0.00 0.00 1/1 1``, ``sys/kernel/random/boot_id`` a fixed uuid,
                            ``swaps`` no swap; ``diskstats``, ``interrupts``, ``keys``, ``acpi`` … empty
``/sys``                    an empty read-only folder of the skeleton with only :data:`SYS_ENTRIES`
                            bound read-only from the host: ``/sys/devices/system/cpu`` (glibc's and
                            OpenBLAS's CPU count) and ``/sys/kernel/mm/transparent_hugepage`` (the
                            huge page size the Go runtime reads); no ``class/net``, ``block``, …
``/dev``                    a small tmpfs: ``null zero full random urandom tty``, ``fd``/``std*`` links
``/tmp`` ``/var/tmp``       the run's own folders on its disk-quota tmpfs (:mod:`judgebox.sandbox.isolation.disk`)
``/dev/shm`` ``/mnt``
the working folder          same absolute path as on the host (read-write), alone in an empty folder:
                            other runs' folders and the server's files under the workdir root are absent
==========================  =========================================================================

``/root``, ``/home``, ``/srv``, ``/opt``, ``/var`` and the rest exist only as the path to a toolchain
folder, or not at all. Every mount is ``nosuid``; all but ``/dev`` are ``nodev``. Outside the
filesystem: the hostname is :data:`HOSTNAME` (the run's own UTS namespace, NIS domain ``(none)``) and
``/proc/self/cgroup`` shows ``/`` (a cgroup namespace rooted at the run's cgroup, unshared after
the child joined it).

Left as they are: ``/proc/stat``, ``meminfo``, ``cpuinfo`` and ``uptime`` (the JVM, libuv under
Node and psutil read them), ``/proc/<pid>/autogroup`` (per process: one bind cannot cover it), ``sysinfo(2)`` (a system call: host load, uptime, memory and process count;
glibc's ``getloadavg`` uses it, so ``os.getloadavg`` shows the host's load), and the skeleton's host
path (``<workdir root>/.view-<hash>``) as the source of ``/`` and of the masks in
``/proc/self/mountinfo``: the root field of a bind mount is the path inside its file system, and only
a file system of the skeleton's own would hide it, either a tmpfs the server mounts on the host and
must outlive every run and server using it (a mount and ~2 MB of memory left behind by each server
that dies and by each deleted workdir root), or one filled per run (~800 files to copy, or a tmpfs
root with some 30 more binds of the host's ``/etc`` entries and their mount points: about the whole
view's cost again). The path tells nothing the program does not see already: the workdir root
starts the path of its own working folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from typing import Iterable, Optional, Sequence

from .childsetup import HOSTNAME, MASKS

#: Folders bound read-only from the host when they are real folders (links are copied as links).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What of ``/etc`` a view shows (copied when the view is built): the dynamic loader's cache, the
#: ``alternatives`` links (``java``, ``c++``, ``php``, ``lua``, the BLAS that R loads), name service
#: basics, time zone, TLS roots, and the configuration folders of the JDK, Python, R (``ldpaths``,
#: ``Renviron``), PHP (``php.ini`` and its extensions' ``conf.d``), Perl, Racket and Mono.
ETC_ENTRIES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group",
               "nsswitch.conf", "host.conf", "localtime", "timezone", "ssl", "ca-certificates",
               "ca-certificates.conf", "mime.types", "os-release", "debian_version", "protocols",
               "services", "gai.conf", "java-17-openjdk", "java-21-openjdk", "java-11-openjdk",
               "python3", "python3.11", "python3.12", "python3.13", "fonts", "magic", "R", "php",
               "perl", "racket", "mono")
#: The view's ``/etc/hosts`` (never the host's: it names the host).
HOSTS = f"127.0.0.1\tlocalhost\n127.0.1.1\t{HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n"
#: What of the host's ``/sys`` a view shows, read-only, where the host has it: the CPU topology
#: (glibc's ``get_nprocs``/``get_nprocs_conf`` behind ``os.cpu_count``, OpenBLAS) and the
#: transparent huge page settings (the Go runtime reads ``hpage_pmd_size`` at start).
SYS_ENTRIES = ("/sys/devices/system/cpu", "/sys/kernel/mm/transparent_hugepage")
#: Host-wide ``/proc`` entries no runtime needs, covered in every view (where the host's ``/proc``
#: has them) by a read-only file of this content, or an empty folder (``None``). Runtimes read
#: ``stat``, ``meminfo``, ``cpuinfo``, ``uptime`` and ``self/*``, which stay; glibc's
#: ``getloadavg`` (``os.getloadavg``) parses ``loadavg``; psutil's ``swap_memory`` parses
#: ``vmstat`` and ``swaps``.
PROC_MASKS: dict[str, Optional[str]] = {
    "loadavg": "0.00 0.00 0.00 1/1 1\n",
    "sys/kernel/random/boot_id": "6c6f1f1e-2b3a-4c5d-9e8f-0a1b2c3d4e5f\n",
    "swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
    "vmstat": "pswpin 0\npswpout 0\n",
    "partitions": "major minor  #blocks  name\n\n",
    "cgroups": "#subsys_name\thierarchy\tnum_cgroups\tenabled\n",
    "cmdline": "sandbox\n",
    "sys/fs/file-nr": "0\t0\t0\n",
    "sys/fs/inode-nr": "0\t0\n",
    "sys/fs/dentry-state": "0\t0\t45\t0\t0\t0\n",
    **dict.fromkeys(("diskstats", "interrupts", "softirqs", "zoneinfo", "buddyinfo", "kcore", "keys", "key-users",
                     "timer_list", "sched_debug", "latency_stats", "consoles", "devices", "misc", "iomem",
                     "ioports", "locks"), ""),
    **dict.fromkeys(("acpi", "scsi", "pressure", "bus"), None),
    # the run's PID-namespace init lives in the server's mount namespace: its mount table showed the
    # executor's (host paths, other runs' disks, issue 46) and its environment the server's pid
    **dict.fromkeys(("1/mountinfo", "1/mounts", "1/mountstats", "1/environ"), ""),
}
#: Bumped when the skeleton's layout changes (a new skeleton is built next to the old one).
_LAYOUT = 6
_COMPLETE = ".complete"


def etc_fingerprint() -> str:
    """A digest of what the view copies from ``/etc``: every :data:`ETC_ENTRIES` path under it with
    its modification time and size (links: their target). A package installed after a skeleton was
    made (a new ``alternatives`` link, ``/etc/php``) changes it, so the next server makes a new
    skeleton instead of showing programs the old ``/etc``."""
    seen = []
    for name in ETC_ENTRIES:
        top = os.path.join("/etc", name)
        for path in [top] + ([os.path.join(d, f) for d, dirs, files in os.walk(top) for f in dirs + files]
                             if os.path.isdir(top) and not os.path.islink(top) else []):
            try:
                st = os.lstat(path)
            except OSError:
                continue
            seen.append((path, st.st_mtime_ns, st.st_size, os.readlink(path) if os.path.islink(path) else ""))
    return hashlib.sha256(repr(seen).encode()).hexdigest()


def _covered(path: str, by: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in by)


#: Folders never bound whole (a toolchain "installed" directly in one is left out): they hold other
#: users' and the server's files.
NEVER_WHOLE = ("/", "/root", "/home", "/srv", "/opt", "/var", "/etc", "/tmp", "/var/tmp", "/mnt", "/media",
               "/run", "/boot", "/var/lib", "/var/cache", "/usr/local")


def toolchain_dirs(paths: Iterable[str]) -> list[str]:
    """The folders to bind for ``paths`` (install prefixes, homes): real paths, outside the system
    folders, each not inside another, none of :data:`NEVER_WHOLE` nor a user's home; sorted."""
    never = {*NEVER_WHOLE, os.path.realpath(os.path.expanduser("~"))}
    real = set()
    for p in paths:
        if p and os.path.isdir(p) and os.path.realpath(p) not in never \
                and os.path.dirname(os.path.realpath(p)) != "/home":
            real.add(os.path.realpath(p))
    system = [os.path.realpath(d) for d in SYSTEM_DIRS if os.path.isdir(d)]
    out: list[str] = []
    for p in sorted(real, key=len):
        if p != "/" and not _covered(p, system) and not _covered(p, out):
            out.append(p)
    return sorted(out)


class FilesystemView:
    """The read-only skeleton root and the binds of every run's view (see the module docstring).

    Args:
        workdir_root: the executor's root folder (runs' folders are made in it); the skeleton is
            made once at ``<workdir_root>/.view-<hash of the configuration>`` and reused (a few MB).
        toolchains: folders to bind read-only at their own path (see :func:`toolchain_dirs`).
        extra: host folders under the workdir root bound read-only at their own path, e.g. the
            shared Go build cache.

    Raises:
        OSError: the skeleton could not be made.
    """

    def __init__(self, workdir_root: str, toolchains: Sequence[str], extra: Sequence[str] = ()) -> None:
        self.workdir_root = os.path.realpath(workdir_root)
        self.binds = [d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)]
        self.binds += [d for d in toolchain_dirs(toolchains) if not _covered(d, self.binds)]
        self.binds += [d for d in SYS_ENTRIES if os.path.isdir(d) and not os.path.islink(d)]
        #: the :data:`PROC_MASKS` this kernel's ``/proc`` has (a fresh ``proc`` shows the same entries)
        self.masks = [name for name in PROC_MASKS if os.path.lexists(os.path.join("/proc", name))]
        self.extra = [os.path.realpath(e) for e in extra]
        key = hashlib.sha256(repr((self.binds, self.extra, self.workdir_root, etc_fingerprint(), HOSTS,
                                   PROC_MASKS, MASKS, _LAYOUT)).encode()).hexdigest()
        self.root = os.path.join(self.workdir_root, f".view-{key[:16]}")
        if not os.path.isfile(os.path.join(self.root, _COMPLETE)):
            self._build()

    def _build(self) -> None:
        """Make the skeleton in a private folder, then rename it into place (servers sharing a
        workdir root and a configuration share one skeleton; the first to finish wins, and a complete
        skeleton is never replaced: another server's runs may be building their views on it)."""
        root = tempfile.mkdtemp(prefix=".view-build-", dir=self.workdir_root)
        os.chmod(root, 0o755)
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                os.symlink(os.readlink(d), root + d)
        for d in (*self.binds, "/proc", "/dev", "/sys", "/tmp", "/var/tmp", "/mnt", self.workdir_root):
            os.makedirs(root + d, 0o755, exist_ok=True)
        for name, content in PROC_MASKS.items():  # under the skeleton's /tmp: hidden by the run's /tmp
            path = os.path.join(root + MASKS, name)
            if content is None:
                os.makedirs(path, 0o555, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
            with open(path, "w") as f:
                f.write(content)
            os.chmod(path, 0o444)
        etc = os.path.join(root, "etc")
        os.makedirs(etc, 0o755, exist_ok=True)
        for name in ETC_ENTRIES:
            src = os.path.join("/etc", name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), os.path.join(etc, name))
            elif os.path.isdir(src):
                shutil.copytree(src, os.path.join(etc, name), symlinks=True, ignore_dangling_symlinks=True)
            elif os.path.isfile(src):
                shutil.copy2(src, os.path.join(etc, name))
        with open(os.path.join(etc, "hosts"), "w") as f:
            f.write(HOSTS)
        os.chmod(os.path.join(etc, "hosts"), 0o644)
        open(os.path.join(root, _COMPLETE), "w").close()
        try:
            os.rename(root, self.root)  # atomic; refused (ENOTEMPTY) when a skeleton is there
            return
        except OSError:
            pass
        if os.path.isfile(os.path.join(self.root, _COMPLETE)):
            # another server put its identical skeleton there first, and its runs may be using it
            # now: never remove a complete one (doing so failed another executor's first run)
            shutil.rmtree(root, ignore_errors=True)
            return
        # a partial one: only an interrupted removal leaves that, since a build is renamed whole
        shutil.rmtree(self.root, ignore_errors=True)
        try:
            os.rename(root, self.root)
        except OSError:  # a third server won the same race: its skeleton is identical
            shutil.rmtree(root, ignore_errors=True)

    def spec(self, run_dir: str, workdir: str) -> tuple:
        """The arguments of :func:`judgebox.sandbox.isolation.childsetup.enter_view` for one run (plain data): the
        child builds the view from them in its fresh mount namespace.

        Args:
            run_dir: the run's disk tmpfs (:class:`judgebox.sandbox.isolation.disk.RunDisk`), holding ``tmp``,
                ``var-tmp``, ``shm`` and ``mnt``.
            workdir: the run's working folder (shown read-write at the same path).
        """
        return (self.root, list(self.binds), self.workdir_root, list(self.extra), run_dir, workdir,
                list(self.masks))


