"""The per-run uids: a pool leased with ``flock``, the tasks of a uid, killing them, the files
they left in shared ``/tmp``-like folders, and whether a uid can reach a program."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import threading
import time
from typing import Iterator, Optional, Sequence

from judgebox.sandbox.runfs import remove_tree

from .kill import kill_until_gone


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
                remove_tree(entry.path)  # a folder of any depth, no link followed
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
