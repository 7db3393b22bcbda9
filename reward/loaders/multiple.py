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

from .declarations import keep_prompt_declarations
from .later_definitions import definitions_after
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
    that starts a line; of the text after it only top-level definitions are kept
    (:func:`reward.loaders.later_definitions.definitions_after`: helpers stay, the answer's own
    ``main``, tests and demo calls go), placed before the function where the tests close it. The
    tests rely on what the prompt declares before the function, so the program gets back each such
    declaration it lacks (:func:`reward.loaders.declarations.keep_prompt_declarations`: C++
    includes, Java imports and class, Rust ``use`` lines, Go imports, Node ``require``). Any other
    completion continues the prompt and is cut at the first stop token.
    """
    lines = problem.prompt.splitlines(keepends=True)
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=0)
    header = lines[last].strip() if lines else ""
    header = header[: header.index("(") + 1] if "(" in header else header  # parameter names may differ
    pattern = re.compile(r"\s*".join(map(re.escape, "".join(header.split()))))
    name = (re.findall(r"[\w$]+", header.rsplit("(", 1)[0]) or [""])[-1]
    for policy in ("last", "first"):
        code = problem.extract(completion, policy)
        match = pattern.search(code) if header else None
        if match:
            body_start = code.find("\n", match.end())
            body_start = len(code) if body_start < 0 else body_start
            body = cut_at_stop_tokens(code[body_start:], [t for t in problem.stop_tokens if t.startswith("\n")])
            program = code[:body_start] + body
            later = definitions_after(problem.language, code[body_start + len(body):], name)
            header_at = match.start()
            if (problem.spec.harness or "").lstrip().startswith("}"):  # the tests close the function
                line_start = program.rfind("\n", 0, header_at) + 1
                program = program[:line_start] + later + program[line_start:]
                header_at += len(later)
            elif later:
                program = program.rstrip("\n") + "\n" + later
            program = keep_prompt_declarations(problem.language, "".join(lines[:last]), program, header_at,
                                               problem.spec.harness or "", code[body_start + len(body):])
            return problem.spec.model_copy(update={"prefix": ""}), program
    return problem.spec, cut_at_stop_tokens(problem.extract(completion), problem.stop_tokens)
