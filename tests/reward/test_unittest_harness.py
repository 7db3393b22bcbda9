"""BUG-055: the unittest harness behaves as ``python -m unittest``: class and module fixtures,
inheritance and mixins, subTest, expected failures, declared skips (neutral) against a SkipTest
raised by the solution (an error), fixture errors, a file with no tests (test_data_error), and a pass
rate over the test methods rather than all or nothing per file (real runs in the embedded sandbox)."""

import pytest

from judgebox.reward import TestSpec, Verdict, judge

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
