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
from judgebox.report.build import build_page, compare, overview
from judgebox.report.records import read_records, verl_task_id
from judgebox.report.samples import DIFF_INPUT_CHARS, DIFF_LINES, diff
from judgebox.report.summary import read_summary

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
    (json.dumps(EVAL) + "\nnot json\n" + json.dumps(EVAL) + "\n", ":2:", "not an eval record"),
    ("", "", "no complete record"),
    ('{"task_id": "T', ":1:", "the only line is torn"),
    (json.dumps({"prompt": "x", "completion": "y"}) + "\n", ":1:", "not a judgebox eval result, rollout trajectory or verl"),
    (json.dumps(EVAL) + "\n" + json.dumps(ROLLOUT) + "\n", ":2:", "a rollout record in a file whose first record is an eval record"),
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
    assert f"judgebox report: {bad}:2: not an eval record" in capsys.readouterr().err
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
    assert "--out r.jsonl: it is also FILE" in err.replace(str(tmp_path) + "/", "")
    assert "--html" in err and "it is also --results" in err
    assert results.read_bytes() == before


def test_non_finite_numbers_and_null_logprobs_still_make_a_page(tmp_path):
    row = {**ROLLOUT, "reward_score": float("nan"), "elapsed_s": float("inf"), "response_logprobs": [None, float("-inf")]}
    page = build_page(read_records(lines(tmp_path / "r.jsonl", json.dumps(row))))
    block = re.search(r'id="c0">([^<]+)<', page).group(1)
    sample = json.loads(gzip.decompress(base64.b64decode(block)))["samples"][0]  # strict JSON: the browser's parser
    assert (sample["reward"], sample["elapsed_s"], sample["logprobs"]) == ("NaN", "Infinity", [None, None])


def page_data(page: str, block: str) -> dict:
    """The decoded JSON of one data block of a built page (``d-head``, ``c0`` ...)."""
    packed = re.search(rf'id="{block}">([^<]+)<', page).group(1)
    return json.loads(gzip.decompress(base64.b64decode(packed)))


@pytest.mark.parametrize("change, says", [
    ({"response_mask": [1]}, "response_mask has 1 values, response_ids 2 tokens: one mask value per response token"),
    ({"response_mask": [1, 0, 1]}, "response_mask has 3 values, response_ids 2 tokens"),
    ({"response_mask": [1, 2]}, "response_mask[1] is 2: mask values are 0 (observation token) or 1 (policy token)"),
    ({"response_mask": [True, 1]}, "response_mask[0] is true: mask values are 0"),
    ({"response_ids": [2, -5]}, "response_ids[1] is -5: a token id is an integer from 0 to 4294967295"),
    ({"response_ids": [2, 3.5]}, "response_ids[1] is 3.5: a token id is an integer"),
    ({"response_ids": [2, 2**40]}, f"response_ids[1] is {2**40}: a token id is an integer"),
    ({"response_ids": "abc"}, 'response_ids is "abc", not a list of token ids'),
    ({"prompt_ids": [-1]}, "prompt_ids[0] is -1: a token id is an integer"),
    ({"response_logprobs": [-0.1]}, "response_logprobs is 1 values, response_ids 2 tokens"),
    ({"response_logprobs": [-0.1, "x"]}, 'response_logprobs[1] is "x", not a number or null'),
    ({"messages": "hi"}, 'messages is "hi", not a list of objects'),
    ({"extra_fields": [1]}, "extra_fields is [1], not an object"),
    ({"tests": [1]}, "tests[0] is 1, not an object"),
    ({"verdict": None}, "verdict is null: a judged record's verdict is a non-empty string"),
])
def test_a_rollout_field_out_of_range_is_an_error_naming_file_line_and_field(tmp_path, change, says):
    path = lines(tmp_path / "r.jsonl", ROLLOUT, {**ROLLOUT, "sample_index": 1, **change}, {**ROLLOUT, "sample_index": 2})
    with pytest.raises(ValueError) as err:
        read_records(path)
    assert str(err.value).startswith(f"{path}:2: not a rollout record (ValueError: {says}")


