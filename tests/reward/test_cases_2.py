"""Verdict cases, second set (BUG-047 onward): each public failure case with its exact expected value, and neighbours of the same kind, through real runs in the embedded sandbox."""

import json

import pytest

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import compute_score
from judgebox.reward import CallCase, StdioCase, TestDataError, TestSpec, Verdict, extract_code, judge
from judgebox.reward.checkers.checker import JURY_CHECKED
from judgebox.reward.loaders import Problem, load_dataset, load_problems
from judgebox.reward.preludes import PRELUDES, with_prelude
from judgebox.sandbox import SandboxClient

LIST_SOLUTION = "class Solution:\n    def f(self, a: List[int]) -> int:\n        return len(a)\n"


def call_spec(**kw):
    return TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[[1, 2]], expected=2)], **kw)


# BUG-047: the official harnesses' preludes --------------------------------------------------------------
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


# BUG-048: C++ standard -----------------------------------------------------------------------------------
CPP20 = "#include <cstdio>\n#include <map>\nint main(){ std::map<int,int> m; printf(\"%d\\n\", (int)m.contains(1)); }\n"


def cpp_spec(**kw):
    return TestSpec(kind="stdio", language="cpp", stdio=[StdioCase(stdin="", expected="0\n")], **kw)


def test_bug_048_cpp20_code_is_accepted_by_default():
    """BUG-048: C++20 code compiles with the default gnu++20."""
    assert judge(cpp_spec(), CPP20).verdict == Verdict.accepted


def test_bug_048_spec_and_request_choose_another_standard(run_code):
    """``TestSpec.cpp_std`` and the request's ``cpp_std`` extension (embedded and HTTP) choose the
    standard; a value that is not a g++ -std value is refused naming the field."""
    assert judge(cpp_spec(cpp_std="c++17"), CPP20).verdict == Verdict.compile_error
    resp = run_code({"code": CPP20, "language": "cpp", "cpp_std": "c++17"})
    assert resp.compile_result.return_code != 0 and "contains" in resp.compile_result.stderr
    assert run_code({"code": CPP20, "language": "cpp"}).run_result.stdout == "0\n"
    with pytest.raises(ValueError, match="cpp_std"):
        TestSpec(kind="stdio", cpp_std="c++17; rm -rf /")


def test_bug_048_bad_cpp_std_is_http_422_naming_the_field(live_server):
    import httpx

    r = httpx.post(f"{live_server}/run_code", json={"code": CPP20, "language": "cpp", "cpp_std": "-O0"}, timeout=60)
    assert r.status_code == 422 and "cpp_std" in r.text


# BUG-049: file I/O -----------------------------------------------------------------------------------------
PAINT = ("with open('paint.in') as f: a, b = map(int, f.read().split())\n"
         "with open('paint.out', 'w') as f: f.write(str(a + b) + '\\n')\n")


def paint_spec(*cases, **kw):
    return TestSpec(kind="stdio", input_file="paint.in", output_file="paint.out",
                    stdio=[StdioCase(stdin=i, expected=o) for i, o in cases], **kw)


def test_bug_049_file_io_problem_is_accepted(live_server):
    """BUG-049: the input is written to paint.in; paint.out is what the checker compares (embedded
    sandbox and over HTTP)."""
    assert judge(paint_spec(("2 3\n", "5\n")), PAINT).verdict == Verdict.accepted
    assert judge(paint_spec(("2 3\n", "5\n"), ("1 1\n", "2\n")), PAINT,
                 client=SandboxClient(live_server)).verdict == Verdict.accepted


