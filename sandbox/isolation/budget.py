"""Admission by the sum of memory limits: the runs of one executor never hold more memory limits
together than the memory it has.

Each run's limit is enforced on its own (a cgroup per run, or ``RLIMIT_DATA`` without one), but the
executor's whole memory (a container's ``mem_limit``, read from its own cgroup) is shared: if the
limits of the runs in progress add up to more, a run that stays inside its own limit can still be
killed by the container's OOM killer for another's allocation (issue 46, finding 7). A run therefore
holds its limit from this budget for as long as it runs, and waits for a share to come free.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Iterator


class MemoryBudget:
    """``capacity`` bytes of memory limits, held by runs in progress.

    Args:
        capacity: bytes (the executor's memory ceiling).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0
        self._cond = threading.Condition()

    @contextlib.contextmanager
    def hold(self, amount: int, wait_s: float = 600.0) -> Iterator[None]:
        """Hold ``amount`` bytes (at most :attr:`capacity`) while the block runs; wait for them.

        Raises:
            RuntimeError: they did not come free within ``wait_s`` seconds (the runs in progress
                kept them: an overloaded executor, reported as an infrastructure failure).
        """
        amount = min(amount, self.capacity)
        end = time.monotonic() + wait_s
        with self._cond:
            while self.held + amount > self.capacity:
                left = end - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"no memory for a run of {amount >> 20} MiB: runs in progress hold "
                                       f"{self.held >> 20} of {self.capacity >> 20} MiB for {wait_s:g} s")
                self._cond.wait(left)
            self.held += amount
        try:
            yield
        finally:
            with self._cond:
                self.held -= amount
                self._cond.notify_all()
