"""Killing processes until none is left, and telling whether one exists.

The isolation mechanisms kill a run's processes with these (cgroup members, the tasks of a run uid)
and find leftovers of servers that died.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Callable, Iterable


def kill_until_gone(find: Callable[[], Iterable[int]], deadline_s: float = 5.0) -> bool:
    """SIGKILL the pids ``find()`` returns, again and again, until it returns none.

    Args:
        find: lists the processes still to kill (cgroup members, tasks of a uid).
        deadline_s: seconds to keep trying (a process cap bounds how fast a fork bomb refills).

    Returns:
        ``True`` when none is left, ``False`` if some survived the deadline.
    """
    end = time.monotonic() + deadline_s
    while True:
        pids = list(find())
        if not pids:
            return True
        if time.monotonic() > end:
            return False
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.001)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie counts; one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def process_start(pid: str = "self") -> float:
    """When process ``pid`` started, in seconds since the epoch (``/proc/<pid>/stat``'s start time
    after boot plus ``/proc/stat``'s ``btime``); 0.0 where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return 0.0


#: When this process started (seconds since the epoch): what a server of this pid made before it is
#: an earlier server's.
PROCESS_START = process_start()


def left_by_dead_server(pid: int, made_at: float) -> bool:
    """Whether something a server of ``pid`` made at ``made_at`` (seconds since the epoch: a
    folder's modification time, a process's start) was left by a server that died: its pid is gone,
    or it is this process's pid but the thing is older than this process (in a container the
    server is the same pid at every start, so the pid alone said "alive" for ever, issue 46)."""
    if not pid_alive(pid):
        return True
    return pid == os.getpid() and 0 < made_at < PROCESS_START - 1.0
