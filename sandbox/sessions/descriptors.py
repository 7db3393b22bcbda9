"""File descriptors of the server's own process: its limit, what is left, and whether a session fits.

Every live session holds about :data:`SESSION_FDS` of the server's descriptors (its kernel's two
ZeroMQ sockets and their mailboxes, the kernel's socket files and folder, its log, its uid lease),
and a session that cannot get one must be refused, never half-started: before this module, under
``ulimit -n 256`` the 15th session and every other client's ``/run_code`` got HTTP 500, and once a
ZeroMQ context could not make its poller the whole server aborted (``Too many open files
(src/epoll.cpp:38)``). So:

* ``judgebox serve`` raises its soft ``RLIMIT_NOFILE`` to the hard limit at start
  (:func:`raise_nofile_limit`; the default soft limit of 1024 fits about 60 sessions, fewer than
  the default ``max_sessions`` of 64 with anything else running);
* a session is admitted only while :func:`headroom` leaves :data:`SESSION_FDS` for it above
  :func:`reserve` (descriptors kept for the runs of every slot and the server's connections);
  otherwise it is refused like a session over ``max_sessions`` (HTTP 504 with ``Retry-After``);
* ``GET /health`` shows the headroom (``fd_headroom``) and the limit (``fd_limit``).
"""

from __future__ import annotations

import os
import resource

__all__ = ["SESSION_FDS", "fd_limit", "headroom", "open_fds", "raise_nofile_limit", "reserve", "session_fits"]

#: Descriptors one live session holds in the server (11 measured with the kernels' shared ZeroMQ
#: context, 16 when each kernel had its own), with a margin.
SESSION_FDS = 16


def raise_nofile_limit() -> tuple[int, int]:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit; returns ``(soft, hard)`` after.
    (Programs are unaffected: each run sets its own, ``max_open_files``.)"""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):  # a hard limit of "unlimited" over the kernel's nr_open
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def fd_limit() -> int:
    """This process's soft ``RLIMIT_NOFILE``."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def open_fds() -> int:
    """Descriptors this process has open now."""
    return len(os.listdir("/proc/self/fd")) - 1  # the listing's own


def reserve(max_concurrency: int) -> int:
    """Descriptors kept for everything but sessions: 64, plus 32 for the runs of each execution slot
    (pipes, the run's folder, disk, cgroup and uid lease)."""
    return 64 + 32 * max_concurrency


def headroom() -> int:
    """Descriptors this process may still open (its soft limit less those open)."""
    return fd_limit() - open_fds()


def session_fits(max_concurrency: int, starting: int = 0) -> bool:
    """Whether one more session fits in :func:`headroom` above :func:`reserve`, ``starting``
    sessions being started already (not yet holding their descriptors)."""
    return headroom() - starting * SESSION_FDS >= SESSION_FDS + reserve(max_concurrency)
