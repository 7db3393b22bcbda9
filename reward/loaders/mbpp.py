"""MBPP (google-research ``mbpp.jsonl``, 974 rows: ``task_id``, ``text``, ``code``, ``test_list``,
``test_setup_code``, ``challenge_test_list``) and its sanitized variant (``prompt``, ``test_imports``
instead of ``text``/``test_setup_code``). A sample is a whole program; each ``test_list`` entry is
one assert test. The prompt follows the MBPP paper (Austin et al. 2021, §2.1): the task text then the
three tests."""

from __future__ import annotations

import ast
import builtins
from typing import Any, Optional

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
    spec = TestSpec(kind="assert", asserts=tests, setup_code=setup, entry_point=entry_point(tests, row.get("code")))
    return Problem(task_id=str(row["task_id"]), prompt=prompt, spec=spec, gold=row.get("code"),
                   data_source=data_source, columns=text_columns(row, FIELDS))


def entry_point(tests: list[str], gold: Optional[str] = None) -> Optional[str]:
    """The function an MBPP row's asserts test, from the row alone: the first function the reference
    solution ``gold`` defines that the asserts call; without one, the first non-builtin name the
    asserts call, else the one name they call (task 126 asks for a function named ``sum``); ``None``
    when nothing fits. The tests' namespace needs it: a builtin's name is the real builtin in the
    tests unless it is the entry point (:mod:`judgebox.reward.harness.names`)."""
    called: list[str] = []
    for test in tests:
        try:
            tree = ast.parse(test)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in called:
                called.append(node.func.id)
    defined = set()
    try:
        defined = {n.name for n in ast.parse(gold or "").body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    except (SyntaxError, ValueError):
        pass
    own = [n for n in called if n in defined] or [n for n in called if n not in dir(builtins)]
    return own[0] if own else (called[0] if len(called) == 1 else None)
