"""``judgebox rollout``: trajectories of a dataset, judged by the eval machinery, resumable.

On the session vLLM engine with the real ``code_interpreter`` (forced turns: one call, then a final
answer), and the CLI end to end with the transformers backend (plain sampling, ``--tools none``).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import ToolAgentLoop
from judgebox.agent.rollout import Rollout
from judgebox.agent.tools import load_tools
from judgebox.cli import main
from judgebox.reward.loaders import load_problems
from tests.agent.loop_helpers import Forced, call
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```"


def mbpp_file(tmp_path: Path) -> Path:
    rows = [{"task_id": 1, "text": "Write a function add(a, b).", "test_list": ["assert add(1, 2) == 3"]},
            {"task_id": 2, "text": "Write a function sub(a, b).", "test_list": ["assert sub(3, 2) == 1"]}]
    path = tmp_path / "tiny-mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rollout_scores_the_final_turn_with_the_judge_and_resumes(tmp_path, tiny_tokenizer, vllm_backend, arun):
    problems = load_problems(mbpp_file(tmp_path), "mbpp")
    tools = load_tools(ROOT / "configs/tools/code_interpreter.yaml")
    backend = Forced(vllm_backend, tiny_tokenizer, [call("code_interpreter", code="print(6 * 7)"), ANSWER])
    loop = ToolAgentLoop(AgentLoopConfig(max_tool_rounds=2, tool_timeout_s=60), tiny_tokenizer, backend, tools=tools)
    out = tmp_path / "traj.jsonl"
    summary = arun(Rollout(problems, loop, out, n=2, dataset="tiny-mbpp").run(ks=[1], progress=False))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["task_id"], r["sample_index"]) for r in records) == [("1", 0), ("1", 1), ("2", 0), ("2", 1)]
    by_task = {r["task_id"]: r for r in records}
    assert by_task["1"]["verdict"] == "accepted" and by_task["1"]["reward_score"] == 1.0
    assert by_task["2"]["verdict"] != "accepted" and by_task["2"]["reward_score"] == 0.0
    tool_out = [m["content"] for m in by_task["1"]["messages"] if m["role"] == "tool"]
    assert len(tool_out) == 1 and "42" in tool_out[0]
    assert summary.pass_at_k == {"pass@1": 0.5} and summary.n_samples == 4
    assert summary.stop_reasons == {"completed": 4} and summary.tool_calls_per_trajectory == 1.0
    assert summary.parse_errors == summary.tool_errors == summary.tool_timeouts == 0
    # resumable: a re-run keeps every record; a lost line is the only trajectory run again
    rollout = Rollout(problems, loop, out, n=2, dataset="tiny-mbpp")
    assert rollout.plan()[1] == []
    out.write_text("".join(line + "\n" for line in out.read_text().splitlines()[:3]))
    rollout = Rollout(problems, loop, out, n=2, dataset="tiny-mbpp")
    assert len(rollout.plan()[1]) == 1
    assert arun(rollout.run(ks=[1], progress=False)).n_samples == 4
    assert len(out.read_text().splitlines()) == 4


@pytest.mark.slow
def test_cli_rollout_plain_sampling_is_offline_pass_at_k(tmp_path, tiny_model, capsys):
    out, summary = tmp_path / "t.jsonl", tmp_path / "s.json"
    code = main(["rollout", str(mbpp_file(tmp_path)), "--format", "mbpp", "--model", str(tiny_model),
                 "--backend", "hf", "--n", "2", "--tools", "none", "--no-progress",
                 "--sampling-params", '{"temperature": 1.0, "seed": 0}', "--config", '{"max_tokens_per_turn": 6}',
                 "--out", str(out), "--summary", str(summary), "--html", str(tmp_path / "r.html")])
    assert code == 0
    data = json.loads(summary.read_text())
    assert data["model"] == str(tiny_model)
    page = (tmp_path / "r.html").read_text()  # the report, with the token view from the model's tokenizer
    assert '<script type="application/octet-stream" id="d-vocab">' in page
    assert len(re.findall(r'id="c[0-9]+"', page)) == 2  # one compressed block per problem
    for key in ("pass_at_k", "verdicts", "excluded", "n_samples", "problems", "stop_reasons",
                "tool_calls_per_trajectory", "parse_errors", "tool_errors", "tool_timeouts"):
        assert key in data
    assert data["n_samples"] == 4 and data["pass_at_k"] == {"pass@1": 0.0}
    assert data["tool_calls_per_trajectory"] == 0.0 and sum(data["stop_reasons"].values()) == 4
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["task_id"], r["sample_index"]) for r in records} == {("1", 0), ("1", 1), ("2", 0), ("2", 1)}
    assert all(r["num_turns"] == 2 and len(r["response_ids"]) <= 6 for r in records)
    # a finished rollout re-run starts no engine: nothing listens at this URL, yet nothing is aborted
    capsys.readouterr()
    same = ["--sampling-params", '{"temperature": 1.0, "seed": 0}', "--config", '{"max_tokens_per_turn": 6}']
    again = main(["rollout", str(mbpp_file(tmp_path)), "--format", "mbpp", "--model", str(tiny_model),
                  "--backend", "openai", "--base-url", f"http://127.0.0.1:{free_port()}", "--n", "2",
                  "--tools", "none", "--no-progress", "--out", str(out), *same])
    assert again == 0 and "keeping 4 of 4 trajectories; running 0" in capsys.readouterr().out
    # other settings: not a resume of this file (a new user's re-run without them was kept as if it were)
    with pytest.raises(SystemExit) as other:
        main(["rollout", str(mbpp_file(tmp_path)), "--format", "mbpp", "--model", str(tiny_model),
              "--backend", "openai", "--base-url", f"http://127.0.0.1:{free_port()}", "--n", "2",
              "--tools", "none", "--no-progress", "--out", str(out)])
    assert other.value.code == 1 and "its trajectories were generated with other settings (--sampling-params, " \
        "--config differ)" in capsys.readouterr().err  # named (the third walk)
    # bad config key: a usage error naming it
    with pytest.raises(SystemExit) as exit_:
        main(["rollout", str(mbpp_file(tmp_path)), "--format", "mbpp", "--model", str(tiny_model),
              "--backend", "hf", "--config", '{"max_tool_call": 1}', "--out", str(out)])
    assert exit_.value.code == 1
    assert "--config: max_tool_call: Extra inputs are not permitted" in capsys.readouterr().err


def test_bug205_unscorable_trajectories_are_counted_apart_never_as_zero(tmp_path):
    """Scripted records (no model): one problem's rewards [1.0, None (sandbox unavailable), 0.0, 1.0]
    and a second problem whose four trajectories are all unscorable. The mean reward and pass@1 use
    the three scored trajectories only; the unscorable one is counted with its reason, and the
    all-unscorable group contributes no reward."""
    problems = load_problems(mbpp_file(tmp_path), "mbpp")
    rollout = Rollout(problems, None, tmp_path / "t.jsonl", n=4, dataset="mbpp")
    extra = {"stop_reason": "completed", "tool_calls": 0, "tool_errors": 0, "tool_timeouts": 0, "parse_errors": 0}

    def row(task: str, i: int, reward):
        verdict = "infra_error" if reward is None else ("accepted" if reward else "wrong_answer")
        return {"task_id": task, "sample_index": i, "sample_id": i, "reward_score": reward, "verdict": verdict,
                "passed": reward == 1.0, "n_passed": int(reward or 0), "n_total": 1,
                "pass_rate": reward, "extra_fields": extra}

    first, second = problems[0].task_id, problems[1].task_id
    records = {(first, i): row(first, i, r) for i, r in enumerate([1.0, None, 0.0, 1.0])}
    records |= {(second, i): row(second, i, None) for i in range(4)}
    summary = rollout.summary([1], records)
    assert (summary.mean_reward, summary.n_unscorable, summary.unscorable_reasons,
            summary.unscorable_groups) == (2 / 3, 5, {"infrastructure": 5}, 1)
    assert summary.pass_at_k == {"pass@1": pytest.approx(2 / 3)} and summary.n_scored == 3  # n = 3, c = 2


def test_a_resume_never_keeps_trajectories_of_other_prompts_or_tests(tmp_path):
    """The third new-user walk (high): after the dataset's tests and prompts changed, a rollout kept
    "8 of 8 trajectories". Each record keeps its prompt's and its tests' fingerprints; a file whose
    records differ is refused (records outside the run, and redone infra errors, are not checked)."""
    problems = load_problems(mbpp_file(tmp_path), "mbpp")
    out = tmp_path / "t.jsonl"
    rollout = Rollout(problems, None, out, n=1, dataset="mbpp")
    first = problems[0]
    record = {"task_id": first.task_id, "sample_index": 0, "sample_id": 0, "verdict": "accepted",
              "prompt_sha256": rollout.prompt_digest(first), "tests_sha256": first.tests_digest}
    out.write_text(json.dumps(record) + "\n")
    assert rollout.plan()[1] == [(problems[1].task_id, 0)]  # the same prompt and tests: kept
    changed = [p.model_copy(update={"prompt": p.prompt + " (v2)"}) if p is first else p for p in problems]
    with pytest.raises(ValueError, match=f"the trajectory of task '{first.task_id}' sample 0 was generated from "
                                         "another prompt than the dataset's now .*; give another --out$"):
        Rollout(changed, None, out, n=1, dataset="mbpp").plan()
    spec = first.spec.model_copy(update={"asserts": ["assert False"]})
    changed = [p.model_copy(update={"spec": spec}) if p is first else p for p in problems]
    with pytest.raises(ValueError, match=f"the trajectory of task '{first.task_id}' sample 0 was judged against "
                                         "other tests than the dataset's now .*; use a new --out path$"):
        Rollout(changed, None, out, n=1, dataset="mbpp").plan()
    out.write_text(json.dumps(record | {"verdict": "infra_error", "tests_sha256": "0"}) + "\n")
    assert len(Rollout(changed, None, out, n=1, dataset="mbpp").plan()[1]) == 2  # redone, not refused


def test_a_second_rollout_on_a_file_being_written_stops_before_its_engine(tmp_path, tiny_tokenizer, arun):
    """A second run on one output file stops at the lock, before it asks its engine anything (it
    used to start the engine, then stop at its first write)."""
    from judgebox.reward.results import JsonlAppender

    class NoEngine:  # any call is the failure this test guards against
        def __getattr__(self, name):
            raise AssertionError(f"the engine was used ({name}) before the lock was checked")

    problems = load_problems(mbpp_file(tmp_path), "mbpp")
    loop = ToolAgentLoop(AgentLoopConfig(max_tool_rounds=1), tiny_tokenizer, NoEngine())
    out = tmp_path / "traj.jsonl"
    with JsonlAppender(out):
        with pytest.raises(ValueError, match="another process is writing these results now"):
            arun(Rollout(problems, loop, out, n=1, dataset="tiny-mbpp").run(ks=[1], progress=False))
    assert out.read_text() == ""


def dead_sandbox_rollout(tmp_path, tiny_model, tiny_tokenizer, **breaker) -> tuple[Rollout, Path]:
    """A rollout of four trajectories per problem, one at a time, whose real model (transformers)
    generates and whose sandbox is dead (nothing listens at its URL, one attempt each): ``breaker`` is
    ``give_up_after`` and ``give_up_seconds``."""
    from judgebox.agent.backends import HFBackend
    from judgebox.reward.evaluate import Evaluation
    from judgebox.sandbox import SandboxClient
    from judgebox.sandbox.client.settings import ClientSettings

    problems = load_problems(mbpp_file(tmp_path), "mbpp")
    loop = ToolAgentLoop(AgentLoopConfig(max_tokens_per_turn=4, max_assistant_turns=1), tiny_tokenizer,
                         HFBackend.from_model(str(tiny_model)))
    out = tmp_path / "traj.jsonl"
    dead = SandboxClient(f"http://127.0.0.1:{free_port()}", settings=ClientSettings(max_attempts=1, deadline=10))
    return Rollout(problems, loop, out, n=4, concurrency=1, dataset="tiny-mbpp", **breaker,
                   evaluation=Evaluation(problems, out, client=dead, retries=0, dataset="tiny-mbpp")), out


def test_a_rollout_stops_after_infrastructure_errors_in_a_row_as_eval_does(tmp_path, tiny_model, tiny_tokenizer, arun):
    """Issue 39, item 10: ``judgebox rollout`` had no circuit breaker like eval's. A real model
    (transformers) generates; the sandbox died (nothing listens at its URL): after ``give_up_after``
    trajectories in a row end ``infra_error``, the rest are left for a rerun and ``gave_up`` says why."""
    rollout, out = dead_sandbox_rollout(tmp_path, tiny_model, tiny_tokenizer, give_up_after=2,
                                        give_up_seconds=math.inf)  # the count's rule, whatever the machine's speed
    summary = arun(rollout.run(ks=[1], progress=False))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["verdict"] for r in records] == ["infra_error", "infra_error"]
    assert rollout.gave_up.startswith("stopped after 2 trajectories in a row hit infrastructure errors")
    assert summary.n_samples_pending == 6


def test_a_rollout_whose_sandbox_judges_nothing_for_a_while_stops_before_the_count(tmp_path, tiny_model,
                                                                                   tiny_tokenizer, arun):
    """The breaker eval has (``judgebox.reward.evaluate.GiveUp``): ``concurrency`` trajectories in a row
    ending ``infra_error`` and none judged for ``give_up_seconds`` (0 here) stop the run, before the
    count (10 here) would."""
    rollout, out = dead_sandbox_rollout(tmp_path, tiny_model, tiny_tokenizer, give_up_after=10, give_up_seconds=0)
    arun(rollout.run(ks=[1], progress=False))
    assert len(out.read_text().splitlines()) == 1
    assert rollout.gave_up.startswith("stopped after 1 trajectories in a row hit infrastructure errors and none "
                                      "was judged for 0 s (last: "), rollout.gave_up


@pytest.mark.slow
def test_a_vllm_rollout_exits_cleanly(tmp_path, tiny_model):
    """Issue 39, item 5: ``judgebox rollout --backend vllm`` that succeeded (rc 0) ended with vLLM's
    ``AsyncLLM.__del__`` traceback at interpreter exit (``TypeError: 'NoneType' object is not
    callable``: its second shutdown ran after the module globals were gone). The backend now releases
    the engine when it shuts it down; its own process, so interpreter exit is what is tested. The third
    walk: 13 vLLM WARNING lines on stdout (where vLLM logs), torch FutureWarnings, a NUMA notice and the
    checkpoint bar on stderr; none is there now (only vLLM's Triton notice, printed before its logging
    is configured, in each of its processes)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("vllm")
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}  # conftest set TORCHINDUCTOR_CACHE_DIR
    out = tmp_path / "t.jsonl"
    done = subprocess.run([sys.executable, "-c", "import sys; from judgebox.cli import main; sys.exit(main())", "rollout", str(mbpp_file(tmp_path)), "--format", "mbpp",
                           "--model", str(tiny_model), "--backend", "vllm", "--n", "1", "--tools", "none",
                           "--no-progress", "--config", '{"max_tokens_per_turn": 4}', "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(out.read_text().splitlines()) == 2
    for noise in ("Traceback", "Exception ignored", "leaked shared_memory", " INFO ", "FutureWarning", "NUMA binding",
                  "Loading safetensors checkpoint shards"):  # vLLM's INFO and warnings: on request
        assert noise not in done.stderr, done.stderr[-3000:]
    assert " WARNING " not in done.stdout and " INFO " not in done.stdout, done.stdout[:3000]  # vLLM logs to stdout
