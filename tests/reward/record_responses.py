"""Record real sandbox responses for the sans-IO judge tests (``tests/reward/test_judge_recorded.py``).

Run from the repository root, with the interpreter judgebox is installed in::

    python tests/reward/record_responses.py              # record every case of CASES
    python tests/reward/record_responses.py NAME ...     # record only these cases
    python tests/reward/record_responses.py --list       # the case names and their expected verdicts
    python tests/reward/record_responses.py --check      # run every case, write nothing

Each case of :data:`CASES` (a name, a :class:`~judgebox.reward.spec.TestSpec` as JSON, the candidate
code, ``stop_on_first_failure``, sandbox setting overrides, and the expected verdict with its
``n_passed``/``n_total``) is judged by the real judge (``_Judging(spec, code, stop).run(call)``)
against the real embedded sandbox (:class:`judgebox.sandbox.LocalSandbox` behind
``SandboxClient([])``, with the case's ``sandbox`` overrides such as a small
``output_limit_bytes``), where ``call`` records every exchange. The case is written to
``tests/reward/recorded/<name>.json``::

    {"name", "description", "spec", "code", "stop_on_first_failure", "sandbox",
     "expected": {"verdict", "n_passed", "n_total"} (written in CASES),
     "recorded": what the real run gave: the same three, "tests" (per-test verdicts) and "message",
     "nonce": the harness nonce of the run (plan.nonce; null for stdio),
     "checker_nonce": the nonce of the checker-program run (always drawn, used by checker cases),
     "exchanges": [{"request": request_summary(...), "response": the raw RunTestsResponse JSON}]}

Nothing is written for a case whose real verdict or counts differ from the expected ones (the
script exits 1 and says which): a recording is a real run that showed what the case claims. ``JURY_CHECKED`` (the per-problem memory of checker programs run on the jury's answers)
is emptied before each case, so a checker case always records the first-submission exchange.

Re-record after a change to how requests are built (the fast test compares each rebuilt request with
the recorded summary and says so) or to the harness protocol; the recordings are small JSON files
meant to be committed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional

from judgebox.reward.checkers.checker import JURY_CHECKED
from judgebox.reward.judge import _Judging
from judgebox.reward.spec import TestSpec
from judgebox.sandbox import LocalSandbox, SandboxClient
from judgebox.sandbox.models import RunTestsRequest, RunTestsResponse

RECORDED = Path(__file__).resolve().parent / "recorded"

#: placeholders of the two nonces in a request summary
NONCE, CHECKER_NONCE = "{nonce}", "{checker_nonce}"


def request_summary(req: RunTestsRequest, nonce: Optional[str], checker_nonce: Optional[str]) -> dict[str, Any]:
    """What identifies a request apart from its (long, partly random) program text: the language, the
    limits, and each case's stdin and fetched files, the nonces replaced by placeholders."""

    def hide(text: str) -> str:
        if nonce:
            text = text.replace(nonce, NONCE)
        if checker_nonce:
            text = text.replace(checker_nonce, CHECKER_NONCE)
        return text

    return {"language": req.language, "run_timeout": req.run_timeout, "memory_limit_MB": req.memory_limit_MB,
            "stop_on_first_failure": req.stop_on_first_failure,
            "cases": [{"stdin": hide(c.stdin or ""), **({"fetch_files": list(c.fetch_files)} if c.fetch_files else {})}
                      for c in req.cases]}


def _stdio(*cases: tuple[str, str], **fields: Any) -> dict[str, Any]:
    return {"kind": "stdio", "stdio": [{"stdin": i, "expected": o} for i, o in cases], **fields}


def _call(fn_name: str, *cases: tuple[list, Any], **fields: Any) -> dict[str, Any]:
    return {"kind": "call", "fn_name": fn_name, "calls": [{"args": a, "expected": e} for a, e in cases], **fields}


def _asserts(*asserts: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "assert", "asserts": list(asserts), **fields}