def test_a_record_is_blamed_on_its_own_line_and_a_bad_complete_last_line_is_not_torn(tmp_path):
    first = {k: v for k, v in ROLLOUT.items() if k != "response_mask"}  # line 1 lacks response_mask
    path = lines(tmp_path / "r.jsonl", first, {**ROLLOUT, "sample_index": 1})
    with pytest.raises(ValueError, match=rf"^{path}:1: not a rollout record \(ValueError: response_mask missing"):
        read_records(path)
    # a complete JSON last line without its newline is checked, not dropped as torn
    path = lines(tmp_path / "r.jsonl", ROLLOUT, tail=json.dumps({**ROLLOUT, "sample_index": 1, "response_mask": [1, 2]}))
    with pytest.raises(ValueError, match=rf"^{path}:2: not a rollout record \(ValueError: response_mask\[1\] is 2"):
        read_records(path)
    verl = lines(tmp_path / "v.jsonl", VERL, {**VERL, "score": "high"})
    with pytest.raises(ValueError, match=rf'^{verl}:2: not a verl record \(ValueError: score is "high", not a number'):
        read_records(verl)


def test_the_cli_names_file_line_and_field_for_a_bad_token_id(tmp_path, capsys):
    path = lines(tmp_path / "r.jsonl", {**ROLLOUT, "response_ids": [2, -1]})
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(path), "--no-tokens", "--out", str(tmp_path / "r.html")])
    assert exit_.value.code == 1
    assert f"judgebox report: {path}:1: not a rollout record (ValueError: response_ids[1] is -1" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_a_lone_surrogate_in_record_text_shows_as_the_replacement_character(tmp_path):
    # "\ud800" is valid JSON and not valid UTF-8: the page shows U+FFFD in its place
    eval_path = lines(tmp_path / "e.jsonl", '{"task_id": "T/\\ud800", "sample_id": 0, "verdict": "accepted", '
                                            '"program": "print(1) # \\udfff"}')
    assert main(["report", str(eval_path), "--out", str(tmp_path / "e.html")]) == 0
    page = (tmp_path / "e.html").read_text(encoding="utf-8")
    data = page_data(page, "c0")
    assert data["task_id"] == "T/\ufffd" and data["samples"][0]["program"] == "print(1) # \ufffd"
    verl_path = lines(tmp_path / "v.jsonl", json.dumps({**VERL, "data_source": "apps"})[:-1] + ', "input": "x \\ud83d"}')
    records = read_records(verl_path)
    assert main(["report", str(verl_path), "--title", "run \ud800", "--out", str(tmp_path / "v.html")]) == 0
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    assert "<title>run \ufffd</title>" in page and page_data(page, "c0")["prompt"] == "x \ufffd"
    assert page_data(page, "d-head")["problems"][0]["task_id"] == verl_task_id(records.rows[0])


def test_a_huge_expected_vs_actual_diff_compares_a_bounded_head_and_says_so(tmp_path):
    expected = "".join(f"{i}\n" for i in range(30_000))
    actual = "".join(f"{i if i % 1000 else 'x'}\n" for i in range(30_000))  # lines 0, 1000 ... differ
    test = {"index": 0, "verdict": "wrong_answer", "expected": expected, "stdout": actual}
    row = {**EVAL, "verdict": "wrong_answer", "tests": [test, {**test, "index": 1, "expected": "1\n2\n", "stdout": "1\n3\n"}]}
    page = build_page(read_records(lines(tmp_path / "e.jsonl", row)))
    big, small = page_data(page, "c0")["samples"][0]["tests"]
    assert big["diff_note"] == ("diff of the first 2,000 lines of each side, at most 200,000 characters (expected: "
                                f"30,000 lines, {len(expected):,} characters; actual: 30,000 lines, {len(actual):,} "
                                "characters); later differences are not shown")
    assert big["diff"][:3] == [["-", "0"], ["+", "x"], [" ", "1"]]
    assert len(big["diff"]) == DIFF_LINES + 1 and big["diff"][-1] == ["…", f"(diff cut at {DIFF_LINES} lines)"]
    assert "diff_note" not in small and small["diff"] == [[" ", "1"], ["-", "2"], ["+", "3"]]
    one_line = diff("a" * 300_000, "b" * 300_000)
    assert [len(line) for _, line in one_line[0]] == [DIFF_INPUT_CHARS, DIFF_INPUT_CHARS] and one_line[1]


