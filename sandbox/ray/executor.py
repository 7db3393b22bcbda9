"""The executor actor: one :class:`~judgebox.sandbox.local.LocalSandbox` served to Ray callers.

Each executor is an async Ray actor (made by :mod:`judgebox.sandbox.ray.pool`) holding one
``LocalSandbox`` with ``max_concurrency`` execution slots (its reserved CPUs). Overload is the
server's: at most ``max_queue`` calls wait for a slot, each at most ``queue_timeout`` seconds
(:class:`~judgebox.sandbox.server.admission.Admission`); more is answered ``overloaded`` at once.
Ray's own ``max_concurrency`` of the actor is therefore the slots plus the queue, so a waiting call is
visible here (and can time out) instead of waiting unseen in Ray's queue.

Every method answers a :class:`Reply` rather than raising, so what crosses Ray is plain data: ``ok``
with the response model, or an error kind the client turns into the same exception an HTTP answer
would give (``overloaded`` = HTTP 504, ``not_found`` = 404, ``request`` = other 4xx, ``server`` = 500).
Each reply carries the executor's load (running, waiting) for the clients' balancing. The same figures
are Ray metrics (:mod:`judgebox.sandbox.ray.metrics`): the gauges are set when a run takes or leaves
its slot and at each of the registry's passes (:meth:`SandboxExecutor.stats`), the counters per answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from judgebox.sandbox.cancel import Cancel
from judgebox.sandbox.config import SandboxSettings
from judgebox.sandbox.errors import Overloaded, SandboxRequestError
from judgebox.sandbox.local import LocalSandbox
from judgebox.sandbox.server.admission import Admission
from judgebox.sandbox.sessions.manager import SessionStartError

from .metrics import ExecutorMetrics

__all__ = ["Reply", "SandboxExecutor"]


@dataclass
class Reply:
    """One executor answer. ``kind``: ``"ok"`` (``value`` is the response model), ``"overloaded"``,
    ``"not_found"``, ``"request"`` (``status_code`` is the HTTP status it stands for) or ``"server"``;
    ``message`` says why; ``retry_after`` in seconds; ``running`` and ``waiting`` are the executor's
    load when it answered."""

    kind: str
    value: Any = None
    message: str = ""
    status_code: int = 200
    retry_after: float = 0.0
    running: int = 0
    waiting: int = 0


@dataclass
class Counters:
    """What an executor did since it (re)started."""

    runs: int = 0
    failures: int = 0
    rejected: int = 0
    by_status: dict[str, int] = field(default_factory=dict)


class SandboxExecutor:
    """The body of an executor actor (Ray makes it an actor class; see :mod:`judgebox.sandbox.ray.pool`).

    Args:
        name: the actor's name; session ids start with it (it is the sessions' ``replica_id``).
        settings: fields of :class:`~judgebox.sandbox.config.SandboxSettings` (``max_concurrency`` is
            the executor's CPUs; ``isolation`` is fail-closed as in ``judgebox serve``).

    Raises:
        judgebox.sandbox.isolation.IsolationUnavailable: ``isolation="full"`` cannot be applied on
            this node (the actor then fails to start; ``judgebox ray up`` checks it first).
    """

    def __init__(self, name: str, settings: dict[str, Any]) -> None:
        self.name = name
        self.settings = SandboxSettings(**{**settings, "replica_id": name})
        self.sandbox = LocalSandbox(self.settings)
        s = self.settings
        self.admission = Admission(s.max_concurrency, s.max_queue, s.queue_timeout)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=s.max_concurrency,
                                                          thread_name_prefix="judgebox-run")
        self.counters = Counters()
        import ray

        self.metrics = ExecutorMetrics(name, ray.get_runtime_context().get_node_id())
        self.sandbox.executor.warm_up()
        self._publish()

    def _publish(self) -> None:
        a = self.admission
        self.metrics.load(slots=a.max_concurrency, running=a.running, queued=a.waiting,
                          sessions=self.sandbox.sessions.live)

    def _reply(self, kind: str, **kw: Any) -> Reply:
        return Reply(kind, running=self.admission.running, waiting=self.admission.waiting, **kw)

    async def _execute(self, fn: Callable[[Any, Cancel], Any], request: Any) -> Reply:
        """Run ``fn(request, cancel)`` in a worker thread holding a slot; a caller that cancels the
        Ray call (``ray.cancel``) kills the run's processes, as a client disconnect does on the server."""
        cancel = Cancel()
        loop = asyncio.get_running_loop()
        try:
            async with self.admission.slot():
                self._publish()
                future = loop.run_in_executor(self.pool, fn, request, cancel)
                try:
                    result = await asyncio.shield(future)
                except asyncio.CancelledError:
                    await loop.run_in_executor(None, cancel.cancel)
                    with contextlib.suppress(Exception):
                        await future
                    raise
        except Overloaded as exc:
            self.counters.rejected += 1
            self.metrics.refused()
            return self._reply("overloaded", message=f"{self.name}: {exc}", status_code=504,
                               retry_after=exc.retry_after)
        except SandboxRequestError as exc:
            kind = "not_found" if exc.status_code == 404 else "request"
            return self._reply(kind, message=f"{self.name}: {exc}", status_code=exc.status_code)
        except SessionStartError as exc:
            self.counters.failures += 1
            self.metrics.failed()
            return self._reply("server", message=f"{self.name}: {exc}", status_code=500)
        finally:
            self._publish()  # the slot (or the queue place) is left
        self.counters.runs += 1
        status = getattr(getattr(result, "status", None), "value", None)
        if status is not None:
            self.counters.by_status[status] = self.counters.by_status.get(status, 0) + 1
        self.metrics.ran(status or "")
        return self._reply("ok", value=result)

    # runs ----------------------------------------------------------------------------------------
    async def run_code(self, request: Any) -> Reply:
        """``/run_code``: a :class:`~judgebox.sandbox.models.RunCodeRequest` → ``Reply(value=RunCodeResponse)``."""
        return await self._execute(self.sandbox.executor.run_code, request)

    async def run_tests(self, request: Any) -> Reply:
        """``/run_tests``: a :class:`~judgebox.sandbox.models.RunTestsRequest` → ``Reply(value=RunTestsResponse)``."""
        return await self._execute(self.sandbox.executor.run_tests, request)

    async def run_jupyter(self, request: Any) -> Reply:
        """``/run_jupyter``: a :class:`~judgebox.sandbox.models.RunJupyterRequest` → ``Reply(value=RunJupyterResponse)``."""
        from judgebox.sandbox.sessions.jupyter import run_jupyter

        return await self._execute(lambda r, cancel: run_jupyter(r, self.sandbox.executor, cancel), request)

    # sessions ------------------------------------------------------------------------------------
    async def create_session(self, request: Any) -> Reply:
        """``POST /sessions``: a :class:`~judgebox.sandbox.models.CreateSessionRequest` → ``Reply(value=SessionInfo)``;
        ``overloaded`` when ``max_sessions`` are live."""
        sessions = self.sandbox.sessions
        if sessions.live >= sessions.max_sessions:
            self.counters.rejected += 1
            self.metrics.refused()
            return self._reply("overloaded", message=f"{self.name}: {sessions.live} live sessions "
                               f"(max_sessions={sessions.max_sessions})", status_code=504, retry_after=5.0)
        return await self._execute(lambda r, _cancel: sessions.create(r), request)

    async def run_session(self, session_id: str, request: Any, token: Optional[str] = None) -> Reply:
        """``POST /sessions/{id}/run``: a :class:`~judgebox.sandbox.models.SessionRunRequest` and the
        session's token → ``Reply(value=SessionRunResult)``; ``not_found`` when the session is not live
        here or ``token`` is not its token, ``request`` (401) without a token."""
        sessions = self.sandbox.sessions
        try:
            sessions.check_code(request.code)
            session = sessions.get(session_id, token)
        except SandboxRequestError as exc:
            return self._reply("not_found" if exc.status_code == 404 else "request",
                               message=f"{self.name}: {exc}", status_code=exc.status_code)
        async with session.aturn():
            return await self._execute(lambda r, _cancel: sessions.run(session_id, r, token), request)

    async def close_session(self, session_id: str, token: Optional[str] = None) -> Reply:
        """``DELETE /sessions/{id}`` for the holder of its token; ``not_found`` as for :meth:`run_session`."""
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.sandbox.sessions.delete, session_id, token)
        except SandboxRequestError as exc:
            return self._reply("not_found" if exc.status_code == 404 else "request",
                               message=f"{self.name}: {exc}", status_code=exc.status_code)
        return self._reply("ok")

    async def list_sessions(self, tokens: Sequence[str] = ()) -> Reply:
        """``GET /sessions``: ``Reply(value=SessionList)`` of the sessions whose tokens are ``tokens``."""
        return self._reply("ok", value=self.sandbox.sessions.list(tokens))

    # operations ----------------------------------------------------------------------------------
    async def stats(self) -> dict[str, Any]:
        """This executor's figures: name, node_id, pid, worker_id (Ray's id of its process: the
        ``WorkerId`` label of its Ray metrics), slots (``max_concurrency``), running, waiting,
        sessions, runs, failures (runs the sandbox could not serve), rejected (overload answers),
        by_status (runs per ``RunStatus``), isolation."""
        import ray

        self._publish()  # the registry asks every pass: the gauges stay fresh while nothing runs
        c = self.counters
        context = ray.get_runtime_context()
        return {"name": self.name, "node_id": context.get_node_id(), "pid": os.getpid(),
                "worker_id": context.get_worker_id(),
                "slots": self.admission.max_concurrency, "running": self.admission.running,
                "waiting": self.admission.waiting, "sessions": self.sandbox.sessions.live, "runs": c.runs,
                "failures": c.failures, "rejected": c.rejected, "by_status": dict(c.by_status),
                "isolation": self.settings.isolation}

    async def shutdown(self) -> None:
        """Close every session (before the actor is killed)."""
        await asyncio.get_running_loop().run_in_executor(None, self.sandbox.sessions.close_all)


def node_report(settings: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """What this node can serve, for ``judgebox ray up``'s check: ``{"node_id", "languages" (those
    whose toolchain is installed), "runtime" (the program runtime's description, or ``None`` for the
    host's interpreter), "isolation_error" (why ``isolation`` cannot be applied, or ``""``)}``."""
    import ray

    from judgebox.sandbox.executor import Executor
    from judgebox.sandbox.isolation import IsolationUnavailable

    report: dict[str, Any] = {"node_id": ray.get_runtime_context().get_node_id(), "isolation_error": ""}
    try:
        s = SandboxSettings(**(settings or {}))
        runtime = s.program_runtime
        report["runtime"] = runtime.describe() if runtime else None
        report["languages"] = Executor(s).languages()
    except IsolationUnavailable as exc:
        report["isolation_error"] = str(exc)
    except ValueError as exc:  # the runtime named in the settings is not built here
        report["runtime_error"] = str(exc)
    return report
