"""The judge: honest verdicts for every test kind, pinned by the named failure cases (real programs)."""

import concurrent.futures
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from judgebox.reward import CallCase, StdioCase, TestSpec, Verdict, judge
from judgebox.reward.spec import TestDataError
from judgebox.sandbox import SandboxClient

ADD = "a, b = map(int, input().split()); print(a + b)"


def stdio(*cases, **kw):
    return TestSpec(kind="stdio", stdio=[StdioCase(stdin=i, expected=o) for i, o in cases], **kw)


def call(fn_name, *cases, **kw):
    return TestSpec(kind="call", fn_name=fn_name, calls=[CallCase(args=a, expected=e) for a, e in cases], **kw)


def harness(prefix, test, entry_point):
    return TestSpec(kind="harness", prefix=prefix, harness=test, entry_point=entry_point)


# ---------------------------------------------------------------- B. vacuous passes, infra errors
@pytest.mark.parametrize("in_outs", ['{"inputs": [], "outputs": []}', '{"inputs": ["1"]',
                                     '{"inputs": ["1","2"], "outputs": ["1"]}'])
def test_bug_005_empty_undecodable_or_mismatched_tests_are_test_data_errors(in_outs):
    """BUG-005: never pass; reward None."""
    with pytest.raises(TestDataError):
        TestSpec.from_in_outs(in_outs)
    j = judge(TestSpec(kind="stdio"), "print(1)")
    assert j.verdict == Verdict.test_data_error and j.pass_rate is None and not j.passed


def test_bug_006_completion_cannot_swallow_the_tests():
    """BUG-006: an unterminated triple quote in the completion is a compile error, tests compiled apart."""
    spec = harness("def inc(x):\n", "def check(candidate):\n    assert candidate(1) == 2\n", "inc")
    assert judge(spec, '    return x + 1\n"""').verdict == Verdict.compile_error
    assert judge(spec, "    return x + 1\n").verdict == Verdict.accepted


