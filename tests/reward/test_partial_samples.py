"""BUG-062: pass@k when the samples file covers only part of the benchmark. ``judgebox eval`` refuses a
samples file with problems lacking a sample (exit 1, naming how many and the flag); with
``--allow-partial`` pass@k is over the whole benchmark and the attempted-subset figure is labelled
(real runs of the CLI)."""

import json

import pytest


@pytest.mark.slow
def test_bug_062_partial_samples_file_is_refused_then_scored_over_the_whole_benchmark(tmp_path):
    """BUG-062: 3 APPS problems, correct samples for 2: refused (exit 1, naming how many and the flag);
    with --allow-partial pass@1 = 0.6667 over the whole benchmark, the subset figure labelled."""
    from tests.reward.test_eval import judgebox, write_samples

    rows = [{"problem_id": str(i), "question": "echo", "solutions": json.dumps(["print(input())"]),
             "input_output": json.dumps({"inputs": [f"{i}\n"], "outputs": [f"{i}\n"]})} for i in range(3)]
    (tmp_path / "three.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_samples(tmp_path / "s.jsonl", [("0", "print(input())"), ("1", "print(input())")])
    args = ["eval", "three.jsonl", "--format", "apps", "--samples", "s.jsonl", "--k", "1", "--no-progress",
            "--summary", "sum.json"]
    refused = judgebox(*args, cwd=tmp_path, check=False)
    assert refused.returncode == 1 and not (tmp_path / "sum.json").exists()
    assert "1 of 3 problems have no sample" in refused.stderr and "--allow-partial" in refused.stderr
    done = judgebox(*args, "--allow-partial", cwd=tmp_path)
    summary = json.loads((tmp_path / "sum.json").read_text())
    assert round(summary["pass_at_k"]["pass@1"], 4) == 0.6667
    assert summary["pass_at_k_attempted"] == {"pass@1": 1.0} and summary["n_problems_unattempted"] == 1
    assert "attempted subset: 2 of 3 problems" in done.stdout and "whole benchmark" in done.stdout


def test_an_interrupted_run_says_its_figures_are_incomplete():
    """A new user's finding: an eval stopped by a dead sandbox printed pass@1 '(whole benchmark)' and
    'problems without samples 142' for problems whose samples were only pending. The table says the run
    is incomplete and those problems have no result yet; a rollout's table is titled rollout."""
    from rich.console import Console

    from judgebox.reward.report import print_table, summarize

    rows = [{"task_id": "a", "verdict": "accepted"}, {"task_id": "b", "verdict": "infra_error"}]
    summary = summarize("d", ["a", "b", "c"], rows, [1], n_pending=3)
    console = Console(record=True, width=160)
    print_table(summary, console, command="rollout")
    text = console.export_text()
    assert "judgebox rollout: d" in text and "problems without a result yet" in text
    assert "pass@1 (whole benchmark, incomplete: pending samples count as not passed)" in text
    console = Console(record=True, width=160)
    print_table(summarize("d", ["a", "b", "c"], rows, [1]), console)
    text = console.export_text()
    assert "judgebox eval: d" in text and "problems without samples" in text and "incomplete" not in text
