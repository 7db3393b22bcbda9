"""What ``judgebox report`` reads, by the one rule for results files: a torn last line is skipped with a
warning naming file:line (and the file is left as it is: a report never writes its input); a bad line
elsewhere, a file with no complete record, a file or a line of another format, or a summary that does
not match is an error naming the file and line. Also: which format a file is, and the comparison of
two runs (regressions first)."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import re
from pathlib import Path

import pytest

from judgebox.cli import main
from judgebox.report.build import compare
from judgebox.report.records import read_records, read_summary

EVAL = {"task_id": "T/0", "sample_id": 0, "verdict": "accepted", "passed": True}
ROLLOUT = {"task_id": "T/0", "sample_index": 0, "sample_id": 0, "verdict": "accepted", "prompt_ids": [1],
           "response_ids": [2, 3], "response_mask": [1, 1], "extra_fields": {"stop_reason": "completed"}}
VERL = {"input": "user: add", "output": "def add(a, b): ...", "gts": None, "score": 1.0, "step": 3}


def lines(path: Path, *rows, tail: str = "") -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows) + tail)
    return path


def test_each_format_is_told_apart_by_its_first_record(tmp_path):
    assert read_records(lines(tmp_path / "e.jsonl", EVAL)).kind == "eval"
    assert read_records(lines(tmp_path / "r.jsonl", ROLLOUT)).kind == "rollout"
    verl = read_records(lines(tmp_path / "v.jsonl", VERL, {**VERL, "score": 0.0}))
    assert verl.kind == "verl" and len(verl.rows) == 2  # every verl line is its own sample


def test_a_torn_last_line_is_skipped_with_file_and_line_and_the_file_is_left_unchanged(tmp_path, caplog):
    path = lines(tmp_path / "e.jsonl", EVAL, {**EVAL, "sample_id": 1}, tail='{"task_id": "T/0", "sam')
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING):
        found = read_records(path)
    assert [r["sample_id"] for r in found.rows] == [0, 1] and found.torn == 3
    assert f"{path}:3: a torn last line (cut by a kill) was dropped; the report shows the records before it" \
        in caplog.text
    assert path.read_bytes() == before


def test_newest_line_of_a_sample_wins_and_duplicates_are_counted(tmp_path):
    found = read_records(lines(tmp_path / "e.jsonl", {**EVAL, "verdict": "infra_error"}, EVAL))
    assert [r["verdict"] for r in found.rows] == ["accepted"] and found.duplicates == 1


@pytest.mark.parametrize("content, where, says", [
    (json.dumps(EVAL) + "\nnot json\n" + json.dumps(EVAL) + "\n", ":2:", "not a eval record"),
    ("", "", "no complete record"),
    ('{"task_id": "T', ":1:", "the only line is torn"),
    (json.dumps({"prompt": "x", "completion": "y"}) + "\n", ":1:", "not a judgebox eval result, rollout trajectory or verl"),
    (json.dumps(EVAL) + "\n" + json.dumps(ROLLOUT) + "\n", ":2:", "a rollout record in a file whose first record is a eval record"),
    (json.dumps(ROLLOUT) + "\n" + json.dumps({"task_id": "T/0", "sample_index": 1}) + "\n", ":2:", "response_ids, response_mask missing"),
    ("[1, 2]\n", ":1:", "not a judgebox eval result"),
])
def test_a_bad_file_is_an_error_naming_file_and_line(tmp_path, content, where, says):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ValueError) as err:
        read_records(path)
    assert f"{path}{where}" in str(err.value) and says in str(err.value)


def test_a_summary_must_be_the_one_written_with_the_file(tmp_path):
    records = read_records(lines(tmp_path / "e.jsonl", EVAL, {**EVAL, "sample_id": 1, "verdict": "wrong_answer"}))
    good = {"dataset": "d", "n_samples": 2, "verdicts": {"accepted": 1, "wrong_answer": 1}, "pass_at_k": {}}
    (tmp_path / "s.json").write_text(json.dumps(good))
    assert read_summary(tmp_path / "s.json", records)["dataset"] == "d"
    (tmp_path / "s.json").write_text(json.dumps({**good, "n_samples": 3, "verdicts": {"accepted": 3}}))
    with pytest.raises(ValueError) as err:
        read_summary(tmp_path / "s.json", records)
    assert str(err.value).startswith(f"{tmp_path / 's.json'} does not match {tmp_path / 'e.jsonl'}: the summary "
                                     "counts 3 samples (accepted 3), the file holds 2 (accepted 1, wrong_answer 1)")
    (tmp_path / "s.json").write_text('{\n "dataset": }')
    with pytest.raises(ValueError, match=rf"{tmp_path / 's.json'}:2: not JSON"):
        read_summary(tmp_path / "s.json", records)
    (tmp_path / "s.json").write_text(json.dumps({"pass@1": 0.5}))
    with pytest.raises(ValueError, match="not a judgebox eval or rollout summary"):
        read_summary(tmp_path / "s.json", records)
    with pytest.raises(ValueError, match="a verl rollout dump has no judgebox summary"):
        read_summary(tmp_path / "s.json", read_records(lines(tmp_path / "v.jsonl", VERL)))


def test_the_cli_names_the_bad_file_and_exits_1(tmp_path, capsys):
    bad = lines(tmp_path / "r.jsonl", EVAL, "{oops", EVAL)
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(bad), "--out", str(tmp_path / "r.html")])
    assert exit_.value.code == 1
    assert f"judgebox report: {bad}:2: not a eval record" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(SystemExit):
        main(["report", str(tmp_path / "missing.jsonl")])
    assert "FILE" in capsys.readouterr().err


def test_compare_puts_regressions_first_largest_drop_first(tmp_path):
    def run(name, table):
        rows = [{"task_id": t, "sample_id": i, "verdict": v} for t, vs in table.items() for i, v in enumerate(vs)]
        return read_records(lines(tmp_path / name, *rows))

    ok, bad, infra = "accepted", "wrong_answer", "infra_error"
    here = run("a.jsonl", {"A": [ok, bad], "B": [bad, bad], "C": [ok, ok], "D": [ok, infra], "E": [ok]})
    base = run("b.jsonl", {"A": [ok, ok], "B": [ok, ok], "C": [bad, bad], "D": [ok, bad], "F": [ok]})
    rows = compare(here, base)
    assert [(r["task_id"], r["change"], r["delta"]) for r in rows] == [
        ("B", "regression", -1.0), ("A", "regression", -0.5), ("C", "improvement", 1.0),
        ("D", "improvement", 0.5), ("E", "only_here", None), ("F", "only_other", None)]


def test_the_report_never_overwrites_a_file_it_reads(tmp_path, capsys):
    results = lines(tmp_path / "r.jsonl", EVAL)
    before = results.read_bytes()
    for argv in (["report", str(results), "--out", str(results)],
                 ["eval", "humaneval", "--samples", "gold", "--results", str(results), "--html", str(results)]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "the report never overwrites what it reads" in err and "--html" in err
    assert results.read_bytes() == before


def test_non_finite_numbers_and_null_logprobs_still_make_a_page(tmp_path):
    from judgebox.report.build import build_page

    row = {**ROLLOUT, "reward_score": float("nan"), "elapsed_s": float("inf"), "response_logprobs": [None, float("-inf")]}
    page = build_page(read_records(lines(tmp_path / "r.jsonl", json.dumps(row))))
    block = re.search(r'id="c0">([^<]+)<', page).group(1)
    sample = json.loads(gzip.decompress(base64.b64decode(block)))["samples"][0]  # strict JSON: the browser's parser
    assert (sample["reward"], sample["elapsed_s"], sample["logprobs"]) == ("NaN", "Infinity", [None, None])
