"""The per-run uids: a pool leased with ``flock``, the tasks of a uid, killing them, the files and
System V IPC objects they left in shared places, and whether a uid can reach a program."""

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
    """Pids whose real uid is ``uid`` (read from ``/proc/<pid>/status``) that still run something.

    A zombie runs nothing and cannot be killed, only reaped by its parent (the server, or the
    container's init): counting it made :func:`kill_uid` spin until its deadline after every run.
    But a process whose main thread alone exited (``SYS_exit``) shows as a zombie while its other
    threads run on: it counts as long as one of its threads is not a zombie (it outlived the
    end-of-run kill that skipped it, issue 46).
    """
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                for line in f:
                    if line.startswith("State:") and line.split()[1] in ("Z", "X") and not _live_thread(name):
                        break
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            out.append(int(name))
                        break
        except (OSError, ValueError):
            pass
    return out


def _live_thread(pid: str) -> bool:
    """Whether a thread of process ``pid`` other than a zombie is left (its leader may be one)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    return True
        except (OSError, IndexError):
            pass
    return False


_KILL = shutil.which("kill", path="/usr/bin:/bin")


def kill_uid(uid: int, deadline_s: float = 5.0) -> bool:
    """SIGKILL every process of ``uid`` until none is left (``True``) or the deadline passes.

    As root, each round is ``kill -KILL -1`` run *as* ``uid``: the kernel signals every process that
    uid may signal (all of its processes, in one pass over the process table, so no fork outruns a
    scan of ``/proc``), then :func:`tasks_of_uid` says whether one is left. Otherwise (or without a
    ``kill`` program) each pid :func:`tasks_of_uid` lists is killed.
    """
    if os.geteuid() != 0 or _KILL is None:
        return kill_until_gone(lambda: tasks_of_uid(uid), deadline_s)
    import subprocess

    end = time.monotonic() + deadline_s
    while True:
        if not tasks_of_uid(uid):
            return True
        if time.monotonic() > end:
            return False
        try:
            subprocess.run([_KILL, "-KILL", "-1"], user=uid, group=uid, extra_groups=[], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5, env={})
        except (OSError, subprocess.SubprocessError):
            kill_until_gone(lambda: tasks_of_uid(uid), 0.05)


#: ``/proc/sysvipc`` file -> (``ipcrm``'s option, the column of the id and of the owner's uid; the
#: creator's uid is two columns after the owner's).
_SYSV = {"shm": ("-m", 1, 7), "sem": ("-s", 1, 4), "msg": ("-q", 1, 7)}
_IPCRM = shutil.which("ipcrm", path="/usr/bin:/bin")


def remove_ipc_of(uid: int) -> int:
    """Remove the System V shared memory segments, semaphore sets and message queues that ``uid``
    owns or created (``/proc/sysvipc``; POSIX queues are files of ``/dev/mqueue``, see
    :func:`remove_files_of`). Called when a request ends without an IPC namespace of its own
    (minimal isolation), so a later run finds none of them. The removal runs *as* ``uid``
    (``ipcrm``): removing another uid's object needs ``CAP_SYS_ADMIN``, which a minimal-isolation
    container does not keep. Returns how many objects were found; errors are ignored."""
    args: list[str] = []
    for kind, (option, id_at, uid_at) in _SYSV.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = [line.split() for line in f.readlines()[1:]]
        except OSError:
            continue
        for row in rows:
            try:
                if uid in (int(row[uid_at]), int(row[uid_at + 2])):
                    args += [option, row[id_at]]
            except (ValueError, IndexError):
                pass
    if args and _IPCRM is not None:
        import subprocess

        try:
            subprocess.run([_IPCRM, *args], user=uid if os.geteuid() == 0 else None,
                           group=uid if os.geteuid() == 0 else None, extra_groups=[] if os.geteuid() == 0 else None,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=10, env={})
        except (OSError, subprocess.SubprocessError):
            pass
    return len(args) // 2


#: World-writable folders where a program can leave files outside its own folder (``/dev/mqueue``:
#: its POSIX message queues).
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock")


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
        #: uids left out of every later lease: a process of theirs survived the end-of-run kill
        self.retired: set[int] = set()

    def retire(self, uid: int) -> None:
        """Never lease ``uid`` again (in this server): a survivor of it could read or tamper with
        the next run that gets it."""
        with self._lock:
            self.retired.add(uid)

    @contextlib.contextmanager
    def lease(self, wait_s: float = 60.0) -> Iterator[int]:
        """Hold one free uid. Raises ``RuntimeError`` if none frees up within ``wait_s`` seconds."""
        end = time.monotonic() + wait_s
        while True:
            with self._lock:
                start, self._cursor = self._cursor, (self._cursor + 1) % self.count
            for i in range(self.count):
                uid = self.first + (start + i) % self.count
                if uid in self.retired:
                    continue
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
