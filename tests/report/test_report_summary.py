"""``judgebox report --summary``: a summary is the one written with its records or an error naming the
summary file and the field that differs (its dataset's task ids, per-problem n and c, pass@k and
which k it reports, recomputed from the records); and where the token view's tokenizer comes from:
local files only, an error blaming whoever named it (``--tokenizer`` or the summary's model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebox.cli import main
from judgebox.report import write_report
from judgebox.report.records import read_records
from judgebox.report.summary import read_summary
from judgebox.reward.report import summarize
from tests.report.test_report_files import ROLLOUT, lines

OK, BAD, INFRA = "accepted", "wrong_answer", "infra_error"
RUN = {"A": [OK, BAD], "B": [BAD, OK], "C": [OK, OK], "D": [BAD, BAD, INFRA]}


def eval_run(tmp_path: Path, table: dict = RUN, unattempted: int = 2, ks=(1, 2)) -> tuple[Path, dict]:
    """A results file and the summary ``judgebox eval`` writes for it (``summarize``, the same code),
    over a dataset with ``unattempted`` more problems that have no sample."""
    rows = [{"task_id": t, "sample_id": i, "verdict": v} for t, vs in table.items() for i, v in enumerate(vs)]
    path = lines(tmp_path / "r.jsonl", *rows)
    dataset = [*table, *(f"Z/{i}" for i in range(unattempted))]
    return path, summarize("toy", dataset, rows, ks).model_dump(mode="json")


def check(tmp_path: Path, results: Path, summary: dict) -> dict:
    (tmp_path / "s.json").write_text(json.dumps(summary))
    return read_summary(tmp_path / "s.json", read_records(results))


def test_the_summary_written_with_the_file_is_accepted(tmp_path):
    results, summary = eval_run(tmp_path)
    # 4 of 6 problems attempted: pass@1 0.5 and pass@2 0.75 over them, 1/3 and 1/2 over the benchmark
    assert summary["pass_at_k"] == {"pass@1": pytest.approx(1 / 3), "pass@2": pytest.approx(0.5)}
    assert summary["pass_at_k_attempted"] == {"pass@1": 0.5, "pass@2": 0.75} and summary["n_problems_unattempted"] == 2
    assert check(tmp_path, results, summary) == summary
    nudged = {**summary, "pass_at_k": {k: v + 1e-12 for k, v in summary["pass_at_k"].items()}}
    assert check(tmp_path, results, nudged)["pass_at_k"] == nudged["pass_at_k"]  # float tolerance


@pytest.mark.parametrize("change, field, says, gives", [
    # a summary of another dataset: the same counts, other task ids
    (lambda s: {**s, "problems": [{**p, "task_id": "X/" + p["task_id"]} for p in s["problems"]]},
     "problems (task ids)", "4 problems, X/A, X/B, X/C and 1 more not in the file", "4 problems, A, B, C and 1 more not in the summary"),
    # the same totals over other problems: A all right, B all wrong (pass@1 alone cannot tell)
    (lambda s: {**s, "problems": [{**p, "c": {"A": 2, "B": 0}.get(p["task_id"], p["c"])} for p in s["problems"]]},
     "problems['A'] (n scored, c accepted)", "n=2, c=2", "n=2, c=1"),
    (lambda s: {**s, "pass_at_k": {**s["pass_at_k"], "pass@1": 0.9}}, "pass_at_k['pass@1']", "0.9", "0.3333333333333333"),
    (lambda s: {**s, "pass_at_k_attempted": {**s["pass_at_k_attempted"], "pass@2": 0.7}},
     "pass_at_k_attempted['pass@2']", "0.7", "0.75"),
    # a run with other k: pass@3 is not computable from 2 samples a problem
    (lambda s: {**s, "pass_at_k": {**s["pass_at_k"], "pass@3": 0.6}}, "pass_at_k['pass@3']", "0.6",
     "nothing (k=3 > n for 4 of 4 problems (min n = 2))"),
    (lambda s: {**s, "pass_at_k_omitted": {"pass@1": "no samples"}}, "pass_at_k_omitted", "['pass@1']", "[]"),
    (lambda s: {**s, "n_problems": 10}, "n_problems - n_problems_unattempted (the problems with a sample)",
     "10 - 2", "4 problems"),
    (lambda s: {**s, "n_scored": 9}, "n_scored", "9", "8"),
    (lambda s: {**s, "pass_at_k": {"best": 1.0}}, "pass_at_k['best']", "a key of no k", "pass@K keys"),
])
def test_a_summary_that_the_records_contradict_is_an_error_naming_the_field(tmp_path, change, field, says, gives):
    results, summary = eval_run(tmp_path)
    with pytest.raises(ValueError) as err:
        check(tmp_path, results, change(summary))
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 's.json'} does not match {results}: {field}: the summary says {says}")
    assert f"the file gives {gives}" in message
    assert message.endswith("give the summary written with this file, or leave --summary out (the report then "
                            "computes one)")


def test_a_summary_of_another_dataset_name_is_refused_when_the_records_carry_theirs(tmp_path):
    rows = [{"task_id": "A", "sample_id": 0, "verdict": OK, "dataset": "mbpp"}]
    results = lines(tmp_path / "r.jsonl", *rows)
    summary = summarize("humaneval", ["A"], rows, [1]).model_dump(mode="json")
    with pytest.raises(ValueError, match=r"dataset: the summary says 'humaneval', the file gives 'mbpp'"):
        check(tmp_path, results, summary)
    assert check(tmp_path, results, {**summary, "dataset": "mbpp"})["dataset"] == "mbpp"


def test_a_rollout_summary_must_have_the_records_mean_reward(tmp_path):
    rows = [{**ROLLOUT, "sample_index": i, "sample_id": i, "reward_score": r} for i, r in enumerate([1.0, 0.0])]
    results = lines(tmp_path / "t.jsonl", *rows)
    summary = {**summarize("toy", ["T/0"], rows, [1]).model_dump(mode="json"), "mean_reward": 0.5,
               "stop_reasons": {"completed": 2}}
    assert check(tmp_path, results, summary)["mean_reward"] == 0.5
    with pytest.raises(ValueError, match=r"mean_reward: the summary says 0.75, the file gives 0.5"):
        check(tmp_path, results, {**summary, "mean_reward": 0.75})
    with pytest.raises(ValueError, match=r"stop_reasons: the summary says completed 1, length 1, the file gives completed 2"):
        check(tmp_path, results, {**summary, "stop_reasons": {"completed": 1, "length": 1}})


def rollout_with_summary(tmp_path: Path, model: str) -> tuple[Path, Path]:
    rows = [ROLLOUT]
    results = lines(tmp_path / "t.jsonl", *rows)
    summary = {**summarize("toy", ["T/0"], rows, [1]).model_dump(mode="json"), "model": model}
    (tmp_path / "s.json").write_text(json.dumps(summary))
    return results, tmp_path / "s.json"


def test_a_model_the_summary_names_that_cannot_load_blames_the_summary(tmp_path):
    pytest.importorskip("transformers")
    results, summary = rollout_with_summary(tmp_path, "/no/such/model")
    with pytest.raises(ValueError) as err:
        write_report(results, tmp_path / "t.html", summary_path=summary)
    assert str(err.value) == (f"--summary {summary} names the model /no/such/model: /no/such/model: no such directory; "
                              "the token view needs a tokenizer: give a model directory with --tokenizer PATH, or leave "
                              "the token view out with --no-tokens")
    assert main(["report", str(results), "--summary", str(summary), "--no-tokens", "--out", str(tmp_path / "t.html")]) == 0
    assert 'id="d-vocab"' not in (tmp_path / "t.html").read_text()


@pytest.mark.parametrize("name, says", [
    ("./missing-model", "--tokenizer ./missing-model: missing-model: no such directory; the token view needs a tokenizer"),
    ("~/no-such-judgebox-model", "no such directory"),
    ("judgebox-tests/no-such-model", "--tokenizer judgebox-tests/no-such-model: the tokenizer judgebox-tests/no-such-model "
                                     "is not in the local Hugging Face cache (judgebox report reads local files only and "
                                     "downloads nothing); the token view needs a tokenizer: give a model directory with "
                                     "--tokenizer PATH, or leave the token view out with --no-tokens"),
])
def test_a_tokenizer_that_cannot_load_says_why_without_going_to_the_network(tmp_path, monkeypatch, capsys, name, says):
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    results, summary = rollout_with_summary(tmp_path, "/no/such/model")
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(results), "--summary", str(summary), "--tokenizer", name, "--out", str(tmp_path / "t.html")])
    assert exit_.value.code == 1
    assert says in capsys.readouterr().err


def test_a_directory_or_file_that_holds_no_tokenizer_says_so(tmp_path):
    """A new user's finding: a directory with no tokenizer files (``--tokenizer /tmp``) gave the first
    line of transformers' message, cut off: ``(ValueError: Couldn't instantiate the backend tokenizer
    from one of: )``."""
    pytest.importorskip("transformers")
    results, _ = rollout_with_summary(tmp_path, "unused")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a tokenizer")
    with pytest.raises(ValueError) as err:
        write_report(results, tmp_path / "t.html", tokenizer=str(tmp_path / "empty"))
    assert str(err.value) == (f"--tokenizer {tmp_path / 'empty'}: {tmp_path / 'empty'} has no tokenizer files "
                              "(tokenizer.json or tokenizer_config.json); the token view needs a tokenizer: give a model "
                              "directory with --tokenizer PATH, or leave the token view out with --no-tokens")
    with pytest.raises(ValueError, match=rf"^--tokenizer {results}: {results}: not a directory \(a file\); "):
        write_report(results, tmp_path / "t.html", tokenizer=str(results))


def test_a_tokenizer_that_fails_to_load_keeps_the_whole_reason_on_one_line(tmp_path):
    """transformers' reason for a tokenizer_config.json it cannot build a tokenizer from spans several
    lines; the error keeps all of them, joined (it kept the first: "... from one of: )")."""
    transformers = pytest.importorskip("transformers")
    results, _ = rollout_with_summary(tmp_path, "unused")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "tokenizer_config.json").write_text("{}")
    with pytest.raises(Exception) as raw:  # what transformers itself says of this directory
        transformers.AutoTokenizer.from_pretrained(str(tmp_path / "model"), local_files_only=True)
    reason = [line.strip() for line in str(raw.value).splitlines() if line.strip()]
    with pytest.raises(ValueError) as err:
        write_report(results, tmp_path / "t.html", tokenizer=str(tmp_path / "model"))
    assert str(err.value) == (f"--tokenizer {tmp_path / 'model'}: cannot load a tokenizer from the directory "
                              f"{tmp_path / 'model'} ({type(raw.value).__name__}: {' '.join(reason)}); the token view "
                              "needs a tokenizer: give a model directory with --tokenizer PATH, or leave the token view "
                              "out with --no-tokens")
    assert "\n" not in str(err.value)