def test_bug_049_each_case_gets_its_own_output_file():
    """A case's output file never carries over: a program that writes it only for the first case's
    input fails the second (every case starts from the request's files); a wrong file is
    wrong_answer; stdout is not compared when output_file is declared."""
    once = ("a, b = map(int, open('paint.in').read().split())\nif a + b == 5:\n"
            "    open('paint.out', 'w').write(str(a + b))\n")
    j = judge(paint_spec(("2 3\n", "5\n"), ("1 1\n", "2\n")), once)
    assert [t.verdict for t in j.tests] == [Verdict.accepted, Verdict.wrong_answer]
    assert "did not write the output file" in j.tests[1].stderr
    stdout_only = "a, b = map(int, open('paint.in').read().split()); print(a + b)"
    assert judge(paint_spec(("2 3\n", "5\n")), stdout_only).verdict == Verdict.wrong_answer
    assert judge(TestSpec(kind="stdio", input_file="paint.in", stdio=[StdioCase(stdin="2 3\n", expected="5\n")]),
                 stdout_only).verdict == Verdict.accepted


def test_bug_049_cpp_file_io_and_extra_files():
    """C++ USACO style with freopen; a case's extra files are written next to the program."""
    cpp = ('#include <cstdio>\nint main(){ freopen("paint.in","r",stdin); freopen("paint.out","w",stdout);'
           ' int a,b,c; FILE* g=fopen("bonus.txt","r"); fscanf(g,"%d",&c); scanf("%d %d",&a,&b); printf("%d\\n",a+b+c); }\n')
    spec = TestSpec(kind="stdio", language="cpp", input_file="paint.in", output_file="paint.out",
                    stdio=[StdioCase(stdin="2 3\n", expected="15\n", files={"bonus.txt": "10\n"})])
    assert judge(spec, cpp).verdict == Verdict.accepted


def test_bug_049_inconsistent_file_io_data_is_test_data_error():
    """An output_file with no expected output, file I/O on a non-stdio kind, a path climbing out."""
    assert judge(paint_spec(("2 3\n", "")), PAINT).verdict == Verdict.test_data_error
    assert "stdio[0].expected" in judge(paint_spec(("2 3\n", "")), PAINT).message
    with pytest.raises(ValueError, match="output_file"):
        TestSpec(kind="stdio", output_file="../x.out")
    assert judge(TestSpec(kind="assert", asserts=["assert True"], input_file="a.in"), "").verdict \
        == Verdict.test_data_error


def test_bug_049_loaders_read_file_io_fields(tmp_path):
    """APPS/TACO-style ``input_output`` and verl ground truth carry ``input_file``/``output_file``."""
    spec = TestSpec.from_in_outs({"inputs": ["2 3\n"], "outputs": ["5\n"], "input_file": "paint.in",
                                  "output_file": "paint.out"})
    assert (spec.input_file, spec.output_file) == ("paint.in", "paint.out")
    assert judge(spec, PAINT).verdict == Verdict.accepted


# BUG-053: checker exceptions on the contestant's output ----------------------------------------------------
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


# BUG-055: the unittest harness behaves as python -m unittest -----------------------------------------------
DOUBLE = "def task_func(x): return x * 2\n"
FIXTURE = """import unittest
class TestCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls): cls.data = [1, 2, 3]
    def test_a(self): self.assertEqual([task_func(v) for v in self.data], [2, 4, 6])
"""


def unittest_verdict(tests, code=DOUBLE):
    return judge(TestSpec(kind="harness", harness=tests), code)


def test_bug_055_class_fixture_runs():
    """BUG-055: setUpClass runs, as under python -m unittest."""
    assert unittest_verdict(FIXTURE).verdict == Verdict.accepted
    assert unittest_verdict(FIXTURE, "def task_func(x): return x + 2\n").verdict == Verdict.wrong_answer


