"""CodeContests (HF ``deepmind/code_contests``): ``name``, ``description``, ``public_tests``,
``private_tests``, ``generated_tests`` (each ``{"input": [...], "output": [...]}``), ``solutions``
(``{"language": [int], "solution": [str]}``; 1 = Python 2, 2 = C++, 3 = Python 3, 4 = Java). Every
test of the three groups counts; the gold is the first solution in the problem's language. File I/O
problems (Codeforces ``input_file``/``output_file`` columns, as in open-r1's Codeforces rows) keep
those names; ``"standard input"``/``"standard output"`` or empty mean stdio."""

from __future__ import annotations

from typing import Any

from .cases import stdio_spec
from .problem import Problem, guarded_spec, text_columns

#: CodeContests language codes by sandbox language.
LANGUAGE_CODES = {"python": 3, "cpp": 2, "java": 4}
GROUPS = ("public_tests", "private_tests", "generated_tests")


def to_problem(row: dict[str, Any], index: int, data_source: str, language: str = "python") -> Problem:
    """One CodeContests row; unusable test data becomes ``data_error``."""
    inputs, outputs = [], []
    for group in GROUPS:
        tests = row.get(group) or {}
        inputs += list(tests.get("input") or [])
        outputs += list(tests.get("output") or [])
    files = {k: row[k] for k in ("input_file", "output_file")
             if isinstance(row.get(k), str) and row[k].strip() and not row[k].startswith("standard ")}
    spec, error = guarded_spec(lambda: stdio_spec(inputs, outputs, language=language, **files))
    solutions = row.get("solutions") or {}
    code = LANGUAGE_CODES.get(language)
    gold = next((s for lang, s in zip(solutions.get("language") or [], solutions.get("solution") or [])
                 if lang == code), None)
    return Problem(task_id=str(row.get("name", index)), prompt=row.get("description", ""), spec=spec,
                   data_error=error, gold=gold, data_source=data_source, language=language,
                   columns=text_columns(row, {"name", "description"}))
