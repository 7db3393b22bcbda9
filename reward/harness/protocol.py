"""Reading the harness protocol: the nonce-prefixed JSON lines a harness prints on stdout (one per
test, then a final marker), and the program's own output without them."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Optional


def _int(text: str) -> int:
    """A JSON integer of any length (``int()`` refuses more than 4,300 digits; a call result may have
    more: parsed through ``Decimal``, which has no such limit)."""
    return int(text) if len(text) <= 4000 else int(Decimal(text))


def _nonce_lines(stdout: Optional[str], nonce: str) -> list[dict[str, Any]]:
    """The JSON objects of the stdout lines that start with ``<nonce> ``, in order (others skipped)."""
    prefix, found = nonce + " ", []
    for line in (stdout or "").splitlines():
        if line.startswith(prefix):
            try:
                value = json.loads(line[len(prefix):], parse_int=_int)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


def without_protocol(stdout: Optional[str], nonce: Optional[str]) -> str:
    """``stdout`` less the harness's own lines (those that start with ``<nonce> ``): what a test
    result shows as the program's output. Without a nonce, ``stdout`` as it is."""
    if not nonce:
        return stdout or ""
    prefix = nonce + " "
    return "".join(line for line in (stdout or "").splitlines(keepends=True) if not line.startswith(prefix))


def marker(stdout: Optional[str], nonce: str) -> Optional[dict[str, Any]]:
    """The run's final result: the last nonce line that is not a per-test line (no ``index``), or ``None``."""
    return next((v for v in reversed(_nonce_lines(stdout, nonce)) if "index" not in v), None)


def test_lines(stdout: Optional[str], nonce: str) -> dict[int, dict[str, Any]]:
    """The per-test nonce lines of a batched run: ``{index: {"status": ..., "seconds": ..., "cpu": ..., "wait": ...}}``."""
    found: dict[int, dict[str, Any]] = {}
    for value in _nonce_lines(stdout, nonce):
        if isinstance(value.get("index"), int):
            found.setdefault(value["index"], value)
    return found


def out_of_time(line: dict[str, Any], limit: float) -> bool:
    """Whether one per-test line (:func:`test_lines`) ran past ``limit`` seconds by the sandbox's run-step
    rule (:class:`judgebox.sandbox.limits.RunLimits`): its CPU time over the limit, or its wall time
    less the time it waited for a CPU (``wait``, at most the wall time) over it. A missing or
    non-finite time counts as 0."""
    def number(key: str) -> float:
        value = line.get(key)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return float(value) if ok else 0.0
    seconds = number("seconds")
    return number("cpu") > limit or seconds - min(max(number("wait"), 0.0), seconds) > limit
