"""Issue 37, finding 1: the Python harnesses hold. The only way to pass a test is to produce the
expected value; no code of the solution makes a failed comparison count as passed, reports a test
as passed or as a test-data error, or ends the run so that it reads as a pass.

Each attack below judged a wrong answer ``accepted`` (or, in call mode, masked it as
``test_data_error``) on 2056cab. Every probe aims only at what the test itself creates (its own
spec, its own candidate, files in its own run's working folder)."""

import pytest

from judgebox.reward import CallCase, TestSpec, Verdict, compute_score, judge

#: Code that, once it runs in the *tests'* process, walks that process's frames for the nonce and
#: prints a passing marker (per-test lines for an assert batch, then the final line) on fd 1.
_FORGE_IN_TESTS_PROCESS = r'''
import os, re, sys
def _forge():
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()):
            if isinstance(v, str) and re.fullmatch("[0-9a-f]{32}", v):
                out = "".join("\n%s {\"index\": %d, \"status\": \"ok\", \"seconds\": 0, \"cpu\": 0, \"wait\": 0}\n"
                              % (v, i) for i in range(20))
                out += "\n%s {\"status\": \"%s\", \"ran\": 20, \"error\": \"forged\"}\n" % (v, STATUS)
                os.write(1, out.encode())
                os._exit(0)
        f = f.f_back
_forge()
'''


def _module_object_attack(status: str) -> str:
    """finding 1a: the solution writes a file, then names a module object after it; on 2056cab the
    tests' process imported it by that name, with the working folder first on ``sys.path``."""
    body = "STATUS = %r\n" % status + _FORGE_IN_TESTS_PROCESS
    return ("import types\n"
            "with open('jbx_payload.py', 'w') as f:\n"
            "    f.write(%r)\n"
            "payload = types.ModuleType('jbx_payload')\n" % body)


MBPP2 = TestSpec(kind="assert", asserts=[
    "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
    "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
])
HUMANEVAL = TestSpec(kind="harness", entry_point="add", prefix="def add(x, y):\n    \"\"\"x + y\"\"\"\n",
                     harness="def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(5, 5) == 10\n")
WRONG_MBPP = "def similar_elements(a, b):\n    return (0,)\n"
WRONG_HE = "    return x - y\n"


@pytest.mark.parametrize("spec,wrong", [(MBPP2, WRONG_MBPP), (HUMANEVAL, WRONG_HE)], ids=["mbpp", "humaneval"])
def test_a_module_the_solution_wrote_never_runs_in_the_tests_process(spec, wrong):
    j = judge(spec, wrong + _module_object_attack("ok"))
    assert j.tests[0].harness_isolation == "process"
    assert j.verdict == Verdict.wrong_answer and j.n_passed == 0, j


def test_in_call_mode_the_solution_cannot_make_its_wrong_answer_a_test_data_error():
    spec = TestSpec(kind="call", fn_name="add", calls=[CallCase(args=[1, 2], expected=3)])
    j = judge(spec, "def add(x, y):\n    return 0\n" + _module_object_attack("test_error"))
    assert j.verdict == Verdict.wrong_answer, j
    r = compute_score("t", "```python\ndef add(x, y):\n    return 0\n" + _module_object_attack("test_error") + "```",
                      {"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"})
    assert (r["verdict"], r["infra_error"], r["score"]) == ("wrong_answer", False, 0.0)


#: finding 1b: the solution patches its own ``json`` so its load answer names ``__judgebox_eq__`` (the
#: tests' comparison helper) as one of its callables, and defines it to answer True.
_NAME_THE_COMPARISON = '''
import json
globals()["__judgebox_eq__"] = lambda a, b: True
_dumps = json.dumps
def _lie(o, **k):
    if isinstance(o, dict) and "callables" in o:
        o = dict(o, callables=list(o["callables"]) + ["__judgebox_eq__"])
    return _dumps(o, **k)
json.dumps = _lie
'''


@pytest.mark.parametrize("spec,wrong", [(MBPP2, WRONG_MBPP), (HUMANEVAL, WRONG_HE)], ids=["mbpp", "humaneval"])
def test_the_solution_cannot_put_a_name_into_the_tests_namespace(spec, wrong):
    j = judge(spec, wrong + _NAME_THE_COMPARISON)
    assert j.verdict == Verdict.wrong_answer and j.n_passed == 0, j


