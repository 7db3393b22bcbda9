"""Admission control: at most ``max_concurrency`` programs at once, a bounded queue with a deadline.

A request that cannot get a slot within ``queue_timeout`` seconds, or that finds the queue full,
raises :class:`Overloaded`; the server answers it with HTTP 504 and ``Retry-After`` (SandboxFusion
clients, verl and the judgebox client retry 504).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import AsyncIterator

from judgebox.sandbox.errors import Overloaded


class Admission:
    """An asyncio semaphore with a bounded, time-limited queue.

    One slot is held for a whole request: its compile step and its run steps execute one after
    another inside it, so ``max_concurrency`` slots never mean more than ``max_concurrency``
    programs at once, and a request that has compiled never waits again for a slot to run.

    Args:
        max_concurrency: slots (programs running at once).
        max_queue: requests allowed to wait; one more is rejected at once.
        queue_timeout: seconds a request may wait for a slot.

    The semaphore binds to the event loop of its first use (Python >= 3.10), so the object may be
    made before the server's loop starts.
    """

    def __init__(self, max_concurrency: int, max_queue: int, queue_timeout: float) -> None:
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self.queue_timeout = queue_timeout
        self._sem = asyncio.Semaphore(max_concurrency)
        self.waiting = 0
        self.running = 0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[float]:
        """Hold one slot; yields the seconds spent waiting for it.

        Raises:
            Overloaded: the queue is full on arrival, or no slot freed within ``queue_timeout``.
        """
        # counted, not read from the semaphore: requests that arrive in one loop tick have not
        # taken their slots yet when the next one looks (``wait_for`` acquires in its own task)
        if self.waiting + self.running >= self.max_concurrency + self.max_queue:
            # requests counted as waiting may still be about to take a free slot: the queue is
            # what is in flight beyond the slots
            queued = self.waiting + self.running - self.max_concurrency
            raise Overloaded(f"queue full ({queued} waiting, max_queue={self.max_queue})",
                             "queue_full", retry_after=1.0)
        start = time.monotonic()
        self.waiting += 1
        try:
            await asyncio.wait_for(self._sem.acquire(), self.queue_timeout)
        except asyncio.TimeoutError:
            raise Overloaded(f"no execution slot within queue_timeout={self.queue_timeout}s",
                             "queue_timeout", retry_after=1.0) from None
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            yield time.monotonic() - start
        finally:
            self.running -= 1
            self._sem.release()
