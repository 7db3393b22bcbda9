"""Process inspection for tests, read straight from /proc: survivors, zombies, fds, memory; and the
busy loops that load the host for the tests of verdicts under load."""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import time
from typing import Iterator, Optional


def _proc_table() -> list[tuple[int, int, str, str]]:
    """``(pid, ppid, state, cmdline)`` of every process on the machine, from /proc."""
    rows = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        tail = stat[stat.rindex(")") + 2:].split()
        rows.append((int(entry), int(tail[1]), tail[0], cmd))
    return rows


def alive_with(marker: str) -> list[str]:
    """Command lines of live (non-zombie) processes whose command line contains ``marker``."""
    return [cmd for pid, _, state, cmd in _proc_table() if marker in cmd and state != "Z"]


def zombies_of(pid: int) -> list[int]:
    """Zombie children of ``pid``."""
    return [p for p, ppid, state, _ in _proc_table() if ppid == pid and state == "Z"]


def unique_sleep() -> str:
    """A ``sleep`` duration no other process on the machine uses, e.g. ``"300.48213"``."""
    return f"300.{random.randrange(10**7, 10**8)}"


def open_fds(pid: int) -> int:
    """Number of open file descriptors of ``pid``."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def children(pid: int) -> int:
    """Number of child processes of ``pid`` (any state), not counting Python fork-servers: one lives
    as long as its sandbox (started at the first python run), like a worker thread, not per call."""
    return sum(1 for _, ppid, _, cmd in _proc_table() if ppid == pid and "_judgebox_zygote" not in cmd)


def settled_children(pid: int, quiet_s: float = 2.0, deadline_s: float = 120.0) -> int:
    """:func:`children` of ``pid`` once the count has not changed for ``quiet_s`` seconds (a server's
    start-up work, such as the prebuilt header's compile, ends first; under load it takes longer), or
    at the deadline."""
    end = time.monotonic() + deadline_s
    count, since = children(pid), time.monotonic()
    while time.monotonic() < end and time.monotonic() - since < quiet_s:
        time.sleep(0.1)
        now = children(pid)
        if now != count:
            count, since = now, time.monotonic()
    return count


def children_within(pid: int, limit: int, deadline_s: float = 60.0) -> int:
    """:func:`children` of ``pid`` as soon as it is at most ``limit`` (processes being reaped are
    waited for), else the count at the deadline."""
    end = time.monotonic() + deadline_s
    while (count := children(pid)) > limit and time.monotonic() < end:
        time.sleep(0.1)
    return count


def rss_MiB(pid: int) -> float:
    """Resident set size of ``pid`` in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def load_per_core() -> float:
    """The host's 1-minute load per core, at least 1: the factor by which CPU starvation may stretch
    a run's wall cap (the sandbox stretches it by the run's measured run-queue wait)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@contextlib.contextmanager
def busy_loops(n: int, cpu: Optional[int] = None) -> Iterator[None]:
    """``n`` busy Python loops of this test, each its own session (so the kernel's autogroup cannot
    give a sandboxed run a larger share), pinned to CPU ``cpu`` when given; killed when it ends."""
    pin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\n" if cpu is not None else ""
    hogs = [subprocess.Popen([sys.executable, "-c", pin + "while True: pass"], start_new_session=True)
            for _ in range(n)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def outcome(response) -> tuple:
    """What an assertion message shows of a ``/run_code`` response."""
    rr = response.run_result
    return response.status, rr.status, rr.stdout, rr.cpu_time, rr.execution_time, rr.stderr[-500:]
