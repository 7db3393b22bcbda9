"""Many submissions at once, with bounded concurrency (async and thread-pool faces).

Each submission is still one sandbox batch (:func:`judgebox.reward.judge.judge`); ``concurrency`` bounds how
many are in flight. The sandbox's own admission control queues the rest of the work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Optional, Sequence

from judgebox.sandbox.client.client import SandboxClient

from .judge import ON_TAMPER, ajudge, judge
from .spec import TestSpec
from .verdict import Judgement


async def score_batch(specs: Sequence[TestSpec], codes: Sequence[str], *, client: Optional[SandboxClient] = None,
                      concurrency: int = 16, stop_on_first_failure: bool = False,
                      on_tamper: Optional[str] = None) -> list[Judgement]:
    """Judge ``codes[i]`` against ``specs[i]`` for every ``i``, at most ``concurrency`` at a time.

    Args:
        specs, codes: equal-length sequences (one spec per code; the same spec may repeat).
        client: sandbox client (default: the process-wide one).
        concurrency: submissions in flight (>= 1).
        stop_on_first_failure, on_tamper: see :func:`judgebox.reward.judge.judge`.

    Returns:
        one :class:`~judgebox.reward.verdict.Judgement` per code, in order.

    Raises:
        ValueError: lengths differ, ``concurrency < 1`` or an unknown ``on_tamper``.
    """
    _check(specs, codes, concurrency, on_tamper)
    gate = asyncio.Semaphore(concurrency)

    async def one(spec: TestSpec, code: str) -> Judgement:
        async with gate:
            return await ajudge(spec, code, client=client, stop_on_first_failure=stop_on_first_failure,
                                on_tamper=on_tamper)

    return list(await asyncio.gather(*(one(s, c) for s, c in zip(specs, codes))))


def judge_many(specs: Sequence[TestSpec], codes: Sequence[str], *, client: Optional[SandboxClient] = None,
               concurrency: int = 16, stop_on_first_failure: bool = False,
               on_tamper: Optional[str] = None) -> list[Judgement]:
    """Synchronous :func:`score_batch` on a thread pool (safe to call from any thread, no event loop)."""
    _check(specs, codes, concurrency, on_tamper)
    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judgebox-judge") as pool:
        return list(pool.map(lambda sc: judge(sc[0], sc[1], client=client, stop_on_first_failure=stop_on_first_failure,
                                              on_tamper=on_tamper), zip(specs, codes)))


def _check(specs: Sequence[TestSpec], codes: Sequence[str], concurrency: int, on_tamper: Optional[str]) -> None:
    if on_tamper not in (None, *ON_TAMPER):
        raise ValueError(f"on_tamper: {on_tamper!r} is not one of {', '.join(ON_TAMPER)}")
    if len(specs) != len(codes):
        raise ValueError(f"specs/codes: {len(specs)} specs for {len(codes)} codes; pass one spec per code")
    if concurrency < 1:
        raise ValueError(f"concurrency: must be >= 1, got {concurrency}")
