"""Each case of a ``/run_tests`` request starts from the same files: what the request wrote and the
compile step produced, nothing a previous case left.

Cases share one working folder (the compiled program is built once), so without a reset a case
could read what an earlier one wrote (its answers, or its progress: a program needing 2 s of CPU
at ``run_timeout=1`` that saves its state passed later cases, ``pass_rate`` 0.6 instead of 0).
:class:`CaseReset` takes a snapshot of the working folder after the compile step and, before every
case after the first, removes what is not in it, rewrites what changed (content, size, mode or
mtime) and empties the run's own ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (full isolation; under
``--isolation minimal`` programs use the host's ``/tmp``, which is not reset). As with
SandboxFusion's one request per case, each case sees a fresh folder.
"""

from __future__ import annotations

import os
import shutil
import stat
from typing import Optional, Sequence


class CaseReset:
    """A working folder's snapshot (regular files and folders), restored on :meth:`restore`.

    Args:
        workdir: the run's working folder (after the request's files and the compile step).
        scratch: other folders of the run emptied on every restore.
        uid: owner of restored files and folders (``None``: as the server).
    """

    def __init__(self, workdir: str, scratch: Sequence[str] = (), uid: Optional[int] = None) -> None:
        self.workdir, self.scratch, self.uid = workdir, tuple(scratch), uid
        self.files: dict[str, tuple[bytes, int, int]] = {}
        self.folders: set[str] = set()
        for root, dirs, names in os.walk(workdir):
            for d in dirs:
                self.folders.add(os.path.relpath(os.path.join(root, d), workdir))
            for name in names:
                path = os.path.join(root, name)
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as f:
                        self.files[os.path.relpath(path, workdir)] = (f.read(), st.st_mode & 0o7777, st.st_mtime_ns)

    def restore(self) -> None:
        """Make the working folder what it was at the snapshot and empty the scratch folders."""
        for folder in self.scratch:
            _empty(folder)
        changed = {}
        for root, dirs, names in os.walk(self.workdir):
            for d in list(dirs):
                path = os.path.join(root, d)
                if os.path.relpath(path, self.workdir) not in self.folders or os.path.islink(path):
                    _remove(path)
                    dirs.remove(d)
            for name in names:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, self.workdir)
                if rel not in self.files:
                    _remove(path)
        for rel, (data, mode, mtime) in self.files.items():
            path = os.path.join(self.workdir, rel)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode):
                if st.st_size == len(data) and st.st_mtime_ns == mtime and st.st_mode & 0o7777 == mode:
                    continue
            elif st is not None:
                _remove(path)  # a folder or link where the file was
            changed[rel] = (data, mode, mtime)
        if changed:
            from .executor import write_files

            write_files(self.workdir, {rel: data for rel, (data, _, _) in changed.items()}, self.uid)
            for rel, (_, mode, mtime) in changed.items():
                path = os.path.join(self.workdir, rel)
                os.chmod(path, mode)
                os.utime(path, ns=(mtime, mtime), follow_symlinks=False)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _empty(folder: str) -> None:
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        _remove(os.path.join(folder, name))
