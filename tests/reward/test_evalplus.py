"""HumanEval+ and MBPP+ (evalplus): the ``humaneval-plus``/``mbpp-plus`` loaders and manifests, and
evalplus's comparison rules (issue 21 item 2).

Fast tier: the rules and the codec on the host, checked against evalplus's own code where it is
installed (the ``sanitize`` extra) and against numpy; malformed rows. MBPP+'s input shapes against
evalplus's table are slow (importing ``evalplus.data`` takes seconds). Slow tier (real runs in the
embedded sandbox): our own rows (``tests/fixtures/rows_evalplus.py``) load through the manifests with
the reference outputs computed once and cached, gold solutions pass, mutants fail, close float answers
pass within the tolerance, and a failing reference is ``test_data_error``, never a verdict.
"""

from __future__ import annotations

import ast
import copy
import itertools
import json
import math
import os
import random
import subprocess
import sys
from collections import Counter, OrderedDict, deque
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from judgebox.reward import TestSpec, Verdict, compute_score, judge
from judgebox.reward.harness import harness_isolation
from judgebox.reward.loaders import load_dataset, load_problems
from judgebox.reward.loaders.evalplus import codec, programs, reference, rules
from judgebox.reward.loaders.evalplus.inputs import MBPP_INPUT_SHAPES, checked_inputs
from judgebox.sandbox.errors import SandboxInfraError
from tests.fixtures import DATA as OWN_ROWS
from tests.fixtures import rows_evalplus


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def evalplus_cache(tmp_path, monkeypatch) -> Path:
    """Reference outputs are cached in this test's own folder."""
    monkeypatch.setenv("JUDGEBOX_EVALPLUS_CACHE", str(tmp_path / "evalplus-cache"))
    return tmp_path / "evalplus-cache"


