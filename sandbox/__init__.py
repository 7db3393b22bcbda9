"""judgebox sandbox: run untrusted code under limits, embedded or behind a SandboxFusion-compatible API.

Public API: :class:`LocalSandbox` (embedded executor), :class:`SandboxSettings` (configuration) and the
wire models in :mod:`judgebox.sandbox.models`.
"""

from .client import ClientSettings, SandboxClient
from .config import SandboxSettings
from .errors import (
    SandboxError,
    SandboxInfraError,
    SandboxOverloaded,
    SandboxRequestError,
    SandboxServerError,
    SandboxUnavailable,
    SessionNotFound,
    SessionsUnsupported,
)
from .isolation import IsolationUnavailable
from .local import LocalSandbox
from .models import (
    BatchItemError,
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunStatus,
    RunTestsRequest,
    RunTestsResponse,
    SessionInfo,
    SessionRunResult,
)
from .sessions.handle import Session

__all__ = [
    "SandboxClient", "SandboxError", "SandboxInfraError", "SandboxRequestError", "LocalSandbox", "SandboxSettings", "CommandRunResult", "CommandRunStatus", "RunCodeRequest",
    "RunCodeResponse", "RunJupyterRequest", "RunJupyterResponse", "RunStatus", "RunTestsRequest",
    "RunTestsResponse", "BatchItemError", "ClientSettings", "SandboxUnavailable", "SandboxOverloaded", "SandboxServerError",
    "Session", "SessionInfo", "SessionRunResult", "SessionNotFound", "SessionsUnsupported", "IsolationUnavailable",
]
