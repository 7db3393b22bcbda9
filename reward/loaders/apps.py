"""APPS / TACO rows (HF ``codeparrot/apps``, ``BAAI/TACO``): ``problem_id``, ``question``,
``solutions`` (JSON list of programs), ``input_output`` (JSON, see :func:`judgebox.reward.loaders.cases.apps_spec`),
``starter_code``. The prompt is the question followed by the starter code; the gold is the first
solution. The spec's prelude is APPS's harness import block (:mod:`judgebox.reward.preludes`; TACO's harness is
APPS's), for stdin and call-based problems alike."""

from __future__ import annotations

from typing import Any

from judgebox.reward.preludes import PRELUDES
from judgebox.reward.spec import TestDataError

from .cases import apps_spec, decode_json
from .problem import Problem, guarded_spec, text_columns

FIELDS = {"question", "solutions", "input_output", "starter_code"}


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One APPS/TACO row; unusable test data becomes ``data_error`` (never a pass)."""
    spec, error = guarded_spec(lambda: apps_spec(row.get("input_output"), prelude=PRELUDES["apps"]))
    try:
        solutions = decode_json(row.get("solutions") or "[]", "solutions")
    except TestDataError:
        solutions = []
    prompt = row.get("question", "")
    if row.get("starter_code"):
        prompt += "\n\n" + row["starter_code"]
    task_id = row.get("problem_id", row.get("id", index))
    return Problem(task_id=str(task_id), prompt=prompt, spec=spec, data_error=error,
                   gold=solutions[0] if solutions else None, data_source=data_source,
                   columns=text_columns(row, FIELDS))
