"""Issue 39, item 1: no command overwrites a file it did not write for this purpose. Every output path
of ``eval``, ``rollout``, ``report`` and ``data convert`` is checked, before any work, against the
run's inputs and outputs and against what the file holds (``judgebox.outputs``); the files a run
replaces are written whole or not at all. Real CLI runs on a two-problem HumanEval file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from judgebox.cli import main
from judgebox.outputs import identify
from judgebox.reward.results import replace_atomically

PROBLEMS = [{"task_id": f"T/{i}", "prompt": f"def f{i}(x):\n", "canonical_solution": f"    return x + {i}\n",
             "test": f"def check(candidate):\n    assert candidate(1) == {1 + i}\n", "entry_point": f"f{i}"}
            for i in range(2)]


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """``run(*argv) -> (exit status, stderr)``: the ``judgebox`` command in ``tmp_path``, where
    ``data.jsonl`` (two HumanEval problems) lies."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS))

    def call(*argv: str) -> tuple[int, str]:
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code
        return code, capsys.readouterr().err

    return call


EVAL = ("eval", "data.jsonl", "--format", "humaneval", "--samples", "gold", "--no-progress")


def test_an_output_over_an_input_or_another_output_is_refused_and_nothing_changes(run, tmp_path):
    assert run(*EVAL, "--results", "r.jsonl")[0] == 0
    kept = {p: (tmp_path / p).read_bytes() for p in ("data.jsonl", "r.jsonl")}
    for argv, says in [
        ((*EVAL, "--results", "r.jsonl", "--summary", "data.jsonl"), "--summary data.jsonl: it is also DATASET data.jsonl"),
        ((*EVAL, "--results", "r.jsonl", "--html", "r.jsonl"), "--html r.jsonl: it is also --results r.jsonl"),
        ((*EVAL, "--results", "r.jsonl", "--chart", "data.jsonl", "--force"), "--chart data.jsonl: it is also DATASET"),
        (("report", "r.jsonl", "--out", "r.jsonl"), "--out r.jsonl: it is also FILE r.jsonl"),
        (("data", "convert", "data.jsonl", "--format", "humaneval", "--to", "verl-parquet", "--out", "data.jsonl"),
         "--out data.jsonl: it is also DATASET data.jsonl"),
    ]:
        code, err = run(*argv)
        assert (code, says in err) == (1, True), err
    assert {p: (tmp_path / p).read_bytes() for p in kept} == kept


def test_another_runs_file_is_refused_unless_force_and_the_runs_own_is_replaced(run, tmp_path):
    assert run(*EVAL, "--results", "a.jsonl", "--summary", "a.json", "--html", "a.html")[0] == 0
    assert json.loads((tmp_path / "a.json").read_text())["results_file"] == str(tmp_path / "a.jsonl")
    kept = {p: (tmp_path / p).read_bytes() for p in ("a.json", "a.html", "a.jsonl")}
    # the same run again: it resumes its results and replaces its own summary and page
    assert run(*EVAL, "--results", "a.jsonl", "--summary", "a.json", "--html", "a.html")[0] == 0
    assert run("report", "a.jsonl", "--out", "a.html")[0] == 0
    # another run: its summary, page or report may not replace the first run's files (the slip the
    # issue saw: --html naming the results file of another run wiped them)
    for argv, says in [
        ((*EVAL, "--results", "b.jsonl", "--summary", "a.json"), "--summary a.json: it holds a judgebox summary of "
                                                                 f"dataset 'data' of {tmp_path / 'a.jsonl'}, not this run's"),
        ((*EVAL, "--results", "b.jsonl", "--html", "a.jsonl"), "--html a.jsonl: it holds a judgebox results file"),
        ((*EVAL, "--results", "b.jsonl", "--summary", "data.json"), None),  # a new path: never refused
        (("report", "b.jsonl", "--out", "a.html"), f"it holds a judgebox report page of {tmp_path / 'a.jsonl'}"),
    ]:
        code, err = run(*argv)
        assert (code, says is None or says in err) == (0 if says is None else 1, True), err
        if says:
            assert ("which no run replaces (not even with --force)" if "results file" in says
                    else "pass --force to replace it") in err, err
    # a results file is hours of scoring: --force replaces it with nothing (a new user's finding)
    for argv in [(*EVAL, "--results", "b.jsonl", "--summary", "a.jsonl", "--force"),
                 (*EVAL, "--results", "b.jsonl", "--html", "a.jsonl", "--force"),
                 ("report", "b.jsonl", "--out", "a.jsonl", "--force")]:
        code, err = run(*argv)
        assert code == 1 and "which no run replaces (not even with --force)" in err, err
    assert {p: (tmp_path / p).read_bytes() for p in ("a.jsonl",)} == {"a.jsonl": kept["a.jsonl"]}
    assert (tmp_path / "a.json").read_bytes() != b"" and identify(tmp_path / "a.json").owner == str(tmp_path / "a.jsonl")
    assert run(*EVAL, "--results", "b.jsonl", "--summary", "a.json", "--force")[0] == 0
    assert json.loads((tmp_path / "a.json").read_text())["results_file"] == str(tmp_path / "b.jsonl")


