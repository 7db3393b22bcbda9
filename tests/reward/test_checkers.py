"""Output checkers: each comparison mode's documented behaviour, as functions and through real runs."""

import pytest

from judgebox.reward import StdioCase, TestSpec, Verdict, judge
from judgebox.reward.checkers import CHECKERS, DEFAULT_MODE, get_checker
from judgebox.reward.checkers.float import values_close

MODES = ["exact", "lines", "tokens", "float", "lcb"]


def outcome(mode, output, expected):
    return get_checker(mode)(output, expected)


def test_default_mode_is_lines_and_registry_lists_every_host_mode():
    assert DEFAULT_MODE == "lines" and TestSpec(kind="stdio").checker == "lines"
    assert sorted(CHECKERS) == sorted(MODES)
    with pytest.raises(ValueError, match="checker_program"):
        get_checker("checker")


@pytest.mark.parametrize("mode,want", [("float", [True, True]), ("lcb", [False, False]),
                                       ("exact", [False, False]), ("tokens", [False, False])])
def test_bug_009_float_answers_pass_only_in_float_mode(mode, want):
    """BUG-009: 1/3 to 6 places vs 12 places, 0.1+0.2 vs 0.3."""
    assert [outcome(mode, "0.333333\n", "0.333333333333\n"),
            outcome(mode, "0.30000000000000004\n", "0.3\n")] == want


@pytest.mark.parametrize("mode,want", [("float", True), ("lcb", True), ("exact", False), ("tokens", False),
                                       ("lines", False)])
def test_bug_011_negative_zero(mode, want):
    """BUG-011: "-0.00"/"-0.0" vs "0.00"/"0.0": equal numerically (float, lcb), not as text."""
    assert outcome(mode, "-0.00\n", "0.00\n") is want
    assert outcome(mode, "-0.0\n", "0.0\n") is want


@pytest.mark.parametrize("mode", MODES)
def test_bug_012_a_prefix_or_an_extra_line_fails_in_every_mode(mode):
    """BUG-012: a prefix of the answer, or an extra line, fails (no zip truncation)."""
    assert outcome(mode, "1\n", "1\n2\n3\n") is False
    assert outcome(mode, "1\n2\n3\n4\n", "1\n2\n3") is False


@pytest.mark.parametrize("mode,want", [("tokens", True), ("float", True), ("lines", False), ("exact", False),
                                       ("lcb", False)])
def test_token_modes_ignore_line_breaks_like_testlib_and_codecontests(mode, want):
    """Issue 12: ``tokens``/``float`` compare token sequences (testlib wcmp/rcmp, CodeContests), so
    line breaking and blank lines do not matter there; ``lines``/``exact``/``lcb`` keep line counts
    (BUG-012 narrowed to those)."""
    assert outcome(mode, "1 2\n3\n", "1\n2 3\n") is want
    assert outcome(mode, "1\n\n2\n", "1\n2\n") is want


@pytest.mark.parametrize("output,want", [("1000001\n", False), ("1000000\n", True), ("1000000.0\n", True),
                                         ("999999\n", False), ("1000000.000001\n", False)])
def test_bug_054_float_mode_compares_integer_tokens_exactly(output, want):
    """BUG-054: an integer expected token is compared exactly; tolerance is for real tokens only."""
    assert outcome("float", output, "1000000\n") is want
    assert outcome("float", "2.0000001 1000000\n", "2.0 1000000\n") is True


def test_bug_054_real_run_and_call_values():
    """BUG-054 through a real run (checker float, print(1000001) vs 1000000) and for call values."""
    assert judge(stdio_spec("float", "", "1000000\n"), "print(1000001)").verdict == Verdict.wrong_answer
    assert judge(stdio_spec("float", "", "1000000\n"), "print(1000000)").verdict == Verdict.accepted
    assert values_close(1000001, 1000000) is False and values_close(1000000.0, 1000000) is True
    assert values_close(1000000.5, 1000000.0) is True


@pytest.mark.parametrize("mode,want", [("lines", True), ("tokens", True), ("float", True), ("exact", False)])
def test_bug_014_trailing_space_and_missing_final_newline(mode, want):
    """BUG-014: "1 2 3 \\n4 5 6" vs "1 2 3\\n4 5 6\\n"."""
    assert outcome(mode, "1 2 3 \n4 5 6", "1 2 3\n4 5 6\n") is want


@pytest.mark.parametrize("mode,want", [("lines", True), ("tokens", True), ("float", True), ("exact", False)])
def test_bug_015_crlf_in_expected_or_output(mode, want):
    """BUG-015: CRLF on either side is normalised except in exact mode."""
    assert outcome(mode, "YES\nNO\n", "YES\r\nNO\r\n") is want
    assert outcome(mode, "YES\r\nNO\r\n", "YES\nNO\n") is want


def test_bug_010_call_values_tolerance_and_types():
    """BUG-010: float lists within 1e-6 match in float mode only; a str never equals a number."""
    assert values_close([0.30000000000000004, 2.0], [0.3, 2.0]) is True
    assert values_close([0.30000000000000004, 2.0], [0.3, 2.0], eps=0.0) is False
    assert values_close("0.3", 0.3) is False
    assert values_close(True, 1) is False and values_close(3, 3.0) is True
    assert values_close([1, 2], [1, 2, 3]) is False