def case(name: str, description: str, spec: dict[str, Any], code: str, verdict: str, n_passed: int, n_total: int,
         *, stop: bool = False, sandbox: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """One case of :data:`CASES` (``spec`` is validated here)."""
    TestSpec.model_validate(spec)
    return {"name": name, "description": description, "spec": spec, "code": code, "stop_on_first_failure": stop,
            "sandbox": sandbox or {},
            "expected": {"verdict": verdict, "n_passed": n_passed, "n_total": n_total}}


ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
ADD_CASES = (("1 2\n", "3\n"), ("10 -4\n", "6\n"))
CPP_ADD = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n"
HUMANEVAL_PREFIX = 'def add(a, b):\n    """Return a + b."""\n'
HUMANEVAL_TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-4, 4) == 0\n"
UNITTEST = ("import unittest\nclass TestCases(unittest.TestCase):\n    def test_double(self):\n"
            "        self.assertEqual(task_func(2), 4)\n    def test_zero(self):\n"
            "        self.assertEqual(task_func(0), 0)\n")
PERMUTATION_CHECKER = ("def check(input, output, expected):\n"
                       "    return sorted(output.split()) == sorted(expected.split())\n")
YES_CHECKER = "def check(input, output, expected):\n    return output.strip() == 'yes'\n"

# MultiPL-E rows (prompt + tests of "add", as reward/loaders/multiple.py turns them into a spec)
MULTIPL = {
    "cpp": {"kind": "harness", "language": "cpp",
            "prefix": "#include<assert.h>\n#include<bits/stdc++.h>\n// Add the two integers x and y.\n"
                      "long add(long x, long y) {\n",
            "harness": "\n}\nint main() {\n    auto candidate = add;\n    assert(candidate((5), (3)) == (8));\n"
                       "    assert(candidate((0), (7)) == (7));\n    assert(candidate((-4), (4)) == (0));\n}\n"},
    "js": {"kind": "harness", "language": "nodejs",
           "prefix": "//Add the two integers x and y.\nfunction add(x, y){\n",
           "harness": "\nconst assert = require('node:assert');\n\n\nfunction test() {\n  let candidate = add;\n"
                      "  assert.deepEqual(candidate(5, 3),8);\n  assert.deepEqual(candidate(0, 7),7);\n"
                      "  assert.deepEqual(candidate(-4, 4),0);\n}\n\ntest();"},
    "go": {"kind": "harness", "language": "go_test",
           "prefix": 'package add_test\n\nimport (\n    "testing"\n    "fmt"\n)\n\n// Add the two integers x and y.\n'
                     "func add(x int, y int) int {\n",
           "harness": "\nfunc TestAdd(t *testing.T) {\n  candidate := add\n  type test struct {\n"
                      "    actual   interface{}\n    expected interface{}\n  }\n  tests := []test{\n"
                      "    { actual: candidate(5, 3), expected: 8 },\n    { actual: candidate(0, 7), expected: 7 },\n"
                      "    { actual: candidate(-4, 4), expected: 0 },\n  }\n\n  for i, tc := range tests {\n"
                      '    t.Run(fmt.Sprintf("test num % d", i), func(t *testing.T) {\n'
                      '      if fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {\n'
                      "        t.Errorf(\"expected '%v', got '%v'\", tc.expected, tc.actual)\n      }\n    })\n  }\n}\n"},
    "rs": {"kind": "harness", "language": "rust",
           "prefix": "/// Add the two integers x and y.\nfn add(x: isize, y: isize) -> isize {\n",
           "harness": "\n}\n\nfn main() {\n    let candidate = add;\n    assert_eq!(candidate(5, 3), 8);\n"
                      "    assert_eq!(candidate(0, 7), 7);\n    assert_eq!(candidate(-4, 4), 0);\n}\n"},
    "sh": {"kind": "harness", "language": "bash",
           "prefix": "#!/bin/bash\n# Add the two integers x and y.\nadd() {\n",
           "harness": '\n}\n\ncandidate() {\n    add "$@"\n}\n\nset -e\nrun_test() {\n'
                      '    [[ $(candidate "5" "3") = "8" ]]\n    [[ $(candidate "0" "7") = "7" ]]\n'
                      '    [[ $(candidate "-4" "4") = "0" ]]\n}\n\nrun_test'},
    "java": {"kind": "harness", "language": "java",
             "prefix": "import java.util.*;\nclass Problem {\n    // Add the two integers x and y.\n"
                       "    public static long add(long x, long y) {\n",
             "harness": "\n    }\n    public static void main(String[] args) {\n    assert(add((5l), (3l)) == (8l));\n"
                        "    assert(add((0l), (7l)) == (7l));\n    assert(add((-4l), (4l)) == (0l));\n    }\n\n}\n"},
}

