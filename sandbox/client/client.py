"""``SandboxClient``: the one way every consumer talks to sandboxes (embedded or over HTTP).

With no endpoint (and no ``JUDGEBOX_SANDBOX_URL`` / ``SANDBOX_FUSION_ENDPOINT`` in the environment)
it runs requests in-process through :class:`~judgebox.sandbox.local.LocalSandbox`. With one or more URLs it
speaks SandboxFusion's HTTP API (``POST /run_code``, ``/run_jupyter``, judgebox's ``/run_tests``); with
``ray://`` it calls the executor actors of a judgebox pool on Ray (:mod:`judgebox.sandbox.client.raysandbox`):

- retries (tenacity, exponential backoff with jitter) on HTTP 429/502/503/504 (``Retry-After`` is
  honoured), 500, connection errors and read timeouts, up to ``max_attempts`` and an overall deadline;
  a failed attempt moves to another live endpoint at once when there is one;
- a response with ``status == "SandboxError"`` is retried once on another endpoint;
- HTTP 4xx other than 429 is not retried: :class:`~judgebox.sandbox.errors.SandboxRequestError`;
- an endpoint without ``/run_tests`` (a plain SandboxFusion: 404/405) is remembered and served by one
  ``/run_code`` per case, giving the same :class:`~judgebox.sandbox.models.RunTestsResponse`;
- :meth:`SandboxClient.run_tests_batch` sends many ``/run_tests`` requests as ``POST /run_tests_batch``
  chunks (an endpoint without it is served by one ``run_tests`` per item, as above); items refused
  for overload or failed on the server are retried alone, and an item that stays without a result
  is its :class:`~judgebox.sandbox.models.BatchItemError`, never a verdict;
- at most ``max_concurrency`` requests are in flight per client (one semaphore, a connection pool of
  the same size), balanced over the endpoints by :class:`~judgebox.sandbox.client.endpoints.EndpointPool`;
- sessions (:meth:`SandboxClient.create_session`): created on a balanced endpoint, then every call
  of that session goes to that endpoint only (see :mod:`judgebox.sandbox.client.transport`).

Sync and async faces share one implementation (:mod:`judgebox.sandbox.client.transport`) running on the client's own
event loop thread, so one client may be used from many threads and event loops at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Optional, Sequence, TypeVar, Union

from pydantic import BaseModel, ValidationError

from judgebox.sandbox.batch import as_model, field_errors, request_list, validated, validation_detail
from judgebox.sandbox.errors import SandboxRequestError
from judgebox.sandbox.local import LocalSandbox
from judgebox.sandbox.models import (
    BatchItemError,
    BatchResult,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunTestsRequest,
    RunTestsResponse,
    SessionList,
    SessionRunRequest,
    SessionRunResult,
)
from judgebox.sandbox.sessions.handle import SESSION_START_S, Session, create_session_request

from .settings import ClientSettings

if TYPE_CHECKING:  # imported when a URL is used: httpx and tenacity are ~0.1 s of an embedded start
    from .raysandbox import RaySandbox
    from .transport import HTTPSandbox

__all__ = ["ClientSettings", "SandboxClient"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

def _batch_items(requests: Sequence[Any]) -> tuple[list[Any], list[tuple[int, RunTestsRequest]]]:
    """Each request validated (an invalid one is its 422 :class:`BatchItemError`), and the valid
    ones as ``(index, request)`` pairs for the transport."""
    items: list[Any] = []
    for i, request in enumerate(request_list(requests)):
        try:
            items.append(as_model(RunTestsRequest, request))
        except ValidationError as exc:  # worded as the server's and the embedded sandbox's items
            items.append(BatchItemError(index=i, status_code=422, detail=validation_detail(exc)))
    return items, [(i, r) for i, r in enumerate(items) if isinstance(r, RunTestsRequest)]


def _merged(items: list[Any], answers: list[BatchResult]) -> list[BatchResult]:
    """``items`` with each valid request replaced by its answer (``answers`` in the same order)."""
    found = iter(answers)
    return [next(found) if isinstance(item, RunTestsRequest) else item for item in items]


class LoopThread:
    """An event loop of its own running in a daemon thread; ``submit(coro)`` from any thread returns a
    ``concurrent.futures.Future``; ``stop(final)`` runs ``final()`` on the loop, then stops and closes it."""

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
            An empty string or list forces the embedded :class:`~judgebox.sandbox.local.LocalSandbox`.
        settings: a :class:`ClientSettings` (default: from the environment).
        local: the embedded sandbox to use when there is no endpoint (default: a new ``LocalSandbox``).
        **overrides: fields of :class:`ClientSettings`, e.g. ``max_concurrency=8, deadline=120``.

    Raises:
        TypeError: an override is not a ``ClientSettings`` field.
        pydantic.ValidationError: an override is out of range (the message names the field).
        SandboxRequestError: a URL is not ``http://``, ``https://`` or ``ray://``; a ``ray://`` URL is
            mixed with others; ``ray://`` without Ray installed (the message names the ``ray`` extra).

    ``ray://`` (or ``ray://HOST:PORT``) sends every call to the judgebox pool on that Ray cluster
    (:mod:`judgebox.sandbox.client.raysandbox`, started by ``judgebox ray up``), with the same results,
    errors and session semantics as HTTP.

    Every method accepts the request as a model or a plain dict and returns the SandboxFusion response
    model. Errors (never a result with a guessed verdict):

    - :class:`~judgebox.sandbox.errors.SandboxRequestError`: the request is invalid (a field fails validation,
      or the server answered 4xx other than 429); not retried.
    - :class:`~judgebox.sandbox.errors.SandboxInfraError` (``SandboxUnavailable``, ``SandboxOverloaded``,
      ``SandboxServerError``): no sandbox answered usefully within ``max_attempts`` / the deadline.

    A program that ran and failed is a response with ``status == "Failed"``, not an exception.
    Use ``with SandboxClient(...) as c:`` (or :meth:`close`) to release the HTTP connections.
    """

    def __init__(self, endpoints: Union[None, str, Sequence[str]] = None,
                 settings: Optional[ClientSettings] = None, local: Optional[LocalSandbox] = None,
                 **overrides: Any) -> None:
        base = settings or ClientSettings()
        unknown = sorted(set(overrides) - set(ClientSettings.model_fields))
        if unknown:
            raise TypeError(f"SandboxClient: unknown setting(s) {unknown}; "
                            f"the settings are {sorted(ClientSettings.model_fields)}")
        self.settings = ClientSettings.model_validate({**base.model_dump(), **overrides}) if overrides else base
        if endpoints is None:
            urls = self.settings.urls()
        elif isinstance(endpoints, str):
            urls = [u.strip() for u in endpoints.split(",") if u.strip()]
        else:
            urls = [u for u in endpoints if u.strip()]
        self.local: Optional[LocalSandbox] = None
        self._http: Optional[HTTPSandbox] = None
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[str, Optional[str]]] = {}  # session_id -> (token, endpoint) of its own
        if not urls:
            self.local = local or LocalSandbox()
            return
        self._urls = urls
        self._http = self._transport(source="JUDGEBOX_SANDBOX_URL" if endpoints is None else "endpoints")
        self._pid: Optional[int] = None  # the process whose loop thread serves this client
        self._thread: Optional[LoopThread] = None
        self._finalizer: Optional[weakref.finalize] = None
        self._closed = False

    def _transport(self, source: str = "endpoints") -> Union[HTTPSandbox, "RaySandbox"]:
        """The transport for ``self._urls``: :class:`RaySandbox` for one ``ray://`` URL, else HTTP.

        Raises:
            SandboxRequestError: a ``ray://`` URL beside others (``source`` names where they came
                from), a malformed URL, or ``ray://`` without Ray installed (names the extra).
        """
        rays = [u for u in self._urls if u.strip().lower().startswith("ray://")]
        if rays and len(self._urls) > 1:
            raise SandboxRequestError(f"{source}: a ray:// URL cannot be mixed with other sandbox URLs "
                                      f"({', '.join(self._urls)}): give ray:// alone (the pool balances over "
                                      "its executors) or HTTP URLs only", 422)
        if rays:
            from judgebox.sandbox.ray.names import import_ray

            from .raysandbox import RaySandbox

            import_ray()  # an error naming the extra now, not at the first call
            return RaySandbox(rays[0], self.settings)
        from .transport import HTTPSandbox

        try:
            return HTTPSandbox(self._urls, self.settings)
        except ValueError as exc:
            raise SandboxRequestError(str(exc), 422) from exc

    @property
    def endpoints(self) -> list[dict[str, object]]:
        """State of each endpoint (url, healthy, in_flight, failures, served, supports_run_tests)."""
        return self._http.pool.snapshot() if self._http else []

    def check(self, timeout: float = 5.0) -> None:
        """Make sure a sandbox answers before work starts: ``GET /v1/ping`` on every endpoint at once,
        ``timeout`` seconds each (nothing to do for the embedded sandbox). A dead endpoint beside a
        live one is logged and left to the balancer.

        Raises:
            SandboxUnavailable: no endpoint answered; the message names each URL and its cause
                (connection refused, unknown host, TLS, an HTTP status).
        """
        if self._http is not None:
            self._sync_coro(lambda http: http.check(timeout))

    def close(self) -> None:
        """Close the HTTP connections and stop the client's loop thread (idempotent)."""
        if self._http is not None:
            with self._lock:
                self._closed = True
                if self._finalizer is not None:
                    self._finalizer()

    def _running(self) -> tuple[LoopThread, HTTPSandbox]:
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
                    self._http = self._transport()
                self._thread, self._pid = LoopThread(), os.getpid()
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
    async def _remote(self, method: str, request: BaseModel) -> Any:
        return await self._async_coro(lambda http: getattr(http, method)(request))

    def _sync(self, method: str, request: BaseModel) -> Any:
        return self._sync_coro(lambda http: getattr(http, method)(request))

    def run_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Run one program (``POST /run_code``). Raises ``SandboxRequestError`` / ``SandboxInfraError``."""
        req = validated(RunCodeRequest, request)
        return self.local.run_code(req) if self.local else self._sync("run_code", req)

    def run_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Compile once, run every case (``POST /run_tests``, or one ``/run_code`` per case on a plain
        SandboxFusion). Raises ``SandboxRequestError`` / ``SandboxInfraError``."""
        req = validated(RunTestsRequest, request)
        return self.local.run_tests(req) if self.local else self._sync("run_tests", req)

    def run_tests_batch(self, requests: Sequence[Union[RunTestsRequest, dict]]) -> list[BatchResult]:
        """Run many ``run_tests`` requests at once (``POST /run_tests_batch``, see the module docstring).

        Args:
            requests: ``RunTestsRequest`` models or dicts, any number (sent in chunks of
                ``batch_max_items`` / ``batch_max_bytes``).

        Returns:
            one item per request, in order: its :class:`~judgebox.sandbox.models.RunTestsResponse`
            (what :meth:`run_tests` returns for it), or a :class:`~judgebox.sandbox.models.BatchItemError`
            with the request's ``index``: ``status_code`` 4xx for an invalid request (what
            :meth:`run_tests` raises as ``SandboxRequestError``), 5xx when no sandbox answered it
            after the retries (``SandboxInfraError``); ``judgebox.sandbox.batch.error_of(item)``
            gives that exception. An item's failure never raises nor stops the others.

        Raises:
            SandboxRequestError: this client is closed.
            TypeError: ``requests`` is not a list of requests (one dict, a string, ``None``).
        """
        if self.local:
            return self.local.run_tests_batch(requests)
        items, indexed = _batch_items(requests)
        return _merged(items, self._sync_coro(lambda http: http.run_tests_batch(indexed)))

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

    async def arun_tests_batch(self, requests: Sequence[Union[RunTestsRequest, dict]]) -> list[BatchResult]:
        """Async :meth:`run_tests_batch`."""
        if self.local:
            return await self.local.arun_tests_batch(requests)
        items, indexed = _batch_items(requests)
        return _merged(items, await self._async_coro(lambda http: http.run_tests_batch(indexed)))

    async def arun_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Async :meth:`run_jupyter`."""
        req = validated(RunJupyterRequest, request)
        return await (self.local.arun_jupyter(req) if self.local else self._remote("run_jupyter", req))

    # sessions ----------------------------------------------------------------------------------
    def _session_request(self, language: str, memory_limit_MB: Optional[int], idle_timeout: float) -> Any:
        try:
            return create_session_request(language, memory_limit_MB, idle_timeout)
        except ValidationError as exc:
            raise SandboxRequestError(f"invalid session: {field_errors(exc.errors())}", 422) from exc

    def create_session(self, language: str = "python", memory_limit_MB: Optional[int] = None,
                       idle_timeout: float = 300.0) -> Session:
        """Start a session (``POST /sessions``): one kernel that keeps its state between calls.

        Args:
            language: ``"python"``.
            memory_limit_MB: MiB for the session's kernel (``None``: the server default).
            idle_timeout: seconds without a call after which the server closes it.

        Returns:
            a :class:`~judgebox.sandbox.sessions.handle.Session` bound to the endpoint that created it.

        Raises:
            SessionsUnsupported: the endpoints have no ``/sessions`` (plain SandboxFusion).
            SandboxRequestError: a bad argument (422). SandboxInfraError: no endpoint could start one
            (``SandboxOverloaded`` when every server has ``max_sessions`` live).
        """
        req = self._session_request(language, memory_limit_MB, idle_timeout)
        if self.local:
            return self._own(self.local.create_session(language, memory_limit_MB, idle_timeout))
        info, url = self._sync_coro(lambda http: http.create_session(req))
        return self._own(Session(info, self, url))

    async def acreate_session(self, language: str = "python", memory_limit_MB: Optional[int] = None,
                              idle_timeout: float = 300.0) -> Session:
        """Async :meth:`create_session`."""
        req = self._session_request(language, memory_limit_MB, idle_timeout)
        if self.local:
            return self._own(await self.local.acreate_session(language, memory_limit_MB, idle_timeout))
        info, url = await self._async_coro(lambda http: http.create_session(req))
        return self._own(Session(info, self, url))

    def _own(self, session: Session) -> Session:
        """Rebind ``session`` to this client and remember its token (for :meth:`list_sessions`)."""
        session._owner = self
        if session.token:
            with self._lock:
                self._tokens[session.session_id] = (session.token, session.endpoint)
        return session

    def _token(self, session_id: str, token: Optional[str]) -> Optional[str]:
        """``token``, or the token of a session this client created."""
        return token or self._tokens.get(session_id, (None, None))[0]

    def _forget(self, session_id: str) -> None:
        with self._lock:
            self._tokens.pop(session_id, None)

    def _run_call(self, session_id: str, req: SessionRunRequest, endpoint: Optional[str], token: Optional[str]):
        timeout = (req.timeout or 300.0) + SESSION_START_S + self.settings.timeout_margin
        return lambda http: http.session_call(self._holder(endpoint), "POST", f"/sessions/{session_id}/run",
                                              req.model_dump(mode="json"), SessionRunResult, timeout, session_id,
                                              token)

    def _close_call(self, session_id: str, endpoint: Optional[str], token: Optional[str]):
        return lambda http: http.session_call(self._holder(endpoint), "DELETE", f"/sessions/{session_id}", None,
                                              None, 30 + self.settings.timeout_margin, session_id, token)

    def _holder(self, endpoint: Optional[str]) -> str:
        if endpoint is None:
            if len(self._urls) != 1:
                raise SandboxRequestError("endpoint: give the base URL that holds the session "
                                          "(Session.endpoint) when the client has several", 422)
            return self._urls[0]
        return endpoint

    def run_session(self, session_id: str, request: Union[SessionRunRequest, dict],
                    endpoint: Optional[str] = None, token: Optional[str] = None) -> SessionRunResult:
        """Run one cell in a session (``POST /sessions/{id}/run`` on ``endpoint``, the URL holding it).

        ``token`` is the session's ``session_token`` (:attr:`Session.token`); default: the token of a
        session this client created. Raises ``SessionNotFound`` (gone, or not this token's),
        ``SandboxInfraError``, ``SandboxRequestError`` (401 no token, 422 bad cell)."""
        req = validated(SessionRunRequest, request)
        token = self._token(session_id, token)
        if self.local:
            return self.local.run_session(session_id, req, token=token)
        return self._sync_coro(self._run_call(session_id, req, endpoint, token))

    async def arun_session(self, session_id: str, request: Union[SessionRunRequest, dict],
                           endpoint: Optional[str] = None, token: Optional[str] = None) -> SessionRunResult:
        """Async :meth:`run_session`."""
        req = validated(SessionRunRequest, request)
        token = self._token(session_id, token)
        if self.local:
            return await self.local.arun_session(session_id, req, token=token)
        return await self._async_coro(self._run_call(session_id, req, endpoint, token))

    def close_session(self, session_id: str, endpoint: Optional[str] = None, token: Optional[str] = None) -> None:
        """``DELETE /sessions/{id}`` on ``endpoint`` (``token`` as for :meth:`run_session`). Raises
        ``SessionNotFound`` when it is gone."""
        token = self._token(session_id, token)
        try:
            if self.local:
                return self.local.close_session(session_id, token=token)
            self._sync_coro(self._close_call(session_id, endpoint, token))
        finally:
            self._forget(session_id)

    async def aclose_session(self, session_id: str, endpoint: Optional[str] = None,
                             token: Optional[str] = None) -> None:
        """Async :meth:`close_session`."""
        token = self._token(session_id, token)
        try:
            if self.local:
                return await self.local.aclose_session(session_id, token=token)
            await self._async_coro(self._close_call(session_id, endpoint, token))
        finally:
            self._forget(session_id)

    def list_sessions(self, endpoint: Optional[str] = None, tokens: Optional[Sequence[str]] = None) -> SessionList:
        """``GET /sessions`` of one endpoint (default: the only one), or the embedded sessions: the
        live sessions whose tokens are ``tokens`` (default: those this client created and has not
        closed). ``SessionList.live`` counts every session of that server, whoever holds it."""
        url = None if self.local else self._holder(endpoint)
        with self._lock:
            mine = ([t for t, at in self._tokens.values() if (at or "").split("#")[0] == (url or "")]
                    if tokens is None else list(tokens))  # a Ray session's endpoint is ray://...#executor
        if self.local:
            return self.local.list_sessions(mine)
        header = ",".join(mine)
        return self._sync_coro(lambda http: http.session_call(url, "GET", "/sessions", None, SessionList,
                                                              10 + self.settings.timeout_margin, "", header))

    def _sync_coro(self, make: Callable[[HTTPSandbox], Coroutine[Any, Any, T]]) -> T:
        """Run ``make(http)`` on the client's loop thread and wait; a caller interrupted meanwhile
        (KeyboardInterrupt included) cancels it, so no request is left running."""
        thread, http = self._running()
        future = thread.submit(make(http))
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    async def _async_coro(self, make: Callable[[HTTPSandbox], Coroutine[Any, Any, T]]) -> T:
        thread, http = self._running()
        return await asyncio.wrap_future(thread.submit(make(http)))
