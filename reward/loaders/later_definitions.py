"""Helper definitions that a restated MultiPL-E solution places after the prompt's function.

MultiPL-E cuts a completion at the first stop token, which drops a helper defined after the
function (``function sumTo(n)`` after ``function f(n)`` in JavaScript); a chat answer that restates
the whole program relies on it. :func:`definitions_after` keeps, from the text after the function,
each top-level definition (a chunk starting at column 0: function, type, class; see
:data:`DEFINITION`), and drops everything else: the answer's own ``main``, its tests, demo calls and
comments, any second definition of the target function, and any definition that calls it (the
answer's own ``test()``: in C++, Rust and bash the kept definitions move before the function).
"""

from __future__ import annotations

import re

#: sandbox language -> a top-level line that starts a definition worth keeping.
DEFINITION = {
    "cpp": re.compile(r"(template\b|struct\s|class\s|(?!int\s+main\b)[\w:<>,*&\s]+?[\s*&]\w+\s*\([^;]*$)"),
    "rust": re.compile(r"((pub\s+)?(fn\s+(?!main\b)\w|struct\s|enum\s|impl\b|trait\s|type\s|const\s|static\s))"),
    "go_test": re.compile(r"(func\s+(?!main\b|Test)\w|func\s*\(|type\s)"),
    "nodejs": re.compile(r"((async\s+)?function\b|class\s|(const|let|var)\s+\w+\s*=\s*(async\s*)?(function\b|\([^)]*\)\s*=>|\w+\s*=>))"),
    "bash": re.compile(r"((function\s+)?[\w-]+\s*\(\s*\))"),
    "typescript": re.compile(r"((export\s+)?(async\s+)?function\b|class\s|interface\s|type\s+\w+\s*=|"
                             r"(const|let|var)\s+\w+(\s*:[^=]+)?\s*=\s*(async\s*)?(function\b|\([^)]*\)[^=]*=>|\w+\s*=>))"),
    "ruby": re.compile(r"(def\s|class\s|module\s)"),
    "lua": re.compile(r"((local\s+)?function\s)"),
    "perl": re.compile(r"(sub\s|package\s)"),
    "php": re.compile(r"(function\s|class\s)"),
    "R": re.compile(r"([\w.]+\s*(<-|=)\s*function\b)"),
    "racket": re.compile(r"(\(define\s)"),
    "D_ut": re.compile(r"(struct\s|class\s|enum\s|alias\s|(?!void\s+main\b|unittest\b)[\w\[\]!().,\s]+?\s\w+\s*\([^;]*$)"),
}


def definitions_after(language: str, rest: str, target: str) -> str:
    """The top-level definitions in ``rest`` (the text after the target function), in order,
    each ending with a newline; ``""`` for a language without a :data:`DEFINITION` entry.

    Args:
        language: a sandbox language.
        rest: the completion's text after the prompt's function (its first line, the function's
            closing, is skipped).
        target: the prompt's function name; a chunk that defines or calls it is dropped.
    """
    pattern = DEFINITION.get(language)
    if pattern is None or "\n" not in rest:
        return ""
    chunks: list[list[str]] = []
    for line in rest.split("\n", 1)[1].splitlines():
        if line[:1] not in ("", " ", "\t", "{", "}", ")", "]") and not re.match(r"end\b", line):
            chunks.append([line])
        elif chunks:
            chunks[-1].append(line)
    calls = re.compile(rf"\(\s*{re.escape(target)}(?![\w-])" if language == "racket"  # (name args)
                       else rf"(?<![\w.]){re.escape(target)}\s*\(")
    kept = [c for c in chunks if pattern.match(c[0]) and not calls.search("\n".join(c))]
    return "".join("\n".join(c).rstrip() + "\n" for c in kept)
