"""``HFBackend``: transformers ``generate`` for small models on CPU (one request at a time).

Supports ``max_tokens``, ``stop_token_ids``, ``temperature`` (0 = greedy), ``top_p``, ``top_k``,
``seed`` and ``logprobs`` (the sampled token's log-probability under the distribution it was sampled
from: ``generate``'s processed scores, after temperature and top-p/top-k, vLLM's
``processed_logprobs``). Structured outputs and ``allowed_token_ids`` need an
engine with a grammar: use :class:`judgebox.agent.backends.VLLMBackend`.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Optional

from judgebox.agent.backends.base import EngineInfo, GenerationResult
from judgebox.extras import require

UNSUPPORTED = ("structured_outputs", "allowed_token_ids", "n")


class HFBackend:
    """Generation with ``model.generate`` in a worker thread, serialised by a lock.

    Args:
        model: a ``transformers`` causal LM (eval mode).
        max_model_len: the context limit in tokens (default: ``config.max_position_embeddings``).
    """

    def __init__(self, model: Any, max_model_len: Optional[int] = None) -> None:
        self.model = model
        self.max_model_len = max_model_len or getattr(model.config, "max_position_embeddings", 2048)
        self._lock = threading.Lock()

    @classmethod
    def from_model(cls, model: str, **kwargs: Any) -> "HFBackend":
        """Load ``AutoModelForCausalLM.from_pretrained(model)``; ``kwargs`` go to the constructor."""
        AutoModelForCausalLM = require("transformers").AutoModelForCausalLM

        return cls(AutoModelForCausalLM.from_pretrained(model).eval(), **kwargs)

    async def engine_info(self) -> EngineInfo:
        """``max_model_len`` as configured; logprobs are ``processed_logprobs``."""
        return EngineInfo(self.max_model_len, "processed_logprobs", "the hf backend's max_model_len")

    async def generate(self, prompt_ids: list[int], sampling_params: dict,
                       request_id: Optional[str] = None) -> GenerationResult:
        """Generate in a thread.

        Raises:
            ValueError: a sampling parameter this backend cannot honour (named).
        """
        for key in UNSUPPORTED:
            if sampling_params.get(key) not in (None, 1 if key == "n" else None):
                raise ValueError(f"sampling parameter {key!r} is not supported by the hf backend; use --backend vllm")
        return await asyncio.to_thread(self._generate, list(prompt_ids), dict(sampling_params))

    def _generate(self, prompt_ids: list[int], params: dict) -> GenerationResult:
        import torch

        room = self.max_model_len - len(prompt_ids)
        max_new = room if params.get("max_tokens") is None else min(params["max_tokens"], room)
        temperature = params.get("temperature", 1.0)
        stop = list(params.get("stop_token_ids") or []) or None
        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "eos_token_id": stop, "pad_token_id": (stop or [0])[0]}
        if temperature and temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature, top_p=params.get("top_p", 1.0),
                          top_k=params.get("top_k") if params.get("top_k", -1) > 0 else 0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with self._lock, torch.inference_mode():
            if params.get("seed") is not None:
                torch.manual_seed(params["seed"])
            input_ids = torch.tensor([prompt_ids], dtype=torch.long)
            out = self.model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                                      return_dict_in_generate=True, output_scores=True, **kwargs)
            ids = out.sequences[0, len(prompt_ids):].tolist()
            logprobs = None
            if params.get("logprobs") is not None:
                # the processed scores (after temperature and top-p/top-k): the sampling distribution
                scores = torch.stack(out.scores, dim=1).float().log_softmax(-1)[0]
                logprobs = scores[torch.arange(len(ids)), torch.tensor(ids)].tolist()
        if stop and ids and ids[-1] in stop:
            return GenerationResult(ids, logprobs, "stop")
        return GenerationResult(ids, logprobs, "length")
