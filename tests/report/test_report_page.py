"""``judgebox report`` pages of real ``judgebox eval`` runs, opened in headless Chromium: the overview's
counts are the summary's, a failed test shows its expected vs actual diff (a failed assert its code and
error, a test with no output a note saying so), an infrastructure error is labelled as such (never as
a wrong answer), record text that tries to close the script element renders as text, and the page
fetches nothing. A screenshot of each page lands in the test's folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebox.cli import main
from tests.fixtures import DATA as OWN_ROWS
from tests.report.browser import go, opened
from tests.reward.test_eval import ONE_ATTEMPT, broken_sandbox

pytestmark = [pytest.mark.slow, pytest.mark.browser]

HOSTILE = "</script><script>window.pwned=1</script>"
SAMPLES = [  # APPS row 101: print a // b, or -1 when b is 0
    "```python\nt=int(input())\nfor _ in range(t):\n    a,b=map(int,input().split())\n    print(a//b if b else 0)\n```",
    f"```python\nprint({HOSTILE!r})\n```",
    "t=int(input())\nfor _ in range(t):\n    a,b=map(int,input().split())\n    print(a//b if b else -1)\n",
]


def eval_run(tmp_path: Path, *extra: str, code: int = 0) -> tuple[Path, dict, Path]:
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "101", "completion": c}) + "\n" for c in SAMPLES))
    results, summary, html = tmp_path / "r.jsonl", tmp_path / "s.json", tmp_path / "eval.html"
    assert main(["eval", str(OWN_ROWS / "apps.jsonl"), "--format", "apps", "--samples", str(samples),
                 "--allow-partial", "--no-progress", "--results", str(results), "--summary", str(summary),
                 "--html", str(html), *extra]) == code
    return results, json.loads(summary.read_text()), html


def cells(page, selector: str, attribute: str) -> dict[str, str]:
    return page.eval_on_selector_all(selector, f"""rows => Object.fromEntries(rows.map(r =>
        [r.getAttribute("{attribute}"), r.querySelector("td.count, td:nth-child(2)").textContent]))""")


def test_every_pass_at_k_has_four_decimals(tmp_path):
    """A new user's finding: pass@2 showed ``1`` beside pass@1 ``0.5000`` (an integer printed as one)."""
    _, summary, html = eval_run(tmp_path, "--k", "1,3")
    assert summary["pass_at_k_attempted"] == pytest.approx({"pass@1": 1 / 3, "pass@3": 1.0})  # 1 of 3 problems
    with opened(html) as page:
        shown = page.eval_on_selector_all("#passk tr[data-k]", "rows => rows.map(r => [...r.children].slice(1)"
                                          ".map(c => c.textContent))")
        assert shown == [["0.1111", "0.3333"], ["0.3333", "1.0000"]]


