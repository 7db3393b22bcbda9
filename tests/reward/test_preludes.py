"""BUG-047: the official harnesses' preludes. Call-based rows of the LeetCode-derived sets (APPS, TACO,
LiveCodeBench, LeetCode) are judged with their harness's prelude (``List``, ``SortedList``, ...), set
visibly in the spec by the loaders or named by verl ``in_outs`` (Python rows without one get verl
``prime_code``'s block); nothing is decided at run time from the solution, and ``from __future__``
imports stay first (real runs in the embedded sandbox)."""

import json

import pytest

from judgebox.reward import CallCase, TestDataError, TestSpec, Verdict, judge
from judgebox.reward.loaders import load_problems
from judgebox.reward.preludes import PRELUDES, with_prelude

LIST_SOLUTION = "class Solution:\n    def f(self, a: List[int]) -> int:\n        return len(a)\n"


def call_spec(**kw):
    return TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[[1, 2]], expected=2)], **kw)


@pytest.mark.parametrize("name", ["apps", "taco", "livecodebench", "leetcode"])
def test_bug_047_prelude_of_each_leetcode_derived_set_makes_list_defined(name):
    """BUG-047: ``def f(self, a: List[int])`` is accepted with each official prelude."""
    assert judge(call_spec(prelude=PRELUDES[name]), LIST_SOLUTION).verdict == Verdict.accepted


def test_bug_047_without_a_prelude_the_name_error_stays_a_runtime_error():
    """No prelude is guessed at run time: plain call data keeps Python's own rules."""
    j = judge(call_spec(), LIST_SOLUTION)
    assert j.verdict == Verdict.runtime_error and "List" in j.message


def test_bug_047_loaders_set_the_prelude_visibly(tmp_path):
    """APPS/TACO rows (call-based and stdin) and LiveCodeBench rows carry their harness's prelude in
    the spec; the APPS call-based case is accepted end to end."""
    apps = tmp_path / "apps.jsonl"
    rows = [{"problem_id": 0, "question": "q", "starter_code": "class Solution:\n    def f(self, a: List[int]) -> int:",
             "solutions": json.dumps([LIST_SOLUTION]),
             "input_output": json.dumps({"fn_name": "f", "inputs": [[[1, 2]]], "outputs": [[2]]})},
            {"problem_id": 1, "question": "q", "starter_code": "", "solutions": json.dumps(["print(sqrt(4))"]),
             "input_output": json.dumps({"inputs": ["\n"], "outputs": ["2.0\n"]})}]
    apps.write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = load_problems(apps, "apps")
    assert all(p.spec.prelude == PRELUDES["apps"] for p in problems)
    assert [judge(*p.candidate(p.gold)).verdict for p in problems] == [Verdict.accepted] * 2
    lcb = tmp_path / "lcb.jsonl"
    lcb.write_text(json.dumps({"question_id": "x", "question_content": "q", "starter_code": "",
                               "public_test_cases": json.dumps([{"input": "[1, 2]", "output": "2",
                                                                 "testtype": "functional"}]),
                               "private_test_cases": "", "metadata": json.dumps({"func_name": "f"})}) + "\n")
    (p,) = load_problems(lcb, "livecodebench")
    assert p.spec.prelude == PRELUDES["livecodebench"]
    assert judge(p.spec, LIST_SOLUTION).verdict == Verdict.accepted


def test_bug_047_leetcode_prelude_provides_sortedcontainers_and_verl_data_names_it():
    """LeetCode-style data: ``SortedList`` is there (the runtime carries sortedcontainers), and verl
    ``in_outs`` may name the prelude."""
    code = "class Solution:\n    def f(self, a: List[int]) -> int:\n        return SortedList(a)[-1]\n"
    spec = TestSpec.from_in_outs({"fn_name": "f", "inputs": [[[3, 1, 2]]], "outputs": [3], "prelude": "leetcode"})
    assert spec.prelude == PRELUDES["leetcode"] and judge(spec, code).verdict == Verdict.accepted
    with pytest.raises(TestDataError, match="prelude"):
        TestSpec.from_in_outs({"fn_name": "f", "inputs": [[1]], "outputs": [1], "prelude": "nope"})