#: finding 1c: a builtin the tests use, shadowed by the solution (``set(x) == set(y)`` became ``0 == 0``).
_SHADOW_SET = "def set(*a):\n    return 0\n"


@pytest.mark.parametrize("setup,isolation", [("", "process"), ("X = 1", "in-process")])
def test_a_builtin_the_tests_use_is_always_the_real_builtin(setup, isolation):
    spec = MBPP2.model_copy(update={"setup_code": setup})
    j = judge(spec, WRONG_MBPP + _SHADOW_SET)
    assert j.tests[0].harness_isolation == isolation
    assert j.verdict == Verdict.wrong_answer and j.n_passed == 0, j
    right = "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"
    assert judge(spec, right).verdict == Verdict.accepted


@pytest.mark.parametrize("setup", ["", "X = 1"])
def test_the_entry_point_may_have_a_builtins_name(setup):
    """MBPP task 126 asks for a function named ``sum``: the entry point wins over the builtin."""
    spec = TestSpec(kind="assert", entry_point="sum", setup_code=setup,
                    asserts=["assert sum(10,15) == 6", "assert sum(4,6) == 3"])
    gold = ("def sum(a,b):\n    s = 0\n    for i in range(1, min(a,b)):\n"
            "        if a % i == 0 and b % i == 0:\n            s += i\n    return s\n")
    assert judge(spec, gold).verdict == Verdict.accepted
    assert judge(spec, "def sum(a, b):\n    return 0\n").verdict == Verdict.wrong_answer


def test_a_name_the_prompt_declares_may_shadow_a_builtin():
    spec = TestSpec(kind="harness", entry_point="f", prefix="def max(xs):\n    return 7\n\ndef f(x):\n",
                    harness="def check(candidate):\n    assert max([1]) == 7\n    assert candidate(1) == 2\n")
    assert judge(spec, "    return 2 * x\n").verdict == Verdict.accepted


def test_prompt_helpers_are_the_prompts_own_not_the_solutions():
    """HumanEval/38's shape: the tests call a helper the prompt defines on the result. A solution that
    redefines the helper (here, to the identity) cannot make its own wrong decoder pass."""
    prompt = ('def encode(s):\n    return s[::-1]\n\n\ndef decode(s):\n    """inverse of encode"""\n')
    spec = TestSpec(kind="harness", entry_point="decode", prefix=prompt,
                    harness="def check(candidate):\n    assert candidate(encode('abc')) == 'abc'\n")
    assert judge(spec, "    return s[::-1]\n").verdict == Verdict.accepted
    assert judge(spec, "    return s\n\ndef encode(s):\n    return s\n").verdict == Verdict.wrong_answer


def test_tests_reach_stdlib_modules_and_prompt_imports_without_the_solution():
    """The tests' modules are imported in the tests' own process from the tests' and the prompt's
    own names (MBPP's ``math.isclose``, ``sys.getsizeof``; HumanEval's prompt ``import math``), never
    from a name the solution reports, and never from the working folder."""
    mbpp = TestSpec(kind="assert", asserts=["assert math.isclose(area(1), 3.14159, rel_tol=0.001)",
                                            "assert size((1, 2)) == sys.getsizeof((1, 2))"])
    code = ("import math, sys\ndef area(r):\n    return math.pi * r * r\n"
            "def size(t):\n    return sys.getsizeof(t)\n")
    assert judge(mbpp, code).verdict == Verdict.accepted
    planted = ("with open('math.py', 'w') as f:\n    f.write('def isclose(*a, **k):\\n    return True\\n')\n")
    assert judge(mbpp, "import math, sys\ndef area(r):\n    return 0\n" + planted +
                 "def size(t):\n    return sys.getsizeof(t)\n").verdict == Verdict.wrong_answer
    he = TestSpec(kind="harness", entry_point="f", prefix="import math\n\n\ndef f(x):\n",
                  harness="def check(candidate):\n    assert math.fabs(candidate(2) - 4) < 1e-9\n")
    assert judge(he, "    return x * x\n").verdict == Verdict.accepted


