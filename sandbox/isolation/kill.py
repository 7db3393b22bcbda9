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
