"""The markers every MultiPL-E harness prints: ``<nonce> {"status": "ok"}`` after the tests completed,
``<nonce> {"status": "fail"}`` when a test's assertion failed (``wrong_answer``)."""

from __future__ import annotations

import re

from judgebox.reward.spec import TestDataError

#: The completion marker's JSON, and the same escaped for a C-like string literal.
OK_JSON = '{"status": "ok"}'
OK = OK_JSON.replace('"', '\\"')
#: The failed-test marker (a test's assertion failed: wrong_answer), and the same escaped.
FAIL_JSON = '{"status": "fail"}'
FAIL = FAIL_JSON.replace('"', '\\"')


def required(pattern: str | re.Pattern[str], text: str, what: str) -> re.Match[str]:
    """The first match of ``pattern`` in ``text``.

    Raises:
        TestDataError: ``pattern`` does not occur (``what`` names what the tests lack).
    """
    m = re.search(pattern, text)
    if not m:
        raise TestDataError(f"harness: the tests have no {what}; cannot add the completion marker")
    return m


def after_match(pattern: str, text: str, insert: str, what: str) -> str:
    """``text`` with ``insert`` after the first match of ``pattern`` (see :func:`required`)."""
    m = required(pattern, text, what)
    return text[: m.end()] + insert + text[m.end():]