def test_a_run_appends_only_to_its_own_kind_of_file_of_its_own_dataset(run, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"task_id": "HumanEval/0", "sample_id": 0, "verdict": "accepted"}) + "\n")
    before = other.read_bytes()
    code, err = run(*EVAL, "--results", "other.jsonl")
    assert code == 1 and "its task 'HumanEval/0' is not one of this one's" in err
    (tmp_path / "copy.jsonl").write_bytes((tmp_path / "data.jsonl").read_bytes())  # a dataset, not an input here
    code, err = run(*EVAL, "--results", "copy.jsonl", "--force")  # never appended to, --force or not
    assert code == 1 and "it holds a JSON lines file" in err and "a run only appends to its own" in err
    assert other.read_bytes() == before
    (tmp_path / "empty.jsonl").write_text("")
    assert run(*EVAL, "--results", "empty.jsonl")[0] == 0  # an empty file is never refused


def test_rollout_and_convert_check_their_outputs_before_any_work(run, tmp_path):
    before = (tmp_path / "data.jsonl").read_bytes()
    code, err = run("rollout", "data.jsonl", "--format", "humaneval", "--model", "./no-model", "--summary", "data.jsonl")
    assert code == 1 and "--summary data.jsonl: it is also DATASET data.jsonl" in err
    convert = ("data", "convert", "data.jsonl", "--format", "humaneval", "--to", "verl-parquet")
    assert run(*convert, "--out", "d.parquet")[0] == 0
    assert identify(tmp_path / "d.parquet").owner == "data"
    assert run(*convert, "--out", "d.parquet")[0] == 0  # its own parquet again
    (tmp_path / "notes.txt").write_text("keep me")
    code, err = run(*convert, "--out", "notes.txt")
    assert code == 1 and "--out notes.txt: it holds a file of 7 bytes judgebox did not write" in err
    assert (tmp_path / "notes.txt").read_text() == "keep me" and (tmp_path / "data.jsonl").read_bytes() == before


def test_a_replaced_file_is_written_whole_or_not_at_all(tmp_path):
    target = tmp_path / "summary.json"
    target.write_text("old")
    target.chmod(0o640)

    def fails(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        replace_atomically(target, fails)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]
    replace_atomically(target, lambda tmp: tmp.write_text("new"))
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0o027)  # a new file: 0666 less the umask, as open() makes one
    try:
        replace_atomically(tmp_path / "new.json", lambda tmp: tmp.write_text("{}"))
    finally:
        os.umask(umask)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640


def test_a_page_or_summary_written_before_files_named_their_run_is_replaced(run, tmp_path):
    """Pages and summaries of earlier releases name no run: they are the same kind of derived file (made
    again from the results), so the README's ``judgebox report ... --out`` still replaces one."""
    assert run(*EVAL, "--results", "a.jsonl", "--summary", "a.json", "--html", "a.html")[0] == 0
    page = (tmp_path / "a.html").read_text()
    (tmp_path / "a.html").write_text(page.replace('<meta name="judgebox-source"', '<meta name="x"'))
    summary = json.loads((tmp_path / "a.json").read_text())
    (tmp_path / "a.json").write_text(json.dumps({k: v for k, v in summary.items() if k != "results_file"}))
    code, err = run(*EVAL, "--results", "b.jsonl", "--summary", "a.json", "--html", "a.html")
    assert code == 0, err
    assert identify(tmp_path / "a.html").owner == identify(tmp_path / "a.json").owner == str(tmp_path / "b.jsonl")
