"""Output caps in bytes, cut at a character boundary: the one rule every face that caps text follows."""

from __future__ import annotations

import codecs
from typing import Any


def cap_text(text: str, limit_bytes: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` whose UTF-8 encoding is at most ``limit_bytes`` bytes.

    Returns:
        ``(prefix, truncated)``; ``truncated`` is ``True`` when characters were dropped. A character
        is never split (the prefix decodes cleanly); lone surrogates count as 3 bytes.
    """
    if limit_bytes <= 0:
        return "", bool(text)
    if len(text) * 4 <= limit_bytes:  # at most 4 bytes a character: nothing to cut
        return text, False
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit_bytes:
        return text, False
    return data[:limit_bytes].decode("utf-8", "ignore"), True


def decode_capped(data: bytes, truncated: bool) -> str:
    """``data`` (a stream's first bytes, or all of them) as text: invalid UTF-8 becomes U+FFFD, but
    when ``truncated`` a character the cap split at the end is dropped, so the text is the longest
    clean prefix of what the program wrote."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=not truncated)


def text_bytes(text: str) -> int:
    """UTF-8 size of ``text`` in bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


class Budget:
    """A byte budget shared by several pieces of text (e.g. every display bundle of one cell).

    Attributes:
        left: bytes still allowed.
        truncated: ``True`` once anything was cut or dropped.
    """

    def __init__(self, limit_bytes: int) -> None:
        self.left = limit_bytes
        self.truncated = False

    def take(self, text: str) -> str:
        """``text`` cut to what is left of the budget (at a character boundary); the rest is spent."""
        out, cut = cap_text(text, self.left)
        self.left -= text_bytes(out)
        self.truncated |= cut
        return out

    def fits(self, size: int) -> bool:
        """Spend ``size`` bytes if they fit (``True``), else mark the budget truncated (``False``)."""
        if size > self.left:
            self.truncated = True
            return False
        self.left -= size
        return True

    def take_json(self, value: Any, size: int) -> Any:
        """``value`` (a string or a JSON value whose encoding is ``size`` bytes) under the budget:
        a string is cut, anything else is kept whole or dropped (``None``)."""
        if isinstance(value, str):
            return self.take(value)
        return value if self.fits(size) else None
