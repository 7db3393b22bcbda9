"""judgebox agent: the vLLM-driven tool agent loop. Depends on ``reward`` and ``sandbox``.

Public names are imported on first use (PEP 562), so ``import agent`` pulls in neither torch nor
vllm: :class:`ToolAgentLoop` and :class:`AgentState` (:mod:`agent.loop`), :class:`AgentLoopConfig`
(:mod:`agent.config`), :class:`AgentLoopOutput` and :func:`collate` (:mod:`agent.output`), and the
modules ``agent.parsers`` (tool-call parsers), ``agent.tools``, ``agent.backends`` (vLLM, OpenAI
server, transformers) and ``agent.scoring``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it (a module name maps to itself)
_LAZY = {
    "parsers": "agent.parsers",
    "tools": "agent.tools",
    "backends": "agent.backends",
    "scoring": "agent.scoring",
    "ToolAgentLoop": "agent.loop",
    "AgentState": "agent.loop",
    "AgentLoopConfig": "agent.config",
    "AgentLoopOutput": "agent.output",
    "collate": "agent.output",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    loaded = importlib.import_module(module)
    value = loaded if module == f"agent.{name}" else getattr(loaded, name)
    globals()[name] = value
    return value