def test_bug_007_unreachable_sandbox_is_infra_error_not_wrong_answer():
    """BUG-007: a refused connection gives infra_error and reward None."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = SandboxClient(f"http://127.0.0.1:{port}", max_attempts=2, deadline=10, backoff_initial=0,
                           backoff_jitter=0)
    with client:
        j = judge(stdio(("1 2\n", "3\n")), ADD, client=client)
    assert j.verdict == Verdict.infra_error and j.pass_rate is None and j.n_passed == 0


def test_bug_008_gold_self_check():
    """BUG-008: the gold a+b passes both cases."""
    j = judge(stdio(("1 2\n", "3\n"), ("10 -4\n", "6\n")), ADD)
    assert j.verdict == Verdict.accepted and (j.n_passed, j.n_total) == (2, 2)


# ---------------------------------------------------------------- C. call results
def test_bug_010_call_floats_tolerance_in_float_mode_and_types():
    """BUG-010: [0.1+0.2, 2.0] vs [0.3, 2.0] passes in float mode only; "0.3" vs 0.3 fails."""
    code = "def mix(a, b): return [a + b, 2.0]"
    assert judge(call("mix", ([0.1, 0.2], [0.3, 2.0]), checker="float"), code).verdict == Verdict.accepted
    assert judge(call("mix", ([0.1, 0.2], [0.3, 2.0])), code).verdict == Verdict.wrong_answer
    assert judge(call("mix", ([0.1, 0.2], 0.3), checker="float"), "def mix(a, b): return '0.3'").verdict \
        == Verdict.wrong_answer


def test_bug_016_raising_function_fails_and_null_expected_is_malformed():
    """BUG-016: an exception is a runtime error even when expected is ""; expected null is a data error."""
    code = 'def solve(x):\n    raise ValueError("boom")'
    j = judge(call("solve", ([1], "")), code)
    assert j.verdict == Verdict.runtime_error and "boom" in j.tests[0].stderr
    assert judge(call("solve", ([1], None)), code).verdict == Verdict.test_data_error


def test_bug_017_results_compared_as_json_values():
    """BUG-017: "bab" == "bab" (not str(result) vs JSON text); True vs true and 3 vs 3 pass; tuple -> list."""
    sol = 'class Solution:\n    def longestPalindrome(self, s: str) -> str:\n        return "bab"'
    assert judge(TestSpec.from_in_outs({"inputs": ['"babad"'], "outputs": ['"bab"'], "fn_name": "longestPalindrome"}),
                 sol).verdict == Verdict.accepted
    assert judge(call("f", ([], True)), "def f(): return True").passed
    assert judge(call("f", ([], 3)), "def f(): return 3").passed
    assert judge(call("f", ([], [1, 2])), "def f(): return (1, 2)").passed
    assert judge(call("f", ([], 1)), "def f(): return True").verdict == Verdict.wrong_answer


def test_bug_020_solution_class_method_found_and_wins():
    """BUG-020: a LeetCode class Solution method is found; a top-level def too; the method wins."""
    spec = call("removeTrailingZeros", (["51230100"], "512301"))
    method = 'class Solution:\n    def removeTrailingZeros(self, num: str) -> str:\n        return num.rstrip("0")'
    assert judge(spec, method).passed
    assert judge(spec, 'def removeTrailingZeros(num):\n    return num.rstrip("0")').passed
    assert judge(spec, method + '\ndef removeTrailingZeros(num):\n    return "wrong"').passed


def test_lying_eq_object_cannot_pass_a_call_test():
    """A result whose __eq__ always says True is not a JSON value: wrong answer."""
    code = "class Liar:\n    def __eq__(self, o): return True\ndef f(): return Liar()"
    assert judge(call("f", ([], 42)), code).verdict == Verdict.wrong_answer


def test_lying_eq_object_cannot_pass_an_assert_test():
    """`assert f() == 42` with a lying __eq__ fails (asserts compare honestly)."""
    spec = TestSpec(kind="assert", asserts=["assert f() == 42", "assert [f()] == [42]"])
    code = "class Liar(int):\n    def __eq__(self, o): return True\n    __hash__ = int.__hash__\ndef f(): return Liar(1)"
    j = judge(spec, code)
    assert j.verdict == Verdict.wrong_answer and j.n_passed == 0
    assert judge(spec, "def f(): return 42").passed


# ---------------------------------------------------------------- D. every test counts
def test_bug_021_every_test_counts():
    """BUG-021: 12 cases, the 11th wrong: binary 0, pass rate 11/12."""
    spec = stdio(*[(f"{i}\n", f"{2 * i}\n") for i in range(1, 13)])
    j = judge(spec, "n = int(input()); print(2*n if n != 11 else 0)")
    assert j.verdict == Verdict.wrong_answer and not j.passed
    assert (j.n_passed, j.n_total) == (11, 12) and j.pass_rate == pytest.approx(0.9167, abs=1e-4)
    assert [t.verdict for t in j.tests].index(Verdict.wrong_answer) == 10


def test_stop_on_first_failure_skips_but_still_counts_every_test():
    """The sandbox stops at the first failing exit (a runtime error; stdio wrong answers are only
    known on the host, so those cases still run); skipped tests count as not passed."""
    spec = stdio(*[(f"{i}\n", f"{2 * i}\n") for i in range(1, 6)])
    j = judge(spec, "n = int(input()); assert n != 2; print(2*n)", stop_on_first_failure=True)
    assert [t.verdict for t in j.tests] == [Verdict.accepted, Verdict.runtime_error] + [Verdict.skipped] * 3
    assert (j.n_passed, j.n_total) == (1, 5)


# ---------------------------------------------------------------- F. harness escapes
@pytest.mark.parametrize("completion", [
    "    return 0\nimport os\nos._exit(0)\n",
    "    return 0\nraise SystemExit(0)\n",
    "    return 0\nimport posix\nposix._exit(0)\n",
    "    return 0\nimport atexit, os\natexit.register(lambda: os._exit(0))\nimport sys\nsys.exit(0)\n",
    "    import os; os._exit(0)\n",
])
def test_bug_027_early_exit_with_status_0_never_passes(completion):
    """BUG-027: os._exit(0), SystemExit(0), posix._exit(0), atexit, exiting inside the call: all fail."""
    spec = harness("def add(a, b):\n", "def check(candidate):\n    assert candidate(1, 2) == 3\n", "add")
    j = judge(spec, completion)
    assert j.verdict in (Verdict.runtime_error, Verdict.wrong_answer) and not j.passed
    assert judge(spec, "    return a + b\n").passed


UNITTEST = """import unittest
class TestCases(unittest.TestCase):
    def test_double(self):
        self.assertEqual(task_func(2), 4)
    def test_triple(self):
        self.assertEqual(task_func(3), 6)
