"""Each case of a ``/run_tests`` request starts from the same working folder: what the request wrote
and the compile step produced, nothing a previous case left.

Cases share one working folder (the compiled program is built once), so without a reset a case
could read what an earlier one wrote (its answers, or its progress: a program needing 2 s of CPU
at ``run_timeout=1`` that saves its state passed later cases, ``pass_rate`` 0.6 instead of 0).
:class:`CaseReset` takes a snapshot of the working folder after the compile step and, before every
case after the first, makes it that snapshot again and empties the run's own ``/tmp``,
``/var/tmp`` and ``/dev/shm`` (full isolation; under ``--isolation minimal`` programs use the
host's ``/tmp``, which is not reset). As with SandboxFusion's one request per case, each case sees
a fresh folder.

What is restored, for every file and folder (the working folder itself included):

* which names exist: anything not in the snapshot (links, fifos, new files and folders) is removed;
* every file is **written anew** from the snapshot on every restore, content and allocation: no
  property of the old file can carry a value, neither its bytes (metadata cannot be trusted:
  ``os.utime`` puts an mtime back, and ``mmap`` writes on tmpfs do not update mtime or ctime), nor
  a hard link (a later write to another name), nor its allocated blocks (``fallocate`` with
  ``FALLOC_FL_KEEP_SIZE`` past the end, or a punched hole, changes neither size nor content but
  ``st_blocks``, the free space and the ``SEEK_HOLE`` map); this costs about what comparing the
  bytes did (every byte of the snapshot read or written once per case);
* mode, owner, access and modification times, and extended attributes (a ``user.*`` attribute or an
  ACL not in the snapshot is removed). The working folder is given mode 0700 and the run uid, as
  the isolation made it, so a case that ran ``chmod(".", 0)`` cannot make the next case's start
  fail.

The run's processes are all dead when :meth:`CaseReset.restore` runs; still, nothing here follows
a link the run planted: every step works on open folder descriptors (``dir_fd``), moves down by
name with ``O_NOFOLLOW`` and checks each entry's type with ``lstat``. Folders are walked one open
descriptor at a time, without recursion, so a deep tree costs neither stack nor descriptors.

What is not reset: inode numbers and ctimes (a restored file is new or newly changed; no byte of
the snapshot differs); a file the snapshot holds sparse (a hole the compile step left) is restored
dense, the same way for every case.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import Optional, Sequence

from .runfs import FOLDER, READ, make_writable, open_folder, remove_entry, walk

_CHUNK = 1 << 20


@dataclass
class _Meta:
    """What a file or folder has besides its content: mode bits, owner, times (ns), xattrs."""

    mode: int
    uid: int
    gid: int
    atime_ns: int
    mtime_ns: int
    xattrs: dict[str, bytes]

    @classmethod
    def of(cls, fd: int) -> "_Meta":
        st = os.fstat(fd)
        return cls(stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_atime_ns, st.st_mtime_ns, _xattrs(fd))

    def apply(self, fd: int) -> None:
        """Give the open file or folder ``fd`` this metadata (only what differs is changed)."""
        have = _xattrs(fd)
        for name in have.keys() - self.xattrs.keys():
            os.removexattr(fd, name)
        for name, value in self.xattrs.items():
            if have.get(name) != value:
                os.setxattr(fd, name, value)
        st = os.fstat(fd)
        if (st.st_uid, st.st_gid) != (self.uid, self.gid):
            os.fchown(fd, self.uid, self.gid)  # before the mode: a chown clears set-id bits
        if stat.S_IMODE(os.fstat(fd).st_mode) != self.mode:
            os.fchmod(fd, self.mode)
        if (st.st_atime_ns, st.st_mtime_ns) != (self.atime_ns, self.mtime_ns):
            os.utime(fd, ns=(self.atime_ns, self.mtime_ns))


@dataclass
class _Folder:
    """One folder of the snapshot: its metadata, its files (name -> (content, metadata)), its
    subfolders (name -> :class:`_Folder`): a tree, so memory is linear in the folders at any depth."""

    meta: Optional[_Meta] = None
    files: dict[str, tuple[bytes, _Meta]] = field(default_factory=dict)
    folders: dict[str, "_Folder"] = field(default_factory=dict)


#: Bytes of files a snapshot may hold (in the server's memory): a compile step can leave sparse files
#: that cost the run no disk but would cost the server their whole size.
MAX_SNAPSHOT_BYTES = 256 << 20


class SnapshotTooLarge(OSError):
    """The working folder holds more than :data:`MAX_SNAPSHOT_BYTES` of files (sizes as ``st_size``)."""


class CaseReset:
    """A working folder's snapshot (regular files and folders), restored on :meth:`restore`.

    Args:
        workdir: the run's working folder (after the request's files and the compile step).
        scratch: other folders of the run emptied on every restore.
        uid: the run uid: owner of the working folder (``None``: as at the snapshot). Every other
            file and folder gets back the owner it had at the snapshot.

    Raises:
        SnapshotTooLarge: the folder holds more than ``max_bytes`` of files (on creation).
        OSError: the working folder could not be read (on creation) or written (on :meth:`restore`).
    """

    def __init__(self, workdir: str, scratch: Sequence[str] = (), uid: Optional[int] = None,
                 max_bytes: int = MAX_SNAPSHOT_BYTES) -> None:
        self.workdir, self.scratch, self.uid = workdir, tuple(scratch), uid
        self._room = max_bytes
        #: each scratch folder's own metadata (its mtime is as telling as a file in it)
        self.scratch_meta: dict[str, _Meta] = {}
        for folder in self.scratch:
            try:
                fd = open_folder(None, folder)
            except FileNotFoundError:
                continue
            try:
                self.scratch_meta[folder] = _Meta.of(fd)
            finally:
                os.close(fd)
        #: the snapshot: the working folder's :class:`_Folder`
        self.root = _Folder()
        fd = os.open(workdir, FOLDER)
        try:
            walk(fd, self._take, self._took, self.root)
        finally:
            os.close(fd)
        root = self.root.meta
        root.mode = 0o700
        if uid is not None:
            root.uid = root.gid = uid

    def _take(self, fd: int, folder: _Folder) -> list[tuple[str, _Folder]]:
        for name in sorted(os.listdir(fd)):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                folder.folders[name] = _Folder()
            elif stat.S_ISREG(st.st_mode):
                self._room -= st.st_size
                if self._room < 0:
                    raise SnapshotTooLarge(f"the working folder holds more than {MAX_SNAPSHOT_BYTES >> 20} MiB of "
                                           "files (sparse files count at their size); cases cannot start from it")
                f = os.open(name, READ, dir_fd=fd)
                try:
                    folder.files[name] = (_read(f, st.st_size), _Meta.of(f))
                finally:
                    os.close(f)
        return list(folder.folders.items())

    @staticmethod
    def _took(fd: int, folder: _Folder) -> None:
        folder.meta = _Meta.of(fd)

    def restore(self) -> None:
        """Make the working folder what it was at the snapshot and empty the scratch folders.

        Raises:
            OSError: a file or folder could not be restored (an infrastructure failure).
        """
        for folder in self.scratch:
            try:
                fd = open_folder(None, folder)
            except FileNotFoundError:
                continue
            try:
                for name in os.listdir(fd):
                    remove_entry(fd, name)
                if folder in self.scratch_meta:
                    self.scratch_meta[folder].apply(fd)
            finally:
                os.close(fd)
        fd = open_folder(None, self.workdir)
        try:
            # first free all the space a case took (a full disk must not stop a file's restore),
            # then write back what differs
            walk(fd, self._prune, lambda d, folder: None, self.root)
            walk(fd, self._restore_entries, lambda d, folder: folder.meta.apply(d), self.root)
        finally:
            os.close(fd)

    @staticmethod
    def _prune(fd: int, want: _Folder) -> list[tuple[str, _Folder]]:
        """Remove from the open folder ``fd`` (snapshot folder ``want``) every entry but the snapshot's
        folders: every file (each is written anew, see the module docstring) and everything not in
        the snapshot or not of its type; return the snapshot's subfolders that are there."""
        make_writable(fd)
        folders = []
        for name in os.listdir(fd):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if name in want.folders and stat.S_ISDIR(st.st_mode):
                folders.append((name, want.folders[name]))
            else:
                remove_entry(fd, name)
        return folders

    @staticmethod
    def _restore_entries(fd: int, want: _Folder) -> list[tuple[str, _Folder]]:
        """Restore the files of the open folder ``fd`` (snapshot folder ``want``, pruned) and make
        its missing subfolders; they are restored after, its own metadata last (adding entries
        changes its mtime)."""
        for name in want.folders:
            try:
                os.mkdir(name, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
        for name, (data, meta) in want.files.items():
            _restore_file(fd, name, data, meta)
        return list(want.folders.items())


def _restore_file(fd: int, name: str, data: bytes, meta: _Meta) -> None:
    """Write ``name`` anew in the open folder ``fd`` (pruned: it is not there) with ``data`` and ``meta``."""
    f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(f, view[:_CHUNK]):]
        meta.apply(f)
    finally:
        os.close(f)


def _xattrs(fd: int) -> dict[str, bytes]:
    """The extended attributes of the open ``fd`` (``{}`` where the filesystem has none)."""
    try:
        return {name: os.getxattr(fd, name) for name in os.listxattr(fd)}
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return {}
        raise


def _read(fd: int, size: int) -> bytes:
    """The content of the open file ``fd`` (``size``: its expected length in bytes)."""
    parts, n = [], 0
    while True:
        chunk = os.read(fd, max(size - n, 0) + _CHUNK)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        n += len(chunk)
