"""``float``: tokens compared as numbers with absolute-or-relative tolerance (default 1e-6).

The output and the expected text are compared as whitespace-separated token sequences (line breaks
are not significant, as in testlib ``rcmp`` and CodeContests' evaluator); the token counts must match.
Two tokens match when they are equal text, or:

- the expected token is an integer (``[+-]digits``: no ``.``, no exponent): the output token must be
  a number exactly equal to it (``1000001`` != ``1000000``, ``5.0`` == ``5``; BUG-054, Kattis
  problemtools#152): tolerance is for real numbers only;
- both are decimal numbers (``[+-]digits[.digits][e±d]`` in ASCII digits: no ``nan``/``inf``, no
  underscores, no Arabic-Indic or other Unicode digits, which Python's own parsers accept; BUG-203) and
  ``|a - b| <= eps`` or ``|a - b| <= eps * |b|`` (``b`` the expected value): the Codeforces/CodeContests
  absolute-or-relative rule. So ``0.333333`` matches ``0.333333333333``, ``0.30000000000000004``
  matches ``0.3`` and ``-0.00`` matches ``0.00``.

Also used for call results (:func:`values_close`, same integer rule).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from .tokens import tokens

# ASCII digits only: Python's \d (and int()/float()/Decimal()) also take Arabic-Indic and other
# Unicode digits, "1_000" and "infinity"; a numeric token must be a plain ASCII number (BUG-203)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d+\Z", re.ASCII)

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
    """One token pair: equal text; an integer ``want`` and an exactly equal number; or both numeric
    and :func:`close`."""
    if got == want:
        return True
    if not (_NUMBER.match(got) and _NUMBER.match(want)):
        return False
    if _INTEGER.match(want):
        return Decimal(got) == Decimal(want)
    return close(float(got), float(want), eps)


def check(output: str, expected: str, eps: float = EPS, **options: object) -> bool:
    """True iff both token sequences have the same length and each pair :func:`tokens_match`."""
    got, want = tokens(output), tokens(expected)
    return len(got) == len(want) and all(tokens_match(x, y, eps) for x, y in zip(got, want))


def values_close(got: Any, want: Any, eps: float = EPS) -> bool:
    """Call results (JSON values): like ``==`` but numbers (not bools) compare with :func:`close`,
    except that an ``int`` expected value must be matched exactly (``5`` or ``5.0``, not ``5.0000001``).

    Types must agree the JSON way (evalplus rule): a ``str`` never equals a number, a ``bool`` only
    a ``bool``; lists need equal length; dicts equal keys. An ``int`` too large for a float never
    matches a ``float`` expected value (a solution's ``10**400`` used to raise ``OverflowError`` out
    of the judge).
    """
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        if isinstance(want, int):
            return got == want
        try:
            return close(float(got), float(want), eps)
        except OverflowError:  # an int beyond any float: never close to a float (and no crash)
            return False
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(values_close(g, w, eps) for g, w in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(values_close(got[k], want[k], eps) for k in want)
    return type(got) is type(want) and got == want
