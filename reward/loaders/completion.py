"""From a MultiPL-E completion to the program the judge runs: stop tokens, a restated function
header, the declarations the tests rely on (MultiPL-E's conventions)."""

from __future__ import annotations

import re
from typing import Any, Protocol

from judgebox.reward.spec import TestSpec

from .declarations import keep_prompt_declarations
from .later_definitions import definitions_after


class Task(Protocol):
    """What of a :class:`~judgebox.reward.loaders.problem.Problem` the completion rules read."""

    prompt: str
    language: str
    stop_tokens: list[str]
    spec: Any

    def extract(self, completion: str, policy: str = "last") -> str: ...


#: sandbox language -> the prompt line that declares the function, where its last line does not
#: (Perl's ``my (...) = @_;``) or its first parenthesis is not the parameter list (Racket).
HEADERS = {"perl": re.compile(r"^\s*sub\s+[\w:]+"), "racket": re.compile(r"^\s*\(define\s+\(\s*[^\s()]+")}
#: sandbox language -> the line, at column 0, that closes a restated function (kept with it). The
#: stop tokens of these languages end a *continuation* at a blank line (``\n\n``); a restated
#: function with a blank line in its body would be cut there.
CLOSERS = {"ruby": re.compile(r"(?m)^end\b[^\n]*(\n|\Z)"), "lua": re.compile(r"(?m)^end\b[^\n]*(\n|\Z)"),
           "perl": re.compile(r"(?m)^\}[^\n]*(\n|\Z)"), "php": re.compile(r"(?m)^\}[^\n]*(\n|\Z)"),
           "R": re.compile(r"(?m)^\}[^\n]*(\n|\Z)"), "D_ut": re.compile(r"(?m)^\}[^\n]*(\n|\Z)")}


#: sandbox languages whose tests close the prompt's function with a brace at its indentation (Scala:
#: ``    }``): a restated function's body runs to the first line that closes at its header's
#: indentation (the stop token, ``\n    }\n``, would cut a 2-space-indented answer at its first
#: inner block).
INDENT_CLOSED = {"scala"}


def _header(prompt_lines: list[str], language: str) -> tuple[int, str, str]:
    """(index of the prompt line that declares the function, the header to look for in an answer,
    the function's name)."""
    own = HEADERS.get(language)
    for i in reversed(range(len(prompt_lines))) if own else ():
        m = own.match(prompt_lines[i])
        if m:
            return i, m.group(0).strip(), re.split(r"[\s(]+", m.group(0).strip())[-1]
    last = max((i for i, ln in enumerate(prompt_lines) if ln.strip()), default=0)
    header = prompt_lines[last].strip() if prompt_lines else ""
    header = header[: header.index("(") + 1] if "(" in header else header  # parameter names may differ
    name = (re.findall(r"[\w$]+", re.sub(r"<-\s*function\s*\($", "", header).rsplit("(", 1)[0]) or [""])[-1]
    return last, header, name


def _body(code: str, body_start: int, language: str, stop_tokens: list[str]) -> str:
    """The restated function's text after its header line: up to its closing brace where the tests
    close it (:data:`INDENT_CLOSED`), through its closing line where the language has one
    (:data:`CLOSERS`), else up to the first stop token that starts a line."""
    if language in INDENT_CLOSED:  # the function's closing brace, at its header's indentation, is the tests'
        header_line = code[code.rfind("\n", 0, body_start) + 1:body_start]
        indent = header_line[: len(header_line) - len(header_line.lstrip())]
        end = re.search(rf"\n{re.escape(indent)}\}}", code[body_start:])
        if end:
            return code[body_start:body_start + end.start()]
    closer = CLOSERS.get(language)
    m = closer.search(code, body_start) if closer else None
    if m:
        return code[body_start:m.end()]
    cut = [t for t in stop_tokens if t.startswith("\n") and (t.strip() or not closer)]
    return cut_at_stop_tokens(code[body_start:], cut)


def cut_at_stop_tokens(text: str, stop_tokens: list[str]) -> str:
    """``text`` up to (not including) the earliest occurrence of any stop token (MultiPL-E rule)."""
    cut = min((i for i in (text.find(t) for t in stop_tokens if t) if i >= 0), default=len(text))
    return text[:cut]


def multipl_candidate(problem: Task, completion: str) -> tuple[TestSpec, str]:
    """The spec and code to judge for a MultiPL-E completion.

    A completion whose code restates the prompt's function header (its last line up to the opening
    parenthesis, whitespace ignored; the last fenced block that does, else the first) is judged as its own program with no
    prefix: from its start through the function body, cut at the first stop token after the header
    that starts a line; of the text after it only top-level definitions are kept
    (:func:`judgebox.reward.loaders.later_definitions.definitions_after`: helpers stay, the answer's own
    ``main``, tests and demo calls go), placed before the function where the tests close it. The
    tests rely on what the prompt declares before the function, so the program gets back each such
    declaration it lacks (:func:`judgebox.reward.loaders.declarations.keep_prompt_declarations`: C++
    includes, Java imports and class, Rust ``use`` lines, Go imports, Node ``require``). Any other
    completion continues the prompt and is cut at the first stop token.
    """
    lines = problem.prompt.splitlines(keepends=True)
    last, header, name = _header(lines, problem.language)
    # a whole-word match: ``sub count`` is not ``sub count_helper``, ``is <- function(`` not ``is_f <- ...``
    pattern = re.compile((r"(?<![\w.$-])" if re.match(r"[\w.$]", header) else "")
                         + r"\s*".join(map(re.escape, "".join(header.split())))
                         + (r"(?![\w-])" if re.search(r"\w$", header) else ""))
    for policy in ("last", "first"):
        code = problem.extract(completion, policy)
        match = pattern.search(code) if header else None
        if match:
            body_start = code.find("\n", match.end())
            body_start = len(code) if body_start < 0 else body_start
            body = _body(code, body_start, problem.language, problem.stop_tokens)
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
            spec = problem.spec
            return spec.model_copy(update={"prefix": "", "prompt": spec.prompt or spec.prefix}), program
    return problem.spec, cut_at_stop_tokens(problem.extract(completion), problem.stop_tokens)
