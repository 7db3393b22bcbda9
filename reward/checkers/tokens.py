"""``tokens``: line structure kept, whitespace inside a line collapsed; tokens compared as text."""

from __future__ import annotations

from .lines import normalise_lines


def token_lines(text: str) -> list[list[str]]:
    """Whitespace-separated tokens of each normalised line (see :func:`~reward.checkers.lines.normalise_lines`)."""
    return [line.split() for line in normalise_lines(text)]


def check(output: str, expected: str, **options: object) -> bool:
    """True iff every line has the same tokens, as text (``-0.00`` != ``0.00``)."""
    return token_lines(output) == token_lines(expected)