def test_bug_047_future_imports_stay_first():
    """A candidate starting with ``from __future__ import annotations`` still compiles after the prelude."""
    code = '"""doc"""\nfrom __future__ import annotations\n' + LIST_SOLUTION
    assert with_prelude("import os\n", code).index("import os") > code.index("__future__")
    assert judge(call_spec(prelude=PRELUDES["apps"]), code).verdict == Verdict.accepted


#: LeetCode-style answers that use names only a harness's import block gives: verl's prime_code
#: accepts them (its prelude), so judgebox's verl entry points must too.
VERL_ROWS = [
    ({"fn_name": "f", "inputs": [[[1, 1, 2]]], "outputs": [2]},
     "class Solution:\n    def f(self, a: List[int]) -> int:\n        return len(Counter(a))\n"),
    ({"inputs": ["16\n"], "outputs": ["4\n"]}, "print(isqrt(int(input())))\n"),  # stdio: from math import *
]


@pytest.mark.parametrize("in_outs,code", VERL_ROWS, ids=["call", "stdio"])
def test_python_in_outs_without_a_prelude_key_get_verl_prime_codes_prelude(in_outs, code):
    """verl ``in_outs`` data without a ``prelude`` key: Python gets the import block verl's
    ``prime_code`` scorer puts before every solution (call-based and stdio alike), so
    ``check_correctness``/``compute_score`` give its verdict (was -2, ``NameError``);
    ``"prelude": "none"`` opts out; another language never gets one."""
    from judgebox.integrations.verl import check_correctness, compute_score

    assert TestSpec.from_in_outs(in_outs).prelude == PRELUDES["verl"]
    assert "sys.setrecursionlimit(6 * 10**5)" in PRELUDES["verl"]
    assert check_correctness(None, in_outs, code)[0] == [True]
    assert compute_score("apps", f"```python\n{code}```", json.dumps(in_outs))["score"] == 1.0
    bare = {**in_outs, "prelude": "none"}
    assert TestSpec.from_in_outs(bare).prelude == ""
    assert judge(TestSpec.from_in_outs(bare), code).verdict == Verdict.runtime_error
    assert TestSpec.from_in_outs({**in_outs, "language": "cpp"}).prelude == ""


@pytest.mark.parametrize("name", ["verl", "apps", "livecodebench", "leetcode"])
def test_a_preludes_standard_library_is_preloaded_and_changes_no_output(name):
    """The standard-library modules a prelude imports go to ``forkserver_preload`` (a warm fork-server
    instead of ~20 ms of imports per test case); third-party ones (numpy, sortedcontainers) never do,
    and every case prints the same with and without the preload."""
    from judgebox.reward.harness import build_plan
    from judgebox.sandbox import LocalSandbox

    spec = TestSpec.from_in_outs({"inputs": ["3\n", "5\n"], "outputs": ["3 0\n", "5 1\n"]}).model_copy(
        update={"prelude": PRELUDES[name]})
    code = ("import sys\nn = int(input())\n"
            "print(n, sum(m in sys.modules for m in ('numpy', 'sortedcontainers')) if n == 5 else 0)\n")
    plan = build_plan(spec, code)
    preload = plan.request.forkserver_preload
    assert {"collections", "math"} <= set(preload) or name == "leetcode" and "collections" in preload, preload
    assert not {"numpy", "sortedcontainers"} & set(preload)
    sandbox = LocalSandbox()
    runs = [sandbox.run_tests(plan.request.model_copy(update={"forkserver_preload": p})) for p in (preload, [])]
    assert [[(r.return_code, r.stdout) for r in res.run_results] for res in runs][0] == \
        [[(r.return_code, r.stdout) for r in res.run_results] for res in runs][1]
    assert runs[0].run_results[0].stdout == "3 0\n"
