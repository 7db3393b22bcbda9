"""BigCodeBench (Zhuo et al. 2024; bigcode-project/bigcodebench, HF ``bigcode/bigcodebench``, split
``v0.1.4``; the hard subset ``bigcode/bigcodebench-hard``): 1,140 Python tasks that call 139 libraries,
each tested by a ``unittest`` file.

Rows: ``task_id`` (``BigCodeBench/0``), ``complete_prompt`` (imports, ``def task_func(...)`` and its
docstring), ``instruct_prompt`` (the task in prose), ``code_prompt`` (imports and the bare ``def`` line),
``canonical_solution`` (the function's body), ``test`` (a module defining ``class TestCases(unittest.TestCase)``),
``entry_point`` (``task_func``), ``libs`` (the libraries the task uses: a Python list, or its text as the
JSONL release writes it).

Two tasks, two formats: ``bigcodebench-complete`` (a sample continues ``complete_prompt``; gold is
``canonical_solution``) and ``bigcodebench-instruct`` (a sample is a whole program, fenced or bare; gold
is ``code_prompt + canonical_solution``). The program is built as the official evaluation builds it
(``bigcodebench/evaluate.py``, calibrated, its default): ``code_prompt + "\\n    pass\\n"`` in front of
the solution (so the prompt's imports are there even when the answer forgot them; the answer's own
``task_func`` replaces the stub), for the complete task with ``complete_prompt`` after that, which the
sample continues. The official module environment (``sys``, ``os``, ``environ``, ``TZ=UTC``, one
OpenMP thread) is the ``bigcodebench`` prelude (:data:`judgebox.reward.preludes.PRELUDES`).

A pass needs every test method of the file's ``TestCases`` class to pass (the only class the official
harness runs), run by ``unittest`` in the solution's own module, as the official harness runs
``code + "\n" + test`` as one module: tests patch the libraries the solution calls and names of the
module itself (``patch(__name__ + ".randint")``), and the solution may use what the test file imports. Limits are the manifest's (``datasets/bigcodebench-*.yaml``): 240 s per task (the
official ``BIGCODEBENCH_TIMEOUT_PER_TASK`` default) and the memory limit there. The libraries a row
names outside Python's standard library, and those the test file itself imports, become the spec's
``libraries``: a sandbox without one judges
the task ``infra_error`` (and ``judgebox eval`` refuses to start, naming them and the ``bigcodebench``
runtime profile that has them), never ``wrong_answer``.

Errors: a missing field raises ``KeyError`` (the loader names file, row and field); an unreadable
``libs`` makes the row ``test_data_error``.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from judgebox.reward.harness import python_tasks
from judgebox.reward.libraries import prelude_libraries
from judgebox.reward.preludes import PRELUDES
from judgebox.reward.spec import TestDataError, TestSpec

from .problem import Problem, guarded_spec, text_columns

FIELDS = {"task_id", "complete_prompt", "instruct_prompt", "code_prompt", "canonical_solution", "test",
          "entry_point", "libs", "doc_struct"}
#: What the calibrated evaluation puts after ``code_prompt`` (a body for its bare ``def`` line).
STUB = "\n    pass\n"


class BigCodeBenchProblem(Problem):
    """A BigCodeBench task. ``entry_point``: the function the tests call (``task_func``); of a chat
    answer's fenced blocks, the last that defines it is the code (not a later example-usage block)."""

    entry_point: str = "task_func"

    def defining(self) -> str:
        return self.entry_point


def libraries(libs: Any) -> list[str]:
    """The top-level modules of a row's ``libs`` outside Python's standard library, sorted.

    Raises:
        TestDataError: ``libs`` is neither a list of names nor the text of one.
    """
    if isinstance(libs, str):
        try:
            libs = ast.literal_eval(libs or "[]")
        except (SyntaxError, ValueError):
            raise TestDataError(f"libs: not a list of library names: {libs[:80]!r}") from None
    if not isinstance(libs, (list, tuple)) or not all(isinstance(x, str) for x in libs):
        raise TestDataError(f"libs: not a list of library names: {libs!r:.80}")
    names = {x.strip().split(".")[0] for x in libs} - {""}
    return sorted(names - set(sys.stdlib_module_names))


def _spec(row: dict[str, Any], prefix: str) -> TestSpec:
    used = {*libraries(row.get("libs", [])), *prelude_libraries(row["test"])}  # the tests import some themselves
    spec = TestSpec(kind="harness", harness=row["test"], prefix=prefix, prelude=PRELUDES["bigcodebench"],
                    shared_module=True, unittest_class="TestCases", libraries=sorted(used))
    spec.check_data()
    python_tasks(spec)  # a file without TestCases test methods: test_data_error, before any run
    return spec


def complete_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One row for BigCodeBench-Complete. Raises ``KeyError`` naming a missing field."""
    prompt, code_prompt = row["complete_prompt"], row["code_prompt"]
    row["test"], row["canonical_solution"]  # noqa: B018 - required fields: KeyError names them
    spec, error = guarded_spec(lambda: _spec(row, code_prompt + STUB + prompt))
    return BigCodeBenchProblem(task_id=str(row["task_id"]), prompt=prompt, spec=spec, data_error=error,
                               gold=row["canonical_solution"], data_source=data_source,
                               entry_point=str(row.get("entry_point") or "task_func"), columns=text_columns(row, FIELDS))


def instruct_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One row for BigCodeBench-Instruct. Raises ``KeyError`` naming a missing field."""
    prompt, code_prompt = row["instruct_prompt"], row["code_prompt"]
    row["test"], row["canonical_solution"]  # noqa: B018 - required fields: KeyError names them
    spec, error = guarded_spec(lambda: _spec(row, code_prompt + STUB))
    return BigCodeBenchProblem(task_id=str(row["task_id"]), prompt=prompt, spec=spec, data_error=error,
                               gold=code_prompt + row["canonical_solution"], data_source=data_source,
                               entry_point=str(row.get("entry_point") or "task_func"),
                               columns=text_columns(row, FIELDS))
