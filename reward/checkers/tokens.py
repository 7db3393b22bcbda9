"""``tokens``: the whitespace-separated token sequences must be equal, compared as text.

Line breaks, blank lines and runs of spaces are all one separator (testlib ``wcmp``, CodeContests'
evaluator), so ``"1 2\\n3"`` matches ``"1\\n2 3"``; a missing or extra token still fails
(``"1"`` vs ``"1 2 3"``). ``-0.00`` != ``0.00`` (text compare, like ``wcmp``).
"""

from __future__ import annotations


def tokens(text: str) -> list[str]:
    """The whitespace-separated tokens of ``text`` (``str.split()``: spaces, tabs, CR, LF, ...)."""
    return text.split()


def check(output: str, expected: str, **options: object) -> bool:
    """True iff ``output`` and ``expected`` have the same token sequence, as text."""
    return tokens(output) == tokens(expected)