def test_eval_report_counts_are_the_summary_and_a_failed_test_shows_its_diff(tmp_path):
    results, summary, html = eval_run(tmp_path)
    assert summary["verdicts"] == {"wrong_answer": 2, "accepted": 1}
    with opened(html) as page:
        assert cells(page, "#verdicts tr[data-verdict]", "data-verdict") == {k: str(v) for k, v in summary["verdicts"].items()}
        assert page.inner_text("#passk tr[data-k='pass@1'] td:nth-child(2)") == f"{summary['pass_at_k']['pass@1']:.4f}"
        fields = page.eval_on_selector_all("#summary-fields tr[data-field]", "rows => rows.map(r => r.dataset.field)")
        assert set(fields) == set(summary) - {"problems", "pass_at_k"}  # every field the summary carries
        assert page.inner_text("[data-card=samples] .v") == "3"
        assert page.locator("#no-summary").count() == 0  # the run's summary: no "unknown without --summary" note
        page.screenshot(path=str(tmp_path / "overview.png"))
        go(page, "p/0", "#problem .sample")
        first = page.locator("#problem .sample[data-sample='0']")
        assert first.locator(".diff .d-del").all_inner_texts() == ["- -1"]
        assert first.locator(".diff .d-add").all_inner_texts() == ["+ 0"]
        assert "null" not in first.locator(".failed-test").first.inner_text().splitlines()  # no diff note: nothing
        assert "print(a//b if b else 0)" in first.locator("pre.program").inner_text()
        hostile = page.locator("#problem .sample[data-sample='1']")
        assert HOSTILE in hostile.locator("pre.program").inner_text()
        assert HOSTILE in hostile.locator(".failed-test .d-add").first.inner_text()  # its stdout, as text
        assert page.evaluate("typeof window.pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "problem.png"), full_page=True)
    assert (tmp_path / "problem.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the same page from `judgebox report` with the summary file, checked against the records
    main(["report", str(results), "--summary", str(tmp_path / "s.json"), "--out", str(tmp_path / "again.html")])
    with opened(tmp_path / "again.html") as page:
        assert cells(page, "#verdicts tr[data-verdict]", "data-verdict") == {k: str(v) for k, v in summary["verdicts"].items()}


def test_infrastructure_errors_are_labelled_and_kept_apart_from_wrong_answers(tmp_path, monkeypatch):
    for key, value in ONE_ATTEMPT.items():
        monkeypatch.setenv(key, value)
    with broken_sandbox() as url:  # every run answers HTTP 502: exit status 2, the report still written
        eval_run(tmp_path, "--sandbox-url", url, "--retries", "0", code=2)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["verdicts"] == {"infra_error": 3} and summary["unscorable_reasons"] == {"infrastructure": 3}
    with opened(tmp_path / "eval.html") as page:
        assert cells(page, "#verdicts tr[data-verdict]", "data-verdict") == {"infra_error": "3"}
        assert "infrastructure error: not a wrong answer" in page.inner_text("#verdicts tr[data-verdict=infra_error]")
        assert page.inner_text("[data-card=unscorable] .v") == "3"
        assert cells(page, "#unscorable tr[data-verdict]", "data-verdict") == {"infra_error": "3"}
        go(page, "p/0", "#problem .sample")
        labels = page.locator("#problem .sample .infra-label").all_inner_texts()
        assert len(labels) == 3 and all(t.startswith("infrastructure error: not a wrong answer") for t in labels)
        page.screenshot(path=str(tmp_path / "infra.png"))


def test_tamper_signals_are_counted_and_shown_on_the_sample(tmp_path):
    """Issue 37: the page counts samples with tamper signals (and those accepted) and shows each
    sample's signals with their line and evidence."""
    from judgebox.reward.loaders import load_dataset

    problems, _ = load_dataset("humaneval")
    samples = tmp_path / "he.jsonl"
    samples.write_text("".join(json.dumps({"task_id": p.task_id, "completion": c}) + "\n" for p, c in
                               ((problems[0], problems[0].gold), (problems[1], "    import atexit\n" + problems[1].gold))))
    html = tmp_path / "he.html"
    assert main(["eval", "humaneval", "--samples", str(samples), "--allow-partial", "--no-progress", "--k", "1",
                 "--results", str(tmp_path / "he.jsonl.results"), "--html", str(html)]) == 0
    with opened(html) as page:
        assert page.inner_text("[data-card=tamper] .v") == "1"
        assert "1 accepted" in page.inner_text("[data-card=tamper]")
        assert page.inner_text("#tamper-kinds tr[data-kind=exit_hook] td") == "1"
        chunk = page.get_attribute("tr[data-task='HumanEval/1'] a", "href")  # results are in completion order
        go(page, chunk.lstrip("#"), "#problem .sample")
        assert page.inner_text("#problem h2") == "HumanEval/1"
        assert page.locator("#problem .sample pre.tamper").inner_text() == "line 1: exit_hook: atexit"
    # without the run's summary, the summary computed from the records counts them too (it said 0 beside
    # the card's 1: a new user's finding)
    assert main(["report", str(tmp_path / "he.jsonl.results"), "--out", str(tmp_path / "bare.html")]) == 0
    with opened(tmp_path / "bare.html") as page:
        assert page.inner_text("[data-card=tamper] .v") == "1"
        assert '"signalled":1' in page.inner_text("#summary-fields tr[data-field=tamper]").replace(" ", "")


def test_a_failed_assert_shows_its_code_and_error_never_null_or_a_diff(tmp_path):
    """A new user's finding: a failed MBPP assert showed "expected (−) vs actual (+)", a literal ``null``
    and a diff of the assert against the empty stdout. Its record holds the assert as ``expected``
    (``input`` and ``stdout`` empty): the page shows it as the test's code, with the error."""
    rows, samples = tmp_path / "rows.jsonl", tmp_path / "samples.jsonl"
    rows.write_text(json.dumps({"task_id": 1, "text": "add", "code": "def add(a, b):\n    return a + b",
                                "test_list": ["assert add(1, 2) == 3"]}) + "\n")
    samples.write_text(json.dumps({"task_id": 1, "completion": "def add(a, b):\n    return a - b"}) + "\n")
    results = tmp_path / "A.results.jsonl"
    assert main(["eval", str(rows), "--format", "mbpp", "--samples", str(samples), "--no-progress",
                 "--results", str(results)]) == 0
    test = json.loads(results.read_text())["tests"][0]
    assert (test["verdict"], test["input"], test["expected"], test["stdout"]) == \
        ("wrong_answer", "", "assert add(1, 2) == 3", "")
    assert main(["report", str(results), "--out", str(tmp_path / "A.html")]) == 0
    with opened(tmp_path / "A.html", "#p/0") as page:
        box = page.locator("#problem .failed-test[data-test='0']")
        box.wait_for()
        assert box.locator("pre.test-code").inner_text() == "assert add(1, 2) == 3"
        assert box.locator("pre.stderr").inner_text() == "AssertionError: assert add(1, 2) == 3"
        assert box.locator(".diff").count() == 0 and box.locator(".test-note").count() == 0
        text = box.inner_text()
        assert "null" not in text and "expected (−) vs actual (+)" not in text, text


def test_a_failed_test_with_no_output_says_so_instead_of_an_empty_box(tmp_path):
    """A new user's finding: a MultiPL-E shell test that exits 1 with nothing on stdout or stderr (its
    record has empty input, expected and stdout) showed an empty box under its heading."""
    from tests.fixtures.rows import jsonl, multipl_rows

    rows = tmp_path / "humaneval-sh.jsonl"
    rows.write_text(jsonl([r for r in multipl_rows("sh") if r["task_id"] == "JB_2_count_upper"]))
    results = tmp_path / "S.results.jsonl"
    assert main(["eval", str(rows), "--format", "multipl-e", "--samples", "column:gpt_solution", "--no-progress",
                 "--results", str(results)]) == 0
    row = json.loads(results.read_text())
    assert row["message"] == "[judgebox] exit status 1, nothing on stdout or stderr"
    assert {k: row["tests"][0][k] for k in ("input", "expected", "stdout", "stderr", "return_code")} == \
        {"input": "", "expected": "", "stdout": "", "stderr": "", "return_code": 1}
    test_program = row["tests"][0]["code"]  # the third walk: the failing test was nowhere in the record
    assert "candidate" in test_program and len(test_program) <= 2001
    assert main(["report", str(results), "--out", str(tmp_path / "S.html")]) == 0
    with opened(tmp_path / "S.html", "#p/0") as page:
        box = page.locator("#problem .failed-test[data-test='0']")
        box.wait_for()
        assert box.locator(".test-note").inner_text() == \
            "the test program gave no output (nothing on stdout or stderr); the verdict comes from its exit status (1)"
        assert box.locator("pre.test-code").inner_text() == test_program