# --- the red team's round (issue 37): each break is a test ------------------------------------------

def test_an_int_too_large_for_a_float_is_a_wrong_answer_not_a_crash():
    spec = TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[1], expected=1.5)])
    assert judge(spec, "def f(x):\n    return 10**400\n").verdict == Verdict.wrong_answer
    r = compute_score("t", "```python\ndef f(x):\n    return 10**400\n```",
                      {"inputs": [[1]], "outputs": [1.5], "fn_name": "f"})
    assert (r["verdict"], r["infra_error"]) == ("wrong_answer", False)


def test_the_prompts_constants_that_its_helpers_read_are_the_prompts():
    prompt = ('MOD = 1000000007\n\ndef expected_of(x):\n    return (x * x) % MOD\n\n'
              'def square_mod(x):\n    """x*x mod MOD"""\n')
    spec = TestSpec(kind="harness", entry_point="square_mod", prefix=prompt,
                    harness="def check(candidate):\n    for x in (123456, 99999999):\n        assert candidate(x) == expected_of(x)\n")
    assert judge(spec, "    return 0\nMOD = 1\n").verdict == Verdict.wrong_answer
    assert judge(spec, "    return x * x % MOD\n").verdict == Verdict.accepted


@pytest.mark.parametrize("lambda_in_tests", [False, True], ids=["process", "in-process"])
def test_iterators_keep_their_type_across_and_generators_work(lambda_in_tests):
    extra = "    (lambda: 0)()\n" if lambda_in_tests else ""
    first_n = TestSpec(kind="harness", entry_point="first_n", prefix='def first_n(n):\n    """[0..n-1]"""\n',
                       harness="def check(candidate):\n" + extra + "    assert candidate(3) == [0, 1, 2]\n")
    for wrong in ("    return range(n)\n", "    return map(int, range(n))\n", "    return (i for i in range(n))\n"):
        assert judge(first_n, wrong).verdict == Verdict.wrong_answer, wrong
    assert judge(first_n, "    return list(range(n))\n").verdict == Verdict.accepted
    gen = TestSpec(kind="harness", entry_point="gen", prefix='def gen(n):\n    """yield 0..n-1"""\n',
                   harness="def check(candidate):\n" + extra +
                           "    g = candidate(3)\n    assert next(g) == 0\n    assert list(g) == [1, 2]\n"
                           "    assert candidate(2) != [0, 1] and list(candidate(2)) == [0, 1]\n")
    assert judge(gen, "    yield from range(n)\n").verdict == Verdict.accepted


def test_nested_and_keyword_arguments_changed_in_place_come_back():
    spec = TestSpec(kind="assert", asserts=[
        "x = [[3, 1], [2]]\ninner = x[0]\nsort_first(x)\nassert inner == [1, 3] and x == [[1, 3], [2]]",
        "d = {'k': [2, 1]}\nv = d['k']\nsort_key(d=d)\nassert v == [1, 2]",
        "b = bytearray(b'ba')\nsort_bytes(b)\nassert b == bytearray(b'ab')"])
    code = ("def sort_first(x):\n    x[0].sort()\ndef sort_key(d):\n    d['k'].sort()\n"
            "def sort_bytes(b):\n    b[:] = bytes(sorted(b))\n")
    j = judge(spec, code)
    assert (j.verdict, j.tests[0].harness_isolation) == (Verdict.accepted, "process"), j


def test_a_huge_int_result_is_judged():
    spec = TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[], expected=10 ** 5000)])
    assert judge(spec, "def f():\n    return 10 ** 5000\n").verdict == Verdict.accepted
    assert judge(spec, "def f():\n    return 10 ** 5000 + 1\n").verdict == Verdict.wrong_answer


#: a class of the solution whose == is a builtin (``id`` returns a truthy int), built so that no
#: ``def __eq__`` appears
_BUILTIN_EQ = "R = type('R', (), {'__e' 'q__': id, '__hash__': object.__hash__})\n"