def test_verl_lines_are_labelled_by_score_and_the_mean_score_leaves_unscorable_lines_out(tmp_path):
    rows = [{**VERL, "score": 1.0, "verdict": "accepted"}, {**VERL, "score": 0.0, "verdict": "infra_error"},
            {**VERL, "score": 0.5}, {**VERL, "score": None}, {**VERL, "score": 0.0, "verdict": "wrong_answer"}]
    records = read_records(lines(tmp_path / "v.jsonl", *rows))
    view = overview(records, None)
    assert view["verdicts"] == {"accepted": 1, "infra_error": 1, "score 0.5": 1, "no score": 1, "wrong_answer": 1}
    assert view["unscorable"] == {"infra_error": 1, "no score": 1}
    assert (view["mean_score"], view["mean_score_of"]) == (0.5, 3)  # (1 + 0.5 + 0) / 3: the infra error's 0 left out
    problem = page_data(build_page(records), "d-head")["problems"][0]
    assert (problem["n"], problem["c"], problem["reward"]) == (3, 1, 0.5)
    sample = page_data(build_page(records), "c0")["samples"][2]
    assert (sample["label"], sample["step"], sample["gts"], sample["extra"]) == ("score 0.5", 3, None, {})
    extras = page_data(build_page(records), "c0")["samples"][1]
    assert extras["extra"] == {"verdict": "infra_error"} and extras["label"] == "infra_error"


def test_without_a_summary_the_page_says_what_it_cannot_know(tmp_path):
    records = read_records(lines(tmp_path / "e.jsonl", EVAL, {**EVAL, "task_id": "T/1", "verdict": "wrong_answer"}))
    view = overview(records, None)
    assert view["source"] == "computed from the records (no --summary given)"
    assert view["summary"]["n_problems_unattempted"] == view["summary"]["n_samples_pending"] == "unknown without --summary"
    assert view["summary"]["pass_at_k"] == {"pass@1": 0.5} and "pass_at_k_attempted" not in view["summary"]


def test_compare_warns_of_a_shared_problem_judged_against_other_tests(tmp_path, caplog):
    """The fourth walk: two runs of one file name, one with a test changed, share every task id and
    name no dataset, so --compare said nothing; their tests_sha256 tell them apart."""
    def row(task: str, tests: str, verdict: str) -> dict:
        return {"task_id": task, "sample_id": 0, "verdict": verdict, "elapsed_s": 0.5, "tests_sha256": tests}

    here = lines(tmp_path / "a.jsonl", row("T/1", "aaaa", "accepted"), row("T/2", "bbbb", "accepted"))
    same = lines(tmp_path / "b.jsonl", row("T/1", "aaaa", "wrong_answer"), row("T/2", "bbbb", "accepted"))
    other = lines(tmp_path / "c.jsonl", row("T/1", "aaaa", "accepted"), row("T/2", "cccc", "wrong_answer"))
    with caplog.at_level(logging.WARNING, logger="judgebox"):
        assert main(["report", str(here), "--compare", str(same), "--out", str(tmp_path / "s.html")]) == 0
        assert "--compare" not in caplog.text  # the same tests: a comparison of two runs
        assert main(["report", str(here), "--compare", str(other), "--out", str(tmp_path / "o.html")]) == 0
    assert caplog.messages[-1] == (
        f"--compare {other} judged 1 of the problems both files hold against other tests than {here} (e.g. T/2; "
        "another dataset, or its tests changed between the runs)")


def test_a_results_file_given_as_the_summary_is_named_as_such(tmp_path, capsys):
    """The fourth walk: ``--summary x.results.jsonl`` said only ``not JSON (Extra data)``."""
    row = {"task_id": "T/1", "sample_id": 0, "verdict": "accepted", "elapsed_s": 0.5}
    results = lines(tmp_path / "a.results.jsonl", row, row | {"sample_id": 1})
    with pytest.raises(SystemExit):
        main(["report", str(results), "--summary", str(results), "--out", str(tmp_path / "p.html")])
    assert capsys.readouterr().err == (f"judgebox report: {results}:2: a results or trajectories file (one JSON object a "
                                       "line), not a summary; give the summary JSON that `judgebox eval/rollout "
                                       "--summary` wrote\n")