CASES: list[dict[str, Any]] = [
    # ------------------------------------------------------------------ stdio, Python
    case("stdio_python_accepted", "a+b passes both cases", _stdio(*ADD_CASES), ADD, "accepted", 2, 2),
    case("stdio_python_wrong_answer", "a-b: right on the second case only",
         _stdio(("1 2\n", "3\n"), ("5 0\n", "5\n")), "a, b = map(int, input().split())\nprint(a - b)\n",
         "wrong_answer", 1, 2),
    case("stdio_python_runtime_error", "ZeroDivisionError on the second case",
         _stdio(("1\n", "1\n"), ("0\n", "0\n")), "print(1 // int(input()))\n", "runtime_error", 1, 2),
    case("stdio_python_compile_error", "a SyntaxError is a compile error for Python stdio",
         _stdio(*ADD_CASES), "def f(:\n    pass\n", "compile_error", 0, 2),
    case("stdio_python_time_limit_exceeded", "a busy loop past run_timeout",
         _stdio(("1\n", "1\n"), run_timeout=1), "while True:\n    pass\n", "time_limit_exceeded", 0, 1),
    case("stdio_python_memory_limit_exceeded", "512 MiB under a 64 MiB limit",
         _stdio(("\n", "3\n"), memory_limit_MB=64), "x = bytearray(512 * 1024 * 1024)\nprint(3)\n",
         "memory_limit_exceeded", 0, 1),
    case("stdio_python_stop_on_first_failure", "the first case crashes, the other two are skipped",
         _stdio(("0\n", "0\n"), ("2\n", "3\n"), ("3\n", "2\n")), "print(6 // int(input()))\n",
         "runtime_error", 0, 3, stop=True),
    case("stdio_python_output_file", "the answer is written to out.txt (output_file), stdout ignored",
         _stdio(*ADD_CASES, output_file="out.txt"),
         "a, b = map(int, input().split())\nprint('debug')\nopen('out.txt', 'w').write(f'{a + b}\\n')\n",
         "accepted", 2, 2),
    case("stdio_output_truncated_wrong_answer", "5000 bytes cut at a 1024-byte output limit, 2 bytes expected",
         _stdio(("\n", "3\n")), "print('x' * 5000)\n", "wrong_answer", 0, 1,
         sandbox={"output_limit_bytes": 1024}),
    case("stdio_output_truncated_test_data_error", "the expected output (3001 bytes) exceeds the 1024-byte limit",
         _stdio(("\n", "y" * 3000 + "\n")), "print('y' * 3000)\n", "test_data_error", 0, 1,
         sandbox={"output_limit_bytes": 1024}),
    case("stdio_unsupported_language_infra_error", "the sandbox answers SandboxError (no swift toolchain)",
         _stdio(("\n", "3\n"), language="swift"), "print(3)", "infra_error", 0, 1),
    # ------------------------------------------------------------------ stdio, C++
    case("stdio_cpp_accepted", "C++ a+b", _stdio(*ADD_CASES, language="cpp"), CPP_ADD, "accepted", 2, 2),
    case("stdio_cpp_wrong_answer", "C++ a*b", _stdio(*ADD_CASES, language="cpp"),
         CPP_ADD.replace("a + b", "a * b"), "wrong_answer", 0, 2),
    case("stdio_cpp_compile_error", "a missing semicolon", _stdio(*ADD_CASES, language="cpp"),
         CPP_ADD.replace("std::endl;", "std::endl"), "compile_error", 0, 2),
    case("stdio_cpp_runtime_error", "abort() after reading", _stdio(*ADD_CASES, language="cpp"),
         "#include <cstdlib>\n#include <iostream>\nint main() { long a; std::cin >> a; std::abort(); }\n",
         "runtime_error", 0, 2),
    # ------------------------------------------------------------------ output checkers
    case("checker_exact_accepted", "exact: byte-for-byte equal", _stdio(("\n", "3\n"), checker="exact"),
         "print(3)\n", "accepted", 1, 1),
    case("checker_exact_wrong_answer", "exact: a trailing space differs", _stdio(("\n", "3\n"), checker="exact"),
         "print('3 ')\n", "wrong_answer", 0, 1),
    case("checker_lines_accepted", "lines (default): trailing spaces and blank lines ignored",
         _stdio(("\n", "3\n4\n")), "print('3   ')\nprint('4')\nprint()\n", "accepted", 1, 1),
    case("checker_lines_wrong_answer", "lines: the line count must match", _stdio(("\n", "3 4\n")),
         "print(3)\nprint(4)\n", "wrong_answer", 0, 1),
    case("checker_tokens_accepted", "tokens: line breaks are not significant",
         _stdio(("\n", "1 2 3\n"), checker="tokens"), "print(1)\nprint(2)\nprint(3)\n", "accepted", 1, 1),
    case("checker_float_accepted", "float: 1/3 within 1e-6 of 0.333333", _stdio(("\n", "0.333333\n"), checker="float"),
         "print(1 / 3)\n", "accepted", 1, 1),
    case("checker_float_wrong_answer", "float: an integer token must match exactly",
         _stdio(("\n", "1000000\n"), checker="float"), "print(1000001)\n", "wrong_answer", 0, 1),
    case("checker_lcb_accepted", "lcb: 1.0 == 1 as Decimals", _stdio(("\n", "1\n2\n"), checker="lcb"),
         "print('1.0')\nprint(' 2 ')\n", "accepted", 1, 1),
    case("checker_program_accepted", "a checker program accepts any order (and the jury's answers)",
         _stdio(("3\n", "1 2 3\n"), ("2\n", "1 2\n"), checker="checker", checker_program=PERMUTATION_CHECKER),
         "n = int(input())\nprint(*range(n, 0, -1))\n", "accepted", 2, 2),
    case("checker_program_wrong_answer", "the checker program rejects a wrong permutation",
         _stdio(("3\n", "1 2 3\n"), ("2\n", "1 2\n"), checker="checker", checker_program=PERMUTATION_CHECKER),
         "n = int(input())\nprint(*range(n))\n", "wrong_answer", 0, 2),
    case("checker_program_rejects_jury_test_data_error", "the checker rejects the jury's own answer",
         _stdio(("\n", "no\n"), checker="checker", checker_program=YES_CHECKER), "print('yes')\n",
         "test_data_error", 0, 1),
    # ------------------------------------------------------------------ call (tests apart from the solution)
    case("call_accepted", "add(a, b)", _call("add", ([1, 2], 3), ([-4, 4], 0)), "def add(a, b):\n    return a + b\n",
         "accepted", 2, 2),
    case("call_wrong_answer", "a-b: right when b == 0", _call("add", ([1, 2], 3), ([5, 0], 5)),
         "def add(a, b):\n    return a - b\n", "wrong_answer", 1, 2),
    case("call_runtime_error", "the function raises", _call("add", ([1, 2], 3)),
         "def add(a, b):\n    raise ValueError('boom')\n", "runtime_error", 0, 1),
    case("call_time_limit_exceeded", "the function never returns", _call("add", ([1, 2], 3), run_timeout=1),
         "def add(a, b):\n    while True:\n        pass\n", "time_limit_exceeded", 0, 1),
    case("call_solution_method_float_accepted", "a class Solution method, compared in float mode",
         _call("mix", ([0.1, 0.2], [0.3, 2.0]), checker="float"),
         "class Solution:\n    def mix(self, a, b):\n        return [a + b, 2.0]\n", "accepted", 1, 1),
    case("call_null_expected_test_data_error", "expected null is malformed data: no sandbox call",
         _call("add", ([1, 2], None)), "def add(a, b):\n    return a + b\n", "test_data_error", 0, 1),
    # ------------------------------------------------------------------ assert (MBPP style, one batched run)
    case("assert_accepted", "three MBPP asserts",
         _asserts("assert square(2) == 4", "assert square(-3) == 9", "assert square(0) == 0"),
         "def square(x):\n    return x * x\n", "accepted", 3, 3),
    case("assert_wrong_answer", "x + x is right for 2 and 0 only",
         _asserts("assert square(2) == 4", "assert square(-3) == 9", "assert square(0) == 0"),
         "def square(x):\n    return x + x\n", "wrong_answer", 2, 3),
    case("assert_runtime_error", "the function raises on a negative argument",
         _asserts("assert root(4) == 2", "assert root(-1) == 0"),
         "def root(x):\n    if x < 0:\n        raise ValueError(x)\n    return int(x ** 0.5)\n", "runtime_error", 1, 2),
    case("assert_stop_on_first_failure", "the first assert fails, the others are skipped",
         _asserts("assert square(2) == 4", "assert square(-3) == 9", "assert square(0) == 0"),
         "def square(x):\n    return x + 1\n", "wrong_answer", 0, 3, stop=True),
    case("assert_time_limit_exceeded", "the second assert never finishes",
         _asserts("assert spin(0) == 0", "assert spin(1) == 1", run_timeout=1),
         "def spin(x):\n    while x:\n        pass\n    return x\n", "time_limit_exceeded", 1, 2),
    case("assert_in_process_setup_accepted", "setup code that is more than imports keeps the tests in-process",
         _asserts("assert scale(2) == 2 * K", setup_code="K = 3"), "def scale(x):\n    return 3 * x\n",
         "accepted", 1, 1),
    # ------------------------------------------------------------------ Python harness (HumanEval, unittest)
    case("harness_humaneval_accepted", "check(candidate) passes",
         {"kind": "harness", "prefix": HUMANEVAL_PREFIX, "harness": HUMANEVAL_TEST, "entry_point": "add"},
         "    return a + b\n", "accepted", 1, 1),
    case("harness_humaneval_wrong_answer", "an assert of check() fails",
         {"kind": "harness", "prefix": HUMANEVAL_PREFIX, "harness": HUMANEVAL_TEST, "entry_point": "add"},
         "    return a * b\n", "wrong_answer", 0, 1),
    case("harness_humaneval_compile_error", "an unterminated string cannot swallow the tests (BUG-006)",
         {"kind": "harness", "prefix": HUMANEVAL_PREFIX, "harness": HUMANEVAL_TEST, "entry_point": "add"},
         '    return a + b\n"""', "compile_error", 0, 1),
    case("harness_unittest_accepted", "both test methods pass", {"kind": "harness", "harness": UNITTEST},
         "def task_func(x):\n    return 2 * x\n", "accepted", 2, 2),
    case("harness_unittest_wrong_answer", "one method of two fails (counted as unittest counts)",
         {"kind": "harness", "harness": UNITTEST}, "def task_func(x):\n    return x + 2\n", "wrong_answer", 1, 2),
    case("harness_unittest_no_tests_test_data_error", "no entry point and no test methods: no sandbox call",
         {"kind": "harness", "harness": "import unittest\n"}, "def task_func(x):\n    return x\n",
         "test_data_error", 0, 1),
    # ------------------------------------------------------------------ MultiPL-E harnesses
    case("multipl_cpp_accepted", "C++ tests", MULTIPL["cpp"], "    return x + y;\n", "accepted", 1, 1),
    case("multipl_cpp_wrong_answer", "the harness's assert fails", MULTIPL["cpp"], "    return x - y;\n",
         "wrong_answer", 0, 1),
    case("multipl_cpp_compile_error", "the completion does not compile", MULTIPL["cpp"], "    return x +;\n",
         "compile_error", 0, 1),
    case("multipl_cpp_early_exit_runtime_error", "exit(0) before the tests finish is not a pass (BUG-027)",
         MULTIPL["cpp"], "    exit(0);\n", "runtime_error", 0, 1),
    case("multipl_js_accepted", "Node.js tests", MULTIPL["js"], "  return x + y;\n}\n", "accepted", 1, 1),
    case("multipl_js_wrong_answer", "an AssertionError", MULTIPL["js"], "  return x - y;\n}\n", "wrong_answer", 0, 1),
    case("multipl_go_accepted", "Go testing functions", MULTIPL["go"], "    return x + y\n}\n", "accepted", 1, 1),
    case("multipl_go_wrong_answer", "a failed Go test", MULTIPL["go"], "    return x - y\n}\n", "wrong_answer", 0, 1),
    case("multipl_rs_accepted", "Rust tests", MULTIPL["rs"], "    x + y\n", "accepted", 1, 1),
    case("multipl_sh_accepted", "bash tests", MULTIPL["sh"], "    echo $(( $1 + $2 ))\n", "accepted", 1, 1),
    case("multipl_sh_runtime_error", "a failed bash test is a runtime error", MULTIPL["sh"],
         "    echo $(( $1 - $2 ))\n", "runtime_error", 0, 1),
    case("multipl_java_accepted", "Java tests", MULTIPL["java"], "        return x + y;\n", "accepted", 1, 1),
]


