"""``float``: tokens compared as numbers with absolute-or-relative tolerance (default 1e-6).

Two tokens match when they are equal text, or both are decimal numbers (``[+-]digits[.digits][e±d]``,
no ``nan``/``inf``/underscores) and ``|a - b| <= eps`` or ``|a - b| <= eps * |b|`` (``b`` the expected
value): the Codeforces/CodeContests absolute-or-relative rule. So ``0.333333`` matches
``0.333333333333``, ``0.30000000000000004`` matches ``0.3`` and ``-0.00`` matches ``0.00``. Line
structure and token counts must match. Also used for call results (:func:`values_close`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from .tokens import token_lines

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")

EPS = 1e-6


def close(a: float, b: float, eps: float = EPS) -> bool:
    """``|a-b| <= eps`` or ``|a-b| <= eps*|b|``; ``nan`` never matches, equal infinities do."""
    if a == b:
        return True
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return False
    diff = abs(a - b)
    return diff <= eps or diff <= eps * abs(b)


def tokens_match(got: str, want: str, eps: float = EPS) -> bool:
    """One token pair: equal text, or both numeric and :func:`close`."""
    if got == want:
        return True
    if _NUMBER.match(got) and _NUMBER.match(want):
        return close(float(got), float(want), eps)
    return False


def check(output: str, expected: str, eps: float = EPS, **options: object) -> bool:
    """True iff every line has as many tokens as expected and each pair :func:`tokens_match`."""
    got, want = token_lines(output), token_lines(expected)
    return len(got) == len(want) and all(
        len(g) == len(w) and all(tokens_match(x, y, eps) for x, y in zip(g, w)) for g, w in zip(got, want))


def values_close(got: Any, want: Any, eps: float = EPS) -> bool:
    """Call results (JSON values): like ``==`` but numbers (not bools) compare with :func:`close`.

    Types must agree the JSON way (evalplus rule): a ``str`` never equals a number, a ``bool`` only
    a ``bool``; lists need equal length; dicts equal keys.
    """
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return close(float(got), float(want), eps)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(values_close(g, w, eps) for g, w in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(values_close(got[k], want[k], eps) for k in want)
    return type(got) is type(want) and got == want