"""


@pytest.mark.parametrize("solution", [
    "import unittest\nunittest.TestCase.run = lambda self, result=None: None\ndef task_func(x):\n    return -1\n",
    "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\ndef task_func(x):\n    return -1\n",
    "import unittest\ndef task_func(x):\n    unittest.TestCase.assertEqual = lambda *a, **k: None\n    return -1\n",
    "import unittest\ndef task_func(x):\n    raise unittest.SkipTest('no')\n",
])
def test_bug_029_patched_test_framework_runs_every_test(solution):
    """BUG-029: patching unittest (run, assertion helpers) or skipping cannot make 0 tests "pass"."""
    spec = TestSpec(kind="harness", harness=UNITTEST)
    assert not judge(spec, solution).passed
    assert judge(spec, "def task_func(x):\n    return 2 * x\n").passed


_BUILD_CLASS = ("import builtins\n_o = builtins.__build_class__\n"
                "def bc(f, name, *b, **kw):\n    c = _o(f, name, *b, **kw)\n    for m in list(vars(c)):\n"
                "        if m.startswith('test'):\n            setattr(c, m, lambda self: None)\n    return c\n"
                "builtins.__build_class__ = bc\n")


@pytest.mark.parametrize("solution, verdict", [
    (_BUILD_CLASS + "def task_func(x):\n    return -1\n", Verdict.wrong_answer),
    ("import builtins\n_o = builtins.__build_class__\n"
     "builtins.__build_class__ = lambda f, name, *b, **kw: _o(f, name, object)\n"
     "def task_func(x):\n    return -1\n", Verdict.wrong_answer),
])
def test_a_solution_that_patches_builtins_cannot_empty_or_pass_the_unittest_file(solution, verdict):
    """The trial's findings 1-2: a solution replacing ``builtins.__build_class__`` turned every test
    method of the (in-process) unittest file into a no-op (accepted 2/2, reward 1.0), or made the
    file define no TestCase (test_data_error: reward masked instead of 0). Builtins are put back
    after the solution ran, so both are the wrong answers they are."""
    j = judge(TestSpec(kind="harness", harness=UNITTEST), solution)
    assert (j.verdict, j.n_passed, j.n_total) == (verdict, 0, 2), j.message
    assert j.tests[0].harness_isolation == "in-process"


@pytest.mark.parametrize("solution", [
    "import builtins\nbuiltins.map = lambda f, xs: [2, 3]\ndef add(a, b):\n    return 0\n",
    "import builtins\ndef add(a, b):\n    builtins.map = lambda f, xs: [2, 3]\n    return 0\n",
])
def test_a_builtin_patched_by_the_solution_does_not_reach_in_process_asserts(solution):
    """The trial's finding 5: with a lambda in the tests (so in-process), ``builtins.map`` replaced at
    import or while a test runs made a wrong ``add`` pass. The tests look builtins up in their own
    copy, made before the solution ran."""
    spec = TestSpec(kind="assert", asserts=["assert add(0, 0) == 0",
                                            "assert list(map(lambda x: add(x, 1), [1, 2])) == [2, 3]"])
    j = judge(spec, solution)
    assert [t.verdict for t in j.tests] == [Verdict.accepted, Verdict.wrong_answer]
    assert j.tests[0].harness_isolation == "in-process"
    assert judge(spec, "def add(a, b):\n    return a + b\n").passed


def test_a_solution_that_changes_its_argument_in_place_is_judged_as_in_process():
    """The trial's finding 4: the tests-apart harness passed the solution copies of the arguments,
    so a test checking ``x`` after ``candidate(x)`` failed a right ``a.sort()`` (wrong_answer). The
    arguments the solution changed come back and are applied to the tests' own objects."""
    harness = ("def check(candidate):\n    x, d, s = [3, 1, 2], {'a': [1]}, {1}\n"
               "    assert candidate(x, d, s) is None\n"
               "    assert x == [1, 2, 3] and d == {'a': [1], 'b': (2, 3)} and s == {1, 5}\n")
    spec = TestSpec(kind="harness", harness=harness, entry_point="f")
    j = judge(spec, "def f(a, d, s):\n    a.sort()\n    d['b'] = (2, 3)\n    s.add(5)\n")
    assert (j.verdict, j.tests[0].harness_isolation) == (Verdict.accepted, "process"), j.message
    j = judge(spec, "def f(a, d, s):\n    a = sorted(a)\n    d['b'] = (2, 3)\n    s.add(5)\n")
    assert j.verdict == Verdict.wrong_answer


# ---------------------------------------------------------------- G. threads and timeouts
@pytest.mark.slow
def test_bug_030_judging_from_a_worker_thread_times_out_without_signals():
    """BUG-030: from a worker thread: TLE (the program ran, and was stopped), no 'signal only works in main
    thread' (no wall-clock bound: the test's outcome must not depend on the machine's load)."""
    spec = stdio(("", ""), run_timeout=1)
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        j = ex.submit(judge, spec, "while True:\n    pass").result()
    # either bound of the run step may stop it (CPU, or wall less the time it waited for a CPU, as
    # read from the main thread's run queue): on a loaded host 0.90 s of CPU in 1.08 s of wall was seen
    assert j.verdict == Verdict.time_limit_exceeded and j.tests[0].cpu_time > 0.5, j
    assert "signal" not in (j.message or "")


