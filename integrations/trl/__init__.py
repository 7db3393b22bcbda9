"""TRL: ``code_reward``/``make_code_reward`` (``reward_funcs``, :mod:`.reward`),
``make_rollout_func`` (an agent ``rollout_func``, :mod:`.rollout`), ``make_environment_factory`` and
``code_interpreter_tool`` (``environment_factory=``/``tools=``, :mod:`.environments`) and vLLM weight
sync (:mod:`.weight_sync`). TRL, torch and vLLM are imported only by the names that need them.
"""

from __future__ import annotations

from judgebox.lazy import lazy_exports

_EXPORTS = {
    "code_reward": "judgebox.integrations.trl.reward",
    "make_code_reward": "judgebox.integrations.trl.reward",
    "make_rollout_func": "judgebox.integrations.trl.rollout",
    "trajectory_reward": "judgebox.integrations.trl.rollout",
    "CodeInterpreterEnv": "judgebox.integrations.trl.environments",
    "make_environment_factory": "judgebox.integrations.trl.environments",
    "code_interpreter_tool": "judgebox.integrations.trl.environments",
    "WORKER_EXTENSION": "judgebox.integrations.trl.weight_sync",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
