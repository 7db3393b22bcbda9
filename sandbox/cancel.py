"""Cancelling a request that is queued or running (the HTTP client went away).

A :class:`Cancel` is made per request and passed to the executor. :meth:`Cancel.cancel` may be
called from any thread: it marks the request cancelled, so that no further step (compile, test
case) starts, and kills every process of the step running now. Killing is done by callbacks the
executor registers for the lifetime of each command (:meth:`Cancel.watching`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Callable, Iterator

log = logging.getLogger("judgebox.cancel")


class Cancelled(Exception):
    """The request was cancelled before it finished (its result is of no use to anyone)."""


class Cancel:
    """The cancellation state of one request (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._kills: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancelled

    def check(self) -> None:
        """Raise :class:`Cancelled` if the request was cancelled."""
        if self._cancelled:
            raise Cancelled("the request was cancelled (the client disconnected)")

    def cancel(self) -> None:
        """Mark the request cancelled and run the kill callbacks of the commands running now.

        Blocking for as long as a kill callback takes (at most a few seconds): call it from a
        worker thread, not an event loop.
        """
        with self._lock:
            self._cancelled = True
            kills = list(self._kills)
        for kill in kills:
            try:
                kill()
            except OSError as exc:  # the command may be ending on its own: it is then gone anyway
                log.warning("cancelling a command failed: %s", exc)

    @contextlib.contextmanager
    def watching(self, kill: Callable[[], None]) -> Iterator[None]:
        """Register ``kill`` while the block runs (a command's lifetime); if the request is already
        cancelled, ``kill`` runs at once (the command may have started just before)."""
        with self._lock:
            self._kills.append(kill)
            already = self._cancelled
        try:
            if already:
                kill()
            yield
        finally:
            with self._lock:
                self._kills.remove(kill)
