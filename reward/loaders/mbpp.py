"""MBPP (google-research ``mbpp.jsonl``, 974 rows: ``task_id``, ``text``, ``code``, ``test_list``,
``test_setup_code``, ``challenge_test_list``) and its sanitized variant (``prompt``, ``test_imports``
instead of ``text``/``test_setup_code``). A sample is a whole program; each ``test_list`` entry is
one assert test. The prompt follows the MBPP paper (Austin et al. 2021, §2.1): the task text then the
three tests."""

from __future__ import annotations

from typing import Any

from judgebox.reward.spec import TestSpec

from .problem import Problem, text_columns

FIELDS = {"task_id", "text", "prompt", "code", "test_setup_code", "source_file"}


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One MBPP row (original or sanitized). Raises ``KeyError`` naming a missing field."""
    text = row["text"] if "text" in row else row["prompt"]
    setup = row.get("test_setup_code") or "\n".join(row.get("test_imports") or [])
    tests = list(row["test_list"])
    prompt = (f"You are an expert Python programmer, and here is your task: {text} "
              "Your code should pass these tests:\n\n" + "\n".join(tests))
    spec = TestSpec(kind="assert", asserts=tests, setup_code=setup)
    return Problem(task_id=str(row["task_id"]), prompt=prompt, spec=spec, gold=row.get("code"),
                   data_source=data_source, columns=text_columns(row, FIELDS))
