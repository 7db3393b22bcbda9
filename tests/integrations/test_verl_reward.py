"""verl: judgebox's ``compute_score`` loaded by verl's own custom-reward loader from the config keys a
user writes (``custom_reward_function.path``/``name``/``reward_kwargs``), scoring a batch through
verl's ``RewardLoopWorker``; ``judgebox data convert --to verl-parquet`` read by verl's ``RLHFDataset``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.agent.tiny import tiny_qwen3

from .mbpp import HALF_SQUARE, MBPP, fenced, ground_truth, mbpp_problems
from .verl_config import REPO, ppo_config

verl = pytest.importorskip("verl")


def reward_batch(tokenizer, prompts: list[str], responses: list[str], ground_truths: list[str]):
    """A verl ``DataProto`` as the rollout hands it to the reward: left-padded prompts, right-padded
    responses, ``reward_model.ground_truth`` per row."""
    import numpy as np
    import torch
    from verl import DataProto

    pad = tokenizer.pad_token_id
    p_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    r_ids = [tokenizer(r, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id] for r in responses]
    lp, lr = max(map(len, p_ids)), max(map(len, r_ids))
    prompt_t = torch.tensor([[pad] * (lp - len(p)) + p for p in p_ids])
    resp_t = torch.tensor([r + [pad] * (lr - len(r)) for r in r_ids])
    mask = torch.tensor([[0] * (lp - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (lr - len(r))
                         for p, r in zip(p_ids, r_ids)])
    return DataProto.from_dict(
        tensors={"prompts": prompt_t, "responses": resp_t, "attention_mask": mask,
                 "input_ids": torch.cat([prompt_t, resp_t], dim=1)},
        non_tensors={"data_source": np.array(["mbpp"] * len(prompts), dtype=object),
                     "reward_model": np.array([{"style": "rule", "ground_truth": g} for g in ground_truths], dtype=object),
                     "extra_info": np.array([{"index": i} for i in range(len(prompts))], dtype=object)})


def test_verl_loads_compute_score_from_config_keys_and_scores_a_batch() -> None:
    from verl.experimental.reward_loop import RewardLoopWorker
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    model = tiny_qwen3()
    config = ppo_config(f"actor_rollout_ref.model.path={model}",
                        f"custom_reward_function.path={REPO / 'integrations' / 'verl' / 'reward.py'}",
                        "custom_reward_function.name=compute_score",
                        "+custom_reward_function.reward_kwargs.score_mode=pass_rate")
    worker = RewardLoopWorker(config)
    problems = mbpp_problems(2)
    wrong = problems[1].gold.replace("&", "|")  # union instead of intersection: fails every assert
    half = HALF_SQUARE  # task 3 (is_perfect_square): passes 2 of 3 asserts
    data = reward_batch(worker.input_tokenizer, [p.prompt for p in problems] * 2,
                        [fenced(problems[0].gold), fenced(wrong), fenced(half), fenced(problems[1].gold)],
                        [ground_truth(problems[0]), ground_truth(problems[1]),
                         ground_truth(mbpp_problems(3)[2]), '{"inputs": [], "outputs": []}'])
    out = worker.loop.run_until_complete(worker.compute_score_batch(data))  # the loop verl bound it to
    scores = [o["reward_score"] for o in out]
    assert scores == [1.0, 0.0, pytest.approx(2 / 3), 0.0]
    info = [o["reward_extra_info"] for o in out]
    assert [i["verdict"] for i in info] == ["accepted", "wrong_answer", "wrong_answer", "test_data_error"]
    assert [i["infra_error"] for i in info] == [False, False, False, True]  # the 0.0 of row 4 is masked
    rm_scores = NaiveRewardManager.assemble_rm_scores(data, scores)  # verl's own token-level placement
    assert rm_scores.sum(dim=1).tolist() == pytest.approx([1.0, 0.0, 2 / 3, 0.0])


def test_verl_parquet_from_data_convert_is_read_by_rlhf_dataset(tmp_path) -> None:
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from judgebox.integrations.verl import compute_score

    out = tmp_path / "mbpp.verl.parquet"
    subprocess.run([sys.executable, "-m", "judgebox.cli", "data", "convert", str(MBPP), "--format", "mbpp",
                    "--to", "verl-parquet", "--out", str(out), "--agent-name", "tool_agent",
                    "--tool-selection", "code_interpreter"], check=True, cwd=REPO)
    model = tiny_qwen3()
    config = ppo_config(f"actor_rollout_ref.model.path={model}", "data.max_prompt_length=1024")
    dataset = RLHFDataset(str(out), AutoTokenizer.from_pretrained(model), config.data)
    assert len(dataset) == len(mbpp_problems(10_000))
    row = dataset[1]
    assert row["data_source"] == "mbpp" and row["agent_name"] == "tool_agent"
    assert row["raw_prompt"][-1]["role"] == "user"
    assert row["extra_info"]["tool_selection"] == ["code_interpreter"]
    score = compute_score(row["data_source"], fenced(row["extra_info"]["reference"]),
                          row["reward_model"]["ground_truth"], row["extra_info"])
    assert score["score"] == 1.0 and score["n_total"] == 3


#: APPS-format stdio rows (``in_outs``, no ``prelude`` key): an answer that needs verl's import block
#: (``isqrt``), a wrong answer and a ``__main__`` block. (verl 0.9.1's call-based path answers -1 for a
#: ``class Solution`` row and its ``compute_score`` wrapper raises on a failing row, so the call-based
#: rule is pinned against verl's import block in tests/reward/test_preludes.py instead.)
APPS_FORMAT = [
    ({"inputs": ["16\n", "10\n"], "outputs": ["4\n", "3\n"]}, "print(isqrt(int(input())))\n"),
    ({"inputs": ["16\n"], "outputs": ["5\n"]}, "print(isqrt(int(input())))\n"),
    ({"inputs": ["2 3\n"], "outputs": ["6\n"]},
     "def main():\n    a, b = map(int, input().split())\n    print(prod([a, b]))\n\nif __name__ == '__main__':\n    main()\n"),
]


@pytest.mark.parametrize("in_outs,code", APPS_FORMAT, ids=["stdio-ok", "stdio-wrong", "main"])
def test_apps_format_verdicts_agree_with_verls_prime_code(in_outs, code) -> None:
    """verl drop-in parity: judgebox's compute_score gives verl 0.9.1 ``prime_code``'s verdict
    (its ``check_correctness``) on APPS-format data, whose harness import block both put before
    every Python solution."""
    import json

    from verl.utils.reward_score.prime_code.utils import check_correctness

    from judgebox.integrations.verl import compute_score

    theirs, _ = check_correctness(in_outs=in_outs, generation=code, timeout=5, debug=False)
    ours = compute_score("apps", f"```python\n{code}```", json.dumps(in_outs))
    assert (ours["acc"], ours["infra_error"]) == (all(x is True for x in theirs), False)
