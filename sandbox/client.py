"""``SandboxClient``: the one way every consumer talks to sandboxes (embedded or over HTTP).

With no endpoint (and no ``JUDGEBOX_SANDBOX_URL`` / ``SANDBOX_FUSION_ENDPOINT`` in the environment)
it runs requests in-process through :class:`~sandbox.local.LocalSandbox`. With one or more URLs it
speaks SandboxFusion's HTTP API (``POST /run_code``, ``/run_jupyter``, judgebox's ``/run_tests``):

- retries (tenacity, exponential backoff with jitter) on HTTP 429/502/503/504 (``Retry-After`` is
  honoured), 500, connection errors and read timeouts, up to ``max_attempts`` and an overall deadline;
  a failed attempt moves to another live endpoint at once when there is one;
- a response with ``status == "SandboxError"`` is retried once on another endpoint;
- HTTP 4xx other than 429 is not retried: :class:`~sandbox.errors.SandboxRequestError`;
- an endpoint without ``/run_tests`` (a plain SandboxFusion: 404/405) is remembered and served by one
  ``/run_code`` per case, giving the same :class:`~sandbox.models.RunTestsResponse`;
- at most ``max_concurrency`` requests are in flight per client (one semaphore, a connection pool of
  the same size), balanced over the endpoints by :class:`~sandbox.endpoints.EndpointPool`.

Sync and async faces share one implementation running on the client's own event loop thread, so one
client may be used from many threads and event loops at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import functools
import logging
import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Coroutine, Optional, Sequence, TypeVar, Union

import httpx
from pydantic import AliasChoices, BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
    wait_random,
)

from .endpoints import EndpointPool
from .errors import (
    SandboxInfraError,
    SandboxOverloaded,
    SandboxRequestError,
    SandboxServerError,
    SandboxUnavailable,
)
from .local import LocalSandbox
from .models import (
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunStatus,
    RunTestsRequest,
    RunTestsResponse,
    overall_status,
)

__all__ = ["ClientSettings", "SandboxClient", "request_timeout", "run_tests_via_run_code"]

log = logging.getLogger("judgebox.client")
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

#: Answers that mean "alive but busy": retried with backoff, the endpoint is not blamed.
OVERLOAD_STATUS = (429, 503, 504)


class ClientSettings(BaseSettings):
    """Configuration of a :class:`SandboxClient`, from arguments or the environment.

    Environment: ``JUDGEBOX_SANDBOX_URL`` (comma-separated base URLs) or, as the official
    ``sandbox_fusion`` client, ``SANDBOX_FUSION_ENDPOINT`` (one URL); every other field is
    ``JUDGEBOX_CLIENT_<FIELD>`` (e.g. ``JUDGEBOX_CLIENT_MAX_CONCURRENCY=64``).
    Units: seconds for every time.
    """

    model_config = SettingsConfigDict(env_prefix="JUDGEBOX_CLIENT_", extra="ignore",
                                      populate_by_name=True)

    sandbox_url: Optional[str] = Field(
        None, validation_alias=AliasChoices("sandbox_url", "JUDGEBOX_SANDBOX_URL", "SANDBOX_FUSION_ENDPOINT"),
        description="comma-separated base URLs; empty = embedded LocalSandbox")
    max_concurrency: int = Field(32, ge=1, description="requests in flight per client (and pool size)")
    max_attempts: int = Field(5, ge=1, description="HTTP attempts per call, the first included")
    deadline: Optional[float] = Field(
        None, gt=0, description="seconds one call may take with its retries; "
                                "default 2 x the request's HTTP timeout + 60")
    timeout_margin: float = Field(
        30.0, ge=0, description="seconds added to the request's own timeouts for queueing and transfer")
    connect_timeout: float = Field(5.0, gt=0, description="seconds to open a TCP connection")
    backoff_initial: float = Field(0.5, ge=0, description="seconds before the first retry (then x2)")
    backoff_max: float = Field(10.0, ge=0, description="largest backoff in seconds")
    backoff_jitter: float = Field(0.5, ge=0, description="seconds of random jitter added to a backoff")
    failure_threshold: int = Field(3, ge=1, description="consecutive failures that take an endpoint out")
    cooldown: float = Field(10.0, gt=0, description="seconds an endpoint stays out before a ping probe")
    ping_timeout: float = Field(2.0, gt=0, description="seconds a /v1/ping probe may take")

    def urls(self) -> list[str]:
        """``sandbox_url`` split on commas, blanks dropped."""
        return [u.strip() for u in (self.sandbox_url or "").split(",") if u.strip()]


def request_timeout(request: Union[RunCodeRequest, RunJupyterRequest], margin: float) -> float:
    """HTTP read timeout in seconds for one request, derived from its own limits.

    ``/run_tests``: ``compile_timeout + run_timeout * len(cases) + margin``;
    ``/run_code``: ``compile_timeout + run_timeout + margin``;
    ``/run_jupyter``: ``total_timeout + margin``.
    """
    if isinstance(request, RunTestsRequest):
        return request.compile_timeout + request.run_timeout * len(request.cases) + margin
    if isinstance(request, RunCodeRequest):
        return request.compile_timeout + request.run_timeout + margin
    return request.total_timeout + margin


def validated(model: type[M], request: Union[M, dict[str, Any]]) -> M:
    """``request`` as ``model``. Raises :class:`SandboxRequestError` (422) naming each bad field."""
    if isinstance(request, model):
        return request
    try:
        return model.model_validate(request)
    except ValidationError as exc:
        raise SandboxRequestError(f"invalid {model.__name__}: {_fields(exc.errors())}", 422) from exc


def _fields(errors: Any) -> str:
    """``loc: msg`` for pydantic / FastAPI error lists; anything else as text."""
    if not isinstance(errors, list):
        return str(errors)
    return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}"
                     if isinstance(e, dict) else str(e) for e in errors)


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


class _HTTPSandbox:
    """The HTTP path: balancing, retries, the ``/run_tests`` fallback. Lives on one event loop."""

    def __init__(self, urls: Sequence[str], settings: ClientSettings) -> None:
        self.settings = s = settings
        self.http = httpx.AsyncClient(limits=httpx.Limits(
            max_connections=s.max_concurrency, max_keepalive_connections=s.max_concurrency))
        self.pool = EndpointPool(urls, self._ping, s.failure_threshold, s.cooldown)
        self.slots = asyncio.Semaphore(s.max_concurrency)
        self._backoff = (wait_exponential(multiplier=s.backoff_initial, max=s.backoff_max)
                         + wait_random(0, s.backoff_jitter))

    async def _ping(self, url: str) -> bool:
        try:
            r = await self.http.get(f"{url}/v1/ping", timeout=self.settings.ping_timeout)
            return r.status_code == 200
        except httpx.HTTPError:
            return False

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

    async def call(self, path: str, request: BaseModel, response_type: type[M]) -> M:
        timeout = request_timeout(request, self.settings.timeout_margin)  # type: ignore[arg-type]
        budget = self.settings.deadline or 2 * timeout + 60
        call = _Call(path, request.model_dump(mode="json"), response_type, timeout,
                     time.monotonic() + budget)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_attempts) | stop_before_delay(budget),
            wait=functools.partial(self._wait, call), retry=retry_if_exception_type(_Retry),
            reraise=True, before_sleep=_log_retry)
        try:
            return await retrying(self._attempt, call)
        except _Retry as last:
            if last.response is not None:
                return last.response  # type: ignore[return-value]
            raise last.kind(
                f"{last.message} (gave up after {call.attempts} attempt(s) in "
                f"{time.monotonic() - call.start:.1f}s)",
                endpoint=last.endpoint, status_code=last.status_code, attempts=call.attempts) from None

    def _wait(self, call: _Call, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retry) and exc.now:
            return 0.0
        backoff = self._backoff(state)
        return max(backoff, exc.retry_after) if isinstance(exc, _Retry) else backoff

    async def _attempt(self, call: _Call) -> BaseModel:
        call.attempts += 1
        async with self.slots:
            ep = self.pool.pick(call.avoid, need_run_tests=call.path == "/run_tests")
            if ep is None:
                raise _Retry(SandboxUnavailable, f"no live sandbox endpoint: all {len(self.pool.endpoints)} "
                             "are cooling down after failures")
            remaining = max(0.01, call.deadline - time.monotonic())
            timeout = httpx.Timeout(min(call.timeout, remaining),
                                    connect=min(self.settings.connect_timeout, remaining))
            ep.in_flight += 1
            try:
                resp = await self.http.post(f"{ep.url}{call.path}", json=call.payload, timeout=timeout)
            except httpx.TransportError as exc:
                call.avoid.add(ep.url)
                self.pool.failed(ep, type(exc).__name__)
                raise _Retry(SandboxUnavailable, f"POST {ep.url}{call.path}: {type(exc).__name__}: {exc}",
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
                self.pool.failed(ep, "invalid body")
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
            try:
                detail = _fields(resp.json().get("detail"))
            except (ValueError, AttributeError):
                detail = resp.text[:500]
            raise SandboxRequestError(f"{where} rejected the request: HTTP {code}: {detail}", code)
        self.pool.failed(ep, f"HTTP {code}")
        call.avoid.add(ep.url)
        raise _Retry(SandboxUnavailable if code == 502 else SandboxServerError,
                     f"{where} answered HTTP {code}: {resp.text[:200]}", endpoint=ep.url,
                     status_code=code, now=self.pool.has_other(call.avoid))

    async def aclose(self) -> None:
        await self.http.aclose()


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.info("sandbox attempt %d failed (%s); retrying in %.2fs", state.attempt_number, exc, wait)


class _LoopThread:
    """A private event loop running in a daemon thread; coroutines are submitted from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="judgebox-client", daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> "concurrent.futures.Future[T]":
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, final: Optional[Callable[[], Coroutine[Any, Any, Any]]] = None) -> None:
        if self.loop.is_closed():
            return
        if final is not None and self.thread.is_alive():
            try:
                self.submit(final()).result(timeout=5)
            except Exception:  # noqa: BLE001 - best effort while shutting down
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout=5)
            self.loop.close()