def outcome(j: Any) -> dict[str, Any]:
    """The parts of a Judgement a recording pins: verdict, counts and per-test verdicts."""
    return {"verdict": j.verdict.value, "n_passed": j.n_passed, "n_total": j.n_total,
            "tests": [t.verdict.value for t in j.tests]}


def record(c: dict[str, Any], clients: dict[str, SandboxClient]) -> tuple[dict[str, Any], Any]:
    """Judge case ``c`` with a recording ``call``; returns (the recording, the Judgement)."""
    key = json.dumps(c["sandbox"], sort_keys=True)
    if key not in clients:
        clients[key] = SandboxClient([], local=LocalSandbox(**c["sandbox"]))
    client = clients[key]
    JURY_CHECKED.clear()
    judging = _Judging(TestSpec.model_validate(c["spec"]), c["code"], c["stop_on_first_failure"])
    exchanges: list[dict[str, Any]] = []

    def call(req: RunTestsRequest) -> RunTestsResponse:
        resp = client.run_tests(req)
        exchanges.append({"request": request_summary(req, judging.nonce, judging.checker_nonce),
                          "response": resp.model_dump(mode="json")})
        return resp

    j = judging.run(call)
    rec = {**{k: c[k] for k in ("name", "description", "spec", "code", "stop_on_first_failure", "sandbox")},
           "expected": c["expected"], "recorded": {**outcome(j), "message": j.message[-500:]},
           "nonce": judging.nonce, "checker_nonce": judging.checker_nonce, "exchanges": exchanges}
    return rec, j


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="record only these cases (default: all)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--check", action="store_true", help="run the cases, write nothing")
    args = ap.parse_args(argv)
    names = [c["name"] for c in CASES]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate case names")
    if args.list:
        for c in CASES:
            e = c["expected"]
            print(f"{c['name']:52} {e['verdict']:24} {e['n_passed']}/{e['n_total']}")
        return 0
    unknown = sorted(set(args.names) - set(names))
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)}")
    chosen = [c for c in CASES if not args.names or c["name"] in args.names]
    clients: dict[str, SandboxClient] = {}
    failed = []
    RECORDED.mkdir(exist_ok=True)
    for c in chosen:
        rec, j = record(c, clients)
        got = rec["recorded"]
        want = c["expected"]
        same = all(got[k] == want[k] for k in ("verdict", "n_passed", "n_total"))
        print(f"{'ok  ' if same else 'DIFF'} {c['name']:52} {got['verdict']:24} {got['n_passed']}/{got['n_total']}"
              f"  {len(rec['exchanges'])} call(s)", flush=True)
        if not same:
            failed.append(c["name"])
            print(f"     expected {want}; message: {j.message[:300]!r}", flush=True)
            continue
        if not args.check:
            path = RECORDED / f"{c['name']}.json"
            path.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for client in clients.values():
        client.close()
    if failed:
        print(f"{len(failed)} case(s) not as expected (nothing written for them): {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
