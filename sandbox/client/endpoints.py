"""Health and load of the sandbox endpoints one :class:`~judgebox.sandbox.client.client.SandboxClient` talks to.

Balancing: each request goes to the live endpoint with the fewest requests in flight (ties are
broken round-robin). Health: ``failure_threshold`` consecutive failures (no HTTP answer, 500, 502)
take an endpoint out for ``cooldown`` seconds; when the cool-down ends it is probed with
``GET /v1/ping`` (SandboxFusion's liveness route) and comes back only if the probe answers 200.
Overload answers (429, 503, 504) are not failures: the endpoint is alive, only busy.

All methods run on the client's event loop (one thread), so the counters need no locks.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable, Optional

log = logging.getLogger("judgebox.client")


#: Route suffixes users paste with the URL (verl's ``sandbox_fusion_url`` ends in ``/run_code``).
ROUTE_SUFFIXES = ("/run_code", "/run_tests_batch", "/run_tests", "/run_jupyter")


def base_url(url: str) -> str:
    """``url`` without surrounding blanks, trailing ``/`` or a route suffix such as ``/run_code``."""
    base = url.strip().rstrip("/")
    for suffix in ROUTE_SUFFIXES:
        base = base.removesuffix(suffix)
    return base


@dataclass
class Endpoint:
    """One sandbox base URL and what the client has learned about it.

    Attributes:
        url: base URL without a trailing slash, e.g. ``http://10.0.0.5:8080``.
        in_flight: requests sent and not yet answered.
        failures: consecutive failed attempts (reset by any HTTP answer that is not 500/502).
        healthy: ``False`` while cooling down or waiting for a successful ping.
        down_until: ``time.monotonic()`` at which the cool-down ends (seconds).
        ping_failed: its latest ping probe after a cool-down found nothing (cleared when one answers).
        supports_run_tests: ``False`` once ``/run_tests`` answered 404/405 (a plain SandboxFusion).
        supports_sessions: ``False`` once ``POST /sessions`` answered 404/405 (a plain SandboxFusion).
        supports_batch: ``False`` once ``/run_tests_batch`` answered 404/405 (SandboxFusion, an older judgebox).
        served: requests this endpoint answered (any HTTP answer).
        last_error: the latest failure seen there (``"POST <url>/run_code: ConnectError: ..."``), or ``""``.
    """

    url: str
    in_flight: int = 0
    failures: int = 0
    healthy: bool = True
    down_until: float = 0.0
    probing: bool = False
    ping_failed: bool = False
    supports_run_tests: Optional[bool] = None
    supports_sessions: Optional[bool] = None
    supports_batch: Optional[bool] = None
    served: int = 0
    last_error: str = ""

    def snapshot(self) -> dict[str, object]:
        """A plain-dict copy for logs and tests."""
        return {"url": self.url, "healthy": self.healthy, "in_flight": self.in_flight,
                "failures": self.failures, "served": self.served,
                "supports_run_tests": self.supports_run_tests, "supports_sessions": self.supports_sessions,
                "supports_batch": self.supports_batch,
                "last_error": self.last_error}


class EndpointPool:
    """Least-in-flight balancing with cool-down and ping probing.

    Args:
        urls: one or more base URLs (normalised by :func:`base_url`).
        ping: coroutine ``ping(url) -> bool`` that answers whether ``GET {url}/v1/ping`` succeeded.
        failure_threshold: consecutive failures (>= 1) that take an endpoint out.
        cooldown: seconds an endpoint stays out before it is probed.

    Raises:
        ValueError: ``urls`` is empty or a URL does not start with ``http://`` or ``https://``.
    """

    def __init__(self, urls: Iterable[str], ping: Callable[[str], Awaitable[bool]],
                 failure_threshold: int, cooldown: float) -> None:
        self.endpoints = [Endpoint(base_url(u)) for u in urls if u.strip()]
        if not self.endpoints:
            raise ValueError("endpoints: give at least one sandbox URL, e.g. http://127.0.0.1:8080")
        for ep in self.endpoints:
            if not ep.url.startswith(("http://", "https://")):
                raise ValueError(f"endpoints: {ep.url!r} must start with http:// or https://")
        self._ping = ping
        self.failure_threshold = failure_threshold
        self.cooldown = cooldown
        self._turn = itertools.count()
        self._probes: set[asyncio.Task] = set()

    def pick(self, avoid: Iterable[str] = (), need_run_tests: bool = False,
             need_sessions: bool = False, need_batch: bool = False) -> Optional[Endpoint]:
        """The live endpoint with the fewest requests in flight, or ``None`` if none is live.

        Args:
            avoid: URLs that already failed this call; used only if no other endpoint is live.
            need_run_tests: skip endpoints known to lack ``/run_tests``.
            need_sessions: skip endpoints known to lack ``/sessions``.
            need_batch: skip endpoints known to lack ``/run_tests_batch``.
        """
        self._probe_expired()
        avoid = set(avoid)
        live = [ep for ep in self.endpoints if ep.healthy
                and not (need_run_tests and ep.supports_run_tests is False)
                and not (need_sessions and ep.supports_sessions is False)
                and not (need_batch and ep.supports_batch is False)]
        fresh = [ep for ep in live if ep.url not in avoid]
        choices = fresh or live
        if not choices:
            return None
        turn = next(self._turn)
        order = {id(ep): (i - turn) % len(self.endpoints) for i, ep in enumerate(self.endpoints)}
        return min(choices, key=lambda ep: (ep.in_flight, order[id(ep)]))

    def has_other(self, avoid: Iterable[str]) -> bool:
        """Whether a live endpoint outside ``avoid`` exists (then a retry need not wait)."""
        avoid = set(avoid)
        return any(ep.healthy and ep.url not in avoid for ep in self.endpoints)

    def lack_run_tests(self) -> bool:
        """Whether every endpoint is known to lack ``/run_tests`` (use the ``/run_code`` fallback)."""
        return all(ep.supports_run_tests is False for ep in self.endpoints)

    def lack_batch(self) -> bool:
        """Whether every endpoint is known to lack ``/run_tests_batch`` (send one ``run_tests`` per item)."""
        return all(ep.supports_batch is False for ep in self.endpoints)

    def lack_sessions(self) -> bool:
        """Whether every endpoint is known to lack ``/sessions`` (plain SandboxFusion servers)."""
        return all(ep.supports_sessions is False for ep in self.endpoints)

    def get(self, url: str) -> Endpoint:
        """The endpoint whose base URL is ``url`` (normalised by :func:`base_url`).

        Raises:
            KeyError: ``url`` is not one of this pool's endpoints.
        """
        url = base_url(url)
        for ep in self.endpoints:
            if ep.url == url:
                return ep
        raise KeyError(url)

    def answered(self, ep: Endpoint) -> None:
        """Record an HTTP answer that shows the endpoint works (2xx, 4xx, 429/503/504)."""
        ep.served += 1
        ep.failures = 0

    def failed(self, ep: Endpoint, why: str) -> None:
        """Record a failed attempt (``why``: what failed, with the URL and the cause); at
        ``failure_threshold`` the endpoint starts a cool-down."""
        ep.failures += 1
        ep.last_error = why
        if ep.healthy and ep.failures >= self.failure_threshold:
            ep.healthy = False
            ep.down_until = time.monotonic() + self.cooldown
            log.warning("sandbox endpoint %s taken out for %.1fs after %d failures (%s)",
                        ep.url, self.cooldown, ep.failures, why)

    async def wait_live(self, deadline: float) -> None:
        """When every endpoint is cooling down, wait for the earliest cool-down to end and ping it.

        Args:
            deadline: ``time.monotonic()`` value (seconds) past which the caller gives up; the wait
                never goes beyond it.

        A call must not fail fast merely because all endpoints rest: behind one gateway URL, a
        killed replica's few 502s would otherwise turn every request into an infrastructure error
        for the whole cool-down. It does not wait once every endpoint's ping has found nothing
        after a cool-down (the server is gone, not busy): each call then fails within its retries,
        while pings go on in the background each cool-down; a server that died under a long
        ``judgebox eval`` left every remaining sample waiting out cool-downs, minutes each.
        """
        resting = [ep for ep in self.endpoints if not ep.healthy]
        if not resting or any(ep.healthy for ep in self.endpoints):
            return
        if all(ep.ping_failed for ep in resting):
            self._probe_expired()
            return
        ep = min(resting, key=lambda e: e.down_until)
        await asyncio.sleep(max(0.0, min(ep.down_until, deadline) - time.monotonic()))
        while ep.probing and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if not ep.healthy and time.monotonic() >= ep.down_until and time.monotonic() < deadline:
            ep.probing = True
            await self._probe(ep)

    def _probe_expired(self) -> None:
        now = time.monotonic()
        for ep in self.endpoints:
            if not ep.healthy and not ep.probing and now >= ep.down_until:
                ep.probing = True
                task = asyncio.get_running_loop().create_task(self._probe(ep))
                self._probes.add(task)
                task.add_done_callback(self._probes.discard)

    async def _probe(self, ep: Endpoint) -> None:
        try:
            alive = await self._ping(ep.url)
        finally:
            ep.probing = False
        ep.ping_failed = not alive
        if alive:
            ep.healthy, ep.failures = True, 0
            log.warning("sandbox endpoint %s is back (ping answered)", ep.url)
        else:
            ep.down_until = time.monotonic() + self.cooldown

    def snapshot(self) -> list[dict[str, object]]:
        """The state of every endpoint, as plain dicts."""
        return [ep.snapshot() for ep in self.endpoints]
