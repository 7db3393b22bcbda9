"""``lines`` (the default): line-by-line text comparison, tolerant of trailing whitespace and CRLF.

Rules: ``\\r\\n`` and lone ``\\r`` become ``\\n``; each line's trailing whitespace is dropped; trailing
blank lines are dropped; then the lists of lines must be equal, so the line counts must match (the
``zip`` truncation of open-r1's ``code_reward``, BUG-012, cannot happen).
"""

from __future__ import annotations


def normalise_lines(text: str) -> list[str]:
    """``text`` as a list of lines: CRLF/CR -> LF, trailing whitespace and trailing blank lines removed."""
    out = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while out and not out[-1]:
        out.pop()
    return out


def check(output: str, expected: str, **options: object) -> bool:
    """True iff the normalised line lists of ``output`` and ``expected`` are equal."""
    return normalise_lines(output) == normalise_lines(expected)
