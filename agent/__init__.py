"""judgebox agent: the vLLM-driven tool agent loop. Depends on ``reward`` and ``sandbox``.

Public names (imported lazily, so ``import agent`` stays light):

- :class:`ToolAgentLoop` (``agent.loop``): one trajectory per ``await loop.run(messages)``;
- :class:`AgentLoopConfig` (``agent.config``): its limits and policies;
- :class:`AgentLoopOutput`, :func:`collate` (``agent.output``): the record and padded tensors;
- backends in :mod:`agent.backends`, tools in :mod:`agent.tools`, parsers in :mod:`agent.parsers`,
  scorers in :mod:`agent.scoring`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ToolAgentLoop": "agent.loop",
    "AgentState": "agent.loop",
    "AgentLoopConfig": "agent.config",
    "AgentLoopOutput": "agent.output",
    "collate": "agent.output",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
