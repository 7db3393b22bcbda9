"""The one protocol every generation backend follows, and what a generation returns.

A backend turns prompt token ids into generated token ids: no text crosses it, so the trajectory is
exactly the tokens the model produced (token-in/token-out). ``sampling_params`` is a plain dict with
vLLM's names: ``max_tokens`` (``None``: the engine's limit), ``stop_token_ids``, ``temperature``,
``top_p``, ``top_k``, ``seed``, ``logprobs`` (``0``: the sampled token's logprob; ``None``: none),
``structured_outputs`` (a dict of vLLM's ``StructuredOutputsParams`` fields, e.g. ``{"choice": [...]}``)
and ``allowed_token_ids``; other keys pass through to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Protocol, runtime_checkable

FinishReason = Literal["stop", "length", "abort"]

#: What a backend's logprobs are, in vLLM's names (``ModelConfig.logprobs_mode``): ``processed_logprobs``
#: are the sampling distribution's (after temperature, top-p/top-k and every logits processor: what
#: the policy sampled from), ``raw_logprobs`` the model's own before any of them.
LogprobsMode = Literal["raw_logprobs", "processed_logprobs", "raw_logits", "processed_logits"]


@dataclass
class GenerationResult:
    """One generation.

    Attributes:
        token_ids: the generated ids, the end-of-turn id included when the engine stopped on one.
        logprobs: the sampled token's logprob per id (same length), or ``None`` when not requested
            or not returned.
        finish_reason: the engine's token-level reason: ``stop`` (a stop id/string), ``length``
            (``max_tokens`` or the context reached) or ``abort`` (cancelled by the engine or a
            timeout; ``token_ids`` are then partial and must not be scored).
    """

    token_ids: list[int]
    logprobs: Optional[list[float]]
    finish_reason: FinishReason


@dataclass(frozen=True)
class EngineInfo:
    """What a backend's engine says about itself (:meth:`Backend.engine_info`, optional).

    Attributes:
        max_model_len: the engine's context in tokens (prompt + generation), or ``None`` when the
            engine does not say.
        logprobs_mode: what the returned logprobs are (:data:`LogprobsMode`), or ``None`` when unknown
            (an OpenAI-compatible server does not report it).
        source: where the figures were read, for messages (e.g. ``"vLLM model config"``).
    """

    max_model_len: Optional[int]
    logprobs_mode: Optional[LogprobsMode]
    source: str


@runtime_checkable
class Backend(Protocol):
    """What :class:`agent.ToolAgentLoop` needs from an inference engine.

    A backend may also define ``async def engine_info(self) -> EngineInfo``: the loop then takes the
    engine's context (``max_model_len``) when its config sets none, refuses a configured one above the
    engine's, and records the logprobs' meaning on every trajectory (BUG-221).
    """

    async def generate(self, prompt_ids: list[int], sampling_params: dict,
                       request_id: Optional[str] = None) -> GenerationResult:
        """Generate one continuation of ``prompt_ids``.

        ``request_id`` names the trajectory (routers keep one trajectory on one replica, for the
        prefix cache); backends may ignore it.
        """
        ...


def finish_of(reason: Optional[str]) -> FinishReason:
    """An engine's finish reason mapped onto :data:`FinishReason` (``None``/unknown -> ``abort``)."""
    if reason in ("stop", "length", "abort"):
        return reason  # type: ignore[return-value]
    return "abort"
