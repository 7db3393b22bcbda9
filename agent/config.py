"""``AgentLoopConfig``: every limit and policy of one tool agent loop, validated at start-up.

One pydantic model, unknown keys rejected. The rule for every cap (case BUG-123, no truthiness):
``None`` means unlimited, ``0`` means zero (or a start-up error where zero makes no sense, e.g.
``max_parallel_calls``), a negative value is always an error. Lengths are in tokens, times in seconds.
"""

from __future__ import annotations

import warnings
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

Cap = Optional[int]


def _nonnegative(name: str, value: Optional[float]) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{name} = {value}: must be >= 0, or null for unlimited")


class AgentLoopConfig(BaseModel):
    """Limits and policies of :class:`agent.ToolAgentLoop` (tokens, seconds; ``None`` = unlimited).

    Raises:
        pydantic.ValidationError: an unknown key, a negative cap, ``max_parallel_calls = 0``,
            ``max_tokens_per_turn = 0``, a zero/negative timeout, or ``prompt_length``/
            ``response_length`` above ``max_model_len`` alone. When ``prompt_length +
            response_length > max_model_len`` a :class:`UserWarning` names ``max_model_len`` as the
            binding limit (BUG-124).
    """

    model_config = ConfigDict(extra="forbid")

    max_assistant_turns: Cap = Field(None, description="generations per trajectory")
    max_tool_rounds: Cap = Field(None, description="tool-execution rounds; 0 = calls parsed, never run")
    max_user_turns: Cap = Field(None, description="interaction replies per trajectory")
    max_parallel_calls: Cap = Field(None, description="calls run per round; later calls get an error "
                                                       "observation (0 is an error)")
    max_tool_response_length: Cap = Field(None, description="tokens of one tool response text kept")
    tool_response_truncate_side: Literal["left", "right", "middle"] = Field(
        "middle", description="which part of an over-long tool response is cut")
    prompt_length: Cap = Field(None, description="tokens of the rendered prompt (longer prompts are rejected)")
    response_length: Cap = Field(None, description="tokens of the whole trajectory after the prompt "
                                                   "(policy tokens and observations)")
    max_model_len: Cap = Field(None, description="the engine's context: no request may exceed it")
    max_tokens_per_turn: Cap = Field(None, description="generated tokens per assistant turn")
    tool_timeout_s: Optional[float] = Field(None, description="seconds per tool call")
    generation_timeout_s: Optional[float] = Field(None, description="seconds per generation request; "
                                                                    "a late request is aborted and retried")
    max_generation_retries: int = Field(1, description="retries of an aborted generation, each from the "
                                                       "state before it")
    stop_token_ids: Optional[list[int]] = Field(None, description="end-of-turn ids (default: every eos id "
                                                                  "of the model's generation config)")
    format: str = Field("hermes", description="tool-call parser name (judgebox.agent.parsers.get_parser)")
    calls_in_reasoning: Literal["ignore", "allow"] = Field("ignore", description="run calls drafted "
                                                                                 "inside <think>")
    overflow_reward: Optional[float] = Field(None, description="score of a trajectory cut by `length` "
                                                               "(None: the scorer's score of the cut text)")
    failed_parse_reward: Optional[float] = Field(None, description="score of a finished final answer the "
                                                                   "scorer could not parse (None: as scored)")
    step_reward_rule: Literal["ignore", "sum", "mean"] = Field(
        "ignore", description="how per-step tool rewards join the final score")
    step_reward_weight: float = Field(1.0, description="weight of the combined step rewards")
    chat_template_kwargs: dict = Field(default_factory=dict, description="extra apply_chat_template "
                                                                          "arguments (e.g. enable_thinking)")

    @model_validator(mode="after")
    def _check(self) -> "AgentLoopConfig":
        for name in ("max_assistant_turns", "max_tool_rounds", "max_user_turns", "max_tool_response_length",
                     "prompt_length", "response_length", "max_model_len", "max_generation_retries"):
            _nonnegative(name, getattr(self, name))
        for name in ("max_parallel_calls", "max_tokens_per_turn", "max_model_len"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} = {value}: must be >= 1 (0 would allow nothing), or null for unlimited")
        for name in ("tool_timeout_s", "generation_timeout_s"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} = {value}: must be > 0 seconds, or null for no timeout")
        if self.stop_token_ids is not None and any(i < 0 for i in self.stop_token_ids):
            raise ValueError(f"stop_token_ids = {self.stop_token_ids}: token ids are >= 0")
        if self.max_model_len is not None:
            for name in ("prompt_length", "response_length"):
                value = getattr(self, name)
                if value is not None and value > self.max_model_len:
                    raise ValueError(f"{name} = {value} exceeds max_model_len = {self.max_model_len}; "
                                     f"lower {name} or raise max_model_len")
            if (self.prompt_length is not None and self.response_length is not None
                    and self.prompt_length + self.response_length > self.max_model_len):
                warnings.warn(f"prompt_length + response_length = {self.prompt_length + self.response_length} "
                              f"> max_model_len = {self.max_model_len}: max_model_len is the binding limit "
                              "(long trajectories end with stop_reason 'context_exhausted')", stacklevel=2)
        return self

    def max_tokens(self, prompt_tokens: int, response_tokens: int) -> Optional[int]:
        """``max_tokens`` of the next request (BUG-112b, BUG-124).

        Args:
            prompt_tokens: tokens of the original prompt.
            response_tokens: tokens appended since (policy and observation).

        Returns:
            ``min(max_tokens_per_turn, max_model_len - (prompt + response), response_length - response)``
            over the limits that are set (``None`` when none is: the engine's own limit applies);
            ``0`` or less means no request may be sent.
        """
        caps = []
        if self.max_tokens_per_turn is not None:
            caps.append(self.max_tokens_per_turn)
        if self.max_model_len is not None:
            caps.append(self.max_model_len - prompt_tokens - response_tokens)
        if self.response_length is not None:
            caps.append(self.response_length - response_tokens)
        return min(caps) if caps else None
