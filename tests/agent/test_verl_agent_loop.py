"""verl 0.9.1's own rollout worker (``AgentLoopWorker``) on the session's vLLM engine:

- ``judgebox_tool_agent`` (``agent/verl_loop.py``), registered from ``configs/verl/agent_loop.yaml``
  through ``rollout.agent.agent_loop_config_path``, run through verl's ``AgentLoopBase`` interface,
  padded by verl's post-processing into its batch (``rm_scores`` from judgebox's judge);
- verl's own ``tool_agent`` (``ToolAgentLoop``) with judgebox's ``code_interpreter`` loaded by verl's
  ``initialize_tools_from_config`` from ``configs/verl/tool_config.yaml``.

The worker gets verl's LLM server client over the in-process engine (:class:`EngineClient`; verl's
own client reaches Ray-hosted vLLM servers, which need GPUs); a random model never calls tools, so
the client forces each turn's text per problem (``SCRIPT``).
"""

from __future__ import annotations

import asyncio
import gc
import json

import numpy as np
import pytest

pytest.importorskip("verl.experimental.agent_loop")
import torch  # noqa: E402  (verl's dependency)
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker  # noqa: E402
from verl.protocol import DataProto  # noqa: E402
from verl.tools.base_tool import BaseTool as VerlBaseTool  # noqa: E402
from verl.workers.rollout.llm_server import LLMServerClient  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from judgebox.integrations.verl.agent_loop import REWARD_EXTRA_KEYS, judgebox_tools  # noqa: E402
from tests.agent.conftest import force  # noqa: E402
from tests.integrations.verl_config import ppo_config  # noqa: E402


def call(code: str) -> str:
    return '<tool_call>\n' + json.dumps({"name": "code_interpreter", "arguments": {"code": code}}) + '\n</tool_call>'


