"""``LocalSandbox``: the embedded executor, same API as the HTTP server, no server needed.

It is the default wherever no sandbox URL is configured. Requests may be models or plain dicts.
Sync methods may be called from any thread (never from inside a running event loop: use the
``a``-prefixed coroutines there).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from typing import Any, Iterable, Optional, Sequence, TypeVar, Union

from pydantic import BaseModel, ValidationError

from .batch import item_error, request_list, validated, validation_detail
from .config import SandboxSettings
from .errors import Overloaded, SandboxOverloaded, SandboxRequestError, SandboxServerError
from .executor import Executor
from .models import (
    BatchItemError,
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
from .request_limits import check_cases, check_request_bytes
from .sessions.handle import Session, create_session_request
from .sessions.manager import SessionManager, SessionStartError

M = TypeVar("M", bound=BaseModel)


def bounded(model: type[M], request: Union[M, dict[str, Any]], settings: SandboxSettings) -> M:
    """``request`` as ``model`` (:func:`judgebox.sandbox.batch.validated`) within the server's request
    limits: ``max_cases`` (a ``/run_tests`` request, counted before its cases are parsed) and
    ``max_request_bytes`` (the request's JSON).

    Raises:
        SandboxRequestError: (422) a bad field, named as the server's 422 names it (``invalid
            RunCodeRequest: language: ...``), or over a limit, worded as the server's answer (the
            setting, its flag and variable).
    """
    if model is RunTestsRequest:
        check_cases(request, settings)
    req = validated(model, request)
    check_request_bytes(len(req.__pydantic_serializer__.to_json(req)), settings)
    return req


class LocalSandbox:
    """In-process sandbox.

    Args:
        settings: limits and capacity (default: :class:`~judgebox.sandbox.config.SandboxSettings` from env).
        **overrides: fields of ``SandboxSettings`` to override, e.g. ``max_concurrency=4``.

    Raises:
        pydantic.ValidationError: an override names no setting or has a wrong value (the error names
            the key).
        judgebox.sandbox.isolation.IsolationUnavailable: ``isolation="full"`` and a protection it
            promises cannot be applied on this host.

    Concurrency: at most ``settings.max_concurrency`` programs run at once across all threads and
    event loops using this object; extra calls wait (the embedded queue has no deadline).
    """

    def __init__(self, settings: Optional[SandboxSettings] = None, **overrides: Any) -> None:
        base = settings or SandboxSettings()
        self.settings = base.updated(**overrides)
        self.executor = Executor(self.settings)
        self._slots = threading.BoundedSemaphore(self.settings.max_concurrency)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.settings.max_concurrency, thread_name_prefix="judgebox-run")
        self._sessions: Optional[SessionManager] = None
        self._sessions_lock = threading.Lock()

    # sync --------------------------------------------------------------------------------------
    def run_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Run one program (SandboxFusion ``/run_code`` semantics). Raises ``SandboxRequestError``
        (422): a bad field (named), or over ``max_request_bytes``."""
        req = bounded(RunCodeRequest, request, self.settings)
        with self._slots:
            return self.executor.run_code(req)

    def run_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Compile once and run every case (judgebox ``/run_tests``). Raises ``SandboxRequestError``
        (422): a bad field (named), or over ``max_cases`` or ``max_request_bytes``."""
        req = bounded(RunTestsRequest, request, self.settings)
        with self._slots:
            return self.executor.run_tests(req)

    def run_tests_batch(self, requests: Sequence[Union[RunTestsRequest, dict]]
                        ) -> list[Union[RunTestsResponse, BatchItemError]]:
        """Many :meth:`run_tests` at once (``/run_tests_batch`` semantics), up to ``max_concurrency``
        running together; one item per request, in order: its :class:`RunTestsResponse`, or a
        :class:`BatchItemError` (``index``, ``status_code`` 422 for an invalid request naming the
        fields or the limit it is over, 500 if the engine failed on it). Raises nothing for an item."""
        items: list[Any] = []
        for i, request in enumerate(request_list(requests)):
            try:
                items.append(bounded(RunTestsRequest, request, self.settings))
            except SandboxRequestError as exc:
                if isinstance(exc.__cause__, ValidationError):  # the detail as the server's batch item has it
                    items.append(BatchItemError(index=i, status_code=422, detail=validation_detail(exc.__cause__)))
                    continue
                items.append(BatchItemError(index=i, status_code=exc.status_code, detail=str(exc)))
        runs = {i: self._pool.submit(self.run_tests, item) for i, item in enumerate(items)
                if isinstance(item, RunTestsRequest)}
        for i, future in runs.items():
            try:
                items[i] = future.result()
            except Exception as exc:  # noqa: BLE001 - an engine bug on one item is that item's answer
                # a request error (a bad absolute path, the disk quota) keeps its status, as the server's
                items[i] = item_error(i, exc) or BatchItemError(index=i, status_code=500,
                                                                detail=f"{type(exc).__name__}: {exc}")
        return items

    def run_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Run notebook cells in a fresh kernel (``/run_jupyter`` semantics). Raises
        ``SandboxRequestError`` (422): a bad field (named), or over ``max_request_bytes``."""
        from .sessions.jupyter import run_jupyter

        req = bounded(RunJupyterRequest, request, self.settings)
        with self._slots:
            return run_jupyter(req, self.executor)

    # async -------------------------------------------------------------------------------------
    async def arun_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Async :meth:`run_code`: the program runs in a worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_code, request)

    async def arun_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Async :meth:`run_tests`."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_tests, request)

    async def arun_tests_batch(self, requests: Sequence[Union[RunTestsRequest, dict]]
                               ) -> list[Union[RunTestsResponse, BatchItemError]]:
        """Async :meth:`run_tests_batch` (it waits in a thread; the runs use this sandbox's workers)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.run_tests_batch, requests)

    async def arun_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Async :meth:`run_jupyter`."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_jupyter, request)

    # sessions ----------------------------------------------------------------------------------
    @property
    def sessions(self) -> SessionManager:
        """The embedded session manager (made on first use; its sessions close when this object is
        collected or the process exits)."""
        with self._sessions_lock:
            if self._sessions is None:
                self._sessions = SessionManager(self.executor)
                weakref.finalize(self, self._sessions.close_all)
            return self._sessions

    def create_session(self, language: str = "python", memory_limit_MB: Optional[int] = None,
                       idle_timeout: float = 300.0) -> Session:
        """Start a session: one kernel kept between calls (see :mod:`judgebox.sandbox.sessions.manager`).

        Args:
            language: ``"python"`` (the only session language).
            memory_limit_MB: MiB for the kernel and its children (``None``: the default limit).
            idle_timeout: seconds without a call after which the session is closed.

        Raises:
            SandboxRequestError: (422) a bad argument (names the field).
            SandboxOverloaded: ``max_sessions`` sessions are live.
            SandboxServerError: the kernel did not start.
        """
        try:
            req = create_session_request(language, memory_limit_MB, idle_timeout)
        except ValidationError as exc:  # worded as the client words it
            raise SandboxRequestError(f"invalid session: {validation_detail(exc)}", 422) from exc
        with self._slots:
            try:
                info = self.sessions.create(req)
            except Overloaded as exc:
                raise SandboxOverloaded(str(exc)) from None
            except SessionStartError as exc:
                raise SandboxServerError(str(exc)) from None
        return Session(info, self)

    async def acreate_session(self, language: str = "python", memory_limit_MB: Optional[int] = None,
                              idle_timeout: float = 300.0) -> Session:
        """Async :meth:`create_session`."""
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, self.create_session, language, memory_limit_MB, idle_timeout)

    def run_session(self, session_id: str, request: Union[SessionRunRequest, dict],
                    endpoint: Optional[str] = None, token: Optional[str] = None) -> SessionRunResult:
        """Run one cell in a session, for the holder of its ``token`` (``Session.token``: what
        :meth:`create_session` answered): after the session's earlier cells (first come, first
        served), then holding an execution slot. Raises ``SessionNotFound`` (not live, or not this
        token's), ``SandboxRequestError`` (401 no token; 422 a bad field, or code over ``max_code_bytes``)."""
        req = validated(SessionRunRequest, request)
        self.sessions.check_code(req.code)
        session = self.sessions.get(session_id, token)
        with session.turn(), self._slots:
            return self.sessions.run(session_id, req, token)

    async def arun_session(self, session_id: str, request: Union[SessionRunRequest, dict],
                           endpoint: Optional[str] = None, token: Optional[str] = None) -> SessionRunResult:
        """Async :meth:`run_session`."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_session, session_id, request,
                                                                endpoint, token)

    def close_session(self, session_id: str, endpoint: Optional[str] = None, token: Optional[str] = None) -> None:
        """Close a session, for the holder of its ``token``. Raises as :meth:`run_session` does."""
        self.sessions.delete(session_id, token)

    async def aclose_session(self, session_id: str, endpoint: Optional[str] = None,
                             token: Optional[str] = None) -> None:
        """Async :meth:`close_session` (runs in the default executor: never waits for a run slot)."""
        await asyncio.get_running_loop().run_in_executor(None, self.close_session, session_id, endpoint, token)

    def list_sessions(self, tokens: Optional[Iterable[str]] = None) -> SessionList:
        """The live sessions whose tokens are ``tokens`` (``None``: all of them: an embedded sandbox's
        sessions are all its process's)."""
        return self.sessions.list(tokens)
