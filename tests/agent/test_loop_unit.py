"""The loop's bookkeeping, config and scoring without the vLLM engine: the real Qwen3 tokenizer,
a scripted generator of token ids for counts the real template cannot produce (BUG-114), the
transformers backend on the tiny model, and the config/scoring rules (BUG-112b, 122, 123, 124)."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from pydantic import ValidationError

from judgebox.agent.backends.base import GenerationResult
from judgebox.agent.backends.openai import Router
from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import TRUNCATED_TURN, ToolAgentLoop
from judgebox.agent.parsers import ParsedToolCall, ParsedTurn, ToolCallParser, register_parser
from judgebox.agent.scoring import answer_score, final_answer, score_trajectory
from tests.agent.conftest import ENDOFTEXT, IM_END
from tests.agent.loop_helpers import EXECUTIONS, Scripted, call, code_interpreter

USER = [{"role": "user", "content": "go"}]
CALL = 5  # the token "&": the scripted format's call marker


@register_parser("scripted-ids")
class ScriptedParser(ToolCallParser):
    """A turn containing "&" calls ``code_interpreter`` (one call per "&")."""

    def _parse(self, text: str) -> ParsedTurn:
        calls = [ParsedToolCall("code_interpreter", {"code": "print(0)"}, "&")] * text.count("&")
        return ParsedTurn(content=text.replace("&", ""), calls=calls)


class TenTokenObservations:
    """A renderer whose observations are 10 ids (the real template renders at least 15)."""

    def __init__(self, renderer):
        self.inner = renderer

    def prompt(self, messages):
        return self.inner.prompt(messages)

    def delta(self, context, assistant, new, last_generated):
        return [198] * 10


def scripted_loop(tokenizer, results, **config):
    loop = ToolAgentLoop(AgentLoopConfig(format="scripted-ids", **config), tokenizer, Scripted(results),
                         tools=(code_interpreter,), score_fn=lambda text, gt, **info: {"score": 1.0})
    loop.renderer = TenTokenObservations(loop.renderer)
    return loop


def turn(n, call_=False, end=True, lp=-0.5):
    ids = ([CALL] if call_ else []) + [64] * (n - (1 if call_ else 0) - (1 if end else 0)) + ([IM_END] if end else [])
    return GenerationResult(ids, [lp] * n, "stop" if end else "length")


@pytest.mark.slow
def test_bug114_merged_response_is_cut_only_by_response_length(tiny_tokenizer):
    loop = scripted_loop(tiny_tokenizer, [turn(8, True), turn(8, True), turn(5)], max_tokens_per_turn=8,
                         response_length=64)
    out = asyncio.run(loop.run(USER, logprobs=0))
    assert len(out.response_ids) == 41 and sum(out.response_mask) == 21
    assert out.metrics["num_generated_tokens"] == 21  # BUG-222: the policy's tokens, not the span of 41
    assert out.response_ids[-1] == IM_END and out.response_mask[-1] == 1
    assert [r["max_tokens"] for r in out.extra_fields["requests"]] == [8, 8, 8]
    assert out.extra_fields["stop_reason"] == "completed" and out.extra_fields["response_truncated"] == 0
    from judgebox.agent.output import collate

    batch = collate([out], pad_token_id=ENDOFTEXT, response_length=64)
    scores = batch["token_level_scores"][0]
    assert scores[40].item() == 1.0 and scores.sum().item() == 1.0
    # a smaller budget cuts A2: recorded, never silent
    loop = scripted_loop(tiny_tokenizer, [turn(8, True), turn(8, True), turn(4, end=False)], max_tokens_per_turn=8,
                         response_length=40)
    out = asyncio.run(loop.run(USER, logprobs=0))
    assert loop.backend.log[2]["params"]["max_tokens"] == 4
    assert len(out.response_ids) == 40
    assert out.extra_fields["stop_reason"] == "length" and out.extra_fields["response_truncated"] == 1


def test_bug116_500_complete_calls_in_a_cut_turn_run_nothing(tiny_tokenizer):
    text = call("code_interpreter", code="print(1)") * 500
    ids = tiny_tokenizer.encode(text)
    before = len(EXECUTIONS)
    backend = Scripted([GenerationResult(ids, None, "length"), GenerationResult([64, IM_END], None, "stop")])
    loop = ToolAgentLoop(AgentLoopConfig(max_tokens_per_turn=len(ids)), tiny_tokenizer, backend,
                         tools=(code_interpreter,), score_fn=lambda *a, **k: {"score": 0.0})
    out = asyncio.run(loop.run(USER))
    assert out.extra_fields["tool_calls_parsed"] == 500 and out.extra_fields["tool_calls"] == 0
    assert len(EXECUTIONS) == before
    assert [m["content"] for m in out.messages if m["role"] == "tool"] == [TRUNCATED_TURN]
    assert out.extra_fields["stop_reason"] == "completed"


def test_bug111_turn_with_tokens_after_the_stop_is_cut(tiny_tokenizer):
    backend = Scripted([GenerationResult([64, 65, ENDOFTEXT, 66, 67], [-1.0] * 5, "length")])
    loop = ToolAgentLoop(AgentLoopConfig(), tiny_tokenizer, backend, score_fn=lambda *a, **k: {"score": 0.0})
    out = asyncio.run(loop.run(USER, logprobs=0))
    assert backend.log[0]["params"]["stop_token_ids"] == [IM_END, ENDOFTEXT]
    assert out.response_ids == [64, 65, ENDOFTEXT] and out.response_logprobs == [-1.0] * 3
    assert out.extra_fields["stop_reason"] == "completed" and out.extra_fields["truncated_turns"] == 0


def test_an_unreachable_engine_aborts_the_trajectory_and_says_why(tiny_tokenizer):
    """``--backend openai`` with nothing listening raised httpx.ConnectError out of the loop (a
    traceback, an empty trajectory file): it is an aborted generation, not scored."""
    from judgebox.agent.backends import OpenAIBackend
    from tests.conftest import free_port

    backend = OpenAIBackend([f"http://127.0.0.1:{free_port()}"], "m", retries=0)
    loop = ToolAgentLoop(AgentLoopConfig(max_generation_retries=1), tiny_tokenizer, backend)
    out = asyncio.run(loop.run(USER, ground_truth={"kind": "assert", "asserts": ["assert True"]}))
    assert (out.extra_fields["stop_reason"], out.reward_score, out.extra_fields["retries"]) == ("aborted", None, 1)
    assert out.extra_fields["failure"].startswith("generation failed: ConnectError")


def test_a_backend_whose_ids_and_logprobs_differ_in_length_ends_the_trajectory_by_name(tiny_tokenizer):
    """BUG-223 (b): never padded or shifted; the record says why and carries no reward."""
    backend = Scripted([GenerationResult([64, IM_END], [-1.0], "stop")])  # one logprob for two ids
    loop = ToolAgentLoop(AgentLoopConfig(), tiny_tokenizer, backend, score_fn=lambda *a, **k: {"score": 0.0})
    out = asyncio.run(loop.run(USER, logprobs=0))
    assert (out.extra_fields["stop_reason"], out.extra_fields["failure"]) == ("aborted", "logprob_length_mismatch")
    assert out.response_ids == [] and out.reward_score is None


@pytest.mark.parametrize("key", ["max_assistant_turns", "max_tool_rounds", "max_user_turns", "max_parallel_calls",
                                 "max_tool_response_length", "response_length", "max_tokens_per_turn"])
def test_bug123_caps_no_truthiness(key):
    assert getattr(AgentLoopConfig(**{key: None}), key) is None
    with pytest.raises(ValidationError, match=key):
        AgentLoopConfig(**{key: -1})
    if key in ("max_parallel_calls", "max_tokens_per_turn"):
        with pytest.raises(ValidationError, match=f"{key} = 0"):
            AgentLoopConfig(**{key: 0})
    else:
        assert getattr(AgentLoopConfig(**{key: 0}), key) == 0


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValidationError, match="max_tool_calls"):
        AgentLoopConfig(max_tool_calls=3)
    with pytest.raises(ValidationError):
        AgentLoopConfig(tool_response_truncate_side="top")
    with pytest.raises(ValidationError, match="tool_timeout_s"):
        AgentLoopConfig(tool_timeout_s=0)
    with pytest.raises(ValidationError, match="prompt_length = 5000 exceeds max_model_len"):
        AgentLoopConfig(max_model_len=4096, prompt_length=5000)


def test_bug124_max_tokens_formula_and_startup_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AgentLoopConfig(max_model_len=4096, prompt_length=1024, response_length=3072)
    with pytest.warns(UserWarning, match="max_model_len = 4096: max_model_len is the binding limit"):
        AgentLoopConfig(max_model_len=4096, prompt_length=1024, response_length=3200)
    config = AgentLoopConfig(max_model_len=4096, max_tokens_per_turn=512)
    assert config.max_tokens(4000, 0) == 96  # BUG-112 (b)
    config = AgentLoopConfig(max_model_len=4096, response_length=3072, max_tokens_per_turn=512)
    assert config.max_tokens(1000, 2900) == 172 and config.max_tokens(1000, 3000) == 72
    assert config.max_tokens(1000, 3090) == -18  # nothing may be sent
    assert AgentLoopConfig().max_tokens(10, 10) is None


def test_tool_response_is_clipped_in_tokens_on_the_configured_side(tiny_tokenizer):
    text = " ".join(str(i) for i in range(100))
    for side, keeps in (("left", "99"), ("right", "0 1"), ("middle", "0 1")):
        loop = ToolAgentLoop(AgentLoopConfig(max_tool_response_length=10, tool_response_truncate_side=side),
                             tiny_tokenizer, Scripted([]))
        clipped = loop._clip(text)
        assert keeps in clipped and "cut to 10 of" in clipped
        assert len(tiny_tokenizer.encode(clipped.split("\n...")[0])) <= 10


@pytest.mark.parametrize("side", ["left", "right", "middle"])
@pytest.mark.parametrize("limit", [25, 26])
def test_a_token_cut_never_shows_a_split_character(tiny_tokenizer, side, limit):
    """Qwen3's byte-level tokens split a rare character (U+13000, 4 bytes, several tokens): the cut text
    is pieces of the original (before: U+FFFD at the cut for left 25/26, right 26, middle 25/26), and the
    middle side keeps head and tail apart."""
    text = "a\U00013000" * 60
    loop = ToolAgentLoop(AgentLoopConfig(max_tool_response_length=limit, tool_response_truncate_side=side),
                         tiny_tokenizer, Scripted([]))
    body, note = loop._clip(text).rsplit("\n...(", 1)
    assert "\ufffd" not in body and note.startswith(f"tool response cut to {limit} of")
    pieces = body.split("\n...\n")
    assert len(pieces) == (2 if side == "middle" else 1)
    if side != "left":
        assert text.startswith(pieces[0]) and pieces[0]
    if side != "right":
        assert text.endswith(pieces[-1]) and pieces[-1]


def test_answer_scorer_reads_hashes_and_boxed():
    assert final_answer("so #### 72") == "72" and final_answer("\\boxed{\\frac{1}{2}} ok") == "\\frac{1}{2}"
    assert answer_score("#### 72", "72")["score"] == 1.0
    assert answer_score("The answer is \\boxed{1,200}.", "1200")["score"] == 1.0
    assert answer_score("no answer", "7") == {"score": 0.0, "acc": False, "answer": None, "format_error": True}


def test_bug122_scoring_policies():
    config = AgentLoopConfig(failed_parse_reward=-1, overflow_reward=0)

    def run(stop, text, **kw):
        return asyncio.run(score_trajectory(answer_score, kw.pop("config", config), stop_reason=stop, failure=None,
                                            final_text=text, ground_truth="12", info={}, step_rewards=kw.pop("steps", [])))

    assert run("length", "The answer is 1") == (0.0, {"stop_reason": "length", "format_error": False,
                                                       "score": 0.0, "overflow": True})
    assert run("completed", "\\boxed{12}")[0] == 1.0
    assert run("completed", "I give up")[0] == -1.0 and run("completed", "I give up")[1]["format_error"] is True
    assert run("context_exhausted", "\\boxed{12}")[0] == 1.0
    no_overflow = AgentLoopConfig(failed_parse_reward=-1)
    reward, info = run("length", "The answer is 1", config=no_overflow)
    assert reward == 0.0 and info["format_error"] is False  # never the parse penalty
    assert run("aborted", "\\boxed{12}") == (None, {"stop_reason": "aborted", "format_error": False, "reason": "aborted"})
    steps = AgentLoopConfig(step_reward_rule="mean", step_reward_weight=0.5)
    assert run("completed", "\\boxed{12}", config=steps, steps=[1.0, 0.0])[0] == 1.25


def test_infra_failure_gives_no_reward():
    def infra(text, gt, **info):
        return {"score": 0.0, "infra_error": True, "verdict": "infra_error"}

    reward, info = asyncio.run(score_trajectory(infra, AgentLoopConfig(), stop_reason="completed", failure=None,
                                                final_text="x", ground_truth=None, info={}, step_rewards=[]))
    assert reward is None and info["reason"] == "scorer could not judge (infra_error)"


def test_router_least_in_flight_and_sticky():
    router = Router(3)
    router.in_flight = [2, 0, 1]
    assert router.pick("t1") == 1
    router.in_flight = [0, 5, 1]
    assert router.pick("t1") == 1 and router.pick("t2") == 0 and router.pick(None) == 0


def test_hf_backend_runs_the_loop_on_the_tiny_model(tiny_model, tiny_tokenizer):
    from judgebox.agent.backends import HFBackend

    backend = HFBackend.from_model(str(tiny_model))
    loop = ToolAgentLoop(AgentLoopConfig(max_tokens_per_turn=8), tiny_tokenizer, backend,
                         score_fn=lambda *a, **k: {"score": 0.0})
    out = asyncio.run(loop.run(USER, logprobs=0, seed=0, temperature=1.0))
    n = len(out.response_ids)
    assert 1 <= n <= 8 and out.response_mask == [1] * n and len(out.response_logprobs) == n
    assert all(lp <= 0 for lp in out.response_logprobs)
    assert out.extra_fields["stop_reason"] in ("length", "completed")
    with pytest.raises(ValueError, match="structured_outputs"):
        asyncio.run(backend.generate([1, 2], {"structured_outputs": {"choice": ["a"]}}))


def test_an_engine_that_cannot_report_its_limits_leaves_the_config_alone(tiny_tokenizer, caplog):
    """``engine_info`` raising (an engine that failed to start) is a warning: the trajectory's own
    requests report the failure, as they did before the loop asked for the engine's limits."""

    class Silent(Scripted):
        async def engine_info(self):
            raise RuntimeError("engine core died")

    backend = Silent([GenerationResult([40, IM_END], None, "stop")])
    loop = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=1), tiny_tokenizer, backend,
                         score_fn=lambda text, gt, **info: {"score": 1.0})
    out = asyncio.run(loop.run([{"role": "user", "content": "hi"}]))
    assert (out.extra_fields["stop_reason"], loop.config.max_model_len, loop.engine) == ("completed", None, None)
    assert "the engine's limits could not be read (RuntimeError: engine core died)" in caplog.text


def test_the_engines_context_becomes_the_loops_and_a_larger_one_is_refused(tiny_tokenizer):
    from judgebox.agent.backends import EngineInfo

    class Sized(Scripted):
        async def engine_info(self):
            return EngineInfo(4096, "processed_logprobs", "a test engine")

    loop = ToolAgentLoop(AgentLoopConfig(), tiny_tokenizer, Sized([]))
    assert asyncio.run(loop.check_engine()).max_model_len == 4096 and loop.config.max_model_len == 4096
    with pytest.raises(ValueError, match=r"max_model_len = 5000 exceeds the engine's max_model_len = 4096 "
                                         r"\(a test engine\)"):
        asyncio.run(ToolAgentLoop(AgentLoopConfig(max_model_len=5000), tiny_tokenizer, Sized([])).check_engine())
    with pytest.raises(ValueError, match=r"^the engine.s max_model_len = 4096 \(a test engine\): prompt_length = 5000 "
                                         r"exceeds max_model_len = 4096; lower prompt_length or raise max_model_len$"):
        asyncio.run(ToolAgentLoop(AgentLoopConfig(prompt_length=5000), tiny_tokenizer, Sized([])).check_engine())
