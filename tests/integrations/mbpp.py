"""Real MBPP rows (``../shared/data/mbpp.jsonl``) as the integration tests feed them to trainers:
``Problem``s read by judgebox's own MBPP loader, and chat completions (gold or wrong) for them."""

from __future__ import annotations

import json
from pathlib import Path

from judgebox.reward.loaders import load_problems
from judgebox.reward.loaders.problem import Problem

MBPP = Path(__file__).resolve().parents[3] / "shared" / "data" / "mbpp.jsonl"


def mbpp_problems(n: int) -> list[Problem]:
    """The first ``n`` MBPP problems (each with a spec and a gold solution)."""
    return load_problems(MBPP, "mbpp", data_source="mbpp")[:n]


def ground_truth(problem: Problem) -> str:
    """The problem's tests as TestSpec JSON text (what ``judgebox data convert`` writes)."""
    return json.dumps(problem.spec.model_dump(mode="json"))


def fenced(code: str) -> str:
    """A chat completion answering with ``code`` in a python fence."""
    return f"Here is my solution.\n```python\n{code}\n```"
