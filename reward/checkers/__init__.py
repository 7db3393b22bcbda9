"""Output checkers: one module per comparison mode, each a ``check(output, expected, **options) -> bool``.

Modes (``TestSpec.checker``; the default is ``lines``):

=========== ===========================================================================================
``exact``    byte-for-byte equality of the text (no normalisation at all).
``lines``    default. CRLF/CR -> LF, trailing whitespace of every line ignored, trailing blank lines
             ignored; the line count must match. ``-0.0`` and ``0.0`` differ (text compare).
``tokens``   the whitespace-separated token sequences are equal as text; line breaks and blank lines
             are not significant (testlib ``wcmp``, CodeContests). ``-0.00`` != ``0.00``.
``float``    as ``tokens``; a real-number expected token matches a number within ``1e-6`` absolute or
             relative (Codeforces/CodeContests, testlib ``rcmp6``), so ``-0.0 == 0.0``; an integer
             expected token must be matched exactly (``1000001`` != ``1000000``, BUG-054).
``lcb``      LiveCodeBench ``grade_stdio`` rules: whole output stripped, lines stripped, line counts
             equal, a line matches when equal as text or when every whitespace token is an equal
             ``Decimal`` (so ``-0.0 == 0.0`` and ``1.0 == 1``, but ``0.333333 != 0.333333333333``).
``checker``  a problem-specific Python checker program, run in the sandbox (see
             :mod:`judgebox.reward.checkers.checker`); it cannot be called as a plain function on the host.
=========== ===========================================================================================

Line counts must match in ``exact``, ``lines`` and ``lcb`` (BUG-012); in ``tokens`` and ``float`` a
shorter or longer output fails because its token sequence differs. The README's verdict section has
the table of these modes against testlib, CodeContests, APPS and LiveCodeBench.

Adding a mode is adding one module with a ``check`` function and one line in :data:`CHECKERS`.
"""

from __future__ import annotations

from typing import Callable

from . import exact, lcb, lines, tokens
from .float import check as _float_check

Checker = Callable[..., bool]

#: mode name -> host-side check function (``checker`` runs in the sandbox, see ``checker.py``).
CHECKERS: dict[str, Checker] = {
    "exact": exact.check,
    "lines": lines.check,
    "tokens": tokens.check,
    "float": _float_check,
    "lcb": lcb.check,
}

DEFAULT_MODE = "lines"


def get_checker(mode: str) -> Checker:
    """The host-side check function of ``mode``.

    Raises:
        ValueError: ``mode`` is unknown, or is ``checker`` (which runs in the sandbox).
    """
    try:
        return CHECKERS[mode]
    except KeyError:
        raise ValueError(
            f"checker: unknown mode {mode!r}; use one of {sorted(CHECKERS)} or 'checker' with a "
            "checker_program") from None


__all__ = ["CHECKERS", "DEFAULT_MODE", "Checker", "get_checker"]
