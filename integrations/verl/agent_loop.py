"""``judgebox_tool_agent``: judgebox's tool agent loop inside verl's rollout (``AgentLoopBase``).

verl (0.9.1, ``verl/experimental/agent_loop``) builds one agent loop per sample from its registry
(``agent_name`` column of the dataset, or ``rollout.agent.default_agent_loop``) and hands it the
trainer config, its LLM server client, the tokenizer and the tools loaded from
``rollout.multi_turn.tool_config_path``. Register this loop in verl's worker processes with
``actor_rollout_ref.rollout.agent.agent_loop_config_path=configs/verl/agent_loop.yaml`` (importing
this module registers it in the current process too).

What it runs: :class:`agent.ToolAgentLoop` (token-in/token-out, ``response_mask``, per-trajectory
tool state, BUG-107..124 fixed) on verl's server client, with

- limits from verl's keys: ``rollout.prompt_length``, ``response_length``, ``max_model_len``
  (tokens) and ``multi_turn.{max_assistant_turns, max_user_turns, max_parallel_calls,
  max_tool_response_length, tool_response_truncate_side, format}``;
- the judgebox tools inside verl's tool list (:class:`judgebox.integrations.verl.tool_adapter.VerlToolAdapter`
  entries; a row's ``extra_info.tool_selection`` narrows them as in verl's ``ToolAgentLoop``);
- the reward of the final assistant turn from judgebox's judge (:func:`judgebox.agent.scoring.code_score`)
  against the row's ``reward_model.ground_truth`` (a TestSpec), with
  ``reward.custom_reward_function.reward_kwargs`` (``sandbox_fusion_url``, ``score_mode``, ...).
  The score lands in verl's ``rm_scores`` (last response token) and ``acc``/``pass_rate``/``verdict``
  /``stop_reason`` in ``reward_extra_info``. A trajectory that could not be scored (aborted,
  sandbox failure) gets ``reward_score = None``: verl then scores the batch with its own reward
  function, so keep such rows out of batches whose other rows carry a reward.

The output is verl's ``AgentLoopOutput``; verl's ``_agent_loop_postprocess`` pads it into its batch.
"""

from __future__ import annotations

from typing import Any, Optional

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    ToolListWrap,
    register,
)
from verl.tools.base_tool import BaseTool as VerlBaseTool

from judgebox.agent.backends.base import GenerationResult
from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import ToolAgentLoop
from judgebox.agent.output import AgentLoopOutput as JudgeboxOutput
from judgebox.integrations.verl.tool_adapter import VerlToolAdapter

__all__ = ["JudgeboxToolAgentLoop", "VerlServerBackend", "REWARD_EXTRA_KEYS"]

#: The per-trajectory values each batch row carries in verl's ``reward_extra_info``.
REWARD_EXTRA_KEYS = ("acc", "pass_rate", "verdict", "stop_reason")

#: verl's multi_turn keys -> AgentLoopConfig fields (same meaning, same units).
_MULTI_TURN = ("max_assistant_turns", "max_user_turns", "max_parallel_calls", "max_tool_response_length",
               "tool_response_truncate_side", "format")


class VerlServerBackend:
    """An :class:`judgebox.agent.backends.Backend` over verl's LLM server client (``server_manager``).

    verl's ``generate(request_id, prompt_ids=..., sampling_params=...)`` returns a ``TokenOutput``
    whose ``stop_reason`` is ``completed`` (stop or length: verl's vLLM server does not tell them
    apart; the loop detects a length cut from ``max_tokens``), ``aborted`` or ``None``; logprobs are
    asked with ``logprobs=True``. The trajectory's ``request_id`` is verl's sticky-session key.
    """

    def __init__(self, server_manager: Any) -> None:
        self.server_manager = server_manager

    async def generate(self, prompt_ids: list[int], sampling_params: dict,
                       request_id: Optional[str] = None) -> GenerationResult:
        """One turn through verl's server client (``sampling_params`` in the backend dict's names;
        ``logprobs`` 0 becomes verl's ``True``, ``max_tokens`` None is left to verl's server).

        Raises whatever the client raises (the loop counts it as an aborted generation)."""
        params = dict(sampling_params)
        params["logprobs"] = sampling_params.get("logprobs") is not None
        if params.get("max_tokens") is None:
            params.pop("max_tokens", None)  # verl's server: response_length, clamped to the context
        out = await self.server_manager.generate(request_id=request_id, prompt_ids=list(prompt_ids),
                                                 sampling_params=params)
        finish = "abort" if out.stop_reason == "aborted" or (out.stop_reason is None and not out.token_ids) else "stop"
        logprobs = list(out.log_probs) if params["logprobs"] and out.log_probs is not None else None
        return GenerationResult(list(out.token_ids), logprobs, finish)


