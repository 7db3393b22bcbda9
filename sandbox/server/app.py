"""The HTTP face: a thin FastAPI layer (parse, admit, call the executor, serialise).

Endpoints (SandboxFusion-compatible): ``POST /run_code``, ``POST /run_jupyter``, ``GET /v1/ping``.
judgebox extensions: ``POST /run_tests``, ``POST /run_tests_batch`` (many ``/run_tests`` bodies, each
item admitted, run, counted in the metrics and answered as its own call; :mod:`judgebox.sandbox.batch`),
``GET /languages``, ``GET /health``, ``GET /metrics`` and
sessions (:mod:`judgebox.sandbox.sessions.manager`): ``POST /sessions``, ``POST /sessions/{id}/run``,
``DELETE /sessions/{id}``, ``GET /sessions``.
Every execution outcome is HTTP 200; a malformed body is HTTP 422 naming the field; a request that
cannot get an execution slot in time, or a session over ``max_sessions`` or past the server's file
descriptors, is HTTP 504 with
``Retry-After`` (in a batch: that item's ``BatchItemError`` with ``status_code`` 504, the others
still run; only a batch over ``max_batch_items`` / ``max_batch_bytes`` is refused whole, HTTP 422);
an unknown session id is HTTP 404 naming it. A request whose client disconnects
before the answer is cancelled: a queued one never starts, a running one has its processes killed
at once (so a client that retries after a gateway timeout never doubles the work).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
import time
from typing import Any, AsyncIterator, Callable, Optional

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel

from judgebox.sandbox.batch import check_batch_bytes, error_message, item_error, parse_batch
from judgebox.sandbox.cancel import Cancel
from judgebox.sandbox.config import SandboxSettings
from judgebox.sandbox.errors import Overloaded, SandboxRequestError
from judgebox.sandbox.executor import Executor
from judgebox.sandbox.languages import RECIPES, install_hint, toolchain_info, toolchain_version
from judgebox.sandbox.models import (
    SANDBOX_FUSION_LANGUAGES,
    BatchItemError,
    CreateSessionRequest,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunTestsBatchRequest,
    RunTestsBatchResponse,
    RunTestsRequest,
    RunTestsResponse,
    SessionInfo,
    SessionList,
    SessionRunRequest,
    SessionRunResult,
)
from judgebox.sandbox.request_limits import check_cases, check_request_bytes
from judgebox.sandbox.sessions.descriptors import fd_limit, headroom, raise_nofile_limit
from judgebox.sandbox.sessions.handle import SESSION_TOKEN_HEADER, split_tokens
from judgebox.sandbox.sessions.manager import SessionManager, SessionStartError
from judgebox.sandbox.speedups.builds import stop_builds

from .admission import Admission
from .answers import BatchBudget, Held, Serialized, stream_batch
from .body import BodyLimit, body_schema, document_bodies, parse_body
from .metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from .metrics import Metrics

log = logging.getLogger("judgebox.server")


def create_app(settings: Optional[SandboxSettings] = None) -> FastAPI:
    """Build the ASGI app for ``settings`` (default: from ``JUDGEBOX_*`` environment variables)."""
    settings = settings or SandboxSettings()
    raise_nofile_limit()  # sessions hold ~11 descriptors each: the soft limit's 1024 fit ~60 (descriptors.py)
    executor = Executor(settings)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=settings.max_concurrency,
                                                 thread_name_prefix="judgebox-run")
    admission = Admission(settings.max_concurrency, settings.max_queue, settings.queue_timeout)
    sessions = SessionManager(executor)
    metrics = Metrics(settings.pod_name, lambda: admission.waiting, lambda: admission.running,
                      lambda: sessions.live, executor.forkserver_stats if executor.forkserver else None)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        # on SIGTERM too (uvicorn raises it again after this): no background build outlives the server
        stop_builds()
        await asyncio.get_running_loop().run_in_executor(None, sessions.close_all)

    app = FastAPI(title="judgebox sandbox", version="0.2.0", lifespan=lifespan)
    app.state.sessions = sessions

    def body_size(path: str, size: int) -> None:
        (check_batch_bytes if path == "/run_tests_batch" else check_request_bytes)(size, settings)

    app.add_middleware(BodyLimit, check=body_size)  # every body, refused before or while it is read

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own handler echoes the input, and a NaN/Infinity input cannot be rendered as
        # JSON (it answered 500): render non-finite numbers as text so the 422 names the field.
        errors = [{**e, "msg": error_message(e)} if isinstance(e, dict) else e for e in exc.errors()]
        return JSONResponse(status_code=422, content={"detail": _json_safe(jsonable_encoder(errors))})

    async def execute_all(calls: list[tuple[Callable[[Any, Cancel], Any], Any, str]],
                          http: Request, budget: Optional[BatchBudget] = None) -> Optional[list[Any]]:
        """Run every ``(fn, request, language)`` at once, each in its own admission slot; one result or
        raised exception per call, in order, or ``None`` when the client disconnected first (then
        every call not finished is cancelled: a queued one never starts, a running one is killed).
        ``budget``: each call first waits for room in it (a batch's answer, :class:`BatchBudget`)."""
        loop = asyncio.get_running_loop()
        cancels = [Cancel() for _ in calls]
        started = [asyncio.Event() for _ in calls]  # set once the call holds a slot and is in a worker thread

        async def work(i: int) -> Any:
            fn, request, language = calls[i]
            async with (budget.room() if budget else contextlib.nullcontext(Held())) as held:
                async with admission.slot() as waited:
                    metrics.queue_wait.observe(waited)
                    start = time.monotonic()
                    started[i].set()
                    result = await loop.run_in_executor(pool, fn, request, cancels[i])
                    metrics.run_time.labels(language=language).observe(time.monotonic() - start)
                    held.size = len(result.data) if isinstance(result, Serialized) else 0
                    return result

        tasks = [asyncio.ensure_future(work(i)) for i in range(len(calls))]
        every = asyncio.gather(*tasks, return_exceptions=True)
        gone = asyncio.ensure_future(disconnected(http))
        await asyncio.wait((every, gone), return_when=asyncio.FIRST_COMPLETED)
        if every.done():
            gone.cancel()
            return every.result()
        # the client went away: nobody will read the answers
        running = [i for i, task in enumerate(tasks) if not task.done() and started[i].is_set()]
        for i, task in enumerate(tasks):  # first, in one step, stop the queued ones from ever starting
            if not task.done():
                metrics.cancelled.labels(stage="running" if i in running else "queued").inc()
                if i not in running:
                    task.cancel()
        for i in running:  # a slot is released only when its worker thread is done
            await loop.run_in_executor(None, cancels[i].cancel)
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await every
        return None

    def delivered(result: Any, language: str) -> Any:
        """Count a result that goes back to the client (``judgebox_runs_total``) and return it."""
        status = getattr(result, "status", None)
        if status is not None:
            metrics.runs.labels(language=language, status=status.value).inc()
        return result

    async def execute(fn: Callable[[Any, Cancel], Any], request: Any, language: str, http: Request) -> Any:
        # the answer is serialised in the worker thread, and sent as those bytes
        outcome = await execute_all([(lambda r, cancel: serialized(fn(r, cancel)), request, language)], http)
        if outcome is None:
            return Response(status_code=499)
        result = outcome[0]
        if isinstance(result, Overloaded):
            return overloaded(result)
        if isinstance(result, SandboxRequestError):  # sessions: unknown id (404), busy (409), too large (422)
            return JSONResponse(status_code=result.status_code, content={"detail": str(result)})
        if isinstance(result, SessionStartError):
            return JSONResponse(status_code=500, content={"detail": str(result)})
        if isinstance(result, BaseException):
            raise result
        delivered(result, language)
        return Response(result.data, media_type="application/json") if isinstance(result, Serialized) else result

    def overloaded(exc: Overloaded) -> JSONResponse:
        metrics.rejections.labels(reason=exc.reason).inc()
        return JSONResponse(status_code=504, content={"detail": str(exc)},
                            headers={"Retry-After": str(int(max(1, exc.retry_after)))})

    @app.post("/run_tests_batch", response_model=RunTestsBatchResponse,
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                  "schema": RunTestsBatchRequest.model_json_schema()}}}})
    async def run_tests_batch(http: Request):
        """Many ``/run_tests`` bodies in one call: each item validated, admitted and run as its own
        ``/run_tests`` would be; the answer keeps their order (see :mod:`judgebox.sandbox.batch`)."""
        try:
            body = await http.body()  # at most max_batch_bytes (BodyLimit)
            # parsed and validated off the event loop: up to max_batch_bytes of JSON and base64
            items = await asyncio.get_running_loop().run_in_executor(None, parse_batch, body, settings)
        except SandboxRequestError as exc:
            return JSONResponse(status_code=exc.status_code, content={"detail": str(exc)})
        runs = [(i, item) for i, item in enumerate(items) if isinstance(item, RunTestsRequest)]
        def run_item(request: RunTestsRequest, cancel: Cancel) -> Serialized:
            return Serialized.of(executor.run_tests(request, cancel))  # kept as its bytes until sent

        outcome = await execute_all([(run_item, item, item.language) for _, item in runs], http,
                                    BatchBudget(settings))  # what the answer may hold, all items together
        if outcome is None:
            return Response(status_code=499)
        for (i, item), result in zip(runs, outcome):
            if isinstance(result, Overloaded):
                metrics.rejections.labels(reason=result.reason).inc()
            if isinstance(result, BaseException):
                log.error("run_tests_batch: requests[%d] failed", i, exc_info=result)
                items[i] = item_error(i, result) or BatchItemError(
                    index=i, status_code=500, detail=f"{type(result).__name__}: {result}")
            else:
                items[i] = delivered(result, item.language)
        return StreamingResponse(stream_batch(items), media_type="application/json")

    @app.post("/run_code", response_model=RunCodeResponse)
    async def run_code(request: RunCodeRequest, http: Request):
        return await execute(executor.run_code, request, request.language, http)

    @app.post("/run_tests", response_model=RunTestsResponse, openapi_extra=body_schema(RunTestsRequest))
    async def run_tests(http: Request):
        """Compile once, run every case (at most ``max_cases``: counted before the cases are parsed)."""
        try:
            request = await parse_body(http, RunTestsRequest, lambda data: check_cases(data, settings))
        except SandboxRequestError as exc:
            return JSONResponse(status_code=exc.status_code, content={"detail": str(exc)})
        return await execute(executor.run_tests, request, request.language, http)

    @app.post("/run_jupyter", response_model=RunJupyterResponse)
    async def run_jupyter(request: RunJupyterRequest, http: Request):
        from judgebox.sandbox.sessions.jupyter import run_jupyter as run

        return await execute(lambda r, cancel: run(r, executor, cancel), request, "jupyter", http)

    @app.post("/sessions", response_model=SessionInfo)
    async def create_session(request: CreateSessionRequest, http: Request):
        try:
            sessions.check_room()  # answer at once, without waiting for a slot
        except Overloaded as exc:
            return overloaded(exc)
        return await execute(lambda r, _cancel: sessions.create(r), request, "session", http)

    @app.post("/sessions/{session_id}/run", response_model=SessionRunResult)
    async def run_session(session_id: str, request: SessionRunRequest, http: Request):
        token = http.headers.get(SESSION_TOKEN_HEADER)
        try:
            sessions.check_code(request.code)
            session = sessions.get(session_id, token)  # 401/404 before queueing for a slot
        except SandboxRequestError as exc:
            return JSONResponse(status_code=exc.status_code, content={"detail": str(exc)})
        async with session.aturn():  # behind the session's earlier cells, holding no slot meanwhile
            return await execute(lambda r, _cancel: sessions.run(session_id, r, token), request, "session", http)

    @app.delete("/sessions/{session_id}")
    async def delete_session(session_id: str, http: Request) -> Any:
        token = http.headers.get(SESSION_TOKEN_HEADER)
        try:
            await asyncio.get_running_loop().run_in_executor(None, sessions.delete, session_id, token)
        except SandboxRequestError as exc:
            return JSONResponse(status_code=exc.status_code, content={"detail": str(exc)})
        return {"session_id": session_id, "closed": True}

    @app.get("/sessions", response_model=SessionList)
    async def list_sessions(http: Request) -> SessionList:
        """The sessions whose tokens the caller sends (``X-Session-Token``, several separated by
        commas): a client sees only its own."""
        return sessions.list(split_tokens(http.headers.get(SESSION_TOKEN_HEADER)))

    @app.get("/v1/ping")
    async def ping() -> str:
        return "pong"

    runtime = settings.program_runtime
    runtime_info = runtime.describe() if runtime else {"name": "host", "python": settings.python}
    in_runtime = {"python", "pytest", "nodejs"} if runtime else set()

    @app.get("/languages")
    def languages(detail: bool = False) -> dict[str, Any]:  # sync: the first call runs dpkg and the toolchains
        """Installed language -> toolchain version; those the runtime serves name it: ``(runtime default)``.

        ``?detail=true``: every SandboxFusion language -> ``{"installed", "toolchain", "version",
        "source", "packages"}`` (:func:`toolchain_info`), or for one without a recipe here
        ``{"installed": false, "reason"}``. Runs in FastAPI's thread pool (the toolchains' answers are
        cached after the first call).
        """
        if not detail:
            return {name: (f"{version} (runtime {runtime_info['name']})" if name in in_runtime and version
                           else version)
                    for name in executor.languages() for version in [toolchain_version(name, settings.python)]}
        installed = set(executor.languages())
        node_path = runtime.node_path if runtime else None
        return {name: ({"installed": name in installed,
                        **toolchain_info(name, settings.python, node_path, runtime_info["name"] if runtime else None)}
                       if name in RECIPES else {"installed": False, "reason": install_hint(name)})
                for name in SANDBOX_FUSION_LANGUAGES}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "pod": settings.pod_name, "isolation": executor.isolation.describe(),
                "max_concurrency": admission.max_concurrency, "max_queue": admission.max_queue,
                "queue_timeout": admission.queue_timeout, "running": admission.running,
                "waiting": admission.waiting, "sessions": sessions.live, "max_sessions": sessions.max_sessions,
                "fd_headroom": headroom(), "fd_limit": fd_limit(), "runtime": runtime_info}

    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=METRICS_CONTENT_TYPE)

    document_bodies(app, RunTestsRequest)
    executor.warm_up()  # precompiled header and javac archive of the default flags, in the background
    return app


async def disconnected(http: Request) -> None:
    """Return when the client of ``http`` has disconnected (its body was already read).

    After the body, the server's ``receive()`` blocks until the connection closes and then answers
    ``http.disconnect`` (ASGI HTTP spec); uvicorn's h11 and httptools protocols both do so.
    """
    while (await http.receive())["type"] != "http.disconnect":
        pass


def serialized(result: Any) -> Any:
    """A model result as :class:`Serialized` bytes (anything else as it is)."""
    return Serialized.of(result) if isinstance(result, BaseModel) else result


def _json_safe(value: Any) -> Any:
    """``value`` with every non-finite float replaced by its text (``"nan"``, ``"inf"``) and every
    string without a UTF-8 encoding (a lone surrogate) by its escaped form (``"\\ud800"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value
