"""MBXP (Athiwaratkun et al. 2023; amazon-science/mxeval ``data/mbxp/mb*_release_v*.jsonl``, HF
``mxeval/mbxp``): MBPP's problems translated to many languages, one file per language.

Rows: ``task_id`` (``MBPP/1``, ``MBCPP/1``, ``MBJP/1``, ...), ``language`` (mxeval's name: ``python``, ``cpp``,
``java``, ``javascript``, ``go``, ``ruby``, ``php``, ``perl``, ``typescript``, ``kotlin``, ``csharp``, ``scala``,
``swift``), ``prompt`` (ends with the function's signature), ``test``, ``entry_point``, ``canonical_solution``
(gold; ``null`` in many rows, and in every Go and Perl row: no gold), ``description``. A sample
continues ``prompt``.

mxeval's ``execution.py`` runs ``prompt + completion + test`` (Python: ``prompt + completion + "\\n" + test
+ "\\n" + f"check({entry_point})"``) and passes a run whose exit status is 0 (``go run`` for Go; C++ is
compiled by plain ``g++``: the spec asks for ``gnu++17``, that g++'s default). The tests are plain
statements that throw on the first wrong value. judgebox runs the same program in its harness
(:mod:`judgebox.reward.harness.multipl`): a pass also needs the per-run marker after the tests, and the
tests' own "this case failed" throw is rewritten into the harness's failed-assertion form, so it is
``wrong_answer`` while any other failure stays ``runtime_error``:

- cpp: ``throw runtime_error("Exception -- test case N did not pass.")`` -> ``assert(!"...")``;
- java: ``throw new java.lang.Exception("Exception -- test case ...`` -> ``throw new AssertionError(...``;
- javascript: ``throw 'Error at Nth assert statement...'`` throws ``assert.fail(...)`` first (the tests
  ``require("lodash")``: the manifest lists it);
- typescript: the tests ``import * as assert from 'assert'`` and call ``assert.deepEqual``, whose
  failure is already the harness's failed assertion; the import becomes a ``require`` (which the
  harness binds before the solution runs, so a solution's own ``function require`` cannot answer
  it). Run with tsx as the ``typescript`` language is (types stripped, not checked: mxeval compiles
  with ``tsc`` and runs the JavaScript it emits despite type errors);
- go: the tests' ``func main()`` becomes ``TestMBXP(t *testing.T)`` (the prompt gets ``import "testing"``),
  run as MultiPL-E's Go tests are; a panic whose message starts with ``Exception`` (``deepCompare``'s)
  fails the test, any other panic is re-raised;
- ruby: the tests become one ``Test::Unit`` test method, ``raise StandardError, "Error at test case N"``
  -> ``flunk("Error at test case N")``;
- php: ``throw new Exception("Error at Nth assert statement.")`` -> the message the PHP harness reads as
  a failed test (``"Test failed!"``);
- scala: the tests are the body of ``object Main extends App``, whose statements run when it starts;
  the object loses ``extends App`` and the tests become its ``def main(args: Array[String])``, run
  by the MultiPL-E Scala harness (a failed ``assert`` is ``wrong_answer``). mxeval runs ``scalac``
  then ``scala -cp . Main``; the release has no canonical solutions;
- kotlin: ``throw Exception("Exception -- test case N did not pass...`` -> ``throw AssertionError(...``;
  the tests' ``fun main()`` is called by the ``kotlin_script`` harness (``kotlinc -script``, Kotlin
  1.3: mxeval compiles with ``kotlinc`` and runs the jar);
- perl: ``die "Exception -- test case N did not pass.";`` -> the message on stderr and ``exit 1`` (a
  failed test for the Perl harness). The tests ``use Data::Compare`` (Debian ``libdata-compare-perl``).

csharp and swift have no runner in judgebox: such a row has no spec
(``test_data_error``). A missing field raises ``KeyError`` (the loader names file, row and field).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from judgebox.reward.spec import TestDataError, TestSpec

from .problem import Problem, guarded_spec, text_columns

FIELDS = {"task_id", "language", "prompt", "test", "entry_point", "canonical_solution", "description"}
#: mxeval language -> sandbox language.
LANGUAGES = {"python": "python", "cpp": "cpp", "java": "java", "javascript": "nodejs", "go": "go", "ruby": "ruby",
             "php": "php", "perl": "perl", "typescript": "typescript", "scala": "scala",
             "kotlin": "kotlin_script"}

_GO_FAIL = ("func TestMBXP(t *testing.T) {\n\tdefer func() {\n\t\tif r := recover(); r != nil {\n"
            "\t\t\tif s, ok := r.(string); ok && len(s) >= 9 && s[:9] == \"Exception\" {\n"
            "\t\t\t\tt.Error(s)\n\t\t\t\treturn\n\t\t\t}\n\t\t\tpanic(r)\n\t\t}\n\t}()\n")


def _sub(pattern: str, replace: Any, what: str) -> Callable[[str], str]:
    """A test rewrite: every match of ``pattern`` replaced; ``TestDataError`` when there is none."""
    def rewrite(test: str) -> str:
        out, n = re.subn(pattern, replace, test)
        if not n:
            raise TestDataError(f"test: no {what} to mark as a failed test")
        return out
    return rewrite


def _ruby(test: str) -> str:
    body = _sub(r"\braise\s+StandardError\s*,\s*(\"[^\"\n]*\"|'[^'\n]*')", r"flunk(\1)",
                "'raise StandardError, ...'")(test)
    return "\nrequire 'test/unit'\nclass TestMBXP < Test::Unit::TestCase\n  def test_mbxp\n" + body + "\n  end\nend\n"


def _go(test: str) -> str:
    return _sub(r"(?m)^func\s+main\s*\(\s*\)\s*\{[ \t]*\n?", lambda m: _GO_FAIL, "'func main() {'")(test)


#: sandbox language -> the rewrite of mxeval's tests (see the module docstring).
TESTS: dict[str, Callable[[str], str]] = {
    "cpp": _sub(r"\bthrow\s+(?:std::)?runtime_error\s*\(\s*(\"Exception -- test case[^\"\n]*\")\s*\)", r"assert(!\1)",
                "'throw runtime_error(\"Exception -- test case ...\")'"),
    "java": _sub(r"\bthrow\s+new\s+(?:java\.lang\.)?Exception\s*\(\s*(?=\"Exception -- test case)",
                 "throw new AssertionError(", "'throw new java.lang.Exception(\"Exception -- test case ...'"),
    "nodejs": _sub(r"\bthrow\s+(?=['\"](Error at \d+th assert statement))",
                   lambda m: f"throw require('node:assert').fail({m.group(1)!r}), ", "\"throw 'Error at ...'\""),
    "go": _go,
    "ruby": _ruby,
    "php": _sub(r"\bthrow\s+new\s+Exception\s*\(\s*(\"Error at \d+th assert statement\.?\""
                r"|'Error at \d+th assert statement\.?')\s*\)",
                "throw new Exception(\"Test failed!\")", "'throw new Exception(\"Error at ...\")'"),
    "perl": _sub(r"\bdie\s+(\"Exception -- test case[^\"\n]*\")", r'do { print STDERR \1, "\\n"; exit 1 }',
                 "'die \"Exception -- test case ...\"'"),
}


def _typescript(test: str) -> str:
    test = re.sub(r"(?m)^[ \t]*import\s+\*\s+as\s+(\w+)\s+from\s+(['\"])([\w:/.@-]+)\2[ \t]*;?",
                  r"const \1 = require(\2\3\2);", test)
    if re.search(r"\bthrow\s+['\"]Error at \d+th assert statement", test):
        return TESTS["nodejs"](test)
    if not re.search(r"\bassert\.\w+\s*\(", test):
        raise TestDataError("test: no assert.* call and no 'throw \"Error at ...\"' to mark as a failed test")
    return test


TESTS["typescript"] = _typescript


def _scala(test: str) -> str:
    body, closed = re.subn(r"\}\s*\Z", "", test.rstrip())
    if not closed:
        raise TestDataError("test: no closing brace of the prompt's object after the tests")
    if not re.search(r"\bassert\s*\(", body):
        raise TestDataError("test: no assert(...) to mark as a failed test")
    return "\n  def main(args: Array[String]): Unit = {\n" + body + "\n  }\n}\n"


TESTS["scala"] = _scala
TESTS["kotlin_script"] = _sub(r"\bthrow\s+(?:java\.lang\.)?Exception\s*\(\s*(?=\"Exception -- test case)",
                              "throw AssertionError(", "'throw Exception(\"Exception -- test case ...'")


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One MBXP row. Raises ``KeyError`` naming a missing field (``entry_point`` for Python rows)."""
    task_id, prompt, test, given = str(row["task_id"]), row["prompt"], row["test"], row["language"]
    language = LANGUAGES.get(str(given).lower())
    entry = row["entry_point"] if language == "python" else row.get("entry_point")
    spec, error = guarded_spec(lambda: _spec(language, given, prompt, test, entry))
    return Problem(task_id=task_id, prompt=prompt, spec=spec, data_error=error, gold=row.get("canonical_solution"),
                   data_source=data_source, language=language or str(given), columns=text_columns(row, FIELDS))


def _spec(language: str | None, given: Any, prompt: str, test: str, entry: Any) -> TestSpec:
    if language is None:
        raise TestDataError(f"language: MBXP's {given!r} has no runner in judgebox (it runs "
                            f"{', '.join(LANGUAGES)})")
    if language == "python":
        return TestSpec(kind="harness", language="python", prefix=prompt, harness=test, entry_point=str(entry))
    if language == "go":
        prompt, found = re.subn(r"(?m)^[ \t]*package[ \t]+main\b[^\n]*", r'\g<0>\nimport "testing"', prompt, count=1)
        if not found:
            raise TestDataError("prompt: no 'package main' clause to add the tests' import \"testing\" after")
    if language == "scala":
        prompt, found = re.subn(r"\bobject\s+(\w+)\s+extends\s+App\s*\{", r"object \1 {", prompt, count=1)
        if not found:
            raise TestDataError("prompt: no 'object ... extends App {' whose body holds the tests")
    return TestSpec(kind="harness", language=language, prefix=prompt, harness=TESTS[language](test),
                    cpp_std="gnu++17" if language == "cpp" else None)