SLOW_COMPILE = ("constexpr long slow() { long s = 0; for (long i = 0; i < 20000000; i++) s += i % 7; return s; }\n"
                "static_assert(slow() > 0);\nint main() { return 0; }\n")


@pytest.mark.slow
def test_a_compile_starved_by_the_host_is_infra_error_not_compile_error():
    """A compile stopped at its time limit is a compile_error only when it used the CPU it was given:
    a compile of several CPU seconds under compile_timeout 0.3 is stopped, and with CPU ~ wall it is
    one; the same under compile_timeout 1 beside busy processes (each its own session, so it is
    starved with autogroup on or off) is stopped at the wall cap with a fraction of that in CPU (a
    compiler does not sleep): the host's fault, so infra_error (judge it again), not a verdict on the
    program. (The quick run's CPU share depends on the machine's load: its verdict is checked on the
    values of an unstarved run, the starved run's on the real run.)"""
    from judgebox.reward.judge import _compile_verdict
    from judgebox.sandbox import LocalSandbox
    from judgebox.sandbox.models import CommandRunResult

    sandbox = LocalSandbox(max_concurrency=1)
    response = sandbox.run_code({"code": SLOW_COMPILE, "language": "cpp", "compile_timeout": 0.3})
    quick = response.compile_result
    assert quick.status == "TimeLimitExceeded" and quick.cpu_time >= 0.3, quick
    # issue 39, item 9: the compiler printed nothing; the response and the verdict say what stopped it
    assert response.message.startswith("compile step: stopped at compile_timeout (0.3 s) after "), response.message
    used = CommandRunResult(status="TimeLimitExceeded", execution_time=0.34, cpu_time=0.31, stderr="")
    assert _compile_verdict(used) == (Verdict.compile_error, "[judgebox] the compile was stopped at its time limit "
                                      "(compile_timeout) after 0.31 s of CPU in 0.34 s of wall time\n")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(max(16, 8 * (os.cpu_count() or 2)))]
    try:
        time.sleep(0.3)
        starved = sandbox.run_code({"code": SLOW_COMPILE + "// starved\n", "language": "cpp",
                                    "compile_timeout": 1}).compile_result
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert starved.status == "TimeLimitExceeded" and starved.cpu_time < 0.5 * starved.execution_time, starved
    verdict, message = _compile_verdict(starved)
    assert verdict == Verdict.infra_error and "the host starved it" in message, message


@pytest.mark.slow
def test_bug_045_per_test_verdicts_and_partial_reward():
    """BUG-045: [PASS, TLE]: pass rate 0.5, not accepted."""
    code = 's = input().strip()\nif s == "loop":\n    while True: pass\nprint(int(s) * 2)'
    j = judge(stdio(("1\n", "2\n"), ("loop\n", "?\n"), run_timeout=1), code)
    assert [t.verdict for t in j.tests] == [Verdict.accepted, Verdict.time_limit_exceeded]
    assert j.pass_rate == 0.5 and j.verdict == Verdict.time_limit_exceeded


# ---------------------------------------------------------------- kinds and errors
@pytest.mark.slow
def test_timed_out_assert_is_named_and_the_harness_protocol_stays_out_of_the_result():
    """The trial's F8: asserts [pass, endless loop, pass] at run_timeout 1: asserts[1] is the timeout,
    its result and the judgement's message say so in words (no harness protocol line: those carry
    the run's nonce), and asserts[2], which never ran, is skipped with no times of its own."""
    spec = TestSpec(kind="assert", asserts=["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"],
                    run_timeout=1)
    j = judge(spec, "def f(x):\n    while x == 2:\n        pass\n    return x\n")
    assert [t.verdict for t in j.tests] == [Verdict.accepted, Verdict.time_limit_exceeded, Verdict.skipped]
    assert (j.verdict, j.n_passed, j.n_total) == (Verdict.time_limit_exceeded, 1, 3)
    assert j.message.startswith("[judgebox] stopped at the time limit after "), j.message
    assert j.message.endswith("[judgebox] asserts[1] was running (the run's limit: 3 asserts x run_timeout 1 s)")
    assert j.tests[1].stdout.strip() == "" and '"status"' not in j.message
    assert (j.tests[2].execution_time, j.tests[2].cpu_time, j.tests[2].stdout) == (None, None, "")


