"""HumanEval-X (Zheng et al. 2023; THUDM/CodeGeeX ``codegeex/benchmark/humaneval-x/<lang>/data/
humaneval_<lang>.jsonl.gz``, HF ``THUDM/humaneval-x``): HumanEval's 164 problems in ``cpp``, ``go``, ``java``,
``js``, ``python`` and ``rust``.

Rows: ``task_id`` (``CPP/0``, ``Go/0``, ``Java/0``, ``JavaScript/0``, ``Python/0``, ``Rust/0``: the prefix names the
language), ``prompt``, ``declaration``, ``canonical_solution`` (gold), ``test``, ``example_test``; Go rows add
``import`` (the prompt's import block) and ``test_setup`` (package clause and the tests' imports). A
sample continues :attr:`Problem.prompt` (for Rust ``declaration + prompt``: the prompt is the doc comment
put after the signature).

The program is put together as CodeGeeX's ``evaluate_humaneval_x.py`` (``process_humaneval_test``) does, and
a run passes as its ``execution.py`` decides (exit status 0), here in judgebox's harnesses
(:mod:`judgebox.reward.harness`): a pass also needs the per-run marker after the tests, and a failed
assertion of the tests is ``wrong_answer``. Per language (CodeGeeX's rule, then what differs here):

- python: ``IMPORT_HELPER`` imports + prompt + completion + test, where the completion is cut at its
  first non-empty line that starts in column 0. The imports are the spec's ``prelude``; the test ends
  with ``check(<function>)``, which becomes the ``entry_point`` (the runner makes that call). The cut
  is :class:`PythonProblem`'s; an answer whose first line starts in column 0 (a chat answer restating
  the function) is kept whole, as judgebox's HumanEval keeps it.
- cpp: the ``IMPORT_HELPER`` includes the prompt lacks + prompt + completion + test, ``g++ -std=c++11``.
  The tests' ``#include`` lines move to the top: ``<assert.h>`` included after the harness's ``assert``
  would bring the library's back (a failed assertion would abort: ``runtime_error``).
- java: prompt + completion + test (``public class Main``, whose ``main`` throws ``AssertionError``).
- js: prompt + completion + test; CodeGeeX passes a run that wrote nothing, as a failed
  ``console.assert`` only writes to stderr. Here ``console.assert(`` is Node's ``assert.ok(``: a false
  condition is ``wrong_answer``; the program's own output fails nothing (judgebox's harnesses discard it).
- go: ``test_setup`` + the ``IMPORT_HELPER`` packages not named in ``test_setup`` + the prompt less its
  ``import`` + completion + test, run by ``go test`` (testify). CodeGeeX imports such a package only
  when the completion names it (``pkg.``); a spec cannot see the completion, so each is imported and
  named once after the tests (``var _ = pkg.Func``): never "imported and not used", the same verdict
  but for a completion that declares a top-level name equal to one of those packages.
- rust: ``fn main(){}`` + declaration + prompt + completion + test under ``cargo test`` with the crates
  rand, regex and md5. judgebox compiles one file with ``rustc`` and no crates: the declaration's
  ``use`` lines of those crates are dropped (a completion that uses them does not compile: 2 of the
  164 references, Rust/91 regex and Rust/162 md5), and the ``#[cfg(test)]`` module's ``#[test]``
  functions are called from the tests' ``main`` (an ``assert!`` panic is ``wrong_answer``). Tests that
  use one of those crates themselves (Rust/38, 50, 53: ``rand``) or whose tests are all commented out
  (Rust/32) leave the problem without a spec: no completion could pass or fail them here.

Errors: a missing field raises ``KeyError`` (:func:`judgebox.reward.loaders.load_problems` names the file,
row and field); an unknown language prefix, a Python test without its ``check(...)`` call or a Rust test
without ``#[test]`` functions leaves the problem without a spec (``test_data_error``, never scored).
"""

from __future__ import annotations

import re
from typing import Any

from judgebox.reward.spec import TestDataError, TestSpec

from .problem import Problem, guarded_spec, text_columns

FIELDS = {"task_id", "prompt", "declaration", "canonical_solution", "test", "example_test", "import",
          "test_setup", "text", "docstring"}
#: task_id prefix -> sandbox language (Go's tests are ``testing`` functions).
LANGUAGES = {"python": "python", "cpp": "cpp", "java": "java", "javascript": "nodejs", "js": "nodejs",
             "go": "go_test", "rust": "rust"}
#: CodeGeeX ``codegeex/benchmark/utils.py`` ``IMPORT_HELPER``: what its harness puts before programs.
PYTHON_IMPORTS = "".join(f"import {m}\n" for m in ("math", "re", "sys", "copy", "datetime", "itertools", "collections",
                                                    "heapq", "statistics", "functools", "hashlib", "numpy"))
PYTHON_IMPORTS += "import numpy as np\nimport string\nfrom typing import *\nfrom collections import *\n"
CPP_INCLUDES = tuple(f"#include<{h}>" for h in ("stdlib.h", "algorithm", "math.h", "stdio.h", "vector", "string",
                                                "climits", "cstring", "iostream"))
#: Go package -> one of its functions, named once so the import is always used.
GO_PACKAGES = {"math": "Abs", "strings": "Contains", "fmt": "Sprint", "strconv": "Itoa", "time": "Now",
               "bytes": "Equal", "regexp": "MustCompile", "sort": "Ints", "math/rand": "Intn", "crypto/md5": "Sum"}
#: Crates of CodeGeeX's Rust project that the sandbox lacks: their ``use`` lines are dropped.
RUST_CRATES = re.compile(r"(?m)^[ \t]*use[ \t]+(?:rand|regex|md5)\b[^\n]*\n?")

