"""HumanEval (openai/human-eval ``HumanEval.jsonl.gz``): ``task_id``, ``prompt``,
``canonical_solution``, ``test``, ``entry_point``. A sample is a continuation of ``prompt``; the test
is ``test`` followed by ``check(entry_point)``, run against ``prompt + completion``."""

from __future__ import annotations

from typing import Any

from judgebox.reward.spec import TestSpec

from .problem import Problem, text_columns

FIELDS = {"task_id", "prompt", "canonical_solution", "test", "entry_point"}


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One HumanEval row. Raises ``KeyError`` naming a missing field."""
    spec = TestSpec(kind="harness", harness=row["test"], entry_point=row["entry_point"],
                    prefix=row["prompt"])
    return Problem(task_id=str(row["task_id"]), prompt=row["prompt"], spec=spec,
                   gold=row.get("canonical_solution"), data_source=data_source,
                   columns=text_columns(row, FIELDS))
