"""judgebox agent: the vLLM-driven tool agent loop. Depends on ``reward`` and ``sandbox``.

Public names are imported on first use (PEP 562), so ``import judgebox.agent`` pulls in neither torch nor
vllm: :class:`ToolAgentLoop` and :class:`AgentState` (:mod:`judgebox.agent.loop`), :class:`AgentLoopConfig`
(:mod:`judgebox.agent.config`), :class:`AgentLoopOutput` and :func:`collate` (:mod:`judgebox.agent.output`), and the
modules ``judgebox.agent.parsers`` (tool-call parsers), ``judgebox.agent.tools``, ``judgebox.agent.backends`` (vLLM, OpenAI
server, transformers) and ``judgebox.agent.scoring``.
"""

from __future__ import annotations

from judgebox.lazy import lazy_exports

#: public name -> the module that defines it (a module name maps to itself)
_EXPORTS = {
    "parsers": "judgebox.agent.parsers",
    "tools": "judgebox.agent.tools",
    "backends": "judgebox.agent.backends",
    "scoring": "judgebox.agent.scoring",
    "ToolAgentLoop": "judgebox.agent.loop",
    "AgentState": "judgebox.agent.loop",
    "AgentLoopConfig": "judgebox.agent.config",
    "AgentLoopOutput": "judgebox.agent.output",
    "collate": "judgebox.agent.output",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
