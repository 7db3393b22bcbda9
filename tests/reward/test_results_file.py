"""BUG-211: one rule for reading a results or trajectory jsonl (eval, rollout, resume, summaries):
a torn last line is dropped with a warning naming file:line, any other bad line is an error naming
it, and a sample written twice counts once (its newest line) and is compacted away on the next run,
so a resume neither double-counts nor loses a sample."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from judgebox.reward.results import JsonlAppender, compact, read_results
from tests.reward.test_eval import ONE_ATTEMPT, broken_sandbox, judgebox, stable, write_samples


def row(task: str, i: int, verdict: str = "accepted") -> dict:
    return {"task_id": task, "sample_id": i, "verdict": verdict}


def lines(*rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_a_torn_last_line_is_dropped_with_a_warning_naming_file_and_line(tmp_path, caplog):
    path = tmp_path / "r.jsonl"
    path.write_text(lines(row("1", 0), row("1", 1)) + '{"task_id": "1", "sample_ind')
    with caplog.at_level(logging.WARNING, logger="judgebox.reward"):
        found = read_results(path)
    assert (list(found.records), found.torn, found.duplicates) == ([("1", 0), ("1", 1)], 3, 0)
    assert f"{path}:3: a torn last line (cut by a kill) was dropped" in caplog.text
    assert path.read_text() == lines(row("1", 0), row("1", 1))  # appends start on a fresh line


def test_a_bad_line_elsewhere_or_no_complete_record_is_an_error_naming_it(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(lines(row("1", 0)) + "garbage\n" + lines(row("1", 1)))
    with pytest.raises(ValueError, match=rf"^{path}:2: not a result record \(JSONDecodeError"):
        read_results(path)
    path.write_text(lines(row("1", 0)) + '{"no": "key"}\n')
    with pytest.raises(ValueError, match=rf"^{path}:2: not a result record \(KeyError"):
        read_results(path)
    path.write_text('{"task_id": "1", "sam')
    with pytest.raises(ValueError, match=rf"^{path}:1: the only line is torn"):
        read_results(path)


def test_a_sample_written_twice_counts_once_its_newest_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(lines(row("1", 0, "infra_error"), row("2", 0), row("1", 0, "accepted")) + json.dumps(row("3", 0)))
    found = read_results(path)
    assert found.duplicates == 1 and found.records[("1", 0)]["verdict"] == "accepted"
    assert path.read_text().endswith("\n")  # a complete last record whose newline was cut: kept, repaired
    compact(path, found.records)
    assert path.read_text() == lines(row("1", 0, "accepted"), row("2", 0), row("3", 0))


@pytest.mark.slow
def test_resume_after_infra_errors_and_a_torn_line_keeps_one_record_per_sample(tmp_path, monkeypatch):
    """3 APPS problems x 2 samples: a first run where every run fails (infrastructure), a torn line
    appended, then the same command: exactly 6 records with unique keys, n = 2 per problem and the
    uninterrupted run's pass@k; then a copied line is counted once (duplicates_dropped: 1)."""
    from judgebox.reward.loaders import load_dataset
    from tests.fixtures import DATA as OWN_ROWS

    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))  # as the commands get it (embedded_env)
    problems = load_dataset("apps")[0][:3]
    samples = write_samples(tmp_path / "s.jsonl", [(p.task_id, c) for p in problems for c in (p.gold, "print(0)")])
    args = ["eval", "apps", "--samples", str(samples), "--k", "1,2", "--no-progress", "--allow-partial"]
    judgebox(*args, "--results", "full.jsonl", "--summary", "full.json", cwd=tmp_path)
    with broken_sandbox() as url:
        down = judgebox(*args, "--results", "r.jsonl", "--sandbox-url", url, "--retries", "0", cwd=tmp_path,
                        check=False, env=ONE_ATTEMPT)
    assert down.returncode == 2, down.stderr[-2000:]
    with open(tmp_path / "r.jsonl", "a") as f:
        f.write('{"task_id": "' + problems[0].task_id + '", "sample_ind')
    rerun = judgebox(*args, "--results", "r.jsonl", "--summary", "r.json", cwd=tmp_path)
    assert "r.jsonl:7: a torn last line (cut by a kill) was dropped" in rerun.stderr
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").open()]
    keys = [(r["task_id"], r["sample_id"]) for r in records]
    assert len(keys) == len(set(keys)) == 6
    full, resumed = (json.loads((tmp_path / f).read_text()) for f in ("full.json", "r.json"))
    assert {p["task_id"]: p["n"] for p in resumed["problems"]} == {p.task_id: 2 for p in problems}
    assert resumed["pass_at_k"] == full["pass_at_k"] and resumed["duplicates_dropped"] == 0

    with open(tmp_path / "r.jsonl", "a") as f:  # a copied complete line
        f.write(json.dumps(records[0]) + "\n")
    again = judgebox(*args, "--results", "r.jsonl", "--summary", "r2.json", cwd=tmp_path)
    assert again.returncode == 0
    summary = json.loads((tmp_path / "r2.json").read_text())
    assert summary["duplicates_dropped"] == 1 and summary["pass_at_k"] == full["pass_at_k"]
    assert stable(summary)["n_samples"] == 6 and len((tmp_path / "r.jsonl").read_text().splitlines()) == 6


def test_every_appended_record_survives_a_sigkill_before_close(tmp_path):
    """A record is flushed when written (the fsync comes at most once a second): a process killed
    right after its writes, with no close, loses none of them."""
    path = tmp_path / "r.jsonl"
    code = ("import os, signal\nfrom judgebox.reward.results import JsonlAppender\n"
            f"out = JsonlAppender({str(path)!r}, sync_every_s=3600)\n"
            "for i in range(3):\n    out.write({'task_id': 't', 'sample_id': i, 'passed': True})\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert proc.returncode == -9
    found = read_results(path)
    assert sorted(found.records) == [("t", 0), ("t", 1), ("t", 2)]
    with JsonlAppender(path) as out:  # appends after them
        out.write({"task_id": "t", "sample_id": 3, "passed": False})
    assert [json.loads(line)["sample_id"] for line in path.read_text().splitlines()] == [0, 1, 2, 3]
