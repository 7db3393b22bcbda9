"""Issue 38, Node.js and TypeScript: the tests run in a process that holds no code of the solution (the
split harness, reward/harness/split/node.py), so each way a wrong answer forged ``accepted`` in the
one-program harness now ends ``wrong_answer`` (or ``runtime_error`` where it ends the tests), and the
tests' real shapes (MultiPL-E's ``assert.deepEqual``, HumanEval-X's ``assert.ok``, MBXP's lodash
``isEqual``, prompt helpers, arrays sorted in place, thrown errors, -0, NaN, Map and Set) are judged as
the one program judged them. Real node (and tsx) runs."""

from __future__ import annotations

import pytest

from judgebox.reward import Verdict, judge
from judgebox.reward.harness import build_plan, harness_isolation
from judgebox.reward.spec import TestSpec

pytestmark = pytest.mark.slow

PROMPT = "//the sum of a and b\nfunction add(a, b){\n"


def deep_equal_tests(name: str, rows: list[tuple[str, str]]) -> str:
    """MultiPL-E's JavaScript tests."""
    asserts = "".join(f"  assert.deepEqual(candidate({a}),{e});\n" for a, e in rows)
    return f"const assert = require('node:assert');\n\n\nfunction test() {{\n  let candidate = {name};\n{asserts}}}\n\ntest();\n"


TESTS = deep_equal_tests("add", [("1, 2", "3"), ("-5, 5", "0")])
SPEC = TestSpec(kind="harness", language="nodejs", prefix=PROMPT, harness=TESTS)
RIGHT = "  return a + b;\n}\n"
WRONG = "  return a - b;\n}\n"
MARKER = "'\\n' + NONCE + ' {\"status\": \"ok\"}\\n'"

FORGERIES = {
    # code before the tests: top-level code reads stdin (the nonce) and prints the OK marker
    "code-before": WRONG + "const NONCE = require('fs').readFileSync(0, 'utf8').split('\\n')[0];\n"
                           f"process.stdout.write({MARKER});\n",
    # a handler at exit, and one for the failed assertion, print the marker
    "exit-hook": WRONG + "const NONCE = '';\nprocess.on('exit', () => { process.stdout.write('ok'); });\n"
                         "process.on('uncaughtException', () => { process.exitCode = 0; });\n",
    # a second entry point: the solution's own test() and the proxy's call helper, by name
    "second-entry": WRONG + "function test() {}\nfunction judgeboxCall() { return 3; }\n",
    # reflection on the runner: the tests' assert module, patched in the solution's process
    "patch-assert": WRONG + "const a = require('node:assert');\ntry { a.deepEqual = () => {}; a.strict.deepEqual = () => {}; "
                            "} catch (e) {}\nObject.prototype.valueOf = function () { return 3; };\n",
    # the tests' process reached through /proc: its stdout, stdin, memory and environment
    "proc": "  const fs = require('fs');\n  for (const f of ['fd/1', 'fd/0', 'mem', 'environ', 'cmdline']) {\n"
            "    try { fs.writeFileSync(`/proc/${process.ppid}/${f}`, 'ok\\n'); } catch (e) {}\n"
            "    try { const t = fs.readFileSync(`/proc/${process.ppid}/${f}`, 'utf8'); "
            "fs.writeFileSync(`/proc/${process.ppid}/fd/1`, '\\n' + t.split('\\n')[0] + ' {\"status\": \"ok\"}\\n'); "
            "} catch (e) {}\n  }\n  return a - b;\n}\n",
    # SIGUSR1 opens a Node process's inspector on 127.0.0.1:9229, from which code runs in it (red team):
    # the answer is right only if the tests' process opened one
    "inspector": "  process.kill(process.ppid, 'SIGUSR1');\n  const probe = \"let n = 0; const t = () => require('net')"
                 ".connect(9229, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => ++n < 40 ? "
                 "setTimeout(t, 50) : process.exit(1)); t();\";\n"
                 "  const opened = require('child_process').spawnSync(process.execPath, ['-e', probe]).status === 0;\n"
                 "  return opened ? a + b : a - b;\n}\n",
    # reading the program's own text and the tests' folder for the expected values
    "own-text": "  const fs = require('fs');\n  for (const p of ['main.js', 'tests/main.js', 'tests/tests.js']) {\n"
                "    try {\n      const m = fs.readFileSync(p, 'utf8').match(new RegExp('candidate\\\\(' + a + ', ' + b + "
                "'\\\\),(-?\\\\d+)'));\n      if (m) return Number(m[1]);\n    } catch (e) {}\n  }\n  return a - b;\n}\n",
    # a value that redefines the comparison: an object whose valueOf and toString say 3, a __proto__ key
    "redefine-comparison": "  const v = { valueOf() { return a + b; }, toString() { return String(a + b); } };\n"
                           "  return JSON.parse('{\"__proto__\": {\"length\": 1}}') || v;\n}\n",
}


