"""verl: ``compute_score`` (a ``custom_reward_function``: ``path: pkg://judgebox.integrations.verl``,
``name: compute_score``), ``compute_score_batch`` (the same for ``reward_model.reward_manager: batch``,
``name: compute_score_batch``: one sandbox batch call per step's chunk), ``check_correctness`` (drop-in for verl's sandbox_fusion utility),
:class:`JudgeboxToolAgentLoop` (an agent loop, :mod:`.agent_loop`) and :class:`VerlToolAdapter`
(judgebox tools in verl's tool registry, :mod:`.tool_adapter`). verl is imported only by the last two.
"""

from __future__ import annotations

from judgebox.lazy import lazy_exports

_EXPORTS = {
    "compute_score": "judgebox.integrations.verl.reward",
    "compute_score_batch": "judgebox.integrations.verl.reward",
    "check_correctness": "judgebox.integrations.verl.reward",
    "JudgeboxToolAgentLoop": "judgebox.integrations.verl.agent_loop",
    "VerlToolAdapter": "judgebox.integrations.verl.tool_adapter",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