# --- the rules (host) ----------------------------------------------------------------------------
#: (dataset, entry point, args, output, expected, atol) -> evalplus's verdict. Values are Python
#: expressions, so the same case runs through evalplus's own checker.
RULE_CASES = [
    # Python equality decides first: 1.0 == True, 3 == 3.0, a tuple is not a list
    ("humaneval", "f", "[1]", "1.0", "True", 0, True),
    ("humaneval", "f", "[1]", "1", "True", 0, True),
    ("humaneval", "f", "[1]", "'True'", "True", 0, False),
    ("humaneval", "f", "[1]", "3", "3.0", 0, True),
    ("humaneval", "f", "[1]", "(1, 2)", "[1, 2]", 0, False),
    ("humaneval", "f", "[1]", "[1, 2]", "(1, 2)", 0, False),
    ("humaneval", "f", "[1]", "{1: 2}", "{1: 2}", 0, True),
    ("humaneval", "f", "[1]", "None", "None", 0, True),
    ("humaneval", "f", "[1]", "float('inf')", "float('inf')", 0, True),
    ("humaneval", "f", "[1]", "float('nan')", "float('nan')", 0, False),
    # float outputs: atol 0 becomes 1e-6; then type, length and numpy.allclose (rtol 1e-7)
    ("humaneval", "f", "[1]", "0.5 + 1e-7", "0.5", 0, True),
    ("humaneval", "f", "[1]", "0.5 + 1e-5", "0.5", 0, False),
    ("humaneval", "f", "[1]", "(1.0, 2.0000001)", "(1.0, 2.0)", 0, True),
    ("humaneval", "f", "[1]", "[1.0, 2.0000001]", "(1.0, 2.0)", 0, False),
    ("humaneval", "f", "[1]", "(1.0, 2.0000001, 3.0)", "(1.0, 2.0)", 0, False),
    ("humaneval", "f", "[1]", "2", "2.5", 1e-4, False),
    ("humaneval", "f", "[1]", "[1.0, 2.0000001]", "[1.0, 2]", 0, False),
    ("humaneval", "f", "[1]", "[1.0, 2.0000001]", "[1.0, 2]", 1e-6, True),
    ("humaneval", "f", "[1]", "100.00005", "100.0", 1e-4, True),
    ("humaneval", "f", "[1]", "100.0005", "100.0", 1e-4, False),
    ("humaneval", "f", "[1]", "[[2.0]]", "[[2.0, 2.0]]", 1e-6, True),
    ("humaneval", "f", "[1]", "[[1.0], [1.0, 2.1]]", "[[1.0], [1.0, 2.0]]", 1e-6, False),
    ("humaneval", "f", "[1]", "'b'", "'a'", 1e-4, False),
    ("humaneval", "f", "[1]", "False", "True", 1e-4, False),
    ("humaneval", "f", "[1]", "1+2.0000001j", "1+2j", 0, False),
    ("humaneval", "f", "[1]", "1+2.0000001j", "1+2j", 1e-6, True),
    ("humaneval", "f", "[1]", "2**62 + 1", "2**62", 1e-4, True),
    ("humaneval", "f", "[1]", "2**70 + 1", "2**70", 1e-4, True),
    ("humaneval", "f", "[1]", "[2**70 + 1]", "[2**70]", 1e-4, False),
    ("humaneval", "f", "[1]", "10**400 + 1", "10**400", 1e-4, False),
    # MBPP+ special oracles
    ("mbpp", "similar_elements", "[(3, 4), (4, 5)]", "[5, 4]", "(4, 5)", 0, True),
    ("mbpp", "similar_elements", "[(3, 4), (4, 5)]", "[5]", "(4, 5)", 0, False),
    ("mbpp", "check_str", "['abc']", "'a match'", "True", 0, True),
    ("mbpp", "check_str", "['abc']", "None", "True", 0, False),
    ("mbpp", "check_str", "['abc']", "False", "False", 0, True),
    ("mbpp", "sum_div", "[8]", "0", "7", 0, True),
    ("mbpp", "are_equivalent", "[1, 2]", "'anything'", "False", 0, True),
    ("mbpp", "surface_Area", "[3, 4]", "35", "0", 0, True),
    ("mbpp", "surface_Area", "[3, 4]", "34", "0", 0, False),
    ("mbpp", "digit_distance_nums", "[123, 56]", "7", "0", 0, True),
    ("mbpp", "digit_distance_nums", "[123, 56]", "8", "0", 0, False),
    ("humaneval", "similar_elements", "[1]", "[5, 4]", "(4, 5)", 0, False),
]


def _case(case):
    dataset, entry, args, out, exp, atol, verdict = case
    return dataset, entry, eval(args), eval(out), eval(exp), atol, verdict


@pytest.mark.parametrize("case", RULE_CASES, ids=lambda c: f"{c[1]}:{c[3]}~{c[4]}:{c[5]}")
def test_outputs_match_follows_evalplus(case):
    dataset, entry, args, out, exp, atol, verdict = _case(case)
    assert rules.outputs_match(dataset, entry, args, out, exp, atol) is verdict


@pytest.mark.parametrize("case", RULE_CASES, ids=lambda c: f"{c[1]}:{c[3]}~{c[4]}:{c[5]}")
def test_outputs_match_agrees_with_evalplus_itself(case):
    """The same case through evalplus's ``untrusted_check`` (its own process, its own rules)."""
    untrusted_check = pytest.importorskip("evalplus.eval").untrusted_check
    dataset, entry, args, out, exp, atol, verdict = _case(case)
    code = f"def {entry}(*args):\n    return {case[3]}\n"
    status, _ = untrusted_check(dataset, code, [args], entry, [exp], atol, [0.0])
    assert (status == "pass") is verdict


