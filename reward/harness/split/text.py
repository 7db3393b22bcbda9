"""Reading a C-like language's source for the split harnesses: its structure (comments and literals
blanked), top-level commas and matching braces; and the harnesses' runtime files."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Optional

from judgebox.reward.tamper.lexer import blank_comments, code_only


@functools.lru_cache(maxsize=None)
def resource(name: str) -> str:
    """The text of the runtime file ``name`` of this package (``cpp_wire.hpp``, ``java_tests.java``, ...)."""
    return resources.files(__package__).joinpath(name).read_text()


def blanked(text: str, language: str) -> str:
    """``text`` with its comments and literals blanked, offsets kept (the lexer of ``language``:
    :func:`judgebox.reward.tamper.lexer.code_only`)."""
    return code_only(blank_comments(text, language), language)


def split_top(text: str) -> list[str]:
    """``text`` split at the commas outside ``<>``, ``()`` and ``[]``, each part stripped."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return [p.strip() for p in parts]


def closing_brace(structure: str, brace: int) -> Optional[int]:
    """The index of the ``}`` that closes the ``{`` at ``brace`` in ``structure`` (comments and
    literals blanked), or ``None``."""
    depth = 0
    for i in range(brace, len(structure)):
        if structure[i] == "{":
            depth += 1
        elif structure[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def renamed(text: str, pattern: re.Pattern[str], language: str, to: str) -> str:
    """``text`` with the group ``name`` of each match of ``pattern`` in its :func:`blanked` form (a
    ``main`` it defines) replaced by ``to``; comments and literals are never matched."""
    for found in reversed(list(pattern.finditer(blanked(text, language)))):
        text = text[:found.start("name")] + to + text[found.end("name"):]
    return text