class SandboxClient:
    """Sync and async faces over one or several sandbox endpoints, or the embedded sandbox.

    Args:
        endpoints: ``None`` (read ``JUDGEBOX_SANDBOX_URL`` / ``SANDBOX_FUSION_ENDPOINT``; embedded if
            both are unset), one base URL, a comma-separated string of URLs, or a list of URLs.
            An empty string or list forces the embedded :class:`~sandbox.local.LocalSandbox`.
        settings: a :class:`ClientSettings` (default: from the environment).
        local: the embedded sandbox to use when there is no endpoint (default: a new ``LocalSandbox``).
        **overrides: fields of :class:`ClientSettings`, e.g. ``max_concurrency=8, deadline=120``.

    Every method accepts the request as a model or a plain dict and returns the SandboxFusion response
    model. Errors (never a result with a guessed verdict):

    - :class:`~sandbox.errors.SandboxRequestError`: the request is invalid (a field fails validation,
      or the server answered 4xx other than 429); not retried.
    - :class:`~sandbox.errors.SandboxInfraError` (``SandboxUnavailable``, ``SandboxOverloaded``,
      ``SandboxServerError``): no sandbox answered usefully within ``max_attempts`` / the deadline.

    A program that ran and failed is a response with ``status == "Failed"``, not an exception.
    Use ``with SandboxClient(...) as c:`` (or :meth:`close`) to release the HTTP connections.
    """

    def __init__(self, endpoints: Union[None, str, Sequence[str]] = None,
                 settings: Optional[ClientSettings] = None, local: Optional[LocalSandbox] = None,
                 **overrides: Any) -> None:
        base = settings or ClientSettings()
        self.settings = base.model_copy(update=overrides) if overrides else base
        if endpoints is None:
            urls = self.settings.urls()
        elif isinstance(endpoints, str):
            urls = [u.strip() for u in endpoints.split(",") if u.strip()]
        else:
            urls = [u for u in endpoints if u.strip()]
        self.local: Optional[LocalSandbox] = None
        self._http: Optional[_HTTPSandbox] = None
        if not urls:
            self.local = local or LocalSandbox()
            return
        self._urls = urls
        try:
            self._http = _HTTPSandbox(urls, self.settings)
        except ValueError as exc:
            raise SandboxRequestError(str(exc), 422) from exc
        self._lock = threading.Lock()
        self._pid: Optional[int] = None  # the process whose loop thread serves this client
        self._thread: Optional[_LoopThread] = None
        self._finalizer: Optional[weakref.finalize] = None
        self._closed = False

    @property
    def endpoints(self) -> list[dict[str, object]]:
        """State of each endpoint (url, healthy, in_flight, failures, served, supports_run_tests)."""
        return self._http.pool.snapshot() if self._http else []

    def close(self) -> None:
        """Close the HTTP connections and stop the client's loop thread (idempotent)."""
        if self._http is not None:
            with self._lock:
                self._closed = True
                if self._finalizer is not None:
                    self._finalizer()

    def _running(self) -> tuple[_LoopThread, _HTTPSandbox]:
        """The loop thread and HTTP state of this process, started on first use.

        After ``fork`` the child has neither the parent's loop thread nor a right to its sockets, so
        a client inherited by a child process starts afresh there (verl and TRL workers fork).
        """
        with self._lock:
            if self._closed:
                raise SandboxRequestError("this SandboxClient is closed: make a new one", 400)
            if self._pid != os.getpid():
                if self._pid is not None:  # a forked child
                    if self._finalizer is not None:
                        self._finalizer.detach()
                    self._http = _HTTPSandbox(self._urls, self.settings)
                self._thread, self._pid = _LoopThread(), os.getpid()
                self._finalizer = weakref.finalize(self, self._thread.stop, self._http.aclose)
            assert self._thread is not None and self._http is not None
            return self._thread, self._http

    def __enter__(self) -> "SandboxClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "SandboxClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    # one implementation, two faces -------------------------------------------------------------
    def _submit(self, method: str, request: BaseModel) -> "concurrent.futures.Future[Any]":
        thread, http = self._running()
        return thread.submit(getattr(http, method)(request))

    async def _remote(self, method: str, request: BaseModel) -> Any:
        return await asyncio.wrap_future(self._submit(method, request))

    def _sync(self, method: str, request: BaseModel) -> Any:
        future = self._submit(method, request)
        try:
            return future.result()
        except BaseException:  # KeyboardInterrupt included: do not leave the request running
            future.cancel()
            raise

    def run_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Run one program (``POST /run_code``). Raises ``SandboxRequestError`` / ``SandboxInfraError``."""
        req = validated(RunCodeRequest, request)
        return self.local.run_code(req) if self.local else self._sync("run_code", req)

    def run_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Compile once, run every case (``POST /run_tests``, or one ``/run_code`` per case on a plain
        SandboxFusion). Raises ``SandboxRequestError`` / ``SandboxInfraError``."""
        req = validated(RunTestsRequest, request)
        return self.local.run_tests(req) if self.local else self._sync("run_tests", req)

    def run_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Run notebook cells (``POST /run_jupyter``). Raises ``SandboxRequestError`` / ``SandboxInfraError``."""
        req = validated(RunJupyterRequest, request)
        return self.local.run_jupyter(req) if self.local else self._sync("run_jupyter", req)

    async def arun_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Async :meth:`run_code`."""
        req = validated(RunCodeRequest, request)
        return await (self.local.arun_code(req) if self.local else self._remote("run_code", req))

    async def arun_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Async :meth:`run_tests`."""
        req = validated(RunTestsRequest, request)
        return await (self.local.arun_tests(req) if self.local else self._remote("run_tests", req))

    async def arun_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Async :meth:`run_jupyter`."""
        req = validated(RunJupyterRequest, request)
        return await (self.local.arun_jupyter(req) if self.local else self._remote("run_jupyter", req))
