"""The ``ray://`` path of :class:`~judgebox.sandbox.client.client.SandboxClient`: calls go straight to executor actors.

:class:`RaySandbox` has the interface of :class:`~judgebox.sandbox.client.transport.HTTPSandbox` (``run_code``,
``run_tests``, ``run_tests_batch``, ``run_jupyter``, ``create_session``, ``session_call``, ``check``, ``aclose``, ``pool``), so the
client, ``compute_score``, ``code_reward``, ``code_interpreter`` and the agent loop work unchanged:

- it reads the executors from the pool's registry (:mod:`judgebox.sandbox.ray.pool`) every
  ``REFRESH_S`` seconds and after any failure, and sends each call to the executor with the fewest
  calls in flight per slot (its own count, plus the queue the executor reported with its last answer):
  one Ray actor call per run;
- an executor that dies under a run (its node removed, its process killed) makes the run go again on
  another executor at once (runs are idempotent), counted in ``retried`` and in the pool's
  ``retries``; an ``overloaded`` answer (the executor's queue was full or timed out) is retried after a
  backoff, as HTTP 504 is; a request error is raised at once;
- a session lives on the executor that created it, whose name starts its id: its calls go there and
  nowhere else. A dead executor means the state is lost: :class:`~judgebox.sandbox.errors.SessionNotFound`,
  as HTTP 404 says after a server restart; a session's cell is never retried elsewhere;
- no live executor: :class:`~judgebox.sandbox.errors.SandboxUnavailable` after the attempts.

Everything here runs on the client's event loop thread; blocking Ray calls go to a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass
from typing import Any, Optional, TypeVar

from pydantic import BaseModel

from judgebox.sandbox.errors import (
    SandboxOverloaded,
    SandboxRequestError,
    SandboxServerError,
    SandboxUnavailable,
    SessionNotFound,
)
from judgebox.sandbox.models import (
    CreateSessionRequest,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunStatus,
    RunTestsRequest,
    RunTestsResponse,
    SessionInfo,
    SessionList,
    SessionRunRequest,
)
from judgebox.sandbox.ray.cluster import connect, parse_ray_url
from judgebox.sandbox.ray.names import NAMESPACE, POOL_NAME, executor_of_session
from judgebox.sandbox.sessions.handle import split_tokens

from .settings import ClientSettings
from .transport import BatchResult, _Retry, backoff, call_budget, retried, run_tests_singly

__all__ = ["RaySandbox"]

M = TypeVar("M", bound=BaseModel)

#: Seconds a client keeps the registry's list of executors before reading it again.
REFRESH_S = 2.0


@dataclass
class Member:
    """One executor as a client sees it."""

    name: str
    handle: Any
    node_id: str
    slots: int
    in_flight: int = 0
    waiting: int = 0  # the executor's queue at its last answer
    served: int = 0
    failures: int = 0

    def load(self) -> float:
        return (self.in_flight + self.waiting) / max(1, self.slots)


@dataclass
class _RayCall:
    method: str
    args: tuple
    timeout: float
    deadline: float
    start: float
    attempts: int = 0
    avoid: frozenset = frozenset()
    rerouted: bool = False
    served_by: Optional[str] = None


class RaySandbox:
    """Calls over a judgebox pool on Ray (see the module docstring); lives on one event loop.

    Args:
        url: ``ray://`` or ``ray://HOST:PORT`` (see :mod:`judgebox.sandbox.ray.cluster`).
        settings: the client's :class:`~judgebox.sandbox.client.settings.ClientSettings`
            (``max_concurrency``, ``max_attempts``, ``deadline``, ``timeout_margin``, backoffs).

    Raises:
        SandboxRequestError: a malformed ``ray://`` URL.

    Attributes:
        retried: runs sent again to another executor after theirs died.
    """

    def __init__(self, url: str, settings: ClientSettings) -> None:
        self.url, self.settings = url.strip(), settings
        self.address = parse_ray_url(url)
        self.slots = asyncio.Semaphore(settings.max_concurrency)
        self.members: dict[str, Member] = {}
        self.retried = 0
        self._ray: Any = None
        self._registry: Any = None
        self._read_at = 0.0
        self._refreshing: Optional[asyncio.Future] = None
        self._backoff = backoff(settings)
        self.pool = self  # ``SandboxClient.endpoints`` reads ``pool.snapshot()``

    # the fleet -----------------------------------------------------------------------------------
    async def _blocking(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def _connect(self) -> None:
        if self._registry is not None:
            return
        ray = await self._blocking(connect, self.address)
        try:
            self._registry = await self._blocking(functools.partial(ray.get_actor, POOL_NAME, namespace=NAMESPACE))
        except ValueError:
            raise SandboxUnavailable(
                f"{self.url}: no judgebox pool on the Ray cluster at {ray.get_runtime_context().gcs_address} (no "
                f"actor {POOL_NAME!r} in namespace {NAMESPACE!r}): start it with `judgebox ray up`",
                endpoint=self.url) from None
        self._ray = ray

    async def _refresh(self, force: bool = False) -> None:
        """Read the executors from the registry (at most every ``REFRESH_S`` seconds unless ``force``)."""
        await self._connect()
        if not force and time.monotonic() - self._read_at < REFRESH_S and self.members:
            return
        if self._refreshing is None:
            self._refreshing = asyncio.ensure_future(self._read())
        try:
            await asyncio.shield(self._refreshing)
        finally:
            if self._refreshing is not None and self._refreshing.done():
                self._refreshing = None

    async def _read(self) -> None:
        try:
            rows = await self._registry.members.remote()
        except self._ray.exceptions.RayError as exc:
            self._registry = None  # the registry restarted or was stopped: look it up again
            raise SandboxUnavailable(f"{self.url}: the judgebox pool did not answer ({type(exc).__name__})",
                                     endpoint=self.url) from None
        fresh = {}
        for row in rows:
            old = self.members.get(row["name"])
            fresh[row["name"]] = old if old is not None else Member(row["name"], row["handle"], row["node_id"],
                                                                   row["slots"])
        self.members = fresh
        self._read_at = time.monotonic()

    def _pick(self, avoid: frozenset) -> Optional[Member]:
        choices = [m for m in self.members.values() if m.name not in avoid]
        return min(choices, key=lambda m: (m.load(), m.served)) if choices else None

    def _lost(self, member: Member) -> None:
        """``member`` died: forget it until the registry lists it again."""
        self.members.pop(member.name, None)
        self._read_at = 0.0

    async def check(self, timeout: float) -> None:
        """Connect, find the pool and at least one live executor.

        Raises:
            SandboxUnavailable: no Ray cluster, no pool, or no live executor (the message says which and
                how to start it). SandboxRequestError: Ray is not installed (names the extra).
        """
        deadline = time.monotonic() + max(timeout, 0.1)
        await self._refresh(force=True)
        while not self.members and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            await self._refresh(force=True)
        if not self.members:
            raise SandboxUnavailable(f"{self.url}: the judgebox pool has no live executor (`judgebox ray status` "
                                     "shows why)", endpoint=self.url)

    # runs ----------------------------------------------------------------------------------------
    async def run_code(self, request: RunCodeRequest) -> RunCodeResponse:
        return await self.call("run_code", request)

    async def run_tests(self, request: RunTestsRequest) -> RunTestsResponse:
        return await self.call("run_tests", request)

    async def run_jupyter(self, request: RunJupyterRequest) -> RunJupyterResponse:
        return await self.call("run_jupyter", request)

    async def run_tests_batch(self, indexed: list[tuple[int, RunTestsRequest]]) -> list[BatchResult]:
        """One balanced, retried ``run_tests`` actor call per ``(index, request)``, all at once (a Ray
        call costs no HTTP round trip, so batches are not packed); an item whose call raised is its
        :class:`~judgebox.sandbox.models.BatchItemError`."""
        return await run_tests_singly(self.run_tests, indexed)

    async def call(self, method: str, request: BaseModel) -> Any:
        """Run ``method`` on a balanced executor with retries (see the module docstring)."""
        timeout, budget = call_budget(self.settings, request)
        now = time.monotonic()
        call = _RayCall(method, (request,), timeout, now + budget, now)
        return await retried(self.settings, self._backoff, self._attempt, call, budget)

    async def _attempt(self, call: _RayCall) -> Any:
        call.attempts += 1
        async with self.slots:
            try:
                await self._refresh(force=not self.members)
            except SandboxUnavailable as exc:
                raise _Retry(SandboxUnavailable, str(exc), endpoint=self.url) from None
            member = self._pick(call.avoid) or self._pick(frozenset())
            if member is None:
                raise _Retry(SandboxUnavailable, f"{self.url}: no live judgebox executor in the pool "
                             "(`judgebox ray status` shows why)", endpoint=self.url)
            remaining = max(0.01, call.deadline - time.monotonic())
            ref = getattr(member.handle, call.method).remote(*call.args)
            member.in_flight += 1
            try:
                reply = await asyncio.wait_for(asyncio.shield(ref), min(call.timeout, remaining))
            except asyncio.TimeoutError:
                self._ray.cancel(ref)
                member.failures += 1
                call.avoid = call.avoid | {member.name}
                raise _Retry(SandboxUnavailable, f"{member.name}: no answer within {call.timeout:g}s",
                             endpoint=self._where(member), now=True) from None
            except asyncio.CancelledError:
                self._ray.cancel(ref)  # the caller gave up: the executor kills the run
                raise
            except self._ray.exceptions.RayError as exc:
                member.failures += 1
                self._lost(member)
                call.avoid = call.avoid | {member.name}
                self.retried += 1  # the executor died (RayActorError) or cannot be placed again
                self._registry.note_retry.remote(1)  # (ActorUnschedulableError: its node is gone)
                raise _Retry(SandboxUnavailable, f"{member.name}: {type(exc).__name__}: {str(exc)[:300]}",
                             endpoint=self._where(member), now=True) from None
            finally:
                member.in_flight -= 1
        member.waiting = reply.waiting
        return self._classify(call, member, reply)

    def _classify(self, call: _RayCall, member: Member, reply: Any) -> Any:
        where = self._where(member)
        if reply.kind == "ok":
            member.served += 1
            result = reply.value
            if (getattr(result, "status", None) == RunStatus.SandboxError and not call.rerouted
                    and len(self.members) > 1):
                call.rerouted = True
                call.avoid = call.avoid | {member.name}
                raise _Retry(SandboxServerError, f"{where}: SandboxError: {getattr(result, 'message', '')}",
                             endpoint=where, status_code=200, now=True, response=result)
            call.served_by = member.name
            return result
        if reply.kind == "overloaded":
            raise _Retry(SandboxOverloaded, reply.message, endpoint=where, status_code=504,
                         retry_after=reply.retry_after)
        if reply.kind in ("request", "not_found"):
            raise SandboxRequestError(reply.message, reply.status_code)
        member.failures += 1
        call.avoid = call.avoid | {member.name}
        raise _Retry(SandboxServerError, reply.message, endpoint=where, status_code=reply.status_code, now=True)

    def _where(self, member: Member) -> str:
        return f"{self.url}#{member.name}"

    # sessions ------------------------------------------------------------------------------------
    async def create_session(self, request: CreateSessionRequest) -> tuple[SessionInfo, str]:
        """Start a session on a balanced executor; returns it and the executor's name.

        Raises:
            SandboxInfraError, SandboxRequestError: as for any call (``SandboxOverloaded`` when every
            executor has ``max_sessions`` live).
        """
        timeout, budget = call_budget(self.settings, request)
        now = time.monotonic()
        call = _RayCall("create_session", (request,), timeout, now + budget, now)
        info = await retried(self.settings, self._backoff, self._attempt, call, budget, answer_on_give_up=False)
        return info, f"{self.url}#{call.served_by}"

    async def _holder(self, session_id: str) -> Any:
        """The handle of the executor a session id names. Raises ``SessionNotFound`` when it is gone."""
        await self._connect()
        name = executor_of_session(session_id)
        member = self.members.get(name)
        if member is not None:
            return member.handle
        try:
            return await self._blocking(functools.partial(self._ray.get_actor, name, namespace=NAMESPACE))
        except ValueError:
            raise SessionNotFound(f"{self.url}: session {session_id!r}: its executor {name!r} is gone (its node "
                                  "left or the pool stopped); its state is lost: create a new session",
                                  session_id) from None

    async def session_call(self, url: str, method: str, path: str, payload: Optional[dict[str, Any]],
                           response_type: Optional[type[M]], timeout: float, session_id: str,
                           token: Optional[str] = None) -> Optional[M]:
        """One call of a session on the executor its id names (never another one); the arguments are
        those of :meth:`~judgebox.sandbox.client.transport.HTTPSandbox.session_call` (``POST .../run``, ``DELETE``, ``GET /sessions``).

        Raises:
            SessionNotFound: the session is gone: closed, reaped, or its executor died or restarted
                (its state is lost).
            SandboxOverloaded: the executor stayed overloaded past the attempts.
            SandboxServerError, SandboxRequestError: as over HTTP.
        """
        if method == "GET":
            return await self._list_sessions(split_tokens(token))  # type: ignore[return-value]
        handle = await self._holder(session_id)
        if method == "DELETE":
            args: tuple = ("close_session", session_id, token)
        else:
            args = ("run_session", session_id, SessionRunRequest.model_validate(payload), token)
        for attempt in range(1, self.settings.max_attempts + 1):
            async with self.slots:
                ref = getattr(handle, args[0]).remote(*args[1:])
                try:
                    reply = await asyncio.wait_for(asyncio.shield(ref), timeout)
                except asyncio.TimeoutError:
                    self._ray.cancel(ref)
                    raise SandboxUnavailable(f"{self.url}: session {session_id!r}: no answer within {timeout:g}s "
                                             "(a session's calls are never sent to another executor)",
                                             endpoint=self.url, attempts=attempt) from None
                except self._ray.exceptions.RayError as exc:
                    raise SessionNotFound(f"{self.url}: session {session_id!r}: its executor "
                                          f"{executor_of_session(session_id)!r} died ({type(exc).__name__}); its "
                                          "state is lost: create a new session", session_id) from None
            if reply.kind == "ok":
                return reply.value if response_type is not None else None
            if reply.kind == "not_found":
                raise SessionNotFound(reply.message, session_id)
            if reply.kind == "overloaded" and attempt < self.settings.max_attempts:
                await asyncio.sleep(reply.retry_after)
                continue
            if reply.kind == "overloaded":
                raise SandboxOverloaded(reply.message, endpoint=self.url, status_code=504, attempts=attempt)
            if reply.kind == "request":
                raise SandboxRequestError(reply.message, reply.status_code)
            raise SandboxServerError(reply.message, endpoint=self.url, status_code=reply.status_code,
                                     attempts=attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _list_sessions(self, tokens: list[str]) -> SessionList:
        await self._refresh(force=True)
        replies = await asyncio.gather(*(m.handle.list_sessions.remote(tokens) for m in self.members.values()),
                                       return_exceptions=True)
        lists = [r.value for r in replies if not isinstance(r, BaseException) and r.kind == "ok"]
        return SessionList(sessions=[s for lst in lists for s in lst.sessions], live=sum(lst.live for lst in lists),
                           max_sessions=sum(lst.max_sessions for lst in lists))

    # the client's view ---------------------------------------------------------------------------
    def snapshot(self) -> list[dict[str, object]]:
        """One dict per executor known: url, name, node_id, healthy, slots, in_flight, waiting, served,
        failures, supports_run_tests."""
        return [{"url": self._where(m), "name": m.name, "node_id": m.node_id, "healthy": True, "slots": m.slots,
                 "in_flight": m.in_flight, "waiting": m.waiting, "served": m.served, "failures": m.failures,
                 "supports_run_tests": True} for m in self.members.values()]

    async def aclose(self) -> None:
        """Nothing to release: the process's Ray connection is shared and stays."""