GOOD = "Tested.\n```python\ndef add(a, b):\n    return a + b\n```"
SCRIPT = {
    "PROBLEM-ADD": [call("x = 41"), call("print(x + 1)"), GOOD],
    "PROBLEM-SUB": ["```python\ndef add(a, b):\n    return a - b\n```"],
}
SPEC = json.dumps({"kind": "assert", "asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]})
PROMPT_LEN, RESPONSE_LEN = 1024, 512


class EngineClient(LLMServerClient):
    """verl's LLM server client over an in-process ``AsyncLLM``, handling a request as verl's vLLM
    server does (``vllm_async_server.generate``: default ``max_tokens``, ``logprobs`` flag,
    ``stop_reason``), with the turn's text forced from ``SCRIPT``."""

    def __init__(self, config, engine, tokenizer):
        super().__init__(config)
        self.engine, self.tokenizer, self.requests = engine, tokenizer, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs) -> TokenOutput:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        params = dict(sampling_params)
        rollout = self.config.actor_rollout_ref.rollout
        default = min(rollout.response_length, rollout.prompt_length + rollout.response_length - len(prompt_ids))
        max_tokens = max(1, min(params.pop("max_tokens", default), 8192 - len(prompt_ids)))
        params["logprobs"] = 0 if params.pop("logprobs", False) else None
        text = self.tokenizer.decode(prompt_ids)
        for marker, turns in SCRIPT.items():
            turn = text.count("<|im_start|>assistant") - 1
            if marker in text and turn < len(turns):
                params.update(force(self.tokenizer, turns[turn]))
        self.requests.append({"request_id": request_id, "max_tokens": max_tokens, "logprobs": params["logprobs"]})
        final = None
        async for final in self.engine.generate(TokensPrompt(prompt_token_ids=list(prompt_ids)),
                                                SamplingParams(max_tokens=max_tokens, **params), f"verl-{len(self.requests)}"):
            pass
        out = final.outputs[0]
        logprobs = None if params["logprobs"] is None else [step[t].logprob for t, step in zip(out.token_ids, out.logprobs)]
        return TokenOutput(token_ids=list(out.token_ids), log_probs=logprobs,
                           stop_reason="aborted" if out.finish_reason == "abort" else "completed")


@pytest.fixture(scope="module")
def worker(tiny_model, tiny_tokenizer, vllm_backend):
    config = ppo_config(
        f"actor_rollout_ref.model.path={tiny_model}", "actor_rollout_ref.rollout.name=vllm",
        f"actor_rollout_ref.rollout.prompt_length={PROMPT_LEN}", f"actor_rollout_ref.rollout.response_length={RESPONSE_LEN}",
        "actor_rollout_ref.rollout.calculate_log_probs=true", "actor_rollout_ref.rollout.multi_turn.enable=true",
        "actor_rollout_ref.rollout.multi_turn.format=hermes", "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4",
        "actor_rollout_ref.rollout.multi_turn.tool_config_path=configs/verl/tool_config.yaml",
        "actor_rollout_ref.rollout.agent.agent_loop_config_path=configs/verl/agent_loop.yaml")
    w = AgentLoopWorker(config, llm_client=EngineClient(config, vllm_backend.engine, tiny_tokenizer))
    yield w
    for tool in w.tools:
        tool.inner.close()


def batch(agent_name: str, markers: list[str]) -> DataProto:
    rows = [{"raw_prompt": [{"role": "user", "content": f"{m}: write add(a, b). Use the code interpreter."}],
             "agent_name": agent_name, "data_source": "judgebox/test", "index": i, "tools_kwargs": {},
             "reward_model": {"style": "rule", "ground_truth": SPEC}, "extra_info": {"index": i}}
            for i, m in enumerate(markers)]
    columns = {}
    for key in rows[0]:
        columns[key] = np.empty(len(rows), dtype=object)
        columns[key][:] = [r[key] for r in rows]
    return DataProto(non_tensor_batch=columns, meta_info={})


def segments(tokenizer, out: DataProto, row: int) -> tuple[str, str]:
    """(policy text, observation text) of one padded row: response tokens by mask 1 / mask 0."""
    ids, mask = out.batch["responses"][row], out.batch["response_mask"][row]
    real = out.batch["attention_mask"][row, PROMPT_LEN:].bool()
    policy = tokenizer.decode(ids[mask.bool()].tolist())
    observed = tokenizer.decode(ids[(~mask.bool()) & real].tolist())
    return policy, observed


def test_judgebox_tool_agent_runs_in_verls_worker_and_its_batch_carries_the_judges_reward(worker, tiny_tokenizer, arun):
    out = arun(worker.generate_sequences(batch("judgebox_tool_agent", ["PROBLEM-ADD", "PROBLEM-SUB"])))

    assert tuple(out.batch["responses"].shape) == (2, RESPONSE_LEN)
    assert tuple(out.batch["input_ids"].shape) == (2, PROMPT_LEN + RESPONSE_LEN)
    assert torch.equal(out.batch["input_ids"], torch.cat([out.batch["prompts"], out.batch["responses"]], dim=1))
    policy, observed = segments(tiny_tokenizer, out, 0)
    assert policy == "<|im_end|>".join(SCRIPT["PROBLEM-ADD"]) + "<|im_end|>"
    assert "42" in observed and "<|im_start|>user\n<tool_response>" in observed  # state kept across calls
    assert segments(tiny_tokenizer, out, 1) == (SCRIPT["PROBLEM-SUB"][0] + "<|im_end|>", "")

    # the reward sits on the last real response token (verl's rm_scores), from judgebox's judge
    scores = out.batch["rm_scores"]
    last = out.batch["attention_mask"][:, PROMPT_LEN:].sum(dim=1) - 1
    assert scores.sum(dim=1).tolist() == [1.0, 0.0] and scores[torch.arange(2), last].tolist() == [1.0, 0.0]
    assert out.meta_info["reward_extra_keys"] == list(REWARD_EXTRA_KEYS)
    assert list(out.non_tensor_batch["verdict"]) == ["accepted", "wrong_answer"]
    assert list(out.non_tensor_batch["acc"]) == [True, False]
    assert list(out.non_tensor_batch["stop_reason"]) == ["completed", "completed"]
    assert list(out.non_tensor_batch["tool_calls"]) == [2, 0]
    assert list(out.non_tensor_batch["__num_turns__"]) == [6, 2]

    # logprobs: the engine's, on every policy token; 0 elsewhere
    logprobs, mask = out.batch["rollout_log_probs"], out.batch["response_mask"].bool()
    assert (logprobs[mask] <= 0).all() and (logprobs[mask] < 0).any() and (logprobs[~mask] == 0).all()


def test_verls_tool_agent_runs_judgebox_code_interpreter_against_vllm(worker, tiny_tokenizer, arun):
    [tool] = worker.tools
    out = arun(worker.generate_sequences(batch("tool_agent", ["PROBLEM-ADD"])))
    policy, observed = segments(tiny_tokenizer, out, 0)
    assert policy == "<|im_end|>".join(SCRIPT["PROBLEM-ADD"]) + "<|im_end|>"
    assert "[ok]\n[stdout]\n42" in observed  # the session of the trajectory kept x between verl's calls
    del out
    gc.collect()
    arun(asyncio.sleep(0.1))
    assert tool.live_trajectories == 0 and tool.inner.live_instances == 0


def test_a_plain_verl_tool_is_refused_with_the_fix():
    class Search(VerlBaseTool):
        pass

    search = Search.__new__(Search)
    search.name = "search"
    with pytest.raises(ValueError, match="tool 'search' is a verl BaseTool.*VerlToolAdapter.*tool_agent"):
        judgebox_tools([search])