def test_python_syntax_error_in_stdio_program_is_compile_error():
    assert judge(stdio(("1 2\n", "3\n")), "a, b = map(int, input().split()) print(a)").verdict == Verdict.compile_error
    assert judge(stdio(("1 2\n", "3\n")), "eval('1 +')").verdict == Verdict.runtime_error


def test_mbpp_style_assert_tests_and_setup_code():
    spec = TestSpec(kind="assert", setup_code="BASE = 10", asserts=["assert f(1) == 11", "assert f(2) == 12"])
    assert judge(spec, "def f(x):\n    return x + BASE_OFFSET\nBASE_OFFSET = 10").passed
    j = judge(spec, "def f(x):\n    return 11")
    assert j.verdict == Verdict.wrong_answer and (j.n_passed, j.n_total) == (1, 2)


def test_solution_cannot_read_the_tests_from_disk():
    """Tests travel on stdin (read before the solution runs): no tests file lies in the work dir."""
    spec = TestSpec(kind="assert", asserts=["assert f() == 'secret-answer'"])
    code = "import os\ndef f():\n    return ' '.join(open(n).read() for n in sorted(os.listdir('.')) if os.path.isfile(n))"
    j = judge(spec, code)
    assert j.verdict == Verdict.wrong_answer


def test_unknown_language_is_a_test_data_error_naming_the_field():
    j = judge(stdio(("", ""), language="klingon"), "x")
    assert j.verdict == Verdict.test_data_error and "language" in j.message


def test_call_tests_need_fn_name_and_python():
    assert judge(TestSpec(kind="call", calls=[CallCase(args=[], expected=1)]), "").verdict == Verdict.test_data_error
    j = judge(call("f", ([], 1), language="cpp"), "int f(){return 1;}")
    assert j.verdict == Verdict.test_data_error and "Python only" in j.message


def test_stdlib_types_with_python_eq_still_compare_honestly():
    """Fraction's __eq__ is Python code from the stdlib: trusted, so a correct Fraction result passes."""
    spec = TestSpec(kind="assert", asserts=["assert half() == 0.5"])
    assert judge(spec, "from fractions import Fraction\ndef half():\n    return Fraction(1, 2)").passed


def test_a_long_compile_error_keeps_the_first_error():
    """A new user's finding: the message of a compile error was its last 2,000 characters, starting
    mid-line with follow-on errors; the first error (the cause) is kept now, and the cut is said."""
    code = "int main() { undefined_a(); }\n" + "".join(f"void g{i}() {{ undefined_{i}(); }}\n" for i in range(100))
    j = judge(TestSpec(kind="stdio", language="cpp", stdio=[{"stdin": "", "expected": ""}]), code)
    assert j.verdict == Verdict.compile_error
    assert "error: ‘undefined_a’ was not declared in this scope" in j.message.split("\n")[1], j.message[:300]
    assert re.search(r"\n\[judgebox: [0-9]+ more characters of compiler output\]$", j.message), j.message[-200:]


def test_a_memory_limit_and_a_silent_failure_say_what_happened():
    """A new user's findings: memory_limit_exceeded and a bash test's exit 1 had an empty message."""
    j = judge(TestSpec(kind="stdio", stdio=[{"stdin": "", "expected": "1"}], memory_limit_MB=128), "x = 'a' * 10**10")
    assert (j.verdict, j.message) == (Verdict.memory_limit_exceeded,
                                      "[judgebox] stopped at the memory limit (memory_limit_MB 128)")
    j = judge(TestSpec(kind="stdio", language="bash", stdio=[{"stdin": "", "expected": "1"}]), "exit 1")
    assert (j.verdict, j.message) == (Verdict.runtime_error, "[judgebox] exit status 1, nothing on stdout or stderr")


def test_a_failed_bare_assert_is_named():
    """A new user's finding: an MBPP ``wrong_answer`` said only ``AssertionError``; the assert that failed
    is named now (an assert with its own message keeps it)."""
    spec = TestSpec(kind="assert", asserts=["assert f(1) == 1", "assert f(2) == 5", "assert f(3) == 3"])
    j = judge(spec, "def f(x):\n    return x\n")
    assert (j.verdict, j.message) == (Verdict.wrong_answer, "AssertionError: assert f(2) == 5")
    j = judge(TestSpec(kind="assert", asserts=['assert f(1) == 1, "one"']), "def f(x):\n    return 2\n")
    assert j.message == "AssertionError: one"
