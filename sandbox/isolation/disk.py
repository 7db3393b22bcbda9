"""A run's disk quota: one tmpfs of ``disk_limit_MB`` holding everything the run can write.

Mechanism: when a request starts, the server mounts a ``tmpfs`` (``size=<disk_limit_MB>m``,
``nosuid``, ``nodev``) at ``<workdir root>/run-XXXX`` holding ``work/`` (the working folder),
``tmp/``, ``var-tmp/``, ``shm/`` and ``mnt/``, which the run's view (:mod:`judgebox.sandbox.isolation.view`) shows
as the working folder, ``/tmp``, ``/var/tmp``, ``/dev/shm`` and ``/mnt``. They share the one size cap: a write past
it fails with ``ENOSPC`` (the program sees "No space left on device"; the run is an ordinary
``Failed`` one), never filling the host's disk. The tmpfs is unmounted and its pages freed when the
request ends.

Interaction with ``memory_limit_MB``: tmpfs pages are memory, charged to the memory cgroup of the
process that writes them, and the run's cgroup keeps exactly ``memory_limit_MB`` (a memory verdict
must not move by the disk quota). So a run's files count towards both caps, and whichever is met
first applies: a write past ``disk_limit_MB`` fails with ``ENOSPC`` (``disk_exceeded``); memory plus
files past ``memory_limit_MB`` is an OOM kill (``memory_exceeded``). With the defaults (4096 MiB of
memory, 1024 MiB of disk) a file writer meets ``ENOSPC`` first. Files the server writes for the
request (``files``) are charged to the server, but count towards the disk cap.

``disk_exceeded`` is reported when less than :data:`FULL_BYTES` was left free after a command,
which a program that met ``ENOSPC`` always leaves.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from . import linux
from .kill import left_by_dead_server
from .linux import MNT_DETACH, MS_NODEV, MS_NOSUID

#: Free bytes below which the quota counts as hit (tmpfs allocates in pages).
FULL_BYTES = 64 << 10
#: The run's own scratch mounts: each folder the view shows at an absolute path, and its folder on
#: the run's disk. Requests may name files under them by absolute path (``files``, ``fetch_files``).
SCRATCH_MOUNTS = {"/tmp": "tmp", "/var/tmp": "var-tmp", "/dev/shm": "shm", "/mnt": "mnt"}
#: The sub-folders of a run's disk: the working folder, then the scratch mounts' (in that order).
WORK, SHARED = "work", tuple(SCRATCH_MOUNTS.values())


def scratch_path(scratch: tuple[str, ...], path: str) -> tuple[str, str]:
    """Where the absolute ``path`` of a run's view (under one of :data:`SCRATCH_MOUNTS`) is on the host:
    ``(the scratch folder, the path relative to it)``; ``scratch`` is :meth:`RunDisk.scratch`.

    Raises:
        ValueError: ``path`` is under no scratch mount, or ``scratch`` is empty (no private view).
    """
    for (mount, _), folder in zip(SCRATCH_MOUNTS.items(), scratch):
        if path.startswith(mount + "/"):
            return folder, path[len(mount) + 1:]
    raise ValueError(f"{path!r} is not in the run's own folders")


class RunDisk:
    """The mounted tmpfs of one run; use :meth:`create` and :meth:`remove`.

    Attributes:
        path: the tmpfs mount point (``<root>/run-XXXX``).
        workdir: ``<path>/work``, the run's working folder.
        size_bytes: the cap.
    """

    def __init__(self, path: str, size_bytes: int) -> None:
        self.path, self.size_bytes = path, size_bytes
        self.workdir = os.path.join(path, WORK)

    @classmethod
    def create(cls, root: str, size_bytes: int, uid: int | None) -> "RunDisk":
        """Mount a fresh tmpfs of ``size_bytes`` under ``root`` and lay it out for a run.

        ``work/`` belongs to ``uid`` with mode 0700; the shared folders are mode 1777 like ``/tmp``.

        Raises:
            OSError: the mount was refused (needs ``CAP_SYS_ADMIN``).
        """
        path = tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=root)
        try:
            linux.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
                        f"size={max(size_bytes, 1 << 20)},mode=0711")
        except OSError:
            os.rmdir(path)
            raise
        disk = cls(path, size_bytes)
        os.mkdir(disk.workdir, 0o700)
        if uid is not None:
            os.chown(disk.workdir, uid, uid)
        for name in SHARED:
            folder = os.path.join(path, name)
            os.mkdir(folder)
            os.chmod(folder, 0o1777)
        return disk

    def scratch(self) -> tuple[str, ...]:
        """The folders shown as ``/tmp``, ``/var/tmp``, ``/dev/shm`` and ``/mnt`` (:data:`SCRATCH_MOUNTS` order)."""
        return tuple(os.path.join(self.path, name) for name in SHARED)

    def used_bytes(self) -> int:
        """Bytes the run's files take on this disk now (0 where it cannot be read)."""
        try:
            st = os.statvfs(self.path)
        except OSError:
            return 0
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def exceeded(self) -> bool:
        """``True`` when the cap is (nearly) reached: less than :data:`FULL_BYTES` free, or no inode."""
        try:
            st = os.statvfs(self.path)
        except OSError:
            return False
        return st.f_bavail * st.f_frsize < FULL_BYTES or (st.f_files > 0 and st.f_favail == 0)

    def remove(self) -> None:
        """Unmount (lazily, so a process still exiting cannot block it) and delete the mount point."""
        try:
            linux.umount(self.path, MNT_DETACH)
        except OSError:
            pass
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def _mtime(path: str) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def remove_stale(root: str) -> int:
    """Unmount and delete the run disks under ``root`` left by servers that died (``run-<pid>-*``:
    :func:`~judgebox.sandbox.isolation.kill.left_by_dead_server`); returns how many. Called once when
    an executor starts."""
    removed = 0
    for name in os.listdir(root):
        parts = name.split("-")
        if len(parts) >= 3 and parts[0] == "run" and parts[1].isdigit() \
                and left_by_dead_server(int(parts[1]), _mtime(os.path.join(root, name))):
            RunDisk(os.path.join(root, name), 0).remove()
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
            removed += 1
    return removed
