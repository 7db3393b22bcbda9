"""Issue 12 item 3: for tests that only call the solution and compare values, the tests (and the
nonce) live in a process where the solution's code never runs; values cross as typed plain data."""

import math

import pytest

from judgebox.reward import CallCase, TestSpec, Verdict, judge
from judgebox.reward.harness import harness_isolation
from judgebox.reward.harness.runner import decode, encode

HE = TestSpec(kind="harness", entry_point="f", prefix="def helper(x):\n    return x + 1\n\ndef f(x):\n",
              harness="def check(candidate):\n    assert candidate(2) == 6\n    assert helper(candidate(0)) == 1\n")

#: Searches the process for the nonce (any 32-hex-digit string) and writes a forged marker to every
#: open descriptor (the runner keeps its result channel on a private copy of stdout), as a policy
#: under RL pressure could; in-process this reaches the runner's frames and objects.
FORGER = '''    import gc, os, re, sys
    def forge(nonce):
        for fd in range(1, 64):
            try:
                os.write(fd, ("\\n%s {\\"status\\": \\"ok\\", \\"ran\\": 1}\\n" % nonce).encode())
            except OSError:
                pass
        os._exit(0)
    frame = sys._getframe()
    while frame is not None:
        for v in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(v, str) and re.fullmatch("[0-9a-f]{32}", v):
                forge(v)
        frame = frame.f_back
    for o in gc.get_objects():
        if isinstance(o, str) and re.fullmatch("[0-9a-f]{32}", o):
            forge(o)
    return -1
'''


def test_entry_point_harness_runs_apart_and_reaches_prompt_helpers_through_proxies():
    j = judge(HE, "    return 3 * x\n")
    assert j.verdict == Verdict.accepted and j.tests[0].harness_isolation == "process"
    assert judge(HE, "    return 3 * x + 1\n").verdict == Verdict.wrong_answer


def test_a_solution_searching_its_process_for_the_nonce_finds_nothing():
    """The frame walk that forges the marker in-process (shown first, with the in-process harness
    forced) finds no nonce in the solution's process."""
    from unittest import mock

    with mock.patch("judgebox.reward.harness.harness_isolation", return_value="in-process"):
        assert judge(HE, FORGER).verdict == Verdict.accepted  # the hole this closes
    j = judge(HE, FORGER)
    assert j.verdict == Verdict.wrong_answer and j.n_passed == 0
    mbpp = TestSpec(kind="assert", asserts=["assert f(2) == 6"])
    assert not judge(mbpp, "def f(x):\n" + FORGER).passed


@pytest.mark.parametrize("value", [(1, 2), [1, (2, 3)], {1, 2}, frozenset({3}), b"\x00\xff", 2 ** 100, -(2 ** 70),
                                   float("inf"), float("-inf"), {"a": (1,), 2: [b"x"]}, None, True, 1.5, "s",
                                   complex(1, -2), {(): {frozenset(): 1}}, int, type(None)])
def test_typed_encoding_keeps_types_distinct(value):
    back = decode(encode(value))
    assert back == value and type(back) is type(value)
    assert type(decode(encode([value]))[0]) is type(value)


def test_typed_encoding_nan_and_the_limits_of_plain_data():
    assert math.isnan(decode(encode(float("nan"))))
    assert decode(encode((1,))) != decode(encode([1]))  # a tuple never equals a list after crossing
    with pytest.raises(TypeError, match="plain data"):
        encode(object())
    for bad in ({"$pickle": "x"}, {"a": 1, "b": 2}, {"$tuple": 5}, {"$type": "object"}):
        with pytest.raises(ValueError):
            decode(bad)


