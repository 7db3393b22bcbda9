"""The tool agent loop on the real vLLM engine and the real Qwen3 template (agent-cases.md).

One session engine on the tiny random Qwen3; the tool paths are driven by forcing each turn's text
with structured outputs (see ``loop_helpers.Forced``). Everything after generation — parsing,
tools, observations, masks, limits, scoring — is the production path.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import TRUNCATED_TURN, ToolAgentLoop
from judgebox.agent.scoring import answer_score
from tests.agent.conftest import ENDOFTEXT, IM_END
from tests.agent.loop_helpers import (
    EXECUTIONS,
    SCHEMA,
    Forced,
    call,
    code_interpreter,
    emit,
    fast_two,
    flaky_interpreter,
    slow_one,
)

USER = [{"role": "user", "content": "Compute it with the tool."}]


def no_score(final_text, ground_truth, **info):
    return {"score": 0.0}


def make_loop(tokenizer, backend, tools=(code_interpreter,), score_fn=no_score, interaction=None, **config):
    return ToolAgentLoop(AgentLoopConfig(**config), tokenizer, backend, tools=tools, score_fn=score_fn,
                         interaction=interaction)


def segments(out):
    """``[(mask, ids)]`` runs of the response."""
    runs, start = [], 0
    for i in range(1, len(out.response_mask) + 1):
        if i == len(out.response_mask) or out.response_mask[i] != out.response_mask[start]:
            runs.append((out.response_mask[start], out.response_ids[start:i]))
            start = i
    return runs


def test_bug107_one_rounds_results_are_one_user_turn_in_call_order(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    gen = call("code_interpreter", code="print(1)") + call("code_interpreter", code="print(2)")
    backend = Forced(vllm_backend, tok, [gen, "Both ran."])
    loop = make_loop(tok, backend)
    out = arun(loop.run(USER, request_id="bug107"))
    assert out.extra_fields["stop_reason"] == "completed"
    assert out.extra_fields["tool_calls"] == 2
    (m1, g1), (m0, obs), (m2, g2) = segments(out)
    assert (m1, m0, m2) == (1, 0, 1)
    assert g1 == tok.encode(gen) + [IM_END]
    expected = ("\n<|im_start|>user\n<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n"
                "</tool_response><|im_end|>\n<|im_start|>assistant\n")
    assert tok.decode(obs) == expected
    assert obs.count(151644) == 2
    # round trip: the template's rendering of [..., assistant, tool, tool] minus [..., assistant]
    # (the template wins: Qwen3 renders the last assistant turn with an empty think block, the same
    # turn before tool messages without it, so the subtraction is taken after the assistant's end id)
    assistant = out.messages[1]
    base = tok.apply_chat_template(USER + [assistant], tools=[SCHEMA], tokenize=False)
    full = tok.apply_chat_template(USER + [assistant] + out.messages[2:4], tools=[SCHEMA], tokenize=False,
                                   add_generation_prompt=True)
    n = base.count("<|im_end|>")
    assert full.split("<|im_end|>", n)[n] == expected
    # turn 2's prompt is turn 1's prompt + everything appended since (prefix invariant)
    second = backend.log[1]["prompt_ids"]
    assert second == out.prompt_ids + g1 + obs


def test_bug107_results_in_call_order_when_the_second_finishes_first(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    gen = call("slow_one") + call("fast_two")
    loop = make_loop(tok, Forced(vllm_backend, tok, [gen, "ok"]), tools=(slow_one, fast_two))
    out = arun(loop.run(USER, request_id="bug107-order"))
    obs = segments(out)[1][1]
    assert tok.decode(obs) == ("\n<|im_start|>user\n<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n"
                               "</tool_response><|im_end|>\n<|im_start|>assistant\n")
    assert [m["content"] for m in out.messages if m["role"] == "tool"] == ["1", "2"]


def test_bug108_sampled_subtokens_are_never_reencoded(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    (hello,), hel, lo = tok.encode("hello"), tok.encode("hel"), tok.encode("lo")
    tool_call = call("code_interpreter", code="print('ok')")
    sampled = hel + lo + tok.encode(tool_call) + [IM_END]  # "hel" + "lo": not how "hello" encodes
    first = {"extra_args": {"forced_token_ids": sampled}}

    class Turns(Forced):
        async def generate(self, prompt_ids, params, request_id=None):
            if self.turn[request_id] == 0:
                params = {**params, **first}
            return await super().generate(prompt_ids, params, request_id)

    backend = Turns(vllm_backend, tok, [None, "Done"])
    loop = make_loop(tok, backend)
    out = arun(loop.run(USER, request_id="bug108", logprobs=0))
    turn1 = backend.log[0]["result"]
    x = turn1.token_ids
    assert x == sampled and tok.decode(x[:2]) == "hello" and tok.encode("hello") == [hello]
    assert len(tok.encode(tok.decode(x))) == len(x) - 1  # a re-encode would merge hel+lo
    (_, g1), (_, obs), (_, g2) = segments(out)
    assert g1 == x and g2 == tok.encode("Done") + [IM_END]
    assert out.response_ids == x + obs + g2
    assert out.response_mask == [1] * len(x) + [0] * len(obs) + [1] * len(g2)
    assert out.response_logprobs[: len(x)] == turn1.logprobs
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs)
    assert [m["content"] for m in out.messages if m["role"] == "tool"] == ["ok"]


def test_bug110_interaction_turn_extends_the_generated_tokens(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    messages = [{"role": "user", "content": "2+3*4?"}]
    gen1 = "<think>3*4=12, then +2 gives 14</think>14"

    async def check_again(msgs):
        return "Check again."

    backend = Forced(vllm_backend, tok, [gen1, "14"])
    loop = make_loop(tok, backend, tools=(), interaction=check_again, max_user_turns=1)
    out = arun(loop.run(messages, request_id="bug110"))
    p1 = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)["input_ids"]
    g1 = tok.encode(gen1) + [IM_END]
    assert out.prompt_ids == p1
    prompt2 = backend.log[1]["prompt_ids"]
    assert prompt2 == p1 + g1 + tok.encode("\n<|im_start|>user\nCheck again.<|im_end|>\n<|im_start|>assistant\n")
    assert out.response_ids[: len(g1)] == g1 and out.response_mask[: len(g1)] == [1] * len(g1)
    assert 151667 in out.response_ids[: len(g1)]  # <think> kept, mask 1
    # a re-render drops the reasoning: the loop must not (and did not) use it
    rerender = tok.apply_chat_template(out.messages[:3], tokenize=False, add_generation_prompt=True)
    assert "<|im_start|>assistant\n14<|im_end|>" in rerender
    assert out.extra_fields["stop_reason"] == "completed"


def test_bug111_secondary_end_of_turn_id_is_a_stop(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    backend = Forced(vllm_backend, tok, [("The end", ENDOFTEXT)])
    loop = make_loop(tok, backend)
    out = arun(loop.run(USER, request_id="bug111a"))
    assert backend.log[0]["params"]["stop_token_ids"] == [IM_END, ENDOFTEXT]
    assert backend.log[0]["result"].finish_reason == "stop"
    assert out.response_ids == tok.encode("The end") + [ENDOFTEXT]
    assert out.extra_fields["stop_reason"] == "completed"
    assert out.extra_fields["response_truncated"] == 0 and out.extra_fields["truncated_turns"] == 0
    # a call turn ended by 151643: the missing <|im_end|> boundary is inserted with mask 0
    gen = call("code_interpreter", code="print(5)")
    backend = Forced(vllm_backend, tok, [(gen, ENDOFTEXT), "ok"])
    out = arun(make_loop(tok, backend).run(USER, request_id="bug111-boundary"))
    (_, g1), (_, obs), _ = segments(out)
    assert g1[-1] == ENDOFTEXT and obs[0] == IM_END
    assert tok.decode(obs).startswith("<|im_end|>\n<|im_start|>user\n<tool_response>\n5\n")


@pytest.mark.slow
def test_bug111_ids_after_a_stop_id_are_cut(tiny_tokenizer, arun):
    from judgebox.agent.backends.base import GenerationResult
    from tests.agent.loop_helpers import Scripted

    a, b, c, d = 64, 65, 66, 67  # "a", "b", "c", "d"
    backend = Scripted([GenerationResult([a, b, ENDOFTEXT, c, d], [-0.1] * 5, "length")])
    out = arun(make_loop(tiny_tokenizer, backend).run(USER, logprobs=0))
    assert out.response_ids == [a, b, ENDOFTEXT] and out.response_mask == [1, 1, 1]
    assert out.response_logprobs == [-0.1] * 3
    assert out.extra_fields["stop_reason"] == "completed"


def test_bug112_aborted_attempt_is_discarded_and_retried(tiny_tokenizer, vllm_backend, arun):
    from judgebox.agent.backends import VLLMBackend

    tok = tiny_tokenizer

    class AbortFirst(VLLMBackend):
        output_kind = "DELTA"
        aborted = 0

        async def progress(self, request_id, token_ids):
            if not self.aborted and len(token_ids) >= 7:
                self.aborted = len(token_ids)
                await self.engine.abort(request_id)

    streaming = AbortFirst(vllm_backend.engine)
    backend = Forced(streaming, tok, [None, "Four tokens here."])
    out = arun(make_loop(tok, backend).run(USER, request_id="bug112a", logprobs=0))
    first = backend.log[0]["result"]
    assert first.finish_reason == "abort" and len(first.token_ids) >= 7
    assert len(tok.encode("Four tokens here.")) + 1 == 5
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs) == 5
    assert out.extra_fields["retries"] == 1
    assert out.extra_fields["stop_reason"] == "completed"


def test_bug112_max_tokens_is_clamped_to_the_context_left(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    messages = [{"role": "user", "content": "x" * 10}]
    backend = Forced(vllm_backend, tok, ["ok"])
    loop = make_loop(tok, backend, max_model_len=4096, max_tokens_per_turn=512)
    while len(loop.renderer.prompt(messages)) < 4000:
        messages[0]["content"] += " x"
    out = arun(loop.run(messages, request_id="bug112b"))
    assert len(out.prompt_ids) == 4000
    assert backend.log[0]["params"]["max_tokens"] == 96


def test_bug112_missing_logprobs_fail_the_trajectory(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer

    class DropLogprobs(Forced):
        async def generate(self, prompt_ids, params, request_id=None):
            result = await Forced.generate(self, prompt_ids, params, request_id)
            result.logprobs = None
            return result

    out = arun(make_loop(tok, DropLogprobs(vllm_backend, tok, ["Done"])).run(USER, request_id="bug112c", logprobs=0))
    assert out.extra_fields["stop_reason"] == "aborted"
    assert out.extra_fields["failure"] == "missing_logprobs"
    assert out.reward_score is None and out.extra_fields["reward_info"]["reason"] == "missing_logprobs"
    assert out.response_ids == [] and out.response_logprobs == []


@pytest.mark.parametrize("case", ["a", "b"])
def test_bug116_calls_of_a_length_cut_turn_are_not_run(tiny_tokenizer, vllm_backend, arun, case):
    tok = tiny_tokenizer
    if case == "a":
        fmt = "qwen3_coder"
        text = ("<tool_call>\n<function=code_interpreter>\n<parameter=code>\nimport shutil; shutil.rmtree('"
                "/tmp/judgebox-bug116')\n</parameter>\n</function>\n</tool_call>")
        max_tokens = 24
    else:  # the template wins: this call is 18 Qwen3 tokens, so the cap is 18 (complete at the cap)
        fmt = "hermes"
        text = call("code_interpreter", code="print(1)")
        max_tokens = len(tok.encode(text))
    before = len(EXECUTIONS)
    backend = Forced(vllm_backend, tok, [text, "ok"])
    out = arun(make_loop(tok, backend, format=fmt, max_tokens_per_turn=max_tokens).run(USER, request_id=f"bug116{case}"))
    assert backend.log[0]["result"].finish_reason == "length"
    assert len(backend.log[0]["result"].token_ids) == max_tokens
    assert len(EXECUTIONS) == before and out.extra_fields["tool_calls"] == 0
    tool_messages = [m["content"] for m in out.messages if m["role"] == "tool"]
    assert tool_messages == [TRUNCATED_TURN]
    assert out.extra_fields["stop_reason"] == "completed"
    # no budget left: the trajectory ends `length`, nothing run, no observation
    backend = Forced(vllm_backend, tok, [text])
    out = arun(make_loop(tok, backend, format=fmt, max_tokens_per_turn=max_tokens,
                         response_length=max_tokens + 5).run(USER, request_id=f"bug116{case}-end"))
    assert out.extra_fields["stop_reason"] == "length" and len(EXECUTIONS) == before
    assert out.response_mask == [1] * max_tokens


def test_bug116_many_complete_calls_in_a_cut_turn(tiny_tokenizer, vllm_backend, arun):
    """(c) on the engine with 20 blocks (500 would take minutes on 2 cores; test_loop_unit has 500)."""
    tok = tiny_tokenizer
    text = call("code_interpreter", code="1") * 21
    cap = len(tok.encode(call("code_interpreter", code="1") * 20))
    before = len(EXECUTIONS)
    backend = Forced(vllm_backend, tok, [text, "ok"])
    out = arun(make_loop(tok, backend, max_tokens_per_turn=cap).run(USER, request_id="bug116c"))
    assert out.extra_fields["tool_calls_parsed"] == 20 and out.extra_fields["tool_calls"] == 0
    assert len(EXECUTIONS) == before
    assert [m["content"] for m in out.messages if m["role"] == "tool"] == [TRUNCATED_TURN]


def test_bug117_hung_and_raising_tools_keep_the_group_of_4(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    codes = ["print(1)", "HANG", "BOOM", "print(4)"]
    script = {f"g{i}": [call("code_interpreter", code=c), "done"] for i, c in enumerate(codes)}
    backend = Forced(vllm_backend, tok, script)
    loop = make_loop(tok, backend, tools=(flaky_interpreter,), tool_timeout_s=5, max_assistant_turns=2,
                     generation_timeout_s=60)

    async def group():
        return await asyncio.gather(*(loop.run(USER, request_id=f"g{i}") for i in range(4)),
                                    return_exceptions=True)

    start = time.monotonic()
    outs = arun(group())
    wall = time.monotonic() - start
    assert all(not isinstance(o, BaseException) for o in outs) and len(outs) == 4
    tool_text = [[m["content"] for m in o.messages if m["role"] == "tool"] for o in outs]
    assert tool_text[1] == ["error: tool 'code_interpreter' timed out after 5 s"]
    assert tool_text[2] == ["error: RuntimeError: boom"]
    assert tool_text[0] == ["print(1)"] and tool_text[3] == ["print(4)"]
    assert sum(o.extra_fields["tool_timeouts"] for o in outs) == 1
    assert sum(o.extra_fields["tool_errors"] for o in outs) == 1
    assert all(o.extra_fields["stop_reason"] == "completed" for o in outs)
    assert outs[1].metrics["tools_s"] < 5 + 2.5  # the timeout, plus the kill grace
    assert wall <= 2 * (60 + 5)
    rewards = [o.reward_score for o in outs]
    assert rewards == [0.0] * 4  # GRPO advantages are computed over all 4


def test_bug121_score_reads_the_last_assistant_turn_only(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer

    async def doubt(msgs):
        return "Are you sure? #### 70", True  # the reply ends the episode (verl's should_terminate)

    # the answer is forced with a structured-output constraint (xgrammar choice; passes through the loop)
    choice = {"structured_outputs": {"choice": ["#### 72"]}, "temperature": 1.0,
              "allowed_token_ids": sorted(set(tok.encode("#### 72")) | {IM_END})}
    loop = make_loop(tok, Forced(vllm_backend, tok, [choice]), tools=(), score_fn=answer_score,
                     interaction=doubt, max_user_turns=1)
    out = arun(loop.run([{"role": "user", "content": "…put the answer after ####"}], ground_truth="72",
                        request_id="bug121a"))
    assert [m["role"] for m in out.messages] == ["user", "assistant", "user"]
    assert out.reward_score == 1.0
    gen = call("code_interpreter", code="print('#### 72')")
    loop = make_loop(tok, Forced(vllm_backend, tok, [gen, "#### 70"]), score_fn=answer_score)
    out = arun(loop.run(USER, ground_truth="72", request_id="bug121b"))
    assert [m["role"] for m in out.messages] == ["user", "assistant", "tool", "assistant"]
    assert out.messages[2]["content"] == "#### 72"
    assert out.reward_score == 0.0


def test_bug122_length_is_an_overflow_score_not_a_parse_failure(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    text = "The answer is 12, so \\boxed{12}."
    cut = len(tok.encode("The answer is 1"))
    loop = make_loop(tok, Forced(vllm_backend, tok, [text]), score_fn=answer_score, failed_parse_reward=-1,
                     overflow_reward=0, max_tokens_per_turn=cut)
    out = arun(loop.run(USER, ground_truth="12", request_id="bug122a"))
    assert tok.decode(out.response_ids) == "The answer is 1"
    assert out.reward_score == 0 and out.extra_fields["stop_reason"] == "length"
    assert out.extra_fields["reward_info"]["format_error"] is False
    # (b) a finished answer that ends exactly at the context limit keeps its real reward
    final = "So \\boxed{12}"
    limit = len(loop.renderer.prompt(USER)) + len(tok.encode(final)) + 1
    loop = make_loop(tok, Forced(vllm_backend, tok, [final]), score_fn=answer_score, failed_parse_reward=-1,
                     overflow_reward=0, max_model_len=limit)
    out = arun(loop.run(USER, ground_truth="12", request_id="bug122b"))
    assert len(out.prompt_ids) + len(out.response_ids) == limit
    assert out.reward_score == 1.0 and out.extra_fields["stop_reason"] == "completed"


@pytest.mark.parametrize("rounds", [0, 1, None])
def test_bug123_max_tool_rounds(tiny_tokenizer, vllm_backend, arun, rounds):
    tok = tiny_tokenizer
    gen = call("code_interpreter", code="print(0)")
    backend = Forced(vllm_backend, tok, [gen] * 50)
    loop = make_loop(tok, backend, max_tool_rounds=rounds, response_length=300)
    out = arun(loop.run(USER, request_id=f"bug123-{rounds}"))
    if rounds == 0:
        assert out.extra_fields["tool_calls_parsed"] == 1 and out.extra_fields["tool_calls"] == 0
        assert len(backend.log) == 1 and out.extra_fields["stop_reason"] == "max_turns"
    elif rounds == 1:
        assert out.extra_fields["tool_calls"] == 1 and len(backend.log) == 2
        assert out.extra_fields["stop_reason"] == "max_turns"
    else:
        assert out.extra_fields["stop_reason"] == "length" and len(out.response_ids) <= 300
        assert out.extra_fields["tool_calls"] >= 5


def test_bug124_context_exhausted_is_returned_and_scored(tiny_tokenizer, vllm_backend, arun):
    tok = tiny_tokenizer
    with pytest.warns(UserWarning, match="max_model_len"):
        config = dict(max_model_len=4096, prompt_length=1024, response_length=3200, max_tokens_per_turn=512)
        AgentLoopConfig(**config)
    messages = [{"role": "user", "content": "go"}]
    loop = make_loop(tok, None, tools=(emit,), score_fn=answer_score)
    while len(loop.renderer.prompt(messages)) < 1000:
        messages[0]["content"] += " go"
    assert len(loop.renderer.prompt(messages)) == 1000

    def lengths(n):
        """(generated ids of a call of emit(n), its observation ids)."""
        text = call("emit", n=n)
        a = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
            "name": "emit", "arguments": {"n": n}}}]}
        obs = loop.renderer.delta(messages, a, [{"role": "tool", "content": "\n".join(["x"] * n)}], IM_END)
        return len(tok.encode(text)) + 1, len(obs)

    n3 = next(n for n in range(1, 40) if lengths(n)[1] == 40)  # the next tool result renders to 40 tokens
    g3 = lengths(n3)[0]
    # turns 1 and 2 bring the running length to exactly 4090 after turn 3
    def solve(target):
        lo, hi = 1, 3000
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if sum(lengths(mid)) < target else (lo, mid)
        return lo if sum(lengths(lo)) == target else None

    n1, n2 = next((solve(4090 - 1000 - g3 - sum(lengths(n2))), n2) for n2 in (1, 2, 3, 4)
                  if solve(4090 - 1000 - g3 - sum(lengths(n2))) is not None)
    calls = [call("emit", n=n) for n in (n1, n2, n3)]
    backend = Forced(vllm_backend, tok, calls)
    with pytest.warns(UserWarning):
        loop = make_loop(tok, backend, tools=(emit,), score_fn=answer_score, **config)
    out = arun(loop.run(messages, ground_truth="1", request_id="bug124"))
    assert out.extra_fields["stop_reason"] == "context_exhausted"
    assert len(out.prompt_ids) + len(out.response_ids) == 4090  # the 40-token observation was not appended
    assert out.reward_score == 0.0 and out.extra_fields["reward_info"]["format_error"] is True
    for entry in backend.log:
        used = len(entry["prompt_ids"])
        assert entry["params"]["max_tokens"] == min(512, 4096 - used, 3200 - (used - 1000))
        assert used + entry["params"]["max_tokens"] <= 4096
