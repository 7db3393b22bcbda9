"""``lcb``: LiveCodeBench's stdio rules (``lcb_runner/evaluation/testing_util.py::grade_stdio``).

The whole output and each line are stripped; the line counts must match; a line matches when it
is equal text, or when every whitespace-separated token of both lines parses as a ``Decimal`` and
the two lists of Decimals are equal. Consequences (documented on purpose, BUG-009/011): there is no
float tolerance (``0.333333`` != ``0.333333333333``; ``0.30000000000000004`` != ``0.3``), while
``-0.0 == 0.0`` and ``1.0 == 1`` (Decimal equality). ``Decimal`` also parses ``1_000`` and
Unicode digits (``"١٠٠٠"``), so those equal ``1000`` here as in LiveCodeBench (parity, BUG-203); a
``nan`` never equals anything (Decimal NaN compares unequal).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Optional


def _decimals(line: str) -> Optional[list[Decimal]]:
    try:
        return [Decimal(tok) for tok in line.split()]
    except InvalidOperation:
        return None


def check(output: str, expected: str, **options: object) -> bool:
    """True iff ``output`` matches ``expected`` under LiveCodeBench's rules (see module docstring)."""
    got = [line.strip() for line in output.strip().splitlines()]
    want = [line.strip() for line in expected.strip().splitlines()]
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if g == w:
            continue
        dg, dw = _decimals(g), _decimals(w)
        if dg is None or dw is None or dg != dw:
            return False
    return True
