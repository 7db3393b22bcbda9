"""CRUXEval, input and output prediction: the answer is taken from the model's text as CRUXEval's
scripts take it, and checked in the real embedded sandbox (``code`` + ``assert output == answer``, in
judgebox's Python harness). Our own rows (``tests/fixtures/rows_multilang.py``: CRUXEVAL), never the
dataset's: the reference answers pass, wrong ones fail, and the official script's guards hold.
"""

import asyncio
import json

import pytest

from judgebox.reward import Verdict, judge_many
from judgebox.reward.evaluate import Evaluation, dataset_samples, load_results
from judgebox.reward.loaders import load_dataset, load_problems
from judgebox.reward.loaders.cruxeval import ENTRY, answer
from tests.conftest import skip_unless_in
from tests.fixtures import DATA as OWN_ROWS
from tests.fixtures.rows_multilang import CRUXEVAL


@pytest.fixture(autouse=True)
def own_rows(monkeypatch):
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))


def verdicts(problem, completions):
    pairs = [problem.candidate(c) for c in completions]
    return [j.verdict for j in judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)]


# --- taking the answer from the model's text (no sandbox) -----------------------------------------
@pytest.mark.parametrize("text,task,expected", [
    ("f([1, 2])", "input", "f([1, 2])"),                                      # generations.json form
    ("assert f([1, 2]) == [2]", "input", "f([1, 2])"),                       # the direct prompt's answer
    ("[2]", "output", "[2]"),
    ("assert f([1, 2]) == [2]", "output", "[2]"),
    ("Let's run it.\n[ANSWER]\nassert f('a') == 'b'\n[/ANSWER]\nmore text", "output", "'b'"),  # CoT prompts
    ("<think>[ANSWER] f(0) [/ANSWER]</think>[ANSWER]assert f(1) == 2[/ANSWER]", "input", "f(1)"),
    ("[ANSWER]\n```python\nassert f('x==y') == 3\n```\n[/ANSWER]", "input", "f('x==y')"),  # == inside a string
    ("f('x==y')", "input", "f('x==y')"),
    ("the output is 5 == 5", "output", "5"),                                 # not Python: the official split
    ("assert f(3)", "input", "f(3)"),
])
def test_the_answer_is_taken_as_cruxevals_scripts_take_it(text, task, expected):
    assert answer(text, task) == expected


def test_rows_become_two_tasks_with_their_gold_answers():
    inputs, manifest = load_dataset("cruxeval-input")
    outputs, _ = load_dataset("cruxeval-output")
    assert manifest.format == "cruxeval-input" and [p.task_id for p in inputs] == [r["id"] for r in CRUXEVAL]
    first = CRUXEVAL[0]
    assert inputs[0].gold == f"f({first['input']})" and outputs[0].gold == first["output"]
    assert f"assert f(??) == {first['output']}" in inputs[0].prompt and f"assert f({first['input']}) == ??" in outputs[0].prompt
    spec, code = outputs[0].candidate("[ANSWER]\nassert f([3, 1, 4, 1, 5]) == [4, 5]\n[/ANSWER]")
    assert spec.prefix == first["code"] + "\n" and spec.entry_point == ENTRY and spec.run_timeout == 3
    assert spec.harness == "def check(answer):\n    assert [4, 5] == answer()\n"
    assert code == f"\n\ndef {ENTRY}():\n    return (\n[4, 5]\n    )\n"


@pytest.mark.parametrize("fmt", ["cruxeval-input", "cruxeval-output"])
@pytest.mark.parametrize("field", ["code", "input", "output", "id"])
def test_a_malformed_row_is_an_error_naming_file_row_and_field(tmp_path, fmt, field):
    path = tmp_path / "crux.jsonl"
    path.write_text(json.dumps(CRUXEVAL[0]) + "\n" + json.dumps({k: v for k, v in CRUXEVAL[1].items() if k != field}) + "\n")
    with pytest.raises(ValueError, match=rf"crux.jsonl:2: format '{fmt}' needs the field '{field}'"):
        load_problems(path, fmt)


def test_sanitize_does_not_apply_to_answers():
    p = load_dataset("cruxeval-output")[0][0]
    with pytest.raises(ValueError, match="--sanitize does not apply"):
        p.candidate("[4, 5]", sanitize=True)