def test_an_eq_that_is_a_builtin_function_still_cannot_equal_plain_data_in_process():
    spec = TestSpec(kind="assert", setup_code="K = 0", asserts=["assert add(1, 2) == 3", "assert add(0, 0) == 0"])
    j = judge(spec, _BUILTIN_EQ + "def add(a, b):\n    return R()\n")
    assert (j.verdict, j.tests[0].harness_isolation) == (Verdict.wrong_answer, "in-process")
    assert judge(spec, "import fractions\ndef add(a, b):\n    return fractions.Fraction(a + b)\n").passed


UNITTEST = ("import unittest\n\nclass T(unittest.TestCase):\n"
            "    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n"
            "    def test_b(self):\n        self.assertListEqual([add(1, 1)], [2])\n"
            "    def test_c(self):\n        self.assertIn(add(2, 2), [4])\n")


def test_unittest_equality_assertions_refuse_a_lying_operand():
    spec = TestSpec(kind="harness", harness=UNITTEST)
    for liar in ("R = type('R', (), {'__e' 'q__': lambda s, o: True, '__hash__': object.__hash__})\n", _BUILTIN_EQ):
        j = judge(spec, liar + "def add(a, b):\n    return R()\n")
        assert (j.verdict, j.n_passed) == (Verdict.wrong_answer, 0), j
    assert judge(spec, "def add(a, b):\n    return a + b\n").verdict == Verdict.accepted


def test_a_skip_raised_through_the_solutions_code_is_an_error_whatever_file_it_claims():
    spec = TestSpec(kind="harness", harness=UNITTEST)
    code = ("import unittest\n"
            "exec(compile('def add(a, b):\\n    raise unittest.SkipTest(\"later\")\\n', 'helpers.py', 'exec'))\n")
    j = judge(spec, code)
    assert j.verdict == Verdict.runtime_error and j.n_passed == 0, j
    skipped = TestSpec(kind="harness", harness=UNITTEST.replace("    def test_c", "    @unittest.skip('x')\n    def test_c"))
    j = judge(skipped, "def add(a, b):\n    return a + b\n")
    assert (j.verdict, j.n_passed, j.n_total) == (Verdict.accepted, 2, 2)  # the tests' own skip still counts


def test_a_solution_that_replaces_unittest_is_a_runtime_error_not_a_masked_reward():
    spec = TestSpec(kind="harness", harness=UNITTEST)
    code = ("import sys, types\n_m = types.ModuleType('unittest')\n_m.TestCase = type('TestCase', (), {})\n"
            "sys.modules['unittest'] = _m\ndef add(a, b):\n    return a - b\n")
    j = judge(spec, code)
    assert j.verdict in (Verdict.wrong_answer, Verdict.runtime_error) and j.n_passed == 0, j
    r = compute_score("t", "```python\n" + code + "```", spec.model_dump_json())
    assert (r["infra_error"], r["score"]) == (False, 0.0)


def test_in_process_prompt_helpers_use_the_real_builtins():
    """HumanEval/32's shape with a lambda in the tests (so they run in-process): a solution that
    shadows ``sum`` cannot change what the prompt's ``poly`` computes."""
    prompt = ("import math\n\n\ndef poly(xs: list, x: float):\n    return sum([c * math.pow(x, i) for i, c in enumerate(xs)])\n"
              "\n\ndef find_zero(xs: list):\n    \"\"\"a zero of poly\"\"\"\n")
    spec = TestSpec(kind="harness", entry_point="find_zero", prefix=prompt,
                    harness="def check(candidate):\n    f = lambda xs: candidate(xs)\n"
                            "    assert math.fabs(poly([-6, 11, -6, 1], f([-6, 11, -6, 1]))) < 1e-4\n")
    assert judge(spec, "    return 1.0\n").verdict == Verdict.accepted  # 1 is a zero
    j = judge(spec, "    return 5.0\ndef sum(xs):\n    return 0\n")
    assert (j.verdict, j.tests[0].harness_isolation) == (Verdict.wrong_answer, "in-process")


def test_each_asserts_cpu_counts_the_work_of_the_solutions_children():
    spec = TestSpec(kind="assert", run_timeout=5.0, asserts=["assert work() == 1"])
    code = ("import os, time\n"
            "def work():\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        while time.process_time() < 1.2:\n"
            "            pass\n"
            "        os._exit(0)\n"
            "    os.waitpid(pid, 0)\n"
            "    return 1\n")
    j = judge(spec, code)
    assert j.verdict == Verdict.accepted and j.tests[0].cpu_time >= 1.0, j  # ~0 when only the caller counted


