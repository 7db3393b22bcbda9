"""The HTTP path of :class:`~judgebox.sandbox.client.client.SandboxClient`: one call = attempts with retries.

- :class:`HTTPSandbox` sends a request to the endpoint :class:`~judgebox.sandbox.client.endpoints.EndpointPool`
  picks and classifies the answer: 200 is a result; 429/503/504 are overload (backoff, ``Retry-After``
  honoured, the endpoint is not blamed); connection errors, read timeouts, 500/502 and invalid bodies
  are endpoint failures (retried at once on another live endpoint, else after a backoff); other 4xx
  raise :class:`~judgebox.sandbox.errors.SandboxRequestError` without retry; a ``SandboxError`` answer is
  retried once on another endpoint. Retries use tenacity (exponential backoff plus jitter) up to
  ``max_attempts`` and the call's deadline.
- :func:`run_tests_via_run_code` serves ``/run_tests`` on servers that lack it (a plain SandboxFusion).
- :meth:`HTTPSandbox.run_tests_batch` sends ``POST /run_tests_batch`` in chunks (``batch_max_items``,
  ``batch_max_bytes``); the whole chunk's HTTP answer is classified as any call's, then its items
  that were refused for overload (504) or failed on the server (5xx) are sent again, alone, by the
  same retry driver (:func:`retried`); an item still without a result at the end is its
  :class:`~judgebox.sandbox.models.BatchItemError`, never a guessed verdict. An endpoint without the
  route (404/405: SandboxFusion) is remembered and served by one ``run_tests`` per item
  (:func:`run_tests_singly`), which itself falls back to ``/run_code`` per case.
- :func:`request_timeout` derives each request's HTTP timeout from the request's own limits.
- sessions: ``POST /sessions`` goes through the same balancing and retries (a 404/405 marks the
  endpoint as a plain SandboxFusion); every later call of a session goes to the endpoint that
  created it and nowhere else (:meth:`HTTPSandbox.session_call`): only the server's own
  overload answers (429/503/504 *with* ``Retry-After``: the cell did not start) are retried there;
  no answer is :class:`~judgebox.sandbox.errors.SandboxUnavailable` at once (the cell may have run).

Everything here runs on the client's event loop thread.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional, Sequence, TypeVar, Union

import httpx
from pydantic import BaseModel, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
    wait_random,
)

from judgebox.sandbox.batch import field_errors, item_error
from judgebox.sandbox.errors import (
    SandboxError,
    SandboxInfraError,
    SandboxOverloaded,
    SandboxRequestError,
    SandboxServerError,
    SandboxUnavailable,
    SessionNotFound,
    SessionsUnsupported,
)
from judgebox.sandbox.models import (
    BatchItemError,
    BatchResult,
    CommandRunStatus,
    CreateSessionRequest,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunStatus,
    RunTestsBatchResponse,
    RunTestsRequest,
    RunTestsResponse,
    SessionInfo,
    overall_status,
)
from judgebox.sandbox.sessions.handle import SESSION_START_S, SESSION_TOKEN_HEADER

from .endpoints import EndpointPool
from .settings import ClientSettings

__all__ = ["HTTPSandbox", "backoff", "call_budget", "field_errors", "request_timeout", "retried", "retry_after_seconds",
           "run_tests_singly", "run_tests_via_run_code"]

log = logging.getLogger("judgebox.client")
M = TypeVar("M", bound=BaseModel)

#: Answers that mean "alive but busy": retried with backoff, the endpoint is not blamed.
OVERLOAD_STATUS = (429, 503, 504)
#: Seconds an item of a batch may wait for a slot (the server's default ``queue_timeout``).
BATCH_QUEUE_S = 60.0


def request_timeout(request: Union[RunCodeRequest, RunJupyterRequest, Sequence[RunTestsRequest]],
                    margin: float) -> float:
    """HTTP read timeout in seconds for one request, derived from its own limits.

    ``/run_tests_batch`` (a list of requests): the longest item's ``/run_tests`` timeout +
    ``BATCH_QUEUE_S`` (its items run at once, each after at most the server's queue wait);
    ``/run_tests``: ``compile_timeout + run_timeout * len(cases) + margin``, at most
    ``compile_timeout + total_timeout + margin`` when the request has a ``total_timeout``;
    ``/run_code``: ``compile_timeout + run_timeout + margin``;
    ``/run_jupyter``: ``total_timeout + margin``; ``POST /sessions``: the kernel start (60 s) + margin.
    """
    if isinstance(request, (list, tuple)):
        return max(request_timeout(r, margin) for r in request) + BATCH_QUEUE_S
    if isinstance(request, CreateSessionRequest):
        return SESSION_START_S + margin
    if isinstance(request, RunTestsRequest):
        cases = request.run_timeout * len(request.cases)
        return request.compile_timeout + min(cases, request.total_timeout or cases) + margin
    if isinstance(request, RunCodeRequest):
        return request.compile_timeout + request.run_timeout + margin
    return request.total_timeout + margin


async def run_tests_via_run_code(
    request: RunTestsRequest, run_code: Callable[[RunCodeRequest], Awaitable[RunCodeResponse]],
) -> RunTestsResponse:
    """Serve ``/run_tests`` with one ``/run_code`` per case (for plain SandboxFusion servers).

    Args:
        request: the batch; its top-level ``files`` plus each case's ``files`` are sent with that case;
            ``fetch_files`` is not sent (``RunTestsResponse`` carries no files).
        run_code: coroutine running one :class:`RunCodeRequest` (may raise ``SandboxError``).

    Returns:
        the :class:`RunTestsResponse` the judgebox server gives for the same batch: the first case's
        ``compile_result``; ``run_results[i]`` for case ``i`` or ``None`` when it did not run (compile
        failed, or skipped by ``stop_on_first_failure``); the worst per-case status (a
        ``SandboxError`` case makes the whole batch ``SandboxError``, never ``Success``).
        Cases run one after another with ``stop_on_first_failure``, concurrently otherwise.
    """
    base = request.model_dump(include=set(RunCodeRequest.model_fields) - {"stdin", "files", "fetch_files"})

    def one(i: int) -> Awaitable[RunCodeResponse]:
        case = request.cases[i]
        return run_code(RunCodeRequest(**base, stdin=case.stdin, files={**request.files, **case.files}))

    first = await one(0)
    answers = [first]
    compiled = first.compile_result is None or (
        first.compile_result.status == CommandRunStatus.Finished and first.compile_result.return_code == 0)
    go_on = compiled and first.status != RunStatus.SandboxError
    if go_on and request.stop_on_first_failure:
        for i in range(1, len(request.cases)):
            if answers[-1].status != RunStatus.Success:
                break
            answers.append(await one(i))
    elif go_on:
        answers += await asyncio.gather(*(one(i) for i in range(1, len(request.cases))))
    runs = [a.run_result for a in answers] + [None] * (len(request.cases) - len(answers))
    worst = max((a.status for a in answers), key=[RunStatus.Success, RunStatus.Failed,
                                                    RunStatus.SandboxError].index)
    status = worst if worst != RunStatus.Success else overall_status(first.compile_result, *runs)
    return RunTestsResponse(status=status, message=next((a.message for a in answers if a.message), ""),
                            compile_result=first.compile_result, run_results=runs,
                            executor_pod_name=first.executor_pod_name)


class _Retry(Exception):
    """One attempt failed in a retryable way; carries the error to raise if it was the last one."""

    def __init__(self, kind: type[SandboxInfraError], message: str, *, endpoint: Optional[str] = None,
                 status_code: Optional[int] = None, retry_after: float = 0.0, now: bool = False,
                 response: Optional[BaseModel] = None) -> None:
        super().__init__(message)
        self.kind, self.message, self.endpoint, self.status_code = kind, message, endpoint, status_code
        self.retry_after = retry_after  # seconds the server asked us to wait
        self.now = now  # retry at once: another live endpoint exists
        self.response = response  # a SandboxError answer, returned if no retry is left


class _NoRunTests(Exception):
    """The chosen endpoint has no ``/run_tests`` (404/405)."""


class _NoBatch(Exception):
    """The chosen endpoint has no ``/run_tests_batch`` (404/405)."""


@dataclass
class _Call:
    path: str
    payload: dict[str, Any]
    response_type: type[BaseModel]
    timeout: float
    deadline: float
    start: float = field(default_factory=time.monotonic)
    avoid: set[str] = field(default_factory=set)
    attempts: int = 0
    rerouted: bool = False
    served_by: Optional[str] = None  # base URL of the endpoint whose answer was returned


@dataclass
class _BatchCall(_Call):
    """One chunk of a batch: the items still to answer (``pending``, by the caller's index) and those answered."""

    pending: dict[int, RunTestsRequest] = field(default_factory=dict)
    done: dict[int, BatchResult] = field(default_factory=dict)
    last: dict[int, BatchItemError] = field(default_factory=dict)  # an item's latest retryable error
    sandbox_error: dict[int, RunTestsResponse] = field(default_factory=dict)  # answered SandboxError, rerouted once


async def run_tests_singly(run_tests: Callable[[RunTestsRequest], Awaitable[RunTestsResponse]],
                           indexed: Sequence[tuple[int, RunTestsRequest]]) -> list[BatchResult]:
    """Serve a batch with one ``run_tests`` call per item, all at once (a server without
    ``/run_tests_batch``, the ``ray://`` pool, a request too large for a batch).

    Args:
        run_tests: coroutine running one request (with its own retries); raises ``SandboxError``.
        indexed: ``(index, request)`` pairs; ``index`` is the item's place in the caller's batch.

    Returns:
        one item per pair, in order: the response, or the :class:`BatchItemError` (with that
        ``index``) of the ``SandboxError`` its call raised.
    """
    async def one(index: int, request: RunTestsRequest) -> BatchResult:
        try:
            return await run_tests(request)
        except SandboxError as exc:
            return item_error(index, exc) or BatchItemError(index=index, status_code=500, detail=str(exc))

    return list(await asyncio.gather(*(one(i, r) for i, r in indexed)))


def too_big(exc: BaseException) -> bool:
    """Whether a whole ``/run_tests_batch`` call was refused for its size (413 from a proxy, or a
    judgebox server's 422 naming ``max_batch_items``/``max_batch_bytes``): the items are not at fault."""
    return isinstance(exc, SandboxRequestError) and (
        exc.status_code == 413 or (exc.status_code == 422 and "max_batch_" in str(exc)))


def backoff(settings: ClientSettings) -> Any:
    """The tenacity wait between attempts: exponential from ``backoff_initial`` up to ``backoff_max``
    seconds, plus up to ``backoff_jitter`` seconds of jitter."""
    return (wait_exponential(multiplier=settings.backoff_initial, max=settings.backoff_max)
            + wait_random(0, settings.backoff_jitter))


def retry_after_seconds(value: Optional[str]) -> float:
    """Seconds in a ``Retry-After`` header (delta-seconds or HTTP-date, RFC 9110 §10.2.3); 0 if absent."""
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 0.0


def call_budget(settings: ClientSettings, request: Any) -> tuple[float, float]:
    """``(timeout, budget)`` in seconds of one call: the request's own timeout plus the margin, and
    the whole call's budget over its retries (``settings.deadline``, else twice the timeout + 60 s)."""
    timeout = request_timeout(request, settings.timeout_margin)
    return timeout, settings.deadline or 2 * timeout + 60


async def retried(settings: ClientSettings, backoff_wait: Any, attempt: Callable[[Any], Awaitable[Any]], call: Any,
                  budget: float, *, answer_on_give_up: bool = True) -> Any:
    """``await attempt(call)``, again while it raises :class:`_Retry`, up to ``settings.max_attempts``
    attempts and ``budget`` seconds: at once when the failure says another endpoint is live, else
    after ``backoff_wait`` (tenacity) or the ``Retry-After`` the server asked, whichever is longer.
    ``call`` has ``attempts`` and ``start`` (``time.monotonic()``). One transport drives HTTP and
    ``ray://`` calls alike.

    Returns:
        the last attempt's result, or (``answer_on_give_up``) the SandboxError answer the last
        failed attempt carried.

    Raises:
        SandboxInfraError: the last failure's kind, saying how many attempts were made in how long.
    """
    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retry) and exc.now:
            return 0.0
        pause = backoff_wait(state)
        return max(pause, exc.retry_after) if isinstance(exc, _Retry) else pause

    retrying = AsyncRetrying(stop=stop_after_attempt(settings.max_attempts) | stop_before_delay(budget),
                             wait=wait, retry=retry_if_exception_type(_Retry), reraise=True,
                             before_sleep=_log_retry)
    try:
        return await retrying(attempt, call)
    except _Retry as last:
        if answer_on_give_up and last.response is not None:
            return last.response
        raise last.kind(f"{last.message} (gave up after {call.attempts} attempt(s) in "
                        f"{time.monotonic() - call.start:.1f}s)", endpoint=last.endpoint,
                        status_code=last.status_code, attempts=call.attempts) from None


async def ping_error(http: httpx.AsyncClient, url: str, timeout: float) -> str:
    """``""`` when ``GET <url>/v1/ping`` answers 200 within ``timeout`` seconds, else why not, with
    the URL and the cause (``"GET http://h:9/v1/ping: ConnectError: All connection attempts failed"``)."""
    try:
        r = await http.get(f"{url}/v1/ping", timeout=timeout)
    except httpx.HTTPError as exc:
        return f"GET {url}/v1/ping: {type(exc).__name__}: {exc or 'no answer'}"
    return "" if r.status_code == 200 else f"GET {url}/v1/ping answered HTTP {r.status_code}"


class HTTPSandbox:
    """Balancing, retries and the ``/run_tests`` fallback over ``urls``; lives on one event loop.

    Args:
        urls: base URLs (see :class:`~judgebox.sandbox.client.endpoints.EndpointPool`).
        settings: the client's :class:`~judgebox.sandbox.client.settings.ClientSettings`.

    Raises:
        ValueError: no URL, or a URL without ``http://`` / ``https://``.

    Each of ``run_code``, ``run_tests``, ``run_jupyter`` returns the response model or raises
    :class:`~judgebox.sandbox.errors.SandboxRequestError` / :class:`~judgebox.sandbox.errors.SandboxInfraError`.
    """

    def __init__(self, urls: Sequence[str], settings: ClientSettings) -> None:
        self.settings = s = settings
        self.http = httpx.AsyncClient(limits=httpx.Limits(
            max_connections=s.max_concurrency, max_keepalive_connections=s.max_concurrency))
        self.pool = EndpointPool(urls, self._ping, s.failure_threshold, s.cooldown)
        self.slots = asyncio.Semaphore(s.max_concurrency)
        self._backoff = backoff(s)

    async def _ping(self, url: str) -> bool:
        """Whether ``url`` answers ``GET /v1/ping`` with 200 within ``ping_timeout``; why not is kept
        as the endpoint's ``last_error``."""
        why = await ping_error(self.http, url, self.settings.ping_timeout)
        if why:
            self.pool.get(url).last_error = why
        return not why

    async def check(self, timeout: float) -> None:
        """Ping every endpoint at once (``timeout`` seconds each).

        Raises:
            SandboxUnavailable: none answered; the message names each URL and its cause.
        """
        urls = [ep.url for ep in self.pool.endpoints]
        errors = await asyncio.gather(*(ping_error(self.http, u, timeout) for u in urls))
        for url, why in zip(urls, errors):
            if why:
                self.pool.get(url).last_error = why
                if not all(errors):  # a dead one beside a live one; none answering is the error below, once
                    log.warning("sandbox endpoint %s", why)
        if all(errors):
            raise SandboxUnavailable("no sandbox answers: " + "; ".join(errors) + " (start one with `judgebox "
                                     "serve`, or fix the URL)", endpoint=urls[0])

    async def run_code(self, request: RunCodeRequest) -> RunCodeResponse:
        return await self.call("/run_code", request, RunCodeResponse)

    async def run_jupyter(self, request: RunJupyterRequest) -> RunJupyterResponse:
        return await self.call("/run_jupyter", request, RunJupyterResponse)

    async def run_tests(self, request: RunTestsRequest) -> RunTestsResponse:
        if not self.pool.lack_run_tests():
            try:
                return await self.call("/run_tests", request, RunTestsResponse)
            except _NoRunTests:
                pass
        return await run_tests_via_run_code(request, self.run_code)

    async def run_tests_batch(self, indexed: Sequence[tuple[int, RunTestsRequest]]) -> list[BatchResult]:
        """``POST /run_tests_batch`` for ``(index, request)`` pairs, in chunks of ``batch_max_items``
        and ``batch_max_bytes`` sent at once (see the module docstring); one item per pair, in order,
        a :class:`BatchItemError` carrying the pair's ``index``. Raises nothing for an item's failure."""
        chunks, alone, size = [], [], 0
        for i, request in indexed:
            n = len(request.model_dump_json()) + 2
            if n + 16 > self.settings.batch_max_bytes:
                alone.append((i, request))
                continue
            if not chunks or len(chunks[-1]) >= self.settings.batch_max_items \
                    or size + n + 16 > self.settings.batch_max_bytes:
                chunks.append([])
                size = 0
            chunks[-1].append((i, request))
            size += n
        answers = await asyncio.gather(run_tests_singly(self.run_tests, alone), *map(self._chunk, chunks))
        found = {index: item for part, sent in zip(answers, [alone, *chunks])
                 for (index, _), item in zip(sent, part)}
        return [found[i] for i, _ in indexed]

    async def _chunk(self, indexed: list[tuple[int, RunTestsRequest]]) -> list[BatchResult]:
        if self.pool.lack_batch():
            return await run_tests_singly(self.run_tests, indexed)
        timeout, budget = call_budget(self.settings, [r for _, r in indexed])
        call = _BatchCall("/run_tests_batch", {}, RunTestsBatchResponse, timeout, time.monotonic() + budget,
                          pending=dict(indexed))
        singly = False  # the server lacks the route, or refused the chunk (not an item) for its size
        try:
            await retried(self.settings, self._backoff, self._batch_attempt, call, budget, answer_on_give_up=False)
        except _NoBatch:
            singly = True
        except SandboxError as exc:  # gave up (or the batch as a whole was refused): no verdict is guessed
            singly = too_big(exc)
            for i in call.pending if not singly else ():
                last = call.last.get(i)
                call.done[i] = call.sandbox_error.get(i) or (last.model_copy(update={"detail": f"{last.detail} ({exc})"})
                                                            if last else item_error(i, exc)
                                                            or BatchItemError(index=i, status_code=500, detail=str(exc)))
        if singly:
            rest = await run_tests_singly(self.run_tests, list(call.pending.items()))
            call.done.update(zip(call.pending, rest))
        return [call.done[i] for i, _ in indexed]

    async def _batch_attempt(self, call: _BatchCall) -> None:
        """Send the items still pending; keep each answer, and raise :class:`_Retry` while some item
        was refused for overload, failed on the server, or answered ``SandboxError`` (once, when
        another endpoint is live)."""
        order = list(call.pending)
        call.payload = {"requests": [call.pending[i].model_dump(mode="json") for i in order]}
        answer = await self._attempt(call)
        where = f"POST {call.served_by}{call.path}"
        if len(answer.results) != len(order):  # type: ignore[attr-defined]
            raise _Retry(SandboxServerError, f"{where} answered {len(answer.results)} results for "  # type: ignore
                         f"{len(order)} requests", endpoint=call.served_by, status_code=200)
        again: list[BatchItemError] = []
        reroute = False
        for i, item in zip(order, answer.results):  # type: ignore[attr-defined]
            if isinstance(item, BatchItemError):
                item = item.model_copy(update={"index": i})
                if item.status_code in OVERLOAD_STATUS or item.status_code >= 500:
                    call.last[i] = item
                    again.append(item)
                    continue
            elif (item.status == RunStatus.SandboxError and i not in call.sandbox_error
                  and self.pool.has_other(call.avoid | {call.served_by or ""})):
                call.sandbox_error[i] = item
                reroute = True
                continue
            call.done[i] = item
            del call.pending[i]
        if not call.pending:
            return
        if reroute:
            call.avoid.add(call.served_by or "")
        busy = [e for e in again if e.status_code in OVERLOAD_STATUS]
        first = again[0].detail if again else "SandboxError"
        raise _Retry(SandboxOverloaded if busy else SandboxServerError,
                     f"{where}: {len(call.pending)} of {len(order)} items not answered ({first})",
                     endpoint=call.served_by, status_code=busy[0].status_code if busy else 500,
                     retry_after=max((e.retry_after or 0.0 for e in again), default=0.0), now=reroute and not busy)

    async def call(self, path: str, request: BaseModel, response_type: type[M]) -> M:
        timeout, budget = call_budget(self.settings, request)
        call = _Call(path, request.model_dump(mode="json"), response_type, timeout, time.monotonic() + budget)
        return await retried(self.settings, self._backoff, self._attempt, call, budget)

    async def _attempt(self, call: _Call) -> BaseModel:
        call.attempts += 1
        async with self.slots:
            need = {"need_run_tests": call.path == "/run_tests", "need_sessions": call.path == "/sessions",
                    "need_batch": call.path == "/run_tests_batch"}
            ep = self.pool.pick(call.avoid, **need)
            if ep is None:
                await self.pool.wait_live(call.deadline)
                ep = self.pool.pick(call.avoid, **need)
            if ep is None:
                last = "; ".join(e.last_error for e in self.pool.endpoints if e.last_error)
                raise _Retry(SandboxUnavailable, f"no live sandbox endpoint: all {len(self.pool.endpoints)} "
                             f"are cooling down after failures (last: {last or 'unknown'})")
            remaining = max(0.01, call.deadline - time.monotonic())
            timeout = httpx.Timeout(min(call.timeout, remaining),
                                    connect=min(self.settings.connect_timeout, remaining))
            ep.in_flight += 1
            try:
                resp = await self.http.post(f"{ep.url}{call.path}", json=call.payload, timeout=timeout)
            except httpx.TransportError as exc:
                call.avoid.add(ep.url)
                why = f"POST {ep.url}{call.path}: {type(exc).__name__}: {exc}"
                self.pool.failed(ep, why)
                raise _Retry(SandboxUnavailable, why,
                             endpoint=ep.url, now=self.pool.has_other(call.avoid)) from exc
            finally:
                ep.in_flight -= 1
        return self._classify(call, ep, resp)

    def _classify(self, call: _Call, ep: Any, resp: httpx.Response) -> BaseModel:
        code, where = resp.status_code, f"POST {ep.url}{call.path}"
        if code == 200:
            try:
                result = call.response_type.model_validate_json(resp.content)
            except ValidationError as exc:
                self.pool.failed(ep, f"{where} answered 200 with an invalid body")
                call.avoid.add(ep.url)
                raise _Retry(SandboxServerError, f"{where} answered 200 with a body that is not a "
                             f"{call.response_type.__name__}: {resp.text[:200]!r}", endpoint=ep.url,
                             status_code=code, now=self.pool.has_other(call.avoid)) from exc
            self.pool.answered(ep)
            if (getattr(result, "status", None) == RunStatus.SandboxError and not call.rerouted
                    and self.pool.has_other(call.avoid | {ep.url})):
                call.rerouted = True
                call.avoid.add(ep.url)
                raise _Retry(SandboxServerError, f"{where}: SandboxError: {getattr(result, 'message', '')}",
                             endpoint=ep.url, status_code=code, now=True, response=result)
            call.served_by = ep.url
            return result
        if code in OVERLOAD_STATUS:
            self.pool.answered(ep)
            raise _Retry(SandboxOverloaded, f"{where} answered HTTP {code}: {resp.text[:200]}",
                         endpoint=ep.url, status_code=code,
                         retry_after=retry_after_seconds(resp.headers.get("Retry-After")))
        if 400 <= code < 500:
            self.pool.answered(ep)
            if code in (404, 405) and call.path == "/run_tests":
                ep.supports_run_tests = False
                raise _NoRunTests(ep.url)
            if code in (404, 405) and call.path == "/run_tests_batch":
                ep.supports_batch = False
                raise _NoBatch(ep.url)
            if code in (404, 405) and call.path == "/sessions":
                ep.supports_sessions = False
                if not self.pool.lack_sessions():
                    call.avoid.add(ep.url)
                    raise _Retry(SandboxUnavailable, f"{where}: no /sessions here", endpoint=ep.url, now=True)
                raise SessionsUnsupported(f"{where} answered HTTP {code}: this sandbox has no /sessions "
                                          "(a plain SandboxFusion server)")
            try:
                detail = field_errors(resp.json().get("detail"))
            except (ValueError, AttributeError):
                detail = resp.text[:500]
            raise SandboxRequestError(f"{where} rejected the request: HTTP {code}: {detail}", code)
        self.pool.failed(ep, f"{where} answered HTTP {code}")
        call.avoid.add(ep.url)
        raise _Retry(SandboxUnavailable if code == 502 else SandboxServerError,
                     f"{where} answered HTTP {code}: {resp.text[:200]}", endpoint=ep.url,
                     status_code=code, now=self.pool.has_other(call.avoid))

    # ---- sessions -----------------------------------------------------------------------------
    async def create_session(self, request: CreateSessionRequest) -> tuple[SessionInfo, str]:
        """``POST /sessions`` on a balanced endpoint; returns the session and the base URL holding it.

        Raises:
            SessionsUnsupported: every endpoint lacks ``/sessions`` (detected once per endpoint).
            SandboxInfraError, SandboxRequestError: as for any call.
        """
        if self.pool.lack_sessions():
            raise SessionsUnsupported("no endpoint has /sessions (plain SandboxFusion servers)")
        timeout, budget = call_budget(self.settings, request)
        call = _Call("/sessions", request.model_dump(mode="json"), SessionInfo, timeout, time.monotonic() + budget)
        info = await retried(self.settings, self._backoff, self._attempt, call, budget, answer_on_give_up=False)
        assert call.served_by is not None
        return info, call.served_by  # type: ignore[return-value]

    async def session_call(self, url: str, method: str, path: str, payload: Optional[dict[str, Any]],
                           response_type: Optional[type[M]], timeout: float, session_id: str,
                           token: Optional[str] = None) -> Optional[M]:
        """One call of a session on the endpoint ``url`` that holds it (never another one).

        Args:
            url: base URL that created the session.
            method, path: e.g. ``"POST"``, ``"/sessions/<id>/run"``.
            payload: JSON body or ``None``.
            response_type: model of a 200 answer (``None``: the body is ignored).
            timeout: HTTP read timeout in seconds.
            session_id: for error messages.
            token: the session's token, sent as ``X-Session-Token`` (``GET /sessions``: the tokens of
                the sessions to list, comma-separated).

        Raises:
            SessionNotFound: 404 (the session is gone: its state is lost).
            SandboxUnavailable: no answer / 502 (not retried: the cell may have run).
            SandboxOverloaded: the server stayed overloaded (429/503/504) past the attempts.
            SandboxServerError: 5xx or an invalid body. SandboxRequestError: other 4xx.
        """
        ep = self.pool.get(url)
        where = f"{method} {ep.url}{path}"
        budget = self.settings.deadline or 2 * timeout + 60
        deadline = time.monotonic() + budget
        for attempt in range(1, self.settings.max_attempts + 1):
            async with self.slots:
                remaining = max(0.01, deadline - time.monotonic())
                ep.in_flight += 1
                try:
                    resp = await self.http.request(method, f"{ep.url}{path}", json=payload, timeout=httpx.Timeout(
                        min(timeout, remaining), connect=min(self.settings.connect_timeout, remaining)),
                        headers={SESSION_TOKEN_HEADER: token} if token else None)
                except httpx.TransportError as exc:
                    self.pool.failed(ep, f"{where}: {type(exc).__name__}: {exc}")
                    raise SandboxUnavailable(f"{where}: {type(exc).__name__}: {exc} (a session's calls are never "
                                             "sent to another endpoint)", endpoint=ep.url, attempts=attempt) from exc
                finally:
                    ep.in_flight -= 1
            code = resp.status_code
            if code == 200:
                self.pool.answered(ep)
                if response_type is None:
                    return None
                try:
                    return response_type.model_validate_json(resp.content)
                except ValidationError as exc:
                    raise SandboxServerError(f"{where} answered 200 with a body that is not a "
                                             f"{response_type.__name__}: {resp.text[:200]!r}", endpoint=ep.url,
                                             status_code=code, attempts=attempt) from exc
            try:
                detail = field_errors(resp.json().get("detail"))
            except (ValueError, AttributeError):
                detail = resp.text[:500]
            if code in OVERLOAD_STATUS:
                self.pool.answered(ep)
                wait = retry_after_seconds(resp.headers.get("Retry-After"))
                if "Retry-After" in resp.headers and attempt < self.settings.max_attempts \
                        and time.monotonic() + wait < deadline:
                    await asyncio.sleep(wait)
                    continue
                raise SandboxOverloaded(f"{where} answered HTTP {code}: {detail}", endpoint=ep.url,
                                        status_code=code, attempts=attempt)
            if code == 404:
                self.pool.answered(ep)
                raise SessionNotFound(f"{where}: HTTP 404: {detail}", session_id)
            if 400 <= code < 500:
                self.pool.answered(ep)
                raise SandboxRequestError(f"{where} rejected the request: HTTP {code}: {detail}", code)
            self.pool.failed(ep, f"{where} answered HTTP {code}")
            raise (SandboxUnavailable if code == 502 else SandboxServerError)(
                f"{where} answered HTTP {code}: {detail}", endpoint=ep.url, status_code=code, attempts=attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self.http.aclose()


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.info("sandbox attempt %d failed (%s); retrying in %.2fs", state.attempt_number, exc, wait)
