"""The trajectory view of ``judgebox report`` on a real rollout: the session vLLM engine on the tiny
Qwen3 with the real ``code_interpreter`` (forced turns: one tool call whose program prints a string
that tries to close the page's script element, then a final answer). Opened in headless Chromium:
the highlighted policy tokens are exactly ``sum(response_mask)``, the observation tokens the rest,
the tool call shows its arguments and its observation as text, the reward and stop reason show, and
``window.pwned`` stays undefined. The token texts come from ``--tokenizer`` (the tiny model's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import ToolAgentLoop
from judgebox.agent.rollout import Rollout
from judgebox.agent.tools import load_tools
from judgebox.cli import main
from judgebox.reward.loaders import load_problems
from judgebox.reward.report import write_summary
from tests.agent.loop_helpers import Forced, call
from tests.agent.test_rollout import ANSWER, mbpp_file
from tests.report.browser import go, opened

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "</script><script>window.pwned=1</script>"


def test_trajectory_view_marks_policy_and_observation_tokens_and_shows_the_tool_call(
        tmp_path, tiny_model, tiny_tokenizer, vllm_backend, arun):
    problems = load_problems(mbpp_file(tmp_path), "mbpp")
    tools = load_tools(ROOT / "configs/tools/code_interpreter.yaml")
    script = [call("code_interpreter", code=f"print({HOSTILE!r})"), ANSWER + "\n" + HOSTILE]
    loop = ToolAgentLoop(AgentLoopConfig(max_tool_rounds=2, tool_timeout_s=60), tiny_tokenizer,
                         Forced(vllm_backend, tiny_tokenizer, script), tools=tools)
    out, summary_path = tmp_path / "traj.jsonl", tmp_path / "summary.json"
    summary = arun(Rollout(problems, loop, out, n=1, dataset="tiny-mbpp",
                           sampling_params={"logprobs": 0}).run(ks=[1], progress=False))
    summary.model = str(tiny_model)
    write_summary(summary, summary_path)
    records = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    first = records["1"]
    assert first["verdict"] == "accepted" and first["extra_fields"]["tool_calls"] == 1
    assert main(["report", str(out), "--summary", str(summary_path), "--out", str(tmp_path / "t.html")]) == 0

    with opened(tmp_path / "t.html") as page:
        assert page.inner_text("#stop-reasons tr[data-stop=completed] td:nth-child(2)") == "2"
        go(page, "problems", "#problem-list tr[data-task='1'] a")  # rows are in finishing order: find task 1
        page.click("#problem-list tr[data-task='1'] a")
        page.wait_for_selector("#problem .sample a.open-trajectory")
        page.click("#problem .sample a.open-trajectory")
        page.wait_for_selector("#trajectory .tokens .tok.p")
        policy = page.locator("#trajectory .tokens .tok.p").count()
        observation = page.locator("#trajectory .tokens .tok.o").count()
        assert policy == sum(first["response_mask"]) > 0
        assert observation == len(first["response_mask"]) - policy > 0
        assert page.locator("#trajectory .tokens .tok.q").count() == len(first["prompt_ids"])
        # the token texts decode back to the trajectory's own text (the prompt is folded, still in the page)
        shown = "".join(page.locator("#trajectory .tokens").all_text_contents())
        assert shown == tiny_tokenizer.decode(first["prompt_ids"] + first["response_ids"])
        rounds = page.locator("#trajectory .round")
        assert rounds.count() == 1
        assert HOSTILE in rounds.locator("pre.args").inner_text()
        assert HOSTILE in rounds.locator("pre.observation").inner_text()  # the program's output, as text
        assert HOSTILE in page.inner_text("#trajectory pre.final")
        assert "reward 1 · stop reason completed · 1 tool calls" in page.inner_text("#trajectory .traj-head")
        page.check("#shade")  # logprob shading re-renders the same tokens
        assert page.locator("#trajectory .tokens .tok.p").count() == policy
        assert page.evaluate("typeof window.pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "trajectory.png"), full_page=True)
    assert (tmp_path / "trajectory.png").stat().st_size > 0