def test_a_slow_wrong_answer_is_judged_before_the_callers_deadline_not_masked():
    """Red team, H2: a program that sleeps under run_timeout on each of many cases outlived
    compute_score's total_timeout, and the sample became infra_error (a masked reward). The tests'
    own budget is sent with the request: the sandbox stops them in time and the rest are timeouts."""
    gt = TestSpec(kind="call", fn_name="f", run_timeout=1.0,
                  calls=[CallCase(args=[i], expected=2 * i) for i in range(12)]).model_dump_json()
    slow = "```python\nimport time\ndef f(x):\n    time.sleep(0.7)\n    return -1\n```"
    r = compute_score("t", slow, gt, total_timeout=8, score_mode="pass_rate")
    assert (r["verdict"], r["infra_error"], r["score"]) == ("wrong_answer", False, 0.0), r  # its first test
    j = judge(TestSpec.model_validate_json(gt), "import time\ndef f(x):\n    time.sleep(0.7)\n    return 2 * x\n",
              total_timeout=3)
    assert j.verdict == Verdict.time_limit_exceeded and 0 < j.n_passed < 12, j
    assert {t.verdict for t in j.tests[j.n_passed:]} == {Verdict.time_limit_exceeded}  # stopped and not run


def test_a_program_that_floods_its_output_cannot_mask_its_wrong_answer():
    """Red team, H1: the cases of a request share one output budget (response_limit_bytes); a
    program printing 1 MiB to stdout and stderr in each of 40 cases used it up, its later cases came
    back empty and cut, and an empty cut output shorter than the expected one was test_data_error
    (a masked reward). A cut the budget made after the program's own flood is a wrong answer; a
    problem whose expected outputs are themselves too large stays test_data_error."""
    spec = TestSpec(kind="stdio", stdio=[{"stdin": f"{i}\n", "expected": f"{2 * i}\n"} for i in range(40)])
    flood = 'import sys\nsys.stdout.write("x" * (1 << 20) + "\\n")\nsys.stderr.write("y" * (1 << 20) + "\\n")\n'
    j = judge(spec, flood)
    assert j.verdict == Verdict.wrong_answer and {t.verdict for t in j.tests} == {Verdict.wrong_answer}, j.message
    r = compute_score("t", "```python\n" + flood + "```", spec.model_dump_json())
    assert (r["verdict"], r["infra_error"]) == ("wrong_answer", False)
    large = TestSpec(kind="stdio", stdio=[{"stdin": "", "expected": "z" * (3 << 20) + "\n"}])
    assert judge(large, "print('z' * (3 << 20))\n").verdict == Verdict.test_data_error  # raise the limit


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_a_lone_surrogate_in_the_answer_is_judged_never_test_data(language):
    """Red team of issue 38: a completion holding a lone surrogate ("\\ud800", from a JSON escape) made
    the request invalid (test_data_error, a masked reward) or crashed the judge (UnicodeEncodeError);
    it is judged as it can be written, U+FFFD in its place."""
    if language == "python":
        spec = TestSpec(kind="harness", language="python", prefix="def add(a, b):\n", entry_point="add",
                        harness="def check(candidate):\n    assert candidate(1, 2) == 3\n")
        wrong, right = "    return a - b  # \ud800\n", "    return a + b  # \ud800\n"
    else:
        spec = TestSpec(kind="harness", language="cpp", prefix="#include<bits/stdc++.h>\nlong add(long a, long b) {\n",
                        harness="\n}\nint main() {\n    auto candidate = add;\n    assert(candidate(1, 2) == 3);\n}\n")
        wrong, right = "    return a - b; // \ud800\n", "    return a + b; // \ud800\n"
    assert judge(spec, wrong).verdict == Verdict.wrong_answer
    assert judge(spec, right).verdict == Verdict.accepted
    assert compute_score("x", wrong, spec.model_dump_json())["verdict"] == "wrong_answer"
