"""The report page's own behaviour, opened in headless Chromium on small hand-made files: record-given
names are only names (a verdict called ``__proto__``), an unknown problem in the URL says so, anchors
land below the sticky header, long task ids wrap, no empty row is drawn, the comparison shows signed
percentage points linked to the problem (ties in task order; the file itself refused, a run of another
dataset warned of), a page without the run's summary says what it cannot know, and a verl line shows
its ground truth, step and reward extras, labelled by score when it has no verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judgebox.cli import main
from tests.report.browser import go, opened
from tests.report.test_report_files import VERL, lines

pytestmark = [pytest.mark.slow, pytest.mark.browser]

LONG = "HumanEval/" + "x" * 200
EMPTY_ROWS = "() => [...document.querySelectorAll('main tr')].filter(r => !r.closest('[hidden]') && !r.textContent.trim()).length"


def report(tmp_path: Path, name: str, *rows, args=()) -> Path:
    path = lines(tmp_path / f"{name}.jsonl", *rows)
    assert main(["report", str(path), *args, "--out", str(tmp_path / f"{name}.html")]) == 0
    return tmp_path / f"{name}.html"


def evals(table: dict) -> list[dict]:
    return [{"task_id": t, "sample_id": i, "verdict": v, "elapsed_s": 0.5} for t, vs in table.items() for i, v in enumerate(vs)]


def test_a_verdict_named_like_an_object_property_is_only_a_name(tmp_path):
    page_file = report(tmp_path, "p", *evals({"T/0": ["__proto__", "__proto__", "constructor", "accepted", "toString"]}))
    with opened(page_file) as page:
        counts = page.eval_on_selector_all("#verdicts tr[data-verdict]", "rows => rows.map(r => [r.dataset.verdict, r.cells[1].textContent, r.cells[3].textContent])")
        assert counts == [["__proto__", "2", ""], ["constructor", "1", ""], ["accepted", "1", ""], ["toString", "1", ""]]
        assert page.inner_text("[data-card=unscorable] .v") == "0"
        go(page, "p/0", "#problem .sample")
        assert page.locator("#problem .infra-label").count() == 0
        assert page.locator("#problem .sample b[data-verdict]").all_inner_texts() == \
            ["__proto__", "__proto__", "constructor", "accepted", "toString"]


def test_an_unknown_problem_or_sample_in_the_url_says_so(tmp_path):
    page_file = report(tmp_path, "e", *evals({"A": ["accepted"], "B": ["wrong_answer"]}))
    with opened(page_file, "#p/999") as page:
        assert page.inner_text("#loading .not-found") == \
            "no problem number 999 in this report (its problems are numbered #p/0 to #p/1)"  # not a task id
        assert page.locator("main > section:not([hidden])").count() == 0
        go(page, "t/1/7", "#loading .not-found >> text=no sample")
        assert page.inner_text("#loading .not-found") == "no sample 7 of problem B in this report (it has 1)"
        page.click("#loading a")  # "all problems"
        page.wait_for_selector("#problems:not([hidden]) #problem-list")
        assert page.is_hidden("#loading")
        go(page, "problems/1", "#loading .not-found >> text=no view")  # issue 39: it showed the overview
        assert page.inner_text("#loading .not-found") == \
            "no view #problems/1 in this report (its views are #overview, #problems, #p/N for problem N, #t/N/S for its sample S)"
        assert page.locator("main > section:not([hidden])").count() == 0
        go(page, "compare", "#loading .not-found >> text=no view #compare")  # a page without --compare


def test_anchors_land_below_the_sticky_header_and_long_task_ids_wrap(tmp_path):
    rows = evals({f"T/{i}": ["accepted", "wrong_answer"] for i in range(40)} | {LONG: ["accepted"]})
    page_file = report(tmp_path, "e", *rows, args=["--compare", str(lines(tmp_path / "b.jsonl", *evals({LONG: ["wrong_answer"]})))])
    below = "id => document.getElementById(id).getBoundingClientRect().top - document.querySelector('header').getBoundingClientRect().bottom"
    with opened(page_file, "#summary-fields", width=700, height=400) as page:
        assert page.evaluate("scrollY") > 0 and 0 <= page.evaluate(below, "summary-fields") <= 16
        go(page, "timing", "#timing")
        assert 0 <= page.evaluate(below, "timing") <= 16
        go(page, "problems", f"#problem-list tr[data-task='{LONG}']")
        assert page.evaluate("scrollY") == 0
        wide = "() => document.documentElement.scrollWidth - innerWidth"
        assert page.evaluate(wide) <= 0  # the 210-character task id wraps inside the page
        go(page, "compare", "#compare-list")
        assert page.evaluate(wide) <= 0
        go(page, "p/0", "#problem h2")  # problems in task id order: HumanEval/x... before T/0
        assert page.inner_text("#problem h2") == LONG and page.evaluate(wide) <= 0


def test_compare_shows_signed_percentage_points_linked_to_the_problem(tmp_path):
    here = evals({"A": ["accepted", "wrong_answer"], "B": ["accepted", "accepted"], "C": ["accepted"]})
    other = lines(tmp_path / "other.jsonl", *evals({"A": ["accepted", "accepted"], "B": ["wrong_answer"] * 8, "D": ["accepted"]}))
    page_file = report(tmp_path, "e", *here, args=["--compare", str(other)])
    with opened(page_file, "#compare") as page:
        rows = page.eval_on_selector_all("#compare-list tr[data-task]", """rows => rows.map(r => [r.dataset.task,
            r.cells[1].textContent, r.cells[4].textContent, (r.cells[0].querySelector('a') || {}).hash || null])""")
        assert rows == [["A", "regression", "−50.0 pp", "#p/0"], ["B", "improvement", "+100.0 pp", "#p/1"],
                        ["C", "only here", "", "#p/2"], ["D", "only other", "", None]]
        assert "Δ = pass rate here − pass rate in other.jsonl, in percentage points (pp)" in page.inner_text("#compare p")
        page.click("#compare-list tr[data-task='A'] a")
        page.wait_for_selector("#problem:not([hidden]) .sample")
        assert page.inner_text("#problem h2") == "A"


def test_without_the_summary_the_page_says_what_it_cannot_know_and_draws_no_empty_rows(tmp_path):
    page_file = report(tmp_path, "e", *evals({"A": ["accepted", "wrong_answer"], "B": ["infra_error"]}))
    with opened(page_file) as page:
        note = page.inner_text("#no-summary")
        assert note.startswith("No --summary given: this page knows only the 2 problems in e.jsonl. The run's own k and "
                               "any problems it did not attempt are unknown")
        assert page.eval_on_selector_all("#passk tr:first-child th", "c => c.map(x => x.textContent)") == \
            ["k", "problems in this file (no --summary)"]  # no column for an attempted-only figure it cannot know
        assert page.inner_text("#summary-fields tr[data-field=n_problems_unattempted] td") == "unknown without --summary"
        assert page.evaluate(EMPTY_ROWS) == 0
        assert page.locator("#summary-fields th:empty, #timing th:empty").count() == 0  # name/value tables: no header row
        go(page, "problems", "#problem-list")
        assert page.eval_on_selector_all("#problem-list tr:first-child th", "c => c.map(x => x.textContent)") == \
            ["task", "samples", "scored", "passed", "pass rate", "verdicts"]  # no mean-reward column for an eval


def test_a_verl_line_shows_ground_truth_step_and_extras_and_is_labelled_by_score(tmp_path):
    rows = [{**VERL, "gts": {"inputs": ["1 2"], "outputs": ["3"]}, "score": 1.0, "verdict": "accepted", "pass_rate": 1.0},
            {**VERL, "score": 0.0, "verdict": "infra_error", "infra_error": True},
            {**VERL, "gts": "3", "score": 0.5, "step": 4}]
    page_file = report(tmp_path, "v", *rows)
    with opened(page_file) as page:
        assert page.inner_text("[data-card=mean_score] .v") == "0.7500"
        assert "of 2 scorable samples; unscorable left out" in page.inner_text("[data-card=mean_score]")
        assert page.locator("#verdicts tr[data-verdict='score 0.5']").count() == 1
        assert page.evaluate(EMPTY_ROWS) == 0 and page.locator("#summary-fields").count() == 0
        assert page.eval_on_selector_all("#steps tr[data-step]", "r => r.map(x => x.textContent)") == ["32", "41"]
        go(page, "p/0", "#problem .sample")
        first, third = page.locator("#problem .sample[data-sample='0']"), page.locator("#problem .sample[data-sample='2']")
        assert json.loads(first.locator("pre.gts").inner_text()) == {"inputs": ["1 2"], "outputs": ["3"]}
        assert first.locator("table.extras tr[data-extra]").evaluate_all("r => r.map(x => x.dataset.extra)") == \
            ["verdict", "pass_rate"]
        assert first.locator(".step").inner_text().strip() == "step 3"
        assert third.locator("b[data-verdict]").inner_text() == "score 0.5" and third.locator(".step").inner_text().strip() == "step 4"
        assert third.locator("pre.gts").inner_text() == "3" and third.locator("table.extras").count() == 0
        page.click("#problem .sample[data-sample='1'] a.open-trajectory")
        page.wait_for_selector("#trajectory pre.output")
        head = page.inner_text("#trajectory .traj-head")
        assert "score 0 · step 3" in head and "stop reason" not in head and "tool calls" not in head
        assert page.locator("#trajectory table.extras tr[data-extra]").evaluate_all("r => r.map(x => x.dataset.extra)") == \
            ["verdict", "infra_error"]


def test_problems_and_samples_are_in_task_and_sample_order_not_finishing_order(tmp_path):
    """Issue 39, item 7: the page listed problems and samples in the order they finished."""
    from judgebox.report.build import _problems
    from judgebox.report.records import read_records

    rows = [{"task_id": t, "sample_id": i, "verdict": "accepted"}
            for t, i in [("HumanEval/10", 1), ("HumanEval/2", 1), ("HumanEval/10", 0), ("HumanEval/2", 0), ("HumanEval/9", 0)]]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = _problems(read_records(path))
    assert list(problems) == ["HumanEval/2", "HumanEval/9", "HumanEval/10"]
    assert [r["sample_id"] for r in problems["HumanEval/10"]["rows"]] == [0, 1]


def test_a_failed_harness_test_shows_what_failed_not_an_empty_diff(tmp_path):
    """Issue 39, item 7: a failed C++ MultiPL-E test showed an empty diff of "" against "\\n"; the
    tests compare inside their program, so the page shows their stderr (the assert that failed)."""
    from judgebox.report.samples import sample

    row = {"task_id": "T", "sample_id": 0, "verdict": "wrong_answer", "tests": [
        {"index": 0, "verdict": "wrong_answer", "harness_isolation": "process", "stdout": "\n", "expected": "",
         "stderr": "tests: Assertion `candidate(1) == 2' failed.\n"}]}
    test = sample(row, "eval", 0)["tests"][0]
    assert "diff" not in test and test["stderr"].startswith("tests: Assertion `candidate(1) == 2'")


def test_compare_refuses_the_file_itself_and_warns_of_another_dataset(tmp_path, capsys):
    """A new user's findings: --compare took the file itself, and a run of another dataset (no task id in
    common, or records naming another dataset) without a word."""
    here = lines(tmp_path / "e.jsonl", *evals({"HumanEval/1": ["accepted"], "HumanEval/2": ["wrong_answer"]}))
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(here), "--compare", str(tmp_path / "." / "e.jsonl"), "--out", str(tmp_path / "x.html")])
    assert exit_.value.code == 1
    assert capsys.readouterr().err == (f"judgebox report: --compare {tmp_path / 'e.jsonl'}: that is the file this report "
                                       f"is of ({here}); compare it with another run's results or trajectories jsonl\n")
    assert not (tmp_path / "x.html").exists()
    mbpp = lines(tmp_path / "mbpp.jsonl", *evals({"1": ["accepted"], "2": ["accepted"]}))
    proc = subprocess.run([sys.executable, "-m", "judgebox.cli", "report", str(here), "--compare", str(mbpp), "--out",
                           str(tmp_path / "m.html")], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    warning = (f"--compare {mbpp} has no task id in common with {here} (another dataset?): every problem is in "
               "one file only")
    assert (proc.returncode, proc.stderr) == (0, warning + "\n")
    with opened(tmp_path / "m.html", "#compare") as page:
        assert page.inner_text("#compare-warning") == warning
    # the same task ids, records of two datasets (their own "dataset" field)
    he = lines(tmp_path / "he.jsonl", *[{**r, "dataset": "humaneval"} for r in evals({"HumanEval/1": ["accepted"]})])
    plus = lines(tmp_path / "plus.jsonl", *[{**r, "dataset": "humaneval-plus"} for r in evals({"HumanEval/1": ["wrong_answer"]})])
    page_file = report(tmp_path, "he2", *[{**r, "dataset": "humaneval"} for r in evals({"HumanEval/1": ["accepted"]})],
                       args=["--compare", str(plus)])
    with opened(page_file, "#compare") as page:
        assert page.inner_text("#compare-warning") == (f"--compare {plus} is a run of the dataset humaneval-plus, "
                                                       f"{tmp_path / 'he2.jsonl'} of humaneval: a comparison of two "
                                                       "datasets, not of two runs of one")
    page_file = report(tmp_path, "same", *evals({"HumanEval/1": ["wrong_answer"]}), args=["--compare", str(he)])
    with opened(page_file, "#compare") as page:  # one dataset named on one side only: no warning
        assert page.locator("#compare-warning").count() == 0 and page.locator("#compare-list").count() == 1


def test_compare_ties_are_in_task_order(tmp_path):
    """A new user's finding: problems with the same change kept the files' order (HumanEval/10 before
    HumanEval/2); ties are in the problem list's natural order."""
    ids = ["HumanEval/10", "HumanEval/2", "HumanEval/1", "HumanEval/11"]
    here = evals({t: ["wrong_answer"] for t in ids} | {"HumanEval/30": ["accepted"], "HumanEval/4": ["accepted"]})
    other = lines(tmp_path / "other.jsonl", *evals({t: ["accepted"] for t in ids[::-1]} | {"HumanEval/20": ["accepted"],
                                                                                            "HumanEval/3": ["accepted"]}))
    page_file = report(tmp_path, "e", *here, args=["--compare", str(other)])
    with opened(page_file, "#compare") as page:
        rows = page.eval_on_selector_all("#compare-list tr[data-task]", "rows => rows.map(r => [r.dataset.task, r.dataset.change])")
        assert rows == [["HumanEval/1", "regression"], ["HumanEval/2", "regression"], ["HumanEval/10", "regression"],
                        ["HumanEval/11", "regression"], ["HumanEval/4", "only_here"], ["HumanEval/30", "only_here"],
                        ["HumanEval/3", "only_other"], ["HumanEval/20", "only_other"]]
        assert page.locator("#compare-warning").count() == 0
