"""OpenRLHF's remote reward: OpenRLHF's own HTTP client (``SingleTurnAgentExecutor``, the code path
of ``--remote_rm_url``) against ``POST /get_reward`` on a real ``judgebox serve``, labels = MBPP-format tests."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from .mbpp import WRONG_COMMON, fenced, ground_truth, mbpp_problems

agent = pytest.importorskip("openrlhf.utils.agent", reason="OpenRLHF is installed by scripts/agent-env.sh")


def test_openrlhf_client_scores_mbpp_through_get_reward(live_server: str) -> None:
    problems = mbpp_problems(3)
    prompts = [f"<|im_start|>user\n{p.prompt}<|im_end|>\n<|im_start|>assistant\n" for p in problems]
    answers = [fenced(problems[0].gold), fenced(WRONG_COMMON), fenced(problems[2].gold)]
    queries = [p + a + "<|im_end|>" for p, a in zip(prompts, answers)]
    labels = [ground_truth(p) for p in problems]
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=f"{live_server}/get_reward")
    (reply,) = asyncio.run(executor._fetch_rewards_via_http(queries, prompts, labels))
    assert reply["rewards"] == [1.0, 0.0, 1.0]
    assert reply["scores"] == [1.0, 0.0, 1.0]
    assert reply["extra_logs"] == {"pass_rate": [1.0, 0.0, 1.0], "accepted": [1.0, 0.0, 1.0],
                                   "n_tests": [3.0, 3.0, 3.0]}


def test_pass_rate_mode_and_the_in_outs_label_form(live_server: str) -> None:
    in_outs = json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "11\n"]})
    r = httpx.post(f"{live_server}/get_reward", timeout=120, json={
        "query": ["```python\na, b = map(int, input().split())\nprint(a + b)\n```"], "labels": [in_outs],
        "score_mode": "pass_rate"})
    assert r.status_code == 200, r.text
    assert r.json()["rewards"] == [0.5]


def test_unusable_label_is_422_naming_it_never_a_zero_reward(live_server: str) -> None:
    r = httpx.post(f"{live_server}/get_reward", timeout=60, json={
        "query": ["print(1)", "print(2)"], "prompts": ["", ""], "labels": [ground_truth(mbpp_problems(1)[0]), "{not json"]})
    assert r.status_code == 422
    assert r.json()["detail"].startswith("labels[1]: ground_truth: not valid JSON")


def test_mismatched_lists_are_422_naming_the_field(live_server: str) -> None:
    r = httpx.post(f"{live_server}/get_reward", timeout=60, json={"query": ["a", "b"], "labels": ["{}"]})
    assert r.status_code == 422
    assert "labels: 1 entries for 2 queries" in r.text
