"""TRL: ``reward.code_reward`` inside TRL's real ``GRPOTrainer`` (2 optimizer steps on CPU, a tiny random
Qwen3, MBPP-format rows). Unknown verdicts (bad test data, an unreachable sandbox) are ``None``, which
TRL turns into NaN and leaves out of the group statistics."""

from __future__ import annotations

import pytest

from judgebox.integrations.trl import make_code_reward
from judgebox.sandbox import SandboxClient
from judgebox.sandbox.client.client import ClientSettings
from tests.agent.tiny import tiny_qwen3

from .mbpp import ground_truth, mbpp_problems

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")


def recorded(fn, name: str):
    """``fn`` under ``name`` (TRL logs rewards by function name), keeping every list it returned."""
    calls: list[list] = []

    def reward(prompts, completions, **columns):
        out = fn(prompts, completions, **columns)
        calls.append(out)
        return out

    reward.__name__, reward.calls = name, calls
    return reward


def test_grpo_trainer_takes_two_steps_with_code_reward_on_mbpp(tmp_path) -> None:
    problem = mbpp_problems(2)[1]
    rows = [
        {"prompt": [{"role": "user", "content": f"{problem.prompt}\nYour code should pass: {problem.spec.asserts[0]}"}],
         "ground_truth": ground_truth(problem)},
        {"prompt": [{"role": "user", "content": "Write a function that adds two numbers."}],
         "ground_truth": "{not json"},  # bad test data: every completion's reward is None
    ]
    code = recorded(make_code_reward(score_mode="pass_rate"), "code_reward")
    dead = SandboxClient("http://127.0.0.1:9", ClientSettings(max_attempts=1, deadline=5))
    unreachable = recorded(make_code_reward(client=dead), "code_reward_unreachable")
    args = trl.GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, use_vllm=False, max_steps=2, per_device_train_batch_size=4,
        num_generations=4, max_completion_length=16, logging_steps=1, report_to="none", shuffle_dataset=False,
        learning_rate=1e-3, save_strategy="no", model_init_kwargs={"dtype": "float32"}, seed=0)
    trainer = trl.GRPOTrainer(model=str(tiny_qwen3()), reward_funcs=[code, unreachable], args=args,
                              train_dataset=datasets.Dataset.from_list(rows))
    trainer.train()

    assert trainer.state.global_step == 2
    assert len(code.calls) == 2 and [len(c) for c in code.calls] == [4, 4]
    mbpp_rewards, bad_rewards = code.calls
    assert all(isinstance(r, float) and 0.0 <= r <= 1.0 for r in mbpp_rewards)  # judged: a real pass rate
    assert bad_rewards == [None] * 4                                             # test_data_error
    assert unreachable.calls == [[None] * 4, [None] * 4]                         # infra_error
    logs = [h for h in trainer.state.log_history if "rewards/code_reward/mean" in h]
    assert len(logs) == 2
    assert logs[0]["rewards/code_reward/mean"] == pytest.approx(sum(mbpp_rewards) / 4)
    assert logs[1]["rewards/code_reward/mean"] is None  # NaN: no reward known for that group
    assert [h["rewards/code_reward_unreachable/mean"] for h in logs] == [None, None]
