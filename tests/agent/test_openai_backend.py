"""``OpenAIBackend`` against vLLM's own OpenAI server (``python -m vllm.entrypoints.openai.api_server``)
on the tiny model: token ids in, token ids and logprobs out, two trajectories with a tool round each,
scored end to end; each trajectory stays on the replica it started on (two base URLs of one server)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import httpx
import pytest

from tests.agent.loop_helpers import Forced, call, code_interpreter
from tests.conftest import free_port

pytest.importorskip("vllm")

GOLD = "```python\ndef add(a, b):\n    return a + b\n```"
SPEC = {"kind": "assert", "asserts": ["assert add(1, 2) == 3", "assert add(2, 5) == 7"]}


@pytest.fixture(scope="module")
def openai_server(tiny_model):
    port = free_port()
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_model),
                             "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "2048", "--dtype",
                             "bfloat16", "--enforce-eager", "--max-num-seqs", "8", "--seed", "0"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"vLLM's OpenAI server exited {proc.returncode}: {proc.stderr.read().decode()[-3000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(1)
        else:
            pytest.fail("vLLM's OpenAI server did not become healthy in 600 s")
        yield url
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(30)


@pytest.mark.slow
def test_two_trajectories_through_vllms_openai_server(openai_server, tiny_model, tiny_tokenizer):
    from judgebox.agent import AgentLoopConfig, ToolAgentLoop
    from judgebox.agent.backends import OpenAIBackend

    async def main():
        backend = OpenAIBackend([openai_server, openai_server.replace("127.0.0.1", "localhost") + "/v1"],
                                str(tiny_model))
        script = [{"structured_outputs": {"choice": [call("code_interpreter", code="print(6 * 7)")]}},
                  {"structured_outputs": {"choice": [GOLD]}}]
        forced = Forced(backend, tiny_tokenizer, script)
        loop = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=3, max_tokens_per_turn=128, max_model_len=2048,
                                             tool_timeout_s=60), tiny_tokenizer, forced, tools=[code_interpreter])
        try:
            outs = await asyncio.gather(*(loop.run([{"role": "user", "content": f"Write add(a, b). ({i})"}],
                                                   ground_truth=SPEC, request_id=f"t{i}", logprobs=0, temperature=1.0)
                                          for i in range(2)))
        finally:
            await backend.aclose()
        return outs, backend, forced

    outs, backend, forced = asyncio.run(main())
    for out in outs:
        policy = tiny_tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask) if m])
        observed = tiny_tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask) if not m])
        assert policy.startswith(call("code_interpreter", code="print(6 * 7)")) and GOLD in policy
        assert "<tool_response>\n42\n</tool_response>" in observed
        assert (out.extra_fields["stop_reason"], out.reward_score, out.num_turns) == ("completed", 1.0, 4)
        assert len(out.response_logprobs) == len(out.response_ids)
        assert all(lp <= 0 for lp, m in zip(out.response_logprobs, out.response_mask) if m)
    # every request of a trajectory went to the replica it started on; each replica got one trajectory
    assert sorted(backend.router.sticky.values()) == [0, 1] and backend.router.in_flight == [0, 0]
    assert [len([e for e in forced.log if e["request_id"] == f"t{i}"]) for i in range(2)] == [2, 2]


@pytest.mark.slow
def test_the_servers_context_comes_from_its_model_card(openai_server, tiny_model, tiny_tokenizer):
    """``GET /v1/models`` carries vLLM's ``max_model_len`` (2048 here): the loop takes it when the
    config sets none and refuses a larger one; the logprobs' meaning is what the user declared
    (``unknown`` by default: the API does not report ``--logprobs-mode``)."""
    from judgebox.agent import AgentLoopConfig, ToolAgentLoop
    from judgebox.agent.backends import OpenAIBackend

    async def main():
        plain = OpenAIBackend([openai_server], str(tiny_model))
        declared = OpenAIBackend([openai_server], str(tiny_model), logprobs_mode="raw_logprobs")
        try:
            info = await plain.engine_info()
            loop = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=1, max_tokens_per_turn=4), tiny_tokenizer, plain)
            with pytest.warns(UserWarning, match="does not say whether its logprobs are temperature-scaled"):
                unknown = await loop.run([{"role": "user", "content": "hi"}], temperature=0.7, logprobs=0, seed=0)
            too_long = ToolAgentLoop(AgentLoopConfig(max_model_len=4096), tiny_tokenizer, declared)
            with pytest.raises(ValueError, match="exceeds the engine's max_model_len = 2048"):
                await too_long.check_engine()
            raw = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=1, max_tokens_per_turn=4), tiny_tokenizer, declared)
            with pytest.warns(UserWarning, match="raw_logprobs: the model's distribution before temperature 0.7"):
                declared_out = await raw.run([{"role": "user", "content": "hi"}], temperature=0.7, logprobs=0, seed=0)
        finally:
            await plain.aclose()
            await declared.aclose()
        return info, loop, unknown, declared_out

    info, loop, unknown, declared_out = asyncio.run(main())
    assert (info.max_model_len, info.logprobs_mode) == (2048, None)
    assert info.source == f"GET {openai_server}/v1/models"
    assert loop.config.max_model_len == 2048
    assert unknown.extra_fields["logprobs_mode"] == "unknown"
    assert declared_out.extra_fields["logprobs_mode"] == "raw_logprobs"
