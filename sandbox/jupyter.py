"""``/run_jupyter``: run notebook cells in order in one fresh IPython kernel per request."""

from __future__ import annotations

from .executor import Executor
from .models import RunJupyterRequest, RunJupyterResponse, RunStatus


def run_jupyter(request: RunJupyterRequest, executor: Executor) -> RunJupyterResponse:
    """Run ``request.cells`` in a fresh kernel. Not implemented yet."""
    return RunJupyterResponse(status=RunStatus.SandboxError, message="run_jupyter is not implemented yet")