# --- judged in the sandbox ----------------------------------------------------------------------
@pytest.mark.parametrize("task", ["input", "output"])
def test_gold_passes_and_wrong_answers_fail_on_every_row(task):
    problems = load_dataset(f"cruxeval-{task}")[0]
    wrong = {"input": ["f([1])", "f('judgebox', 4)", "f(['abc'])", "f('x', 1)"],
             "output": ["[5, 4]", "'boxjudge'", "{2: 1, 3: 1}", "(1, 'x')"]}[task]
    pairs = [p.candidate(p.gold) for p in problems] + [p.candidate(w) for p, w in zip(problems, wrong)]
    results = judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)
    gold, mutants = results[:len(problems)], results[len(problems):]
    assert [j.verdict for j in gold] == [Verdict.accepted] * 4, [j.message for j in gold]
    assert [j.verdict for j in mutants] == [Verdict.wrong_answer] * 4, [j.message for j in mutants]
    print(f"\ncruxeval-{task}: gold passed {sum(j.passed for j in gold)}/4, wrong answers failed "
          f"{sum(not j.passed for j in mutants)}/4")


def test_input_prediction_accepts_any_input_that_gives_the_output():
    """CRUXEval-I asks for *an* input: another one that gives the same output passes too."""
    p = load_dataset("cruxeval-input")[0][0]  # f(nums) = the two largest distinct values: [4, 5]
    assert verdicts(p, ["[ANSWER]\nassert f([5, 4, 4]) == [4, 5]\n[/ANSWER]"]) == [Verdict.accepted]


def test_answers_that_are_not_run_are_wrong_answers_with_the_reason():
    """CRUXEval's guards (an input answer without ``f(``, an output answer with ``f(<input>)``), and the
    ones that close its gaps: an answer that is not one expression (``0) or (True`` would widen the
    assertion), an input answer that is not one call of f (``f([]) or [4, 5]`` passes any f whose value
    is falsy), an output answer that calls f spaced otherwise. Each is wrong_answer saying why; a tuple
    output and an answer in a fence pass."""
    first_in, crux_in, crux_out = load_dataset("cruxeval-input")[0][0], *(load_dataset(f"cruxeval-{t}")[0][3]
                                                                          for t in ("input", "output"))
    cases = [(crux_in, "(1, 'x')", False), (crux_in, "f(1, 'x')", True), (first_in, "f([]) or [4, 5]", False),
             (crux_out, "f(1, 'x')", False), (crux_out, "f(1,'x')", False), (crux_out, "('x', 1)) or (True", False),
             (crux_out, "('x', 1)", True), (crux_out, "```python\nassert f(1, 'x') == ('x', 1)\n```", True)]
    pairs = [p.candidate(text) for p, text, _ in cases]
    results = judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)
    expected = [(Verdict.accepted, "") if ok else (Verdict.wrong_answer, "CRUXEval-") for _, _, ok in cases]
    assert [(j.verdict, "CRUXEval-" if "CRUXEval-" in j.message else "") for j in results] == expected, \
        [j.message for j in results]


def test_judgebox_eval_scores_cruxeval_samples(tmp_path):
    """Through the manifest and `Evaluation` (what `judgebox eval cruxeval-output` runs): gold passes."""
    problems, _ = load_dataset("cruxeval-output")
    evaluation = Evaluation(problems, tmp_path / "r.jsonl", concurrency=2, dataset="cruxeval-output")
    summary = asyncio.run(evaluation.run(dataset_samples(problems, "gold"), [1], progress=False))
    assert {k: v["verdict"] for k, v in load_results(tmp_path / "r.jsonl").items()} == \
        {(r["id"], 0): "accepted" for r in CRUXEVAL}
    assert summary.pass_at_k == {"pass@1": 1.0}


@pytest.mark.slow
@pytest.mark.parametrize("task", ["input", "output"])
def test_every_real_reference_answer_passes(data_dir, monkeypatch, task):
    """CRUXEval's 800 rows (``$JUDGEBOX_DATA_DIR/cruxeval.jsonl``): ``f(<input>)`` and ``<output>`` pass."""
    skip_unless_in(data_dir, f"cruxeval-{task}")
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(data_dir))
    problems, _ = load_dataset(f"cruxeval-{task}")
    pairs = [p.candidate(p.gold) for p in problems]
    results = judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)
    assert (len(problems), [p.task_id for p, j in zip(problems, results) if not j.passed]) == (800, [])