_PY_CHECK = re.compile(r"(?m)^check\(\s*([A-Za-z_]\w*)\s*\)[ \t]*$")
_INCLUDE = re.compile(r"(?m)^[ \t]*#[ \t]*include\b[^\n]*\n?")
#: a ``#[test]`` attribute, comments and blank space, ``fn ``: the start of a test function
_RUST_TEST = r"#\[test\]((?:\s|//[^\n]*)*)fn\s+"


class PythonProblem(Problem):
    """A HumanEval-X Python problem: a continuation is cut as CodeGeeX cuts it (:func:`cut_continuation`)."""

    def candidate(self, completion: str, sanitize: bool = False) -> tuple[TestSpec, str]:
        """:meth:`Problem.candidate`, then the cut (not after ``sanitize``, which keeps the function itself)."""
        spec, code = super().candidate(completion, sanitize)
        return spec, code if sanitize else cut_continuation(code)


def cut_continuation(code: str) -> str:
    """``code`` up to its first non-empty line that starts with neither a space nor a tab (CodeGeeX's
    cut of a Python completion); ``code`` whole when its first non-empty line is such a line."""
    lines = code.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() and line[0] not in " \t"]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if not starts or starts[0] == first:
        return code
    return "\n".join(lines[:starts[0]])


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One HumanEval-X row. Raises ``KeyError`` naming a missing field."""
    task_id, prompt, test = str(row["task_id"]), row["prompt"], row["test"]
    language = LANGUAGES.get(task_id.split("/")[0].lower())
    if language == "rust":
        prompt = row["declaration"] + prompt
    if language == "go_test":
        _ = (row["import"], row["test_setup"])  # required: a KeyError names the missing one
    spec, error = guarded_spec(lambda: _spec(language, task_id, row, test))
    cls = PythonProblem if language == "python" else Problem
    return cls(task_id=task_id, prompt=prompt, spec=spec, data_error=error, gold=row.get("canonical_solution"),
               data_source=data_source, language=language or "python", columns=text_columns(row, FIELDS))


def _spec(language: str | None, task_id: str, row: dict[str, Any], test: str) -> TestSpec:
    prompt = row["prompt"]
    if language == "python":
        call = next(reversed(list(_PY_CHECK.finditer(test))), None)
        if call is None:
            raise TestDataError("test: no 'check(<function>)' call to take the entry point from")
        return TestSpec(kind="harness", language="python", prelude=PYTHON_IMPORTS, prefix=prompt,
                        harness=test[:call.start()] + test[call.end():], entry_point=call.group(1))
    if language == "cpp":
        head = "".join(s + "\n" for s in CPP_INCLUDES if s not in prompt)
        moved = "".join(m.group(0).rstrip("\n") + "\n" for m in _INCLUDE.finditer(test))
        return TestSpec(kind="harness", language="cpp", cpp_std="c++11", prefix=head + moved + "\n" + prompt,
                        harness="\n" + _INCLUDE.sub("", test))
    if language == "java":
        return TestSpec(kind="harness", language="java", prefix=prompt, harness="\n" + test)
    if language == "nodejs":
        return TestSpec(kind="harness", language="nodejs", prefix=prompt,
                        harness="\n" + re.sub(r"\bconsole\.assert\s*\(", "require('node:assert').ok(", test))
    if language == "go_test":
        return _go_spec(row, test)
    if language == "rust":
        return TestSpec(kind="harness", language="rust", prefix=RUST_CRATES.sub("", row["declaration"]) + prompt,
                        harness=_rust_tests(test))
    raise TestDataError(f"task_id: {task_id!r} names no HumanEval-X language (CPP, Go, Java, JavaScript, Python, Rust)")


def _go_spec(row: dict[str, Any], test: str) -> TestSpec:
    setup = row["test_setup"]
    packages = [p for p in GO_PACKAGES if p not in setup]  # CodeGeeX's test: the name anywhere in test_setup
    imports = "import (\n" + "".join(f'    "{p}"\n' for p in packages) + ")\n" if packages else ""
    uses = "".join(f"var _ = {p.rsplit('/', 1)[-1]}.{GO_PACKAGES[p]}\n" for p in packages)
    prompt = row["prompt"].replace(row["import"], "") if row["import"] else row["prompt"]
    return TestSpec(kind="harness", language="go_test", prefix=setup + "\n" + imports + "\n" + prompt,
                    harness="\n" + test + "\n" + uses)


def _rust_tests(test: str) -> str:
    """The ``#[cfg(test)]`` module made a plain one whose ``#[test]`` functions a ``main`` calls (block
    comments dropped first: a commented-out test is no test).

    Raises:
        TestDataError: no ``#[test]`` function, or the tests use a crate the sandbox lacks.
    """
    test = re.sub(r"/\*.*?\*/", "", test, flags=re.S)
    names = [m.group(2) for m in re.finditer(_RUST_TEST + r"(\w+)", test)]
    if not names:
        raise TestDataError("test: no #[test] functions (a problem without tests can be neither passed nor failed)")
    crate = re.search(r"\b(rand|regex|md5)::", test)
    if crate:
        raise TestDataError(f"test: the tests use the {crate.group(1)} crate, which a single-file rustc build "
                            "lacks (CodeGeeX's cargo project has it)")
    module = re.search(r"\bmod\s+(\w+)\s*\{", test)
    path = module.group(1) + "::" if module else ""
    body = re.sub(_RUST_TEST, r"\1pub fn ", re.sub(r"#\[cfg\(test\)\]", "", test))
    return body + "\nfn main() {\n" + "".join(f"    {path}{n}();\n" for n in names) + "}\n"
