"""Reading a C-like language's source for the split harnesses: top-level commas and matching braces
(of text whose comments and literals are blanked: :func:`judgebox.reward.tamper.lexer.code_only`)."""

from __future__ import annotations

from typing import Optional


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
