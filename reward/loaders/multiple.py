"""MultiPL-E rows (HF ``nuprl/MultiPL-E``, and SandboxFusion's ``humaneval-*.jsonl`` samples):
``name``/``task_id``, ``language`` (MultiPL-E's short name), ``prompt``, ``tests``, ``stop_tokens``.
A sample continues ``prompt`` and is cut at the first stop token; the program is MultiPL-E's
``prompt + completion + "\n" + tests`` (``tests`` starts by closing the function), so the spec's
harness is ``"\n" + tests``. SandboxFusion's rows add a model-written ``gpt_solution``, usable as samples
with ``--samples column:gpt_solution``; there is no gold solution."""

from __future__ import annotations

import re
from typing import Any

from reward.spec import TestSpec

from .problem import Problem, cut_at_stop_tokens, text_columns

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


def candidate(problem: Problem, completion: str) -> tuple[TestSpec, str]:
    """The spec and code to judge for a MultiPL-E completion.

    A completion whose code restates the prompt's function header (its last line up to the opening
    parenthesis, whitespace ignored; the last fenced block that does, else the first) is judged as its own program with no
    prefix: from its start through the function body, cut at the first stop token after the header
    (its own ``main``/tests are dropped; helpers after the function are lost, as in MultiPL-E). The
    tests rely on the prompt's imports, so Go programs get the prompt's missing imports and C++
    programs the prompt's ``#include`` lines; a Go import only the dropped code used becomes a blank
    import (Go rejects unused imports). Any other completion continues the prompt and is cut
    at the first stop token.
    """
    header = next((ln for ln in reversed(problem.prompt.splitlines()) if ln.strip()), "")
    header = header[: header.index("(") + 1] if "(" in header else header  # parameter names may differ
    pattern = re.compile(r"\s*".join(map(re.escape, "".join(header.split()))))
    for policy in ("last", "first"):
        code = problem.extract(completion, policy)
        match = pattern.search(code) if header else None
        if match:
            body_start = code.find("\n", match.end())
            body_start = len(code) if body_start < 0 else body_start
            program = code[:body_start] + cut_at_stop_tokens(code[body_start:], problem.stop_tokens)
            if problem.language == "go_test":
                program = add_go_imports(program, go_imports(problem.prompt))
                program = blank_unused_go_imports(program, problem.spec.harness or "")
            elif problem.language == "cpp":  # the tests use assert & co.; a repeated #include is harmless
                program = "".join(ln + "\n" for ln in problem.prompt.splitlines()
                                  if ln.lstrip().startswith("#include")) + program
            return problem.spec.model_copy(update={"prefix": ""}), program
    return problem.spec, cut_at_stop_tokens(problem.extract(completion), problem.stop_tokens)


_GO_IMPORT = re.compile(r'^\s*import\s*\(([^)]*)\)|^\s*import\s+(?:\w+\s+)?("[^"]+")', re.M)


def go_imports(source: str) -> set[str]:
    """The package paths a Go source imports (``import "x"`` and ``import ( ... )`` forms)."""
    found = set()
    for block, single in _GO_IMPORT.findall(source):
        found |= set(re.findall(r'"([^"]+)"', block or single))
    return found


def add_go_imports(program: str, needed: set[str]) -> str:
    """``program`` with ``import "p"`` added after its package clause for each needed package it
    lacks: MultiPL-E's Go tests use the prompt's imports (``testing``, ``fmt``), which a restated
    program may have dropped."""
    missing = sorted(needed - go_imports(program))
    match = re.search(r"(?m)^\s*package\s+\w+[^\n]*\n", program)
    if not missing or not match:
        return program
    lines = "".join(f'import "{p}"\n' for p in missing)
    return program[: match.end()] + lines + program[match.end():]


def blank_unused_go_imports(program: str, tests: str) -> str:
    """``program`` with each unaliased import that neither it nor ``tests`` uses turned into a blank
    import (``_ "strings"``): code cut away after the function (the model's own tests or ``main``)
    may have been its only user, and Go refuses to compile an unused import."""
    first_func = program.find("\nfunc ")
    head, body = (program, "") if first_func < 0 else (program[:first_func], program[first_func:])
    for path in sorted(go_imports(head)):
        name = path.rsplit("/", 1)[-1]
        if not re.search(rf"\b{re.escape(name)}\.", body + tests):
            head = re.sub(rf'(?m)^(\s*(?:import\s+)?)"{re.escape(path)}"', rf'\1_ "{path}"', head, count=1)
    return head + body