def test_find_zero_is_judged_by_the_polynomial_alone():
    """HumanEval+ ``find_zero``: any root within ``atol`` passes (evalplus ``_poly``)."""
    xs = [-6, 11, -6, 1]  # (x - 1)(x - 2)(x - 3)
    assert rules.outputs_match("humaneval", "find_zero", [xs], 2.0000001, 1.0, 1e-4)
    assert not rules.outputs_match("humaneval", "find_zero", [xs], 2.5, 2.5, 1e-4)
    assert not rules.outputs_match("humaneval", "find_zero", [xs], "2", 2.0, 1e-4)


def test_special_oracles_compute_what_evalplus_does():
    oracle = pytest.importorskip("evalplus.eval._special_oracle")
    for base, height in itertools.product([1, 2, 3, 7.5, 10], [1, 4, 5.5, 12]):
        assert rules.pyramid_surface(base, height) == oracle._surface_Area(base, height)
    for a, b in itertools.product([0, 7, 123, 4567, 90001], [5, 56, 999, 12345]):
        assert rules.digit_distance(a, b) == oracle._digit_distance_nums(a, b)
    for xs, x in itertools.product([[1], [-6, 11, -6, 1], [0.5, -2.25, 3]], [0.0, 1.5, -2.0]):
        assert rules.poly(xs, x) == oracle._poly(xs, x)


def _value(rng: random.Random, depth: int = 0):
    """A random number, list or nested list (sometimes ragged, text or non-finite)."""
    pick = rng.random()
    if depth < 2 and pick < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 2, 3]))]
    return rng.choice([0, 1, -1, 2.5, 1e-7, 1e6, True, False, float("inf"), float("-inf"), float("nan"),
                       1 + 2j, "x", None, rng.uniform(-3, 3), 2 ** 40, 2 ** 63, 2 ** 70, 10 ** 400])


def test_allclose_is_numpy_allclose():
    """On random numbers, nested lists, broadcasting, non-finite, complex, huge and text values of the
    same type and length (what reaches it from outputs_match)."""
    np = pytest.importorskip("numpy")
    rng = random.Random(21)
    checked = 0
    while checked < 3000:
        a = _value(rng)
        b = rng.choice([a, _value(rng), copy.deepcopy(a)])
        atol = rng.choice([0.0, 1e-6, 1e-4, 0.5])
        if type(a) is not type(b) or (type(a) is list and len(a) != len(b)):
            continue
        try:
            want = bool(np.allclose(a, b, rtol=1e-07, atol=atol))
        except Exception:
            want = False
        assert rules.allclose(a, b, 1e-07, atol) is want, (a, b, atol)
        checked += 1
    assert checked == 3000


def test_is_floats():
    assert rules.is_floats(1.5) and rules.is_floats((1.0, 2.0)) and rules.is_floats([0.0])
    assert not any(rules.is_floats(x) for x in (1, True, [], [1.0, 2], "1.0", {1.0}, None))


