"""judgebox tools: verl's tool interface with a per-trajectory lifecycle, validation and timeouts.

Public names (imported lazily, so ``import judgebox.agent.tools`` stays light):

- :class:`BaseTool`, :class:`ToolResponse`, :class:`OpenAIFunctionToolSchema`,
  :class:`OpenAIFunctionSchema` (``judgebox.agent.tools.base`` / ``judgebox.agent.tools.schema``);
- :func:`function_tool`, :class:`FunctionTool` (``judgebox.agent.tools.function``);
- :func:`load_tools`, :class:`ToolConfigError` (``judgebox.agent.tools.config``);
- :class:`TrajectoryTools`, :class:`ToolCallResult` (``judgebox.agent.tools.runner``), :class:`ToolMetrics`
  (``judgebox.agent.tools.metrics``);
- :class:`CodeInterpreterTool` (``judgebox.agent.tools.code_interpreter``).
"""

from __future__ import annotations

from judgebox.lazy import lazy_exports

#: public name -> the module that defines it (a module name maps to itself)
_EXPORTS = {
    "BaseTool": "judgebox.agent.tools.base",
    "ToolResponse": "judgebox.agent.tools.schema",
    "OpenAIFunctionSchema": "judgebox.agent.tools.schema",
    "OpenAIFunctionToolSchema": "judgebox.agent.tools.schema",
    "function_tool": "judgebox.agent.tools.function",
    "FunctionTool": "judgebox.agent.tools.function",
    "load_tools": "judgebox.agent.tools.config",
    "ToolConfigError": "judgebox.agent.tools.config",
    "TrajectoryTools": "judgebox.agent.tools.runner",
    "ToolCallResult": "judgebox.agent.tools.runner",
    "ToolMetrics": "judgebox.agent.tools.metrics",
    "CodeInterpreterTool": "judgebox.agent.tools.code_interpreter",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