@pytest.mark.parametrize("tests,want", [
    # module fixtures
    ("import unittest\nSEEN = []\ndef setUpModule(): SEEN.append(1)\n"
     "class T(unittest.TestCase):\n    def test_a(self): self.assertEqual(SEEN, [1]); self.assertEqual(task_func(1), 2)\n",
     Verdict.accepted),
    # setUp/tearDown and an inherited test method, plus a mixin
    ("import unittest\nclass Mixin:\n    def test_mixin(self): self.assertEqual(task_func(self.v), 2 * self.v)\n"
     "class Base(unittest.TestCase):\n    def setUp(self): self.v = 3\n    def test_base(self): self.assertEqual(task_func(1), 2)\n"
     "class Child(Mixin, Base):\n    def setUp(self): self.v = 5\n", Verdict.accepted),
    # subTest: one failing sub-test fails the test
    ("import unittest\nclass T(unittest.TestCase):\n    def test_s(self):\n        for v, w in [(1, 2), (2, 5)]:\n"
     "            with self.subTest(v=v): self.assertEqual(task_func(v), w)\n", Verdict.wrong_answer),
    ("import unittest\nclass T(unittest.TestCase):\n    def test_s(self):\n        for v in range(3):\n"
     "            with self.subTest(v=v): self.assertEqual(task_func(v), 2 * v)\n", Verdict.accepted),
    # expected failures: an expected failure that fails is fine; an unexpected success fails
    ("import unittest\nclass T(unittest.TestCase):\n    @unittest.expectedFailure\n    def test_x(self): self.assertEqual(task_func(1), 3)\n"
     "    def test_y(self): self.assertEqual(task_func(1), 2)\n", Verdict.accepted),
    ("import unittest\nclass T(unittest.TestCase):\n    @unittest.expectedFailure\n    def test_x(self): self.assertEqual(task_func(1), 2)\n",
     Verdict.wrong_answer),
    # a declared skip is neither a pass nor a fail; every test skipped is not a pass
    ("import unittest\nclass T(unittest.TestCase):\n    @unittest.skip('later')\n    def test_x(self): self.fail()\n"
     "    def test_y(self): self.assertEqual(task_func(1), 2)\n", Verdict.accepted),
    ("import unittest\n@unittest.skip('all')\nclass T(unittest.TestCase):\n    def test_y(self): self.assertEqual(task_func(1), 2)\n",
     Verdict.skipped),
    # a failing class fixture and a raising tearDownClass are errors
    ("import unittest\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls): task_func(None)\n"
     "    def test_y(self): pass\n", Verdict.runtime_error),
    ("import unittest\nclass T(unittest.TestCase):\n    @classmethod\n    def tearDownClass(cls): raise ValueError('x')\n"
     "    def test_y(self): self.assertEqual(task_func(1), 2)\n", Verdict.runtime_error),
    # an abstract base removed with del (a common pattern) is not required to run
    ("import unittest\nclass Base(unittest.TestCase):\n    k = 1\n    def test_k(self): self.assertEqual(task_func(self.k), 2 * self.k)\n"
     "class Two(Base):\n    k = 2\ndel Base\n", Verdict.accepted),
])
def test_bug_055_unittest_features(tests, want):
    """The whole kind: module fixtures, inheritance and mixins, subTest, expected failures, skips,
    fixture errors, as python -m unittest decides them."""
    assert unittest_verdict(tests).verdict == want


def test_unittest_pass_rate_counts_test_methods():
    """A unittest file's pass rate is over its test methods (the trial's F3: it was all or nothing per
    file): 2 of 3 pass -> 0.667, wrong_answer; a declared skip is not counted; all pass -> 1.0."""
    tests = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self): self.assertEqual(task_func(1), 2)\n"
             "    def test_b(self): self.assertEqual(task_func(2), 4)\n"
             "    def test_c(self): self.assertEqual(task_func(-3), 6)\n"
             "    @unittest.skip('later')\n    def test_d(self): self.fail()\n")
    j = unittest_verdict(tests)
    assert (j.verdict, j.n_passed, j.n_total, round(j.pass_rate, 3)) == (Verdict.wrong_answer, 2, 3, 0.667)
    j = unittest_verdict(tests, "def task_func(x): return abs(2 * x)\n")
    assert (j.verdict, j.n_passed, j.n_total, j.pass_rate) == (Verdict.accepted, 3, 3, 1.0)


