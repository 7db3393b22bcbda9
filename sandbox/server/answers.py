"""Answers as bytes: a result is serialised to JSON in the worker thread that made it (its model is
dropped there), and a ``/run_tests_batch`` answer holds at most a bounded number of item budgets.

A request's answer is bounded by its own budgets, counted in the bytes sent: ``response_limit_bytes``
of program output as JSON text (a control character costs 6 bytes, ``\\u0001``) and
``fetch_limit_bytes`` of base64. A batch keeps every finished item until its answer goes out, so
:class:`BatchBudget` bounds the batch as a whole to ``(max_concurrency + 1)`` item budgets: an item
queues for a slot only while the items in flight and finished leave room for one more whole item
budget (it waits for room, holding no slot). When the finished items alone leave none, the item is
not run: it is that item's 504 (``Retry-After``), which a client sends again (``SandboxClient``
does, in a batch of its own), as for an item that found no slot. Items with ordinary output never
meet the bound (a few KiB each); a batch keeps at most ``max_concurrency + 1`` items queued or
running at once. The answer is streamed item by item, never joined into one more copy.

Issue 37, finding 7: each item could hold its own 64 MiB of output counted in the program's bytes,
i.e. 384 MiB of JSON for ``"\\x01"``, and the whole answer was built at the end: +1 GiB of server
memory for 4 items, +3 GiB for 16.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any, AsyncIterator

from pydantic import BaseModel

from judgebox.sandbox.config import SandboxSettings
from judgebox.sandbox.errors import Overloaded

__all__ = ["BatchBudget", "Held", "Serialized", "stream_batch"]


@dataclass(frozen=True)
class Serialized:
    """A result as the bytes of its JSON, with the status the metrics count (``None``: none)."""

    data: bytes
    status: Any = None

    @classmethod
    def of(cls, result: BaseModel) -> "Serialized":
        """``result`` serialised (call it in the worker thread: up to its budgets of JSON)."""
        return cls(result.__pydantic_serializer__.to_json(result), getattr(result, "status", None))


class BatchBudget:
    """Bytes of JSON one batch's answer may hold: ``(max_concurrency + 1)`` item budgets, an item
    budget being ``response_limit_bytes + fetch_limit_bytes``.

    An item holds a whole item budget from before it queues for a slot until it is done
    (:meth:`room`), then what its answer really weighs until the batch's answer has gone out. An
    item waits (holding no slot) while the items of the batch in flight leave no room for it, and is
    refused when the finished ones alone leave none. The asyncio lock binds to the loop of its first use.
    """

    def __init__(self, settings: SandboxSettings) -> None:
        self.item = settings.response_limit_bytes + settings.fetch_limit_bytes
        self.cap = (settings.max_concurrency + 1) * self.item
        self.finished = 0  # bytes of the answers of finished items
        self.in_flight = 0  # items holding a whole item budget
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def room(self) -> AsyncIterator["Held"]:
        """Hold an item budget while the item queues and runs; set ``.size`` of what it yields to
        the bytes of the item's answer (left 0: it has none).

        Raises:
            Overloaded: (``reason="batch_budget"``: the item's 504) the batch's finished answers
                leave no room for one more item.
        """
        async with self._changed:
            while self.finished + (self.in_flight + 1) * self.item > self.cap:
                if self.finished + self.item > self.cap:
                    raise Overloaded(f"this batch's answer already holds {self.finished} bytes of its {self.cap} "
                                     "((max_concurrency + 1) x (response_limit_bytes + fetch_limit_bytes)): the "
                                     "item was not run; send it again (SandboxClient does)", "batch_budget",
                                     retry_after=1.0)
                await self._changed.wait()
            self.in_flight += 1
        held = Held()
        try:
            yield held
        finally:
            async with self._changed:
                self.in_flight -= 1
                self.finished += held.size
                self._changed.notify_all()


@dataclass
class Held:
    """The bytes of one item's answer (:meth:`BatchBudget.room`)."""

    size: int = 0


async def stream_batch(items: list[Any]) -> AsyncIterator[bytes]:
    """``{"results": [...]}`` of ``items`` (each :class:`Serialized` or a model), one item at a time;
    each is dropped from ``items`` once sent."""
    yield b'{"results":['
    for i, item in enumerate(items):
        if i:
            yield b","
        yield item.data if isinstance(item, Serialized) else item.__pydantic_serializer__.to_json(item)
        items[i] = None
    yield b"]}"
