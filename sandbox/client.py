"""``SandboxClient``: the one way every consumer talks to sandboxes (embedded or over HTTP).

With no endpoint (and no ``SANDBOX_FUSION_ENDPOINT`` / ``JUDGEBOX_SANDBOX_URL`` in the environment) it
runs requests in-process through :class:`~sandbox.local.LocalSandbox`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .local import LocalSandbox
from .models import (
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunTestsRequest,
    RunTestsResponse,
)


class SandboxClient:
    """Sync and async faces over one or several sandbox endpoints, or the embedded sandbox.

    Args:
        endpoints: ``None`` (embedded), one base URL, or a list of base URLs.
    """

    def __init__(self, endpoints: Union[None, str, Sequence[str]] = None, **kwargs: Any) -> None:
        if endpoints:
            raise NotImplementedError("HTTP endpoints are not implemented yet")
        self.local = LocalSandbox()

    def run_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Run one program. Raises :class:`~sandbox.errors.SandboxInfraError` if no sandbox answers."""
        return self.local.run_code(request)

    def run_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Compile once, run every case."""
        return self.local.run_tests(request)

    def run_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Run notebook cells."""
        return self.local.run_jupyter(request)

    async def arun_code(self, request: Union[RunCodeRequest, dict]) -> RunCodeResponse:
        """Async :meth:`run_code`."""
        return await self.local.arun_code(request)

    async def arun_tests(self, request: Union[RunTestsRequest, dict]) -> RunTestsResponse:
        """Async :meth:`run_tests`."""
        return await self.local.arun_tests(request)

    async def arun_jupyter(self, request: Union[RunJupyterRequest, dict]) -> RunJupyterResponse:
        """Async :meth:`run_jupyter`."""
        return await self.local.arun_jupyter(request)