def stdio_spec(mode, stdin, expected, **kw):
    return TestSpec(kind="stdio", checker=mode, stdio=[StdioCase(stdin=stdin, expected=expected)], **kw)


@pytest.mark.parametrize("mode,want", [("float", Verdict.accepted), ("lcb", Verdict.wrong_answer),
                                       ("exact", Verdict.wrong_answer)])
def test_bug_009_real_run(mode, want):
    """BUG-009 end to end: the program really prints 0.333333."""
    assert judge(stdio_spec(mode, "", "0.333333333333\n"), 'print(f"{1/3:.6f}")').verdict == want


def test_bug_014_015_real_runs_pass_in_default_mode():
    """BUG-014/015 end to end in the default (lines) mode."""
    assert judge(stdio_spec("lines", "", "1 2 3\n4 5 6\n"), 'print("1 2 3 "); print("4 5 6", end="")').passed
    assert judge(stdio_spec("lines", "", "YES\r\nNO\r\n"), 'print("YES"); print("NO")').passed
    assert judge(stdio_spec("lines", "", "YES\nNO\n"),
                 'import sys; sys.stdout.write("YES\\r\\nNO\\r\\n")').passed


CHECKER = '''
def check(input, output, expected):
    a, b = map(int, input.split())
    v = output.split()
    return len(v) == 1 and v[0].isdigit() and 0 <= int(v[0]) <= 9 and int(v[0]) != a + b
'''
ANY_DIGIT = "a,b=map(int,input().split()); print(9 if a+b!=9 else 0)"


def test_bug_018_checker_program_accepts_another_valid_answer():
    """BUG-018: with mode=checker the checker (run in the sandbox) accepts "9" where the reference is "0"."""
    spec = stdio_spec("checker", "2 5\n", "0\n", checker_program=CHECKER, multiple_answers=True)
    j = judge(spec, ANY_DIGIT)
    assert j.verdict == Verdict.accepted and j.n_passed == 1
    assert judge(spec, "print(7)").verdict == Verdict.wrong_answer  # 2+5 = 7 is not allowed


def test_bug_018_without_checker_is_wrong_answer_flagged_needs_checker():
    """BUG-018: no checker -> WA, and the per-test metadata says needs_checker."""
    j = judge(stdio_spec("lines", "2 5\n", "0\n", multiple_answers=True), ANY_DIGIT)
    assert j.verdict == Verdict.wrong_answer and j.tests[0].needs_checker is True


def test_broken_checker_is_test_data_error_not_a_pass():
    spec = stdio_spec("checker", "2 5\n", "0\n", checker_program="def check(i, o, e):\n    raise ValueError")
    j = judge(spec, ANY_DIGIT)
    assert j.verdict == Verdict.test_data_error and j.pass_rate is None


# ----------------------------------------------------------------------------- BUG-203
NOT_A_NUMBER = {  # id: (output, expected)
    "a-nan": ("nan\n", "0.5\n"),
    "b-minus-nan": ("-nan\n", "0.5\n"),  # C's printf("%f", sqrt(-1.0))
    "c-two-nans": ("nan nan\n", "0.5 0.25\n"),
}
LENIENT = {"d-underscore": ("1_000\n", "1000\n"), "e-arabic-indic": ("\u0661\u0660\u0660\u0660\n", "1000\n")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("output, expected", NOT_A_NUMBER.values(), ids=NOT_A_NUMBER)
def test_bug_203_nan_is_a_wrong_answer_in_every_mode(mode, output, expected):
    assert outcome(mode, output, expected) is False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("output, expected", LENIENT.values(), ids=LENIENT)
def test_bug_203_only_plain_ascii_numbers_are_numbers_except_in_lcb(mode, output, expected):
    """Python's int()/float() take "1_000" and Arabic-Indic digits; a numeric token must match
    ``[+-]?(d+(.d*)?|.d+)([eE][+-]?d+)?`` in ASCII. LiveCodeBench compares with ``Decimal``, which
    takes both: ``lcb`` keeps that parity on purpose."""
    assert outcome(mode, output, expected) is (mode == "lcb")


def test_bug_203_infinities_and_call_results():
    assert outcome("float", "inf\n", "inf\n") is True  # equal infinities (control)
    assert outcome("float", "inf\n", "1e308\n") is False
    assert values_close(float("nan"), 0.5) is False
    assert values_close(float("nan"), float("nan")) is False


@pytest.mark.slow
def test_bug_203_real_runs_printing_nan_score_zero():
    """Through the sandbox: Python's ``nan``, C++'s ``-nan`` and a function returning NaN."""
    cases = [
        (TestSpec(kind="stdio", checker="float", stdio=[StdioCase(stdin="", expected="0.5\n")]),
         "print(float('nan'))"),
        (TestSpec(kind="stdio", checker="float", language="cpp", stdio=[StdioCase(stdin="", expected="0.5\n")]),
         '#include <cstdio>\n#include <cmath>\nint main(){printf("%f\\n", std::sqrt(-1.0));}'),
        (TestSpec(kind="stdio", checker="float", stdio=[StdioCase(stdin="", expected="1000\n")]),
         "print('\\u0661\\u0660\\u0660\\u0660')"),
        (TestSpec.model_validate({"kind": "call", "fn_name": "f", "calls": [{"args": [], "expected": 0.5}]}),
         "def f():\n    return float('nan')\n"),
    ]
    assert [judge(spec, code).verdict for spec, code in cases] == [Verdict.wrong_answer] * 4