@pytest.mark.parametrize("kind", sorted(FORGERIES))
def test_a_wrong_answer_that_forges_is_a_wrong_answer(kind):
    j = judge(SPEC, FORGERIES[kind])
    assert j.verdict == Verdict.wrong_answer, j.message


def test_killing_the_tests_or_exiting_early_is_never_a_pass():
    assert judge(SPEC, "  process.kill(process.ppid, 'SIGKILL');\n  return a + b;\n}\n").verdict == Verdict.runtime_error
    assert judge(SPEC, "  process.exit(0);\n}\n").verdict == Verdict.runtime_error
    assert judge(SPEC, "  return a + b;\n}\nprocess.exit(0);\n").verdict == Verdict.runtime_error
    assert judge(SPEC, "  throw new Error('boom');\n}\n").verdict == Verdict.runtime_error
    assert judge(SPEC, "  return () => a + b;\n}\n").verdict == Verdict.runtime_error  # cannot cross


POLY = ("function poly(xs, x){\n  return xs.reduce((s, c, i) => s + c * Math.pow(x, i), 0);\n}\n"
        "//a zero of the polynomial xs\nfunction find_zero(xs){\n")
SHAPES = {  # (spec, a right completion, a wrong completion)
    # a prompt helper called on the result, with a float tolerance
    "prompt-helper": (TestSpec(kind="harness", language="nodejs", prefix=POLY,
                               harness="const assert = require('node:assert');\nfunction test() {\n"
                                       "  for (const xs of [[-6, 11, -6, 1], [1, 1]]) {\n"
                                       "    assert.ok(Math.abs(poly(xs, find_zero(xs))) < 1e-4);\n  }\n}\ntest();\n"),
                      "  let lo = -10, hi = 10;\n  for (let i = 0; i < 200; i++) {\n    const m = (lo + hi) / 2;\n"
                      "    if (poly(xs, lo) * poly(xs, m) <= 0) hi = m; else lo = m;\n  }\n  return lo;\n}\n",
                      "  return 0;\n}\n"),
    # an array sorted in place by the solution, read by the tests; -0, NaN, holes, Map, Set, undefined
    "values-in-place": (TestSpec(kind="harness", language="nodejs", prefix="function shapes(xs){\n",
                                 harness="const assert = require('node:assert');\nfunction test() {\n"
                                         "  const xs = [3, 1, 2];\n  const r = shapes(xs);\n"
                                         "  assert.deepStrictEqual(xs, [1, 2, 3]);\n"
                                         "  assert.deepStrictEqual(r, [-0, NaN, [1, , 3], new Map([['a', 1]]), "
                                         "new Set([2]), undefined, 10n, {k: null}]);\n}\ntest();\n"),
                        "  xs.sort((a, b) => a - b);\n  return [-0, NaN, [1, , 3], new Map([['a', 1]]), new Set([2]), "
                        "undefined, 10n, {k: null}];\n}\n",
                        "  xs.sort((a, b) => a - b);\n  return [0, NaN, [1, undefined, 3], new Map([['a', 1]]), "
                        "new Set([2]), undefined, 10n, {k: null}];\n}\n"),
    # HumanEval-X: assert.ok of ===, several calls per assert; an error the tests expect to be thrown
    "ok-and-throws": (TestSpec(kind="harness", language="nodejs", prefix="const half = (n) => {\n",
                               harness="const testHalf = () => {\n  require('node:assert').ok(half(4) + half(2) === 3)\n"
                                       "  require('node:assert').throws(() => half(3), /odd/)\n}\n\ntestHalf()\n"),
                      "  if (n % 2) throw new RangeError('odd ' + n);\n  return n / 2;\n}\n",
                      "  return n / 2;\n}\n"),
    # an error of the solution's own class: its name, message and code reach assert.throws
    "error-properties": (TestSpec(kind="harness", language="nodejs", prefix="function check(n) {\n",
                                  harness="const assert = require('node:assert');\nfunction test() {\n"
                                          "  assert.throws(() => check(-1), {name: 'ValueError', code: 'ENEG', "
                                          "message: 'negative'});\n  assert.deepEqual(check(2), 2);\n}\ntest();\n"),
                         "  class ValueError extends Error {}\n  if (n < 0) { const e = new ValueError('negative'); "
                         "e.name = 'ValueError'; e.code = 'ENEG'; throw e; }\n  return n;\n}\n",
                         "  if (n < 0) { const e = new Error('negative'); e.code = 'ENEG'; throw e; }\n  return n;\n}\n"),
    # MBXP: lodash's isEqual and a thrown assert.fail
    "mbxp-lodash": (TestSpec(kind="harness", language="nodejs", prefix="function pairs(n) {\n",
                             harness='const _ = require("lodash")\nfunction compare(a, b){\n    return _.isEqual(a, b)\n}\n'
                                     "var x0 = pairs(2);\nvar v0 = {a: [1, 2], b: 'x'};\nif(!compare(x0, v0)){\n"
                                     "    throw require('node:assert').fail('Error at 1th assert statement')\n}\n"),
                    "  return {a: [1, n], b: 'x'};\n}\n", "  return {a: [1, n], b: 'y'};\n}\n"),
    # TypeScript: MultiPL-E's declare line and a typed prompt helper
    "typescript": (TestSpec(kind="harness", language="typescript",
                            prefix="function twice(x: number): number { return 2 * x; }\n"
                                   "//twice the sum\nfunction add2(a: number, b: number): number {\n",
                            harness="declare var require: any;\nconst assert = require('node:assert');\n\n"
                                    "function test() {\n  let candidate = add2;\n  const r: number = candidate(1, 2);\n"
                                    "  assert.deepEqual(r, twice(3));\n}\n\ntest();\n"),
                   "  return twice(a + b);\n}\n", "  return a + b;\n}\n"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_tests_shapes_are_judged_as_one_program_judges_them(shape):
    spec, right, wrong = SHAPES[shape]
    assert build_plan(spec, right).request.tests_program is not None
    j = judge(spec, right)
    assert j.verdict == Verdict.accepted, j.message
    assert judge(spec, wrong).verdict == Verdict.wrong_answer


def test_an_entry_that_cannot_cross_keeps_the_one_program_harness():
    for header in ("async function f(x){\n", "function* f(x){\n", "const f = {\n",
                   "class P { constructor(x) { this.x = x; } }\nfunction f(x){\n"):
        spec = TestSpec(kind="harness", language="nodejs", prefix=header,
                        harness=deep_equal_tests("f", [("1", "1")]))
        assert build_plan(spec, "").request.tests_program is None, header
        assert harness_isolation(spec) == "in-process"
    # tests that pass a function to it (a callback would not cross)
    spec = TestSpec(kind="harness", language="nodejs", prefix="function f(xs, g){\n",
                    harness=deep_equal_tests("f", [("[1, 2], (x) => x * 2", "[2, 4]")]))
    assert build_plan(spec, "").request.tests_program is None
    assert judge(spec, "  return xs.map(g);\n}\n").verdict == Verdict.accepted
