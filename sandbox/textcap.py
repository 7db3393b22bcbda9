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


#: Bytes written as ``\u00XX`` in JSON (6 bytes each), and those written as a 2-byte escape.
_ESCAPED_6 = bytes(c for c in range(0x20) if c not in b"\b\t\n\f\r")
_ESCAPED_2 = b'\b\t\n\f\r"\\'


def json_size(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string as the server sends it (UTF-8, quotes excluded):
    a control character is 6 bytes (``\\u0001``), ``\\n``, ``\\t``, ``\\r``, ``\\b``, ``\\f``, ``"`` and
    ``\\\\`` are 2, every other character its UTF-8 bytes (the escapes of ``json.dumps(...,
    ensure_ascii=False)`` and of pydantic)."""
    data = text.encode("utf-8", "surrogatepass")
    n = len(data)
    return n + 5 * (n - len(data.translate(None, _ESCAPED_6))) + (n - len(data.translate(None, _ESCAPED_2)))


def cap_json(text: str, limit_bytes: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` whose :func:`json_size` is at most ``limit_bytes``, and whether
    characters were dropped (a character is never split)."""
    if json_size(text) <= limit_bytes:
        return text, False
    lo, hi = 0, min(len(text), max(limit_bytes, 0))  # a character costs at least one byte
    while lo < hi:  # the longest prefix that fits: json_size grows with the prefix
        mid = (lo + hi + 1) // 2
        if json_size(text[:mid]) <= limit_bytes:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo], True


class JsonBudget:
    """A budget of bytes of JSON text shared by several strings (the output of every case and the
    compile step of one request: ``response_limit_bytes``), counted as they are sent (:func:`json_size`).

    Attributes:
        left: bytes still allowed.
    """

    def __init__(self, limit_bytes: int) -> None:
        self.left = limit_bytes

    def take(self, text: str) -> tuple[str, bool]:
        """``text`` cut to what is left (:func:`cap_json`) and whether it was cut; what is kept is spent."""
        out, cut = cap_json(text, self.left)
        self.left -= json_size(out)
        return out, cut