def judgebox_tools(tools: list, selection: Optional[list[str]] = None) -> list:
    """The judgebox tools inside verl's tool list, narrowed to ``selection`` (tool names).

    Raises:
        ValueError: a tool is a plain verl ``BaseTool`` (judgebox's loop runs judgebox tools: wrap it
            as a judgebox tool under ``VerlToolAdapter``, or run verl's own ``tool_agent``).
    """
    chosen = []
    for tool in tools:
        if selection and tool.name not in selection:
            continue
        if not isinstance(tool, VerlToolAdapter):
            kind = "a verl BaseTool" if isinstance(tool, VerlBaseTool) else type(tool).__name__
            raise ValueError(f"judgebox_tool_agent: tool {tool.name!r} is {kind}, not a judgebox tool; list it "
                             "in the tool config as class_name: judgebox.integrations.verl.tool_adapter.VerlToolAdapter with "
                             "config.tool naming the judgebox tool, or use agent_name tool_agent")
        chosen.append(tool)
    return chosen


def loop_config(rollout: Any, timeouts: list[Optional[float]]) -> AgentLoopConfig:
    """:class:`AgentLoopConfig` from verl's ``actor_rollout_ref.rollout`` section (tokens, seconds)."""
    multi = rollout.multi_turn
    fields = {name: multi.get(name) for name in _MULTI_TURN if multi.get(name) is not None}
    given = [t for t in timeouts if t is not None]
    return AgentLoopConfig(prompt_length=rollout.prompt_length, response_length=rollout.response_length,
                           max_model_len=rollout.get("max_model_len"),
                           tool_timeout_s=max(given) if given and len(given) == len(timeouts) else None,
                           **fields)


def _plain(value: Any) -> Any:
    """OmegaConf containers as plain dicts/lists (the judge validates plain JSON)."""
    return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value


@register("judgebox_tool_agent")
class JudgeboxToolAgentLoop(AgentLoopBase):
    """verl's ``AgentLoopBase`` running :class:`judgebox.agent.ToolAgentLoop` (see the module docstring).

    Args:
        tools: verl's tool list (``ToolListWrap``), as verl's worker passes it.
        args, kwargs: ``AgentLoopBase``'s positional and keyword arguments (trainer config, server client,
            tokenizer, ...).
    """

    def __init__(self, *args: Any, tools: Optional[ToolListWrap] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.verl_tools = list(tools.tools) if tools else []
        judgebox_tools(self.verl_tools)  # fail at construction on a tool it cannot run
        self.backend = VerlServerBackend(self.server_manager)
        reward = self.config.get("reward", {}) or {}
        custom = reward.get("custom_reward_function", {}) or {}
        self.reward_kwargs = dict(_plain(custom.get("reward_kwargs", {})) or {})

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """One trajectory of the row ``kwargs`` (verl's dataset fields: ``raw_prompt``,
        ``reward_model``, ``data_source``, ``extra_info``, ``tools_kwargs``)."""
        extra_info = dict(_plain(kwargs.get("extra_info")) or {})
        tools = judgebox_tools(self.verl_tools, extra_info.get("tool_selection"))
        config = loop_config(self.rollout_config, [t.timeout_s for t in tools])
        loop = ToolAgentLoop(config, self.tokenizer, self.backend, tools=[t.inner for t in tools])
        tools_kwargs = {name: (v or {}).get("create_kwargs", {})
                        for name, v in (_plain(kwargs.get("tools_kwargs")) or {}).items()}
        params = {k: v for k, v in sampling_params.items() if k != "logprobs"}
        params["logprobs"] = 0 if sampling_params.get("logprobs") else None
        reward_model = _plain(kwargs.get("reward_model")) or {}
        out = await loop.run([dict(m) for m in _plain(kwargs["raw_prompt"])], ground_truth=reward_model.get("ground_truth"),
                             info={**self.reward_kwargs, "data_source": kwargs.get("data_source"),
                                   "extra_info": extra_info},
                             sampling_params=params, tools_kwargs=tools_kwargs)
        return to_verl(out)


def to_verl(out: JudgeboxOutput) -> AgentLoopOutput:
    """verl's ``AgentLoopOutput`` of a judgebox trajectory (ids, mask, logprobs, reward, metrics)."""
    info = out.extra_fields.get("reward_info") or {}
    extra = {**out.extra_fields, "reward_extra_info": {k: info.get(k) for k in REWARD_EXTRA_KEYS}}
    return AgentLoopOutput(
        prompt_ids=out.prompt_ids, response_ids=out.response_ids, response_mask=out.response_mask,
        response_logprobs=out.response_logprobs, reward_score=out.reward_score, num_turns=out.num_turns,
        metrics=AgentLoopMetrics(generate_sequences=out.metrics.get("generate_s", 0.0),
                                 tool_calls=out.metrics.get("tools_s", 0.0),
                                 compute_score=out.metrics.get("score_s", 0.0)),
        extra_fields=extra)
