"""``LocalSandbox``: the embedded executor, same API as the HTTP server, no server needed.

It is the default wherever no sandbox URL is configured. Requests may be models or plain dicts.
Sync methods may be called from any thread (never from inside a running event loop: use the
``a``-prefixed coroutines there).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Optional, TypeVar, Union

from pydantic import BaseModel

from .config import SandboxSettings
from .executor import Executor
from .models import (
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunTestsRequest,
    RunTestsResponse,
)

M = TypeVar("M", bound=BaseModel)


def as_model(model: type[M], request: Union[M, dict[str, Any]]) -> M:
    """Accept a model or a dict. Raises ``pydantic.ValidationError`` naming the bad field."""
    return request if isinstance(request, model) else model.model_validate(request)


class LocalSandbox:
    """In-process sandbox.

    Args:
        settings: limits and capacity (default: :class:`~sandbox.config.SandboxSettings` from env).
        **overrides: fields of ``SandboxSettings`` to override, e.g. ``max_concurrency=4``.

    Concurrency: at most ``settings.max_concurrency`` programs run at once across all threads and
    event loops using this object; extra calls wait (the embedded queue has no deadline).
    """

    def __init__(self, settings: Optional[SandboxSettings] = None, **overrides: Any) -> None:
        base = settings or SandboxSettings()
        self.settings = base.model_copy(update=overrides) if overrides else base
        self.executor = Executor(self.settings)
        self._slots = threading.BoundedSemaphore(self.settings.max_concurrency)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.settings.max_concurrency, thread_name_prefix="judgebox-run")

    # sync --------------------------------------------------------------------------------------
    def run_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Run one program (SandboxFusion ``/run_code`` semantics). Raises ``ValidationError``."""
        req = as_model(RunCodeRequest, request)
        with self._slots:
            return self.executor.run_code(req)

    def run_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Compile once and run every case (judgebox ``/run_tests``). Raises ``ValidationError``."""
        req = as_model(RunTestsRequest, request)
        with self._slots:
            return self.executor.run_tests(req)

    def run_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Run notebook cells in a fresh kernel (``/run_jupyter`` semantics)."""
        from .jupyter import run_jupyter

        req = as_model(RunJupyterRequest, request)
        with self._slots:
            return run_jupyter(req, self.executor)

    # async -------------------------------------------------------------------------------------
    async def arun_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Async :meth:`run_code`: the program runs in a worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_code, request)

    async def arun_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Async :meth:`run_tests`."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_tests, request)

    async def arun_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Async :meth:`run_jupyter`."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.run_jupyter, request)
