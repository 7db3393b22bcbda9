"""judgebox tools: verl's tool interface with a per-trajectory lifecycle, validation and timeouts.

Public names (imported lazily, so ``import agent.tools`` stays light):

- :class:`BaseTool`, :class:`ToolResponse`, :class:`OpenAIFunctionToolSchema`,
  :class:`OpenAIFunctionSchema` (``agent.tools.base`` / ``agent.tools.schema``);
- :func:`function_tool`, :class:`FunctionTool` (``agent.tools.function``);
- :func:`load_tools`, :class:`ToolConfigError` (``agent.tools.config``);
- :class:`TrajectoryTools`, :class:`ToolCallResult` (``agent.tools.runner``), :class:`ToolMetrics`
  (``agent.tools.metrics``);
- :class:`CodeInterpreterTool` (``agent.tools.code_interpreter``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "BaseTool": "agent.tools.base",
    "ToolResponse": "agent.tools.schema",
    "OpenAIFunctionSchema": "agent.tools.schema",
    "OpenAIFunctionToolSchema": "agent.tools.schema",
    "function_tool": "agent.tools.function",
    "FunctionTool": "agent.tools.function",
    "load_tools": "agent.tools.config",
    "ToolConfigError": "agent.tools.config",
    "TrajectoryTools": "agent.tools.runner",
    "ToolCallResult": "agent.tools.runner",
    "ToolMetrics": "agent.tools.metrics",
    "CodeInterpreterTool": "agent.tools.code_interpreter",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent.tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
