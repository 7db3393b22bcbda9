"""Why a chat answer judged as MultiPL-E's generation step would cut it can fail where judgebox passes.

MultiPL-E evaluates ``prompt + completion + tests``, its completion being a model's continuation of
the prompt cut at the first stop token. A chat answer restates the whole program; read as a
continuation (the text after the function's header), it loses what a continuation cannot hold.
:func:`why_not_a_continuation` names it from the row alone, so the parity test can check that every
row where the two verdicts differ is one of these, never an unexplained difference.
"""

from __future__ import annotations

import re
from typing import Optional

RENAMED = "the answer's function header differs from the prompt's (a renamed parameter or type): a continuation keeps the prompt's"
BEFORE = "the answer adds code before the function (a helper, an import, include, use or require) that a continuation of the prompt cannot hold"
AFTER = "the answer defines a helper after the function: the first stop token ends the continuation before it"
INSIDE = "a stop token occurs inside the function's own body (Go's `struct`, a `\\n// ` or `\\nfunction ` line): the continuation is cut mid-function"

_COMMENT = ("//", "#", "/*", "*", "--")


def _header(row: dict) -> tuple[str, re.Pattern]:
    last = [ln for ln in row["prompt"].splitlines() if ln.strip()][-1].strip()
    head = last[: last.index("(") + 1] if "(" in last else last
    pattern = re.compile(r"^[ \t]*" + r"\s*".join(map(re.escape, "".join(head.split()))), re.M)
    return last, pattern


def answer_code(row: dict) -> str:
    """The answer's fenced block that defines the function (else its first block, else the answer)."""
    _, pattern = _header(row)
    blocks = re.findall(r"```[^\n]*\n(.*?)(?:```|\Z)", row["gpt_solution"], re.S)
    return next((b for b in blocks if pattern.search(b)), blocks[0] if blocks else row["gpt_solution"])


def continuation(row: dict) -> str:
    """The answer as MultiPL-E's generation step reads a completion: the text after the function's
    header (where a line starts) in :func:`answer_code`, cut at the earliest of the row's stop tokens."""
    _, pattern = _header(row)
    code = answer_code(row)
    found = pattern.search(code)
    after = code[code.find("\n", found.end()) + 1:] if found and "\n" in code[found.end():] else ""
    cuts = [after.find(t) for t in row["stop_tokens"] if t in after]
    return after[: min(cuts)] if cuts else after


def _code_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(_COMMENT)]


def why_not_a_continuation(row: dict) -> Optional[str]:
    """The first reason (in the order RENAMED, BEFORE, INSIDE, AFTER) that the answer is not a
    continuation of the prompt, or ``None`` when it is one."""
    last, pattern = _header(row)
    code = answer_code(row)
    found = pattern.search(code)
    if not found:
        return RENAMED
    line_end = code.find("\n", found.start())
    written = code[found.start(): line_end if line_end >= 0 else len(code)]
    if "".join(written.split()) != "".join(last.split()):
        return RENAMED
    prompt_lines = set(_code_lines(row["prompt"]))
    if any(ln not in prompt_lines for ln in _code_lines(code[: found.start()])):
        return BEFORE
    after = code[line_end + 1:] if line_end >= 0 else ""
    cuts = [after.find(t) for t in row["stop_tokens"] if t in after]
    cut = min(cuts) if cuts else len(after)
    # the function's own end: the first line that closes it at column 0 (``}``; ``end`` elsewhere)
    end = re.search(r"^\}", after, re.M)
    if end is not None and cut < end.start():
        return INSIDE
    rest = after[cut:]
    definitions = [ln for ln in rest.splitlines()[1:] if ln[:1].strip() and not ln.startswith(_COMMENT)
                   and not ln.startswith(("}", "console.", "fmt.", "print", "echo", "assert", "main"))]
    if definitions:
        return AFTER
    return None