def test_bug_055_a_skip_raised_by_the_solution_is_not_neutral():
    """A solution that raises SkipTest on inputs it cannot handle gets an error, not a neutral skip."""
    tests = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self): self.assertEqual(task_func(1), 2)\n"
             "    def test_b(self): self.assertEqual(task_func(50), 100)\n")
    code = "import unittest\ndef task_func(x):\n    if x > 9: raise unittest.SkipTest('hard')\n    return 2 * x\n"
    assert unittest_verdict(tests, code).verdict == Verdict.runtime_error


def test_bug_055_a_unittest_file_with_no_tests_is_test_data_error():
    j = unittest_verdict("import unittest\nclass T(unittest.TestCase):\n    def helper(self): pass\n")
    assert j.verdict == Verdict.test_data_error and "harness" in j.message


# BUG-062: pass@k over the attempted subset ---------------------------------------------------------------
@pytest.mark.slow
def test_bug_062_partial_samples_file_is_refused_then_scored_over_the_whole_benchmark(tmp_path):
    """BUG-062: 3 APPS problems, correct samples for 2: refused (exit 1, naming how many and the flag);
    with --allow-partial pass@1 = 0.6667 over the whole benchmark, the subset figure labelled."""
    from tests.reward.test_eval import judgebox, write_samples

    rows = [{"problem_id": str(i), "question": "echo", "solutions": json.dumps(["print(input())"]),
             "input_output": json.dumps({"inputs": [f"{i}\n"], "outputs": [f"{i}\n"]})} for i in range(3)]
    (tmp_path / "three.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_samples(tmp_path / "s.jsonl", [("0", "print(input())"), ("1", "print(input())")])
    args = ["eval", "three.jsonl", "--format", "apps", "--samples", "s.jsonl", "--k", "1", "--no-progress",
            "--summary", "sum.json"]
    refused = judgebox(*args, cwd=tmp_path, check=False)
    assert refused.returncode == 1 and not (tmp_path / "sum.json").exists()
    assert "1 of 3 problems have no sample" in refused.stderr and "--allow-partial" in refused.stderr
    done = judgebox(*args, "--allow-partial", cwd=tmp_path)
    summary = json.loads((tmp_path / "sum.json").read_text())
    assert round(summary["pass_at_k"]["pass@1"], 4) == 0.6667
    assert summary["pass_at_k_attempted"] == {"pass@1": 1.0} and summary["n_problems_unattempted"] == 1
    assert "attempted subset: 2 of 3 problems" in done.stdout and "whole benchmark" in done.stdout


# evalplus-style sanitizer -------------------------------------------------------------------------------------
DEMO = ("```python\nimport math\n\ndef helper(x):\n    return math.isqrt(x)\n\ndef f(x):\n    return helper(x) * 2\n\n"
        "print(f(16))\nfor i in range(10 ** 9):\n    pass\nif __name__ == '__main__':\n    f(int(input()))\n```")


def test_sanitize_keeps_imports_and_needed_definitions_and_drops_top_level_statements():
    """extract_code(..., sanitize=True): evalplus's sanitizer keeps imports and what the entry point
    needs, drops demo prints, loops and the main guard."""
    code = extract_code(DEMO, sanitize=True, entry_point="f")
    assert code == "import math\ndef helper(x):\n    return math.isqrt(x)\ndef f(x):\n    return helper(x) * 2\n"
    with pytest.raises(ValueError, match="sanitize"):
        extract_code("```cpp\nint main(){}\n```", "cpp", sanitize=True)


@pytest.mark.slow
def test_sanitize_through_the_judge_turns_a_timeout_into_a_pass():
    """An MBPP-style assert problem: unsanitized, the demo loop times out; sanitized, accepted."""
    spec = TestSpec(kind="assert", asserts=["assert f(16) == 8", "assert f(9) == 6"], run_timeout=2)
    p = Problem(task_id="t", spec=spec, data_source="x")
    assert judge(*p.candidate(DEMO)).verdict == Verdict.time_limit_exceeded
    assert judge(*p.candidate(DEMO, sanitize=True)).verdict == Verdict.accepted


def test_sanitize_keeps_prompt_helpers_the_tests_name():
    """HumanEval/38: the tests call the prompt's encode_cyclic, which decode_cyclic never calls;
    sanitizing prompt + completion keeps it (gold with a demo print appended is accepted)."""
    problems, _ = load_dataset("humaneval")
    p = next(p for p in problems if p.task_id == "HumanEval/38")
    spec, code = p.candidate(p.gold + "\nprint(decode_cyclic('abc'))\n", sanitize=True)
    assert spec.prefix == "" and "def encode_cyclic" in code and "print(" not in code
    assert judge(spec, code).verdict == Verdict.accepted


@pytest.mark.slow
def test_eval_sanitize_flag_and_manifest_default(tmp_path):
    """`judgebox eval --sanitize` sanitizes; a stdio dataset is refused (exit 1) before scoring; the
    manifest's ``sanitize`` field is the default."""
    from judgebox.reward.loaders.manifest import Manifest
    from tests.reward.test_eval import judgebox, write_samples

    rows = [{"task_id": 1, "text": "double", "code": "def f(x):\n    return 2 * x\n",
             "test_list": ["assert f(2) == 4"], "test_setup_code": ""}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_samples(tmp_path / "s.jsonl", [("1", "def f(x):\n    return 2 * x\n\nwhile True:\n    pass\n")])
    args = ["eval", "m.jsonl", "--format", "mbpp", "--samples", "s.jsonl", "--k", "1", "--no-progress",
            "--summary", "sum.json"]
    judgebox(*args, "--sanitize", "--results", "a.jsonl", cwd=tmp_path)
    assert json.loads((tmp_path / "sum.json").read_text())["pass_at_k"] == {"pass@1": 1.0}
    judgebox(*args, "--results", "b.jsonl", cwd=tmp_path)
    assert json.loads((tmp_path / "sum.json").read_text())["pass_at_k"] == {"pass@1": 0.0}
    (tmp_path / "a.jsonl").write_text(json.dumps({"problem_id": "0", "question": "q", "solutions": "[\"print(1)\"]",
                                                  "input_output": json.dumps({"inputs": [""], "outputs": ["1\n"]})}) + "\n")
    refused = judgebox("eval", "a.jsonl", "--format", "apps", "--samples", "gold", "--sanitize", cwd=tmp_path,
                       check=False)
    assert refused.returncode == 1 and "function-completion problems only" in refused.stderr
    assert Manifest(name="x", format="mbpp", files=["x"]).sanitize is False
    assert Manifest(name="x", format="mbpp", files=["x"], sanitize=True).sanitize is True


def test_bug_049_codecontests_rows_with_file_io(tmp_path):
    """Codeforces-style rows naming input/output files load as file-I/O specs; "standard input" is stdio."""
    row = {"name": "paint", "description": "d", "input_file": "paint.in", "output_file": "paint.out",
           "public_tests": {"input": ["2 3\n"], "output": ["5\n"]}, "solutions": {"language": [3], "solution": [PAINT]}}
    std = dict(row, name="std", input_file="standard input", output_file="standard output")
    (tmp_path / "cc.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(std) + "\n")
    paint, plain = load_problems(tmp_path / "cc.jsonl", "codecontests")
    assert (paint.spec.input_file, paint.spec.output_file) == ("paint.in", "paint.out")
    assert (plain.spec.input_file, plain.spec.output_file) == (None, None)
    assert judge(*paint.candidate(paint.gold)).verdict == Verdict.accepted
