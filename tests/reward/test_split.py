"""Issue 38: in every language with a split harness (C++, Java, Rust, Go, Node.js) the tests' program
(or, Node.js, its input) holds none of the solution, the solution's program none of the tests, the
judgement says the tests ran apart
(``harness_isolation: "process"``, ``forgeable: false``), and a right and a wrong answer are judged so.
Each language's forgeries and test shapes are in ``test_split_<language>.py``."""

from __future__ import annotations

import pytest

from judgebox.reward import Verdict, judge
from judgebox.reward.harness import build_plan, harness_isolation

from . import test_split_cpp, test_split_go, test_split_java, test_split_node, test_split_rust

#: (the language's test module, text only the right answer holds, text only the tests hold)
LANGUAGES = {"cpp": (test_split_cpp, "return a + b", "assert(candidate"),
             "go": (test_split_go, "return a + b", "expected: 3"),
             "java": (test_split_java, "return a + b", "assert(add"),
             "nodejs": (test_split_node, "return a + b", "assert.deepEqual"),
             "rust": (test_split_rust, "a + b", "assert_eq!")}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_tests_run_apart_and_the_harness_says_so(language):
    module, answer, tests = LANGUAGES[language]
    spec = module.SPEC
    plan = build_plan(spec, module.RIGHT)
    tests_side = plan.request.tests_program + plan.request.cases[0].stdin  # Node.js: the tests come on stdin
    assert plan.request.tests_program is not None and answer not in tests_side
    assert tests in tests_side and tests not in plan.request.code
    assert harness_isolation(spec) == "process"
    j = judge(spec, module.RIGHT)
    assert (j.verdict, j.forgeable, j.tests[0].harness_isolation) == (Verdict.accepted, False, "process")
    assert judge(spec, module.WRONG).verdict == Verdict.wrong_answer


@pytest.mark.slow
@pytest.mark.parametrize("language, kind", [(lang, kind) for lang in ("java", "rust")
                                            for kind in sorted(LANGUAGES[lang][0].FORGERIES)])
def test_a_wrong_answer_that_forges_is_a_wrong_answer(language, kind):
    """Each of the language's forgeries (``FORGERIES`` of its test module; C++'s own test adds a
    prompt for its /proc one) is a wrong answer that also tries to forge the verdict."""
    module = LANGUAGES[language][0]
    assert judge(module.SPEC, module.FORGERIES[kind]).verdict == Verdict.wrong_answer


@pytest.mark.slow
@pytest.mark.parametrize("language, says", [("cpp", "tests: Assertion `candidate"), ("go", "--- FAIL: TestAdd"),
                                            ("java", "java.lang.AssertionError"),
                                            ("nodejs", "AssertionError"), ("rust", "assertion `left == right` failed")])
def test_a_failed_test_says_what_failed_on_stderr(language, says):
    """Issue 39, item 7: a failed C++ (Java, Go) test of the split harness left stderr empty, so the
    report showed nothing of what failed; the tests' failure text is on stderr, as in one program."""
    module = LANGUAGES[language][0]
    j = judge(module.SPEC, module.WRONG)
    assert j.verdict == Verdict.wrong_answer and says in (j.tests[0].stderr or ""), j.tests[0].stderr
