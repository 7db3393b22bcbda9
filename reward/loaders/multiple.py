"""MultiPL-E rows (HF ``nuprl/MultiPL-E``, and SandboxFusion's ``humaneval-*.jsonl`` samples):
``name``/``task_id``, ``language`` (MultiPL-E's short name), ``prompt``, ``tests``, ``stop_tokens``.
A sample continues ``prompt`` and is cut at the first stop token; the program is MultiPL-E's
``prompt + completion + "\n" + tests`` (``tests`` starts by closing the function), so the spec's
harness is ``"\n" + tests``. SandboxFusion's rows add a model-written ``gpt_solution``, usable as samples
with ``--samples column:gpt_solution``; there is no gold solution."""

from __future__ import annotations

from typing import Any

from judgebox.reward.spec import TestSpec

from .problem import Problem, text_columns

#: MultiPL-E language names -> sandbox languages (Go's tests are ``testing`` functions: go_test).
LANGUAGES = {"py": "python", "cpp": "cpp", "java": "java", "go": "go_test", "js": "nodejs",
             "rs": "rust", "sh": "bash", "ts": "typescript", "php": "php", "rb": "ruby",
             "lua": "lua", "pl": "perl", "r": "R", "scala": "scala", "swift": "swift",
             "jl": "julia", "cs": "csharp", "d": "D_ut", "rkt": "racket", "go_test.go": "go_test"}
FIELDS = {"name", "task_id", "language", "prompt", "tests", "doctests", "original",
          "prompt_terminology"}


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One MultiPL-E row. Raises ``KeyError`` naming a missing field or an unknown language."""
    language = LANGUAGES.get(row["language"], row["language"])
    spec = TestSpec(kind="harness", language=language, harness="\n" + row["tests"], prefix=row["prompt"])
    return Problem(task_id=str(row.get("task_id") or row["name"]), prompt=row["prompt"], spec=spec,
                   data_source=data_source, language=language,
                   stop_tokens=list(row.get("stop_tokens") or []), columns=text_columns(row, FIELDS))