def test_returned_objects_are_not_data_and_lying_eq_stays_behind():
    """A solution object never reaches the tests: its value crosses (an int subclass as its int), or
    the test fails as wrong_answer."""
    spec = TestSpec(kind="assert", asserts=["assert f() == 42"])
    liar = "class Liar(int):\n    def __eq__(self, o): return True\n    __hash__ = int.__hash__\ndef f(): return Liar(1)"
    assert judge(spec, liar).verdict == Verdict.wrong_answer
    obj = "class Box:\n    def __eq__(self, o): return True\ndef f(): return Box()"
    assert judge(spec, obj).verdict == Verdict.wrong_answer
    gen = "def f(): return (x for x in [4, 2])"
    assert judge(TestSpec(kind="assert", asserts=["assert list(f()) == [4, 2]"]), gen).verdict == Verdict.accepted


def test_exceptions_cross_as_their_builtin_type():
    spec = TestSpec(kind="assert", asserts=["try:\n    f(-1)\n    assert False\nexcept ValueError:\n    pass"])
    assert judge(spec, "def f(x):\n    if x < 0: raise ValueError('neg')\n    return x").verdict == Verdict.accepted


@pytest.mark.parametrize("spec,want", [
    (TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[1], expected=1)]), "process"),
    (HE, "process"),
    (TestSpec(kind="assert", asserts=["assert f([1, 2]) == 3"], setup_code="import math"), "process"),
    (TestSpec(kind="assert", asserts=["assert f(Node(1)) == 1"]), "in-process"),  # the solution's class
    (TestSpec(kind="assert", asserts=["assert f(lambda x: x) == 1"]), "in-process"),
    (TestSpec(kind="assert", asserts=["assert f(1) == 1"], setup_code="X = 1"), "in-process"),
    (TestSpec(kind="harness", harness="import unittest\nclass T(unittest.TestCase):\n    def test_a(self): pass\n"),
     "in-process"),
    (TestSpec(kind="stdio"), None),
])
def test_harness_isolation_is_decided_from_the_tests(spec, want):
    assert harness_isolation(spec) == want


def test_mbpp_rows_that_build_solution_objects_stay_in_process_and_say_so():
    spec = TestSpec(kind="assert", asserts=["assert total(Node(1, Node(2))) == 3"])
    code = ("class Node:\n    def __init__(self, v, n=None): self.v, self.n = v, n\n"
            "def total(node):\n    return node.v + (total(node.n) if node.n else 0)\n")
    j = judge(spec, code)
    assert j.verdict == Verdict.accepted and j.tests[0].harness_isolation == "in-process"


@pytest.mark.parametrize("attack", [
    "import __main__\n__main__.judgebox_eq = lambda a, b: True\n",  # the runner's honest ==
    "import json\n_d = json.dumps\njson.dumps = lambda o, **k: _d(dict(o, status='ok')) if 'index' in o else _d(o, **k)\n",
])
def test_in_process_runner_cannot_be_patched_through_its_module(attack):
    """In-process (a setup that is more than imports keeps it there): the solution cannot reach the
    runner through ``import __main__`` nor rewrite its per-test lines by patching ``json``."""
    spec = TestSpec(kind="assert", asserts=["assert f() == 42"], setup_code="X = 1")
    code = attack + "class L:\n    def __eq__(s, o): return True\ndef f(): return L()\n"
    j = judge(spec, code)
    assert j.verdict == Verdict.wrong_answer and j.tests[0].harness_isolation == "in-process"


def test_an_error_of_the_solution_is_named_once():
    """A new user's finding: ``raise ValueError(a)`` was reported ``ValueError: ValueError: 3 (raised in
    the solution's process)`` and ``sys.exit(0)`` as ``_Ended: SystemExit: 0`` (a class of the runner)."""
    spec = TestSpec(kind="harness", entry_point="f", prompt="def f(a):\n",
                    harness="def check(f):\n    assert f(1) == 2\n")
    assert harness_isolation(spec) == "process"
    for body, message in [("raise ValueError(a)", "ValueError: 1 (raised in the solution's process)"),
                          ("return a // 0", "ZeroDivisionError: integer division or modulo by zero (raised in the "
                                            "solution's process)"),
                          ("import sys; sys.exit(0)", "SystemExit: 0")]:
        j = judge(spec, f"def f(a):\n    {body}\n")
        assert (j.verdict, j.message) == (Verdict.runtime_error, message), j.message
