"""BUG-053: a custom checker program that fails on the contestant's output. A checker raising, looping
or returning a non-bool on the program's output rejects it: wrong_answer, reward 0.0 in judge,
compute_score and code_reward. Only a checker that rejects or fails on the jury answer itself
(check(input, expected, expected)) makes test_data_error, and that jury check runs once per problem
(real runs in the embedded sandbox)."""

import pytest

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import compute_score
from judgebox.reward import StdioCase, TestSpec, Verdict, judge
from judgebox.reward.checkers.checker import JURY_CHECKED
from judgebox.sandbox import SandboxClient


def parse_checker_spec(program="def check(i, o, e): return int(o) == int(e)", expected="5\n"):
    return TestSpec(kind="stdio", checker="checker", checker_program=program,
                    stdio=[StdioCase(stdin="", expected=expected)])


def test_bug_053_unparsable_output_is_wrong_answer_everywhere():
    """BUG-053: a checker raising on the contestant's output is wrong_answer, reward 0.0 in judge,
    compute_score (infra_error False) and code_reward; print(5) stays accepted."""
    spec = parse_checker_spec()
    j = judge(spec, "print('x')")
    assert j.verdict == Verdict.wrong_answer and j.pass_rate == 0.0
    assert "the checker rejected this output" in j.tests[0].stderr and "ValueError" in j.tests[0].stderr
    assert judge(spec, "print(5)").verdict == Verdict.accepted
    gt = spec.model_dump_json()
    score = compute_score("x", "```python\nprint('x')\n```", gt)
    assert (score["score"], score["verdict"], score["infra_error"]) == (0.0, "wrong_answer", False)
    assert code_reward(["p"], ["```python\nprint('x')\n```"], test_spec=[gt]) == [0.0]


@pytest.mark.slow
def test_bug_053_checker_timeout_or_non_bool_on_the_output_is_wrong_answer():
    """Same kind: a checker that loops or returns a non-bool on this output rejects it."""
    loops = "def check(i, o, e):\n    if o.strip() != e.strip():\n        while True: pass\n    return True\n"
    spec = parse_checker_spec(loops).model_copy(update={"run_timeout": 1.0})
    assert judge(spec, "print(6)").verdict == Verdict.wrong_answer
    odd = "def check(i, o, e):\n    return True if o == e else 'no'\n"
    assert judge(parse_checker_spec(odd), "print(6)").verdict == Verdict.wrong_answer


@pytest.mark.parametrize("program", ["def check(i, o, e): return int(o) == int(e) + 1",
                                     "def check(i, o, e): raise RuntimeError('broken')"])
@pytest.mark.slow
def test_bug_053_a_checker_failing_on_the_jury_answer_is_test_data_error_once_per_problem(program):
    """Only a checker that rejects or fails on check(input, expected, expected) is test_data_error; the
    outcome is remembered, so the next submission of the problem is not checked against the jury again."""
    JURY_CHECKED.clear()
    spec = parse_checker_spec(program)
    j = judge(spec, "print(6)")
    assert j.verdict == Verdict.test_data_error and "stdio[0]" in j.message and j.pass_rate is None
    calls = []

    class Counting(SandboxClient):
        def run_tests(self, req):
            calls.append(len(req.cases))
            return super().run_tests(req)

    assert judge(spec, "print(6)", client=Counting()).verdict == Verdict.test_data_error
    assert calls == [1]  # the solution's run only: the jury outcome was remembered
    calls.clear()
    good = parse_checker_spec("def check(i, o, e): return o.split() == e.split()", expected="7\n")
    judge(good, "print(7)", client=Counting())
    judge(good, "print(7)", client=Counting())
    assert calls == [1, 2, 1, 1]  # the jury answer is checked on the first submission only
