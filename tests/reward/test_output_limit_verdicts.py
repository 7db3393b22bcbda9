"""Verdicts for output cut at the sandbox output limit (1 MiB of stdout): an expected output longer than
the limit is unjudgeable (test_data_error, naming the limit and how to raise it) while the cut output
agrees with it so far, but a flood that already differs before the cut, or that is longer than a short
expected output, is a wrong answer; raising JUDGEBOX_OUTPUT_LIMIT_BYTES judges it; and a correct
function-completion solution printing past the limit is still accepted, since the harness swallows
its stdout (real runs in the embedded sandbox)."""

import pytest

from judgebox.integrations.verl import compute_score
from judgebox.integrations.verl.reward import SCORE_KEYS
from judgebox.reward import StdioCase, TestSpec, Verdict, judge
from judgebox.sandbox import SandboxClient

BIG = TestSpec(kind="stdio", stdio=[StdioCase(stdin="", expected="x" * 1500000 + "\n")])


def test_user_finding_3_expected_output_over_the_output_limit_is_test_data_error():
    """A correct program printing 1.5 MB past the 1 MiB cap cannot be judged: test_data_error, not
    wrong_answer; the message names the limit and how to raise it."""
    j = judge(BIG, "print('x'*1500000)")
    assert (j.verdict, j.pass_rate, j.n_total) == (Verdict.test_data_error, None, 1)
    assert ("the expected output (1500001 bytes) exceeds the sandbox output limit (stdout was cut at 1048576 bytes)"
            in j.message)
    assert "JUDGEBOX_OUTPUT_LIMIT_BYTES=3000002" in j.message
    score = compute_score("x", "print('x'*1500000)", BIG)
    assert (score["verdict"], score["infra_error"], set(score)) == ("test_data_error", True, set(SCORE_KEYS))


def test_user_finding_3_wrong_program_with_big_expected_output_is_not_judged_either():
    """A truncated output against an expected output at least as long is unjudgeable while its
    complete tokens agree with the expected ones (here one token, cut in the middle)."""
    assert judge(BIG, "print('y'*1500000)").verdict == Verdict.test_data_error


def test_a_flood_that_already_differs_before_the_cut_is_a_wrong_answer():
    """Second trial: expected "1 2 3 ..." (1.2 MB), the program floods "9 9 9 ...": its first token
    is already wrong, so it is a wrong answer (reward 0), not an unjudgeable test_data_error (None)
    that a policy could reach by flooding."""
    expected = " ".join(str(i % 10) for i in range(600_000)) + "\n"
    spec = TestSpec(kind="stdio", stdio=[StdioCase(stdin="", expected=expected)])
    j = judge(spec, "print('9 ' * 600000)")
    assert (j.verdict, j.pass_rate) == (Verdict.wrong_answer, 0.0)
    assert "differs from the expected one before the cut" in j.tests[0].stderr
    assert judge(spec, f"print({expected[:-1]!r})").verdict == Verdict.test_data_error  # right so far


def test_user_finding_3_shorter_expected_output_stays_wrong_answer():
    """The program printed more than the cap, the expected output is shorter: a wrong answer for sure."""
    spec = TestSpec(kind="stdio", stdio=[StdioCase(stdin="", expected="x" * 10 + "\n")])
    j = judge(spec, "print('x'*1500000)")
    assert (j.verdict, j.pass_rate) == (Verdict.wrong_answer, 0.0)
    assert "[judgebox] output limit exceeded" in j.tests[0].stderr


def test_user_finding_3_raising_the_limit_as_the_message_says_judges_it(monkeypatch):
    """JUDGEBOX_OUTPUT_LIMIT_BYTES=3000002 (the message's advice) for an embedded sandbox: accepted."""
    monkeypatch.setenv("JUDGEBOX_OUTPUT_LIMIT_BYTES", "3000002")
    with SandboxClient("") as client:
        j = judge(BIG, "print('x'*1500000)", client=client)
    assert (j.verdict, j.pass_rate) == (Verdict.accepted, 1.0)


@pytest.mark.parametrize("spec", [
    TestSpec(kind="harness", harness="def check(candidate):\n    assert candidate(2, 3) == 5", entry_point="add"),
    TestSpec(kind="assert", asserts=["assert add(2, 3) == 5", "assert add(0, 0) == 0"]),
    TestSpec(kind="call", fn_name="add", calls=[{"args": [2, 3], "expected": 5}]),
], ids=["harness", "asserts", "call"])
def test_a_correct_solution_that_prints_more_than_the_output_limit_is_accepted(spec):
    """2 MiB of debug prints (past the 1 MiB stdout limit) pushed the result line out: runtime_error.
    The harness swallows the solution's stdout, as HumanEval's and MBPP's own harnesses do."""
    code = "import sys\nprint('debug ' * 350_000)\nsys.stdout.write('x' * 1_000_000)\ndef add(a, b):\n    return a + b\n"
    seen = set()
    for variant in (spec, spec.model_copy(update={"setup_code": "X = 1"})):  # tests apart; a setup keeps them in
        j = judge(variant, code)
        assert (j.verdict.value, j.n_passed) == ("accepted", spec.n_tests), j
        seen.add(j.tests[0].harness_isolation)
    assert seen == ({"process"} if spec.kind == "call" else {"process", "in-process"})
