"""A run's minimal filesystem view: a private mount namespace whose root shows only what a program needs.

:class:`FilesystemView` is built once per executor (host side): it prepares a read-only *skeleton*
root folder (``<workdir root>/.view-<hash>``) holding a minimal copy of ``/etc``, the
``/bin``-style links of a merged-``/usr`` system and empty mount points, and it lists the host
folders to bind in. :meth:`FilesystemView.enter` (:func:`sandbox.childsetup.enter_view`) runs in the run's child (child side,
root, after ``unshare(CLONE_NEWNS | CLONE_NEWPID)``) and builds the view in well under a
millisecond of system calls:

======================  =============================================================================
path in the view        what it is
======================  =============================================================================
``/``                   the skeleton, read-only; ``/etc`` a copy of :data:`ETC_ENTRIES` only
``/usr`` ``/lib*`` …    the host's system folders, bind-mounted read-only, ``nosuid``, ``nodev``
toolchain folders       every interpreter/compiler install prefix outside ``/usr`` (a pyenv, conda or
                        venv under a 0700 ``/root``, rustup, a JDK), same path, read-only
``/proc``               a fresh ``proc`` of the run's PID namespace (only the run's processes)
``/sys``                the host's ``/sys`` top mount, read-only, without its sub-mounts
``/dev``                a small tmpfs: ``null zero full random urandom tty``, ``fd``/``std*`` links
``/tmp`` ``/var/tmp``   the run's own folders on its disk-quota tmpfs (:mod:`sandbox.quota`)
``/dev/shm``
the working folder      same absolute path as on the host (read-write), alone in an empty folder:
                        other runs' folders and the server's files under the workdir root are absent
======================  =============================================================================

``/root``, ``/home``, ``/srv``, ``/opt``, ``/var`` and the rest exist only as the path to a toolchain
folder, or not at all. Every mount is ``nosuid``; all but ``/dev`` are ``nodev``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from typing import Iterable, Optional, Sequence

from .childsetup import enter_view

#: Folders bound read-only from the host when they are real folders (links are copied as links).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What of ``/etc`` a view shows (copied when the view is built): the dynamic loader's cache, the
#: ``alternatives`` links (``java``, ``c++``), name service basics, time zone, TLS roots, the JDK's
#: and Python's configuration folders.
ETC_ENTRIES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group",
               "nsswitch.conf", "hosts", "host.conf", "localtime", "timezone", "ssl", "ca-certificates",
               "ca-certificates.conf", "mime.types", "os-release", "debian_version", "protocols",
               "services", "gai.conf", "java-17-openjdk", "java-21-openjdk", "java-11-openjdk",
               "python3", "python3.11", "python3.12", "python3.13", "fonts", "magic")
_COMPLETE = ".complete"


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
        if os.path.isdir("/sys"):
            self.binds.append("/sys")
        self.extra = [os.path.realpath(e) for e in extra]
        key = hashlib.sha256(repr((self.binds, self.extra, self.workdir_root, ETC_ENTRIES)).encode()).hexdigest()
        self.root = os.path.join(self.workdir_root, f".view-{key[:16]}")
        if not os.path.isfile(os.path.join(self.root, _COMPLETE)):
            self._build()

    def _build(self) -> None:
        """Make the skeleton in a private folder, then rename it into place (servers sharing a
        workdir root and a configuration share one skeleton; the first to finish wins)."""
        root = tempfile.mkdtemp(prefix=".view-build-", dir=self.workdir_root)
        os.chmod(root, 0o755)
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                os.symlink(os.readlink(d), root + d)
        for d in (*self.binds, "/proc", "/dev", "/tmp", "/var/tmp", self.workdir_root):
            os.makedirs(root + d, 0o755, exist_ok=True)
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
        open(os.path.join(root, _COMPLETE), "w").close()
        shutil.rmtree(self.root, ignore_errors=True)  # an incomplete one (a server died building it)
        try:
            os.rename(root, self.root)
        except OSError:  # another server put its identical skeleton there first
            shutil.rmtree(root, ignore_errors=True)

    def spec(self, run_dir: str, workdir: str) -> tuple:
        """The arguments of :func:`sandbox.childsetup.enter_view` for one run (plain data): the
        child builds the view from them in its fresh mount namespace.

        Args:
            run_dir: the run's disk tmpfs (:class:`sandbox.quota.RunDisk`), holding ``tmp``,
                ``var-tmp`` and ``shm``.
            workdir: the run's working folder (shown read-write at the same path).
        """
        return (self.root, list(self.binds), self.workdir_root, list(self.extra), run_dir, workdir)