def test_run_task_names_the_input_the_output_and_the_expected_one():
    task = {"dataset": "humaneval", "entry_point": "halve", "atol": 0,
            "groups": [["base_input", [[4], [3]], [2.0, 1.5]], ["plus_input", [[1]], [0.5]]]}
    rules.run_task(lambda x: x / 2, task, codec.decode)
    with pytest.raises(AssertionError, match=r"plus_input\[0\]: halve\(1\) returned 0, expected 0.5"):
        rules.run_task(lambda x: x // 2 if x < 2 else x / 2, task, codec.decode)
    with pytest.raises(NameError, match="'halve' is not defined by the solution"):
        rules.run_task(None, task, codec.decode)


# --- the codec and MBPP+'s inputs (host) ------------------------------------------------------------
def test_codec_keeps_every_type():
    values = [(1, (2, 3)), [1, [2.5, None]], {1, 2}, frozenset({"a"}), {(1, 2): [3], "k": {"x": 1}},
              float("inf"), -0.0, 10 ** 40, 1 + 2j, b"\x00\xff", Decimal("1.10"), Fraction(2, 3),
              Counter("aab"), OrderedDict([("b", 1), ("a", 2)]), deque([1, 2]), True, "text"]
    for value in values:
        back = codec.loads(codec.dumps(value))
        assert back == value and type(back) is type(value), value
    assert math.isnan(codec.loads(codec.dumps(float("nan"))))


def test_codec_refuses_what_is_not_data():
    for value in (iter([1]), object(), lambda: 1, range(3)):
        with pytest.raises(TypeError, match="is not data"):
            codec.encode(value)
    for data in ({"a": 1, "b": 2}, {"$nope": []}, {"$tuple": 5}):
        with pytest.raises(ValueError):
            codec.decode(data)


def _raw_inputs(shape):
    """An input (argument list) each MBPP+ shape accepts, as evalplus's JSON holds it."""
    from judgebox.reward.loaders.evalplus import inputs as shapes

    return {shapes.each_tuple: [[1, 2], [3]], shapes.each_list_of_tuples: [[[1, 2], [3, 4]], [[5, 6]]],
            shapes.first_list_of_tuples: [[[1, 2]], 3], shapes.second_tuple: [1, [2, 3]],
            shapes.sets_or_empty_dicts: [[[1, 2], [], {}]], shapes.float_and_complex: ["1.5", "1+2j"],
            shapes.first_tuple: [[1, 2], 3], shapes.each_tuple_of_tuples: [[[1, 2], [3]], [[4]]],
            shapes.first_tuple_with_tuples: [[[1, 2], 3]], shapes.first_tuple_of_three: [[1, 2], 3, 4],
            shapes.dict_of_tuples: [{"a": [1, 2]}, 5], shapes.one_complex: ["3+4j"],
            shapes.all_tuples: [[1, [2, [3]]], [4]]}[shape]


@pytest.mark.slow  # importing evalplus.data imports HF datasets (about 3 s)
def test_mbpp_input_shapes_are_evalplus_table():
    """Every MBPP+ task number rebuilds its inputs as evalplus's ``mbpp_deserialize_inputs`` does;
    every other number leaves them as read."""
    deserialize = pytest.importorskip("evalplus.data.mbpp").mbpp_deserialize_inputs
    for number, shape in MBPP_INPUT_SHAPES.items():
        raw = _raw_inputs(shape)
        mine = checked_inputs({"task_id": f"Mbpp/{number}", "x": [json.loads(json.dumps(raw))]}, "x", "mbpp")
        theirs = deserialize(f"Mbpp/{number}", [json.loads(json.dumps(raw))])
        assert codec.dumps(mine) == codec.dumps(list(theirs)), number
    for number in sorted(set(range(1, 1000)) - set(MBPP_INPUT_SHAPES)):
        theirs = deserialize(f"Mbpp/{number}", [["ab", "cd"]])
        assert theirs == [["ab", "cd"]] and type(theirs[0]) is list, number
    row = {"task_id": "HumanEval/2", "x": [[[1, 2]]]}
    assert checked_inputs(row, "x", "humaneval") == [[[1, 2]]]  # HumanEval+ inputs are used as read


# --- malformed rows (no sandbox run) ------------------------------------------------------------------
def _row(**changes):
    row = dict(rows_evalplus.HUMANEVAL_PLUS[2])
    row.update(changes)
    return {k: v for k, v in row.items() if v is not None}


@pytest.mark.parametrize("changes,message", [
    ({"plus_input": None}, "format 'humaneval-plus' needs the field 'plus_input'"),
    ({"canonical_solution": None}, "format 'humaneval-plus' needs the field 'canonical_solution'"),
    ({"atol": "0.001"}, r"format 'humaneval-plus' needs the field 'atol' \(a number >= 0, got '0.001'\)"),
    ({"atol": -1}, r"format 'humaneval-plus' needs the field 'atol' \(a number >= 0, got -1\)"),
    ({"base_input": [1, 2]}, r"format 'humaneval-plus' needs the field 'base_input' \(a list of argument lists; item 0 is a int\)"),
    ({"plus_input": "[[1]]"}, r"format 'humaneval-plus' needs the field 'plus_input' \(a list of argument lists, got str\)"),
    ({"entry_point": "running max"}, r"format 'humaneval-plus' needs the field 'entry_point' \(a function name, got 'running max'\)"),
    ({"prompt": 7}, r"format 'humaneval-plus' needs the field 'prompt' \(text, got int\)"),
])
def test_a_malformed_row_names_the_file_the_row_and_the_field_before_anything_runs(tmp_path, evalplus_cache, changes, message):
    path = write_jsonl(tmp_path / "HumanEvalPlus.jsonl", [_row(**changes), rows_evalplus.HUMANEVAL_PLUS[0]])
    with pytest.raises(ValueError, match=f"HumanEvalPlus.jsonl:1: {message}"):
        load_problems(path, "humaneval-plus")
    assert not evalplus_cache.exists()  # refused before any reference ran


def test_rows_of_another_benchmark_are_refused_by_name(tmp_path):
    human_eval = {"task_id": "HumanEval/0", "prompt": "def f():\n", "canonical_solution": "    return 1\n",
                  "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}
    with pytest.raises(ValueError, match="format 'mbpp-plus' needs the field 'atol'"):
        load_problems(write_jsonl(tmp_path / "rows.jsonl", [human_eval]), "mbpp-plus")


def test_mbpp_plus_inputs_of_the_wrong_shape_are_named(tmp_path):
    row = dict(rows_evalplus.MBPP_PLUS[0], task_id="Mbpp/124", base_input=[["x", "not complex"]])
    with pytest.raises(ValueError, match=r"format 'mbpp-plus' needs the field 'base_input' \(MBPP\+ task 124 takes inputs"):
        load_problems(write_jsonl(tmp_path / "MbppPlus.jsonl", [row]), "mbpp-plus")


def test_an_unreachable_sandbox_stops_the_load_and_caches_nothing(evalplus_cache):
    from judgebox.sandbox import SandboxClient

    client = SandboxClient("http://127.0.0.1:9", max_attempts=1, connect_timeout=1, deadline=5)
    with pytest.raises(SandboxInfraError):
        reference.reference_outputs("def f(x):\n    return x\n", "f", [["base_input", [[1]]]], False, client)
    assert not evalplus_cache.exists()


# --- the test program --------------------------------------------------------------------------------
def test_test_program_runs_apart_from_the_solution_and_names_little():
    """judgebox runs it in its own process; the solution's names it could fetch are few, and its own
    helpers live in a namespace of their own (a solution's ``max`` cannot reach them)."""
    task = {"dataset": "mbpp", "entry_point": "check", "atol": 0, "groups": [["base_input", [[1]], [2]]]}
    program = programs.test_program(task)
    spec = TestSpec(kind="harness", harness=program, entry_point="check")
    spec.check_data()
    assert harness_isolation(spec) == "process"
    names = {n.id for n in ast.walk(ast.parse(program)) if isinstance(n, ast.Name)}
    assert names == {"__import__", "evalplus_builtins", "evalplus_candidate", "evalplus_rules", "EVALPLUS_TASK",
                     "task"}


def test_run_timeout_is_four_times_the_reference_plus_the_data_at_least_ten_seconds():
    assert programs.run_timeout(0.001, 20_000) == 10.0
    assert programs.run_timeout(3.01, 0) == 12.1
    assert programs.run_timeout(1.0, 5 * 2 ** 20) == 14.0
    assert programs.run_timeout(500, 0) == 300.0


# --- real runs in the embedded sandbox -----------------------------------------------------------------
@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """Our own rows, loaded through the manifests: task id -> Problem."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))
        mp.setenv("JUDGEBOX_EVALPLUS_CACHE", str(tmp_path_factory.mktemp("evalplus-cache")))
        he, he_manifest = load_dataset("humaneval-plus")
        mbpp, mbpp_manifest = load_dataset("mbpp-plus")
    assert he_manifest.name == "humaneval-plus" and mbpp_manifest.name == "mbpp-plus"
    return {p.task_id: p for p in he + mbpp}


def verdict(problem, completion: str) -> Verdict:
    spec, code = problem.candidate(completion)
    return judge(spec, code).verdict


@pytest.mark.slow
def test_own_rows_load_and_every_gold_passes(own):
    assert sorted(own) == ["HumanEval/1001", "HumanEval/1002", "HumanEval/1003", "HumanEval/1004",
                           "Mbpp/1001", "Mbpp/1002", "Mbpp/1003", "Mbpp/1004"]
    for task_id, problem in own.items():
        assert problem.data_error is None and problem.spec.kind == "harness", task_id
        assert problem.spec.entry_point and problem.spec.prefix == problem.prompt
        assert problem.spec.memory_limit_MB == 4096 and problem.spec.run_timeout == 10.0
        spec, code = problem.candidate(problem.gold)
        j = judge(spec, code)
        assert (j.verdict, j.n_passed, j.n_total) == (Verdict.accepted, 1, 1), (task_id, j.message)
        assert j.tests[0].harness_isolation == "process"
    assert own["Mbpp/1001"].columns["code"].startswith("def count_distinct_words")  # --samples column:code


@pytest.mark.slow
def test_the_reference_outputs_are_computed_once(tmp_path, evalplus_cache, monkeypatch):
    path = write_jsonl(tmp_path / "MbppPlus.jsonl", rows_evalplus.MBPP_PLUS[:2])
    first = load_problems(path, "mbpp-plus")
    assert len(list(evalplus_cache.glob("*.json"))) == 2
    monkeypatch.setattr(reference, "_run", lambda *a: pytest.fail("the sandbox ran again"))
    again = load_problems(path, "mbpp-plus")
    assert [p.spec for p in again] == [p.spec for p in first]


MEAN = "    m = sum(values) / len(values)\n    s = (sum((v - m) ** 2 for v in values) / len(values)) ** 0.5\n"
BALANCED = ("    closing = {')': '(', ']': '[', '}': '{'}\n    stack = []\n    for c in s:\n"
            "        if c in '([{':\n            stack.append(c)\n        elif c in closing:\n"
            "            if not stack or stack.pop() != closing[c]:\n                return NO\n"
            "    return YES if not stack else NO\n")
#: (task id, completion, verdict): right answers in other forms pass, mutants fail.
CANDIDATES = [
    ("HumanEval/1001", MEAN + "    return (round(m, 9), round(s, 9))\n", "accepted"),  # within atol 1e-6
    ("HumanEval/1001", MEAN + "    return (round(m, 3), round(s, 3))\n", "wrong_answer"),
    ("HumanEval/1001", MEAN + "    return [m, s]\n", "wrong_answer"),  # a list where a tuple is expected
    ("HumanEval/1001", MEAN.replace("/ len(values)) ** 0.5", "/ (len(values) - 1)) ** 0.5")
     + "    return (m, s)\n", "wrong_answer"),  # the sample deviation
    ("HumanEval/1002", BALANCED.replace("YES", "1.0").replace("NO", "0.0"), "accepted"),  # 1.0 == True in evalplus
    ("HumanEval/1002", BALANCED.replace("YES", "'True'").replace("NO", "'False'"), "wrong_answer"),
    ("HumanEval/1002", "    return s.count('(') == s.count(')') and s.count('[') == s.count(']')\n", "wrong_answer"),
    ("HumanEval/1003", "    return tuple(max(nums[:i + 1]) for i in range(len(nums)))\n", "wrong_answer"),
    ("HumanEval/1003", "    return [max(nums[:i + 1]) for i in range(len(nums))]\n", "accepted"),
    ("HumanEval/1003", "    return [max(nums[:i]) if i else nums[0] for i in range(len(nums))]\n", "wrong_answer"),
    ("HumanEval/1004", "    return sum(1 / k for k in range(n, 0, -1))\n", "accepted"),  # other rounding
    ("HumanEval/1004", "    return sum(1 / k for k in range(1, n))\n", "wrong_answer"),
    ("HumanEval/1004", "    from fractions import Fraction\n    return sum(Fraction(1, k) for k in range(1, n + 1))\n",
     "wrong_answer"),  # equal to a float only when exact: the tolerance needs the same type
    ("Mbpp/1001", "def count_distinct_words(text):\n    return len(set(text.split()))\n", "wrong_answer"),
    ("Mbpp/1001", "```python\ndef count_distinct_words(text):\n    return len(set(text.lower().split()))\n```",
     "accepted"),
    ("Mbpp/1002", "def ring_area(outer, inner):\n    return 3.141593 * (outer ** 2 - inner ** 2)\n",
     "accepted"),  # within the task's atol 1e-4
    ("Mbpp/1002", "def ring_area(outer, inner):\n    return 3.1416 * (outer ** 2 - inner ** 2)\n", "wrong_answer"),
    ("Mbpp/1003", "def split_parity(nums):\n    return [[n for n in nums if n % 2 == 0], [n for n in nums if n % 2]]\n",
     "wrong_answer"),  # a list where a tuple is expected
    ("Mbpp/1004", "def first_repeated(s):\n    return next((c for i, c in enumerate(s) if c in s[:i]), '')\n",
     "wrong_answer"),
    ("Mbpp/1004", "def first_repeated(s):\n    return next((c for i, c in enumerate(s) if c in s[:i]), None)\n",
     "accepted"),
    ("Mbpp/1004", "def first_repeat(s):\n    return None\n", "runtime_error"),  # no such function
]


@pytest.mark.slow
@pytest.mark.parametrize("task_id,completion,expected", CANDIDATES)
def test_answers_are_judged_by_evalplus_rules(own, task_id, completion, expected):
    assert verdict(own[task_id], completion).value == expected


@pytest.mark.slow
def test_the_task_atol_is_what_lets_a_close_answer_pass(own):
    """Mbpp/1002's ``atol`` is 1e-4: with 0 (so 1e-6 for floats), the same answer fails."""
    spec, code = own["Mbpp/1002"].candidate("def ring_area(outer, inner):\n    return 3.141593 * (outer ** 2 - inner ** 2)\n")
    strict = spec.model_copy(update={"harness": spec.harness.replace('"atol": 0.0001', '"atol": 0')})
    assert strict.harness != spec.harness
    assert judge(strict, code).verdict == Verdict.wrong_answer


@pytest.mark.slow
def test_a_wrong_answer_names_the_input(own):
    spec, code = own["HumanEval/1003"].candidate("    return [max(nums[:i + 1]) for i in range(len(nums))][:3]\n")
    j = judge(spec, code)
    assert j.verdict == Verdict.wrong_answer
    assert "base_input[0]: running_max([1, 3, 2, 5]) returned [1, 3, 3], expected [1, 3, 3, 5]" in j.message


@pytest.mark.slow
def test_an_endless_answer_is_a_time_limit(own):
    spec, code = own["Mbpp/1001"].candidate("def count_distinct_words(text):\n    while True:\n        pass\n")
    assert judge(spec.model_copy(update={"run_timeout": 1.0}), code).verdict == Verdict.time_limit_exceeded


@pytest.mark.slow
def test_sanitized_and_verl_ground_truth_paths(own):
    problem = own["HumanEval/1004"]
    chat = ("Here it is:\n```python\ndef harmonic(n: int) -> float:\n    return sum(1 / k for k in range(1, n + 1))\n\n"
            "print(harmonic(3))\nassert harmonic(1) == 1\n```")
    pytest.importorskip("evalplus")
    spec, code = problem.candidate(chat, sanitize=True)
    assert judge(spec, code).verdict == Verdict.accepted
    truth = problem.spec.model_dump_json()
    assert compute_score("humaneval-plus", chat, truth)["score"] == 1.0
    assert compute_score("humaneval-plus", "```python\ndef harmonic(n):\n    return n\n```", truth)["score"] == 0.0


BROKEN = [  # (canonical solution, the data_error it gives)
    ("    return 1 / (x - 2)\n", "canonical_solution fails on plus_input[1]: ZeroDivisionError: division by zero"),
    ("    return (i for i in range(x))\n", "fails on base_input[0]: its output cannot be carried: a generator value"),
    ("    return x\ndef other(x):\n", "fails on its definition: IndentationError"),
]


@pytest.mark.slow
def test_a_failing_reference_is_a_data_error_never_a_verdict(tmp_path, evalplus_cache):
    rows = [{"task_id": f"HumanEval/{2000 + i}", "prompt": "def f(x):\n", "entry_point": "f",
             "canonical_solution": source, "base_input": [[1]], "plus_input": [[3], [2]], "atol": 0}
            for i, (source, _) in enumerate(BROKEN)]
    rows.append({**rows[0], "task_id": "HumanEval/2009", "prompt": "def g(x):\n", "entry_point": "f",
                 "canonical_solution": "    return x\n"})
    rows.append({**rows[0], "task_id": "HumanEval/2010", "base_input": [], "plus_input": []})
    problems = load_problems(write_jsonl(tmp_path / "rows.jsonl", rows), "humaneval-plus")
    errors = [p.data_error for p in problems]
    for (_, why), error in zip(BROKEN, errors):
        assert why in error
    assert "fails on its definition: NameError: it defines no function 'f'" in errors[3]
    assert "the task has no inputs" in errors[4]
    assert all(p.spec is None for p in problems)
    assert not list(evalplus_cache.glob("*.json"))  # a failure is not cached: the next load tries again
    with pytest.raises(ValueError, match="no test spec"):
        problems[0].candidate("    return 1\n")


@pytest.mark.slow
def test_a_reference_out_of_time_is_a_data_error(tmp_path, monkeypatch):
    monkeypatch.setattr(reference, "REFERENCE_TIMEOUT", 1.0)
    row = {"task_id": "HumanEval/3000", "prompt": "def f(x):\n", "entry_point": "f",
           "canonical_solution": "    while True:\n        pass\n", "base_input": [[1]], "plus_input": [], "atol": 0}
    [problem] = load_problems(write_jsonl(tmp_path / "rows.jsonl", [row]), "humaneval-plus")
    assert "canonical_solution did not finish its inputs in 1 s" in problem.data_error


@pytest.mark.slow
def test_judgebox_eval_scores_the_gold_and_counts_a_broken_task_apart(tmp_path):
    """The whole command: gold passes, a task whose reference fails is test_data_error, left out of pass@k."""
    bad = {"task_id": "HumanEval/2000", "prompt": "def f(x):\n", "entry_point": "f",
           "canonical_solution": BROKEN[0][0], "base_input": [[1]], "plus_input": [[3], [2]], "atol": 0}
    path = write_jsonl(tmp_path / "plus.jsonl", [*rows_evalplus.HUMANEVAL_PLUS, bad])
    summary = tmp_path / "summary.json"
    env = {**os.environ, "JUDGEBOX_EVALPLUS_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "judgebox.cli", "eval", str(path), "--format", "humaneval-plus",
                           "--samples", "gold", "--no-progress", "--results", str(tmp_path / "r.jsonl"),
                           "--summary", str(summary)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(summary.read_text())
    assert data["verdicts"] == {"accepted": 4, "test_data_error": 1}
    assert data["pass_at_k"]["pass@1"] == 1.0
