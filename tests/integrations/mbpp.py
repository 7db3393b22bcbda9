"""MBPP-format rows as the integration tests feed them to trainers: ``Problem``s read by judgebox's
own MBPP loader from our own rows (``tests/fixtures/data/mbpp.jsonl``, written in MBPP's jsonl format,
see ``tests/fixtures/rows.py``), and chat completions (gold or wrong) for them.

The tests rely on the first three rows: 0 ``count_vowels``; 1 ``common_elements``, whose gold uses
``&`` (with ``|`` it fails every test) and for which :data:`WRONG_COMMON` fails every test too; 2
``is_perfect_square``, for which :data:`HALF_SQUARE` passes 2 of its 3 tests."""

from __future__ import annotations

import json

from judgebox.reward.loaders import load_problems
from judgebox.reward.loaders.problem import Problem
from tests.fixtures import DATA

MBPP = DATA / "mbpp.jsonl"
#: a wrong answer to row 1 (common_elements): fails all 3 tests
WRONG_COMMON = "def common_elements(a, b):\n    return []"
#: a half-right answer to row 2 (is_perfect_square): passes 2 of 3 tests
HALF_SQUARE = "def is_perfect_square(n):\n    return n == 16"


def mbpp_problems(n: int) -> list[Problem]:
    """The first ``n`` MBPP problems (each with a spec and a gold solution)."""
    return load_problems(MBPP, "mbpp", data_source="mbpp")[:n]


def ground_truth(problem: Problem) -> str:
    """The problem's tests as TestSpec JSON text (what ``judgebox data convert`` writes)."""
    return json.dumps(problem.spec.model_dump(mode="json"))


def fenced(code: str) -> str:
    """A chat completion answering with ``code`` in a python fence."""
    return f"Here is my solution.\n```python\n{code}\n```"
