"""The size limits of one request, worded once for every face (the server, the embedded sandbox, the
client, the Ray executors).

A request over a limit is the caller's to fix: :class:`~judgebox.sandbox.errors.SandboxRequestError`
(HTTP 422) naming the setting, the value found, and how to raise it (``--flag`` /
``JUDGEBOX_<NAME>``). The limits are checked before a request costs the server more than its bytes:
a body's size as it is read (``max_request_bytes``, ``max_batch_bytes``), the number of cases of a
request on its parsed JSON, before a model is built for each (``max_cases``). The time its cases
may take together (``max_request_seconds``) is kept by :class:`RequestClock`.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

from .config import SandboxSettings
from .errors import SandboxRequestError

__all__ = ["RequestClock", "case_count", "check_cases", "check_request_bytes", "over_limit"]


def over_limit(what: str, count: int, unit: str, setting: str, limit: int, instead: str) -> SandboxRequestError:
    """The 422 for ``what`` (a field or ``body``) holding ``count`` ``unit`` over ``setting=limit``:
    ``"<what>: <count> <unit> exceeds <setting>=<limit> (raise it with --<flag> / JUDGEBOX_<NAME>,
    or <instead>)"``."""
    flag = setting.replace("_", "-")
    return SandboxRequestError(f"{what}: {count} {unit} exceeds {setting}={limit} (raise it with --{flag} / "
                               f"JUDGEBOX_{setting.upper()}, or {instead})", 422)


def check_request_bytes(size: int, settings: SandboxSettings) -> None:
    """Raise :class:`SandboxRequestError` (422) when a request of ``size`` bytes (its JSON body)
    exceeds ``max_request_bytes``."""
    if size > settings.max_request_bytes:
        raise over_limit("body", size, "bytes", "max_request_bytes", settings.max_request_bytes,
                         "send smaller files or fewer cases per request")


def case_count(request: Any) -> int:
    """The number of cases of a ``/run_tests`` request: a model, or its parsed JSON (a dict whose
    ``cases`` is a list); 0 for anything else (validation then names what is wrong)."""
    cases = request.get("cases") if isinstance(request, dict) else getattr(request, "cases", None)
    return len(cases) if isinstance(cases, list) else 0


def check_cases(request: Any, settings: SandboxSettings, where: str = "") -> None:
    """Raise :class:`SandboxRequestError` (422) when ``request`` (:func:`case_count`) has more than
    ``max_cases`` cases; ``where`` prefixes the field (``"requests[3]."`` in a batch)."""
    n = case_count(request)
    if n > settings.max_cases:
        raise over_limit(f"{where}cases", n, "cases", "max_cases", settings.max_cases,
                         "split the cases over several requests")


class RequestClock:
    """The wall time the cases of one request may take together (``max_request_seconds``), counted
    from the first case's start, so that no request holds its execution slot for cases x
    ``run_timeout``.

    Args:
        seconds: the budget (``max_request_seconds``).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._deadline: Optional[float] = None
        self._cut = False  # the last case's timeout was cut to what was left
        #: the budget ran out: a case was stopped at it, or cases were left unrun
        self.exceeded = False

    def timeout(self, run_timeout: float) -> Optional[float]:
        """The timeout in seconds of the next case: ``run_timeout``, cut to what is left of the
        budget; ``None`` when nothing is left (the case and those after it are not run)."""
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + self.seconds
        left = self._deadline - now
        if left <= 0:
            self.exceeded = True
            return None
        self._cut = left < run_timeout
        return min(left, run_timeout)

    def ran(self, result: Any) -> bool:
        """Note the result of the case just run; ``True`` when it was stopped at the budget (a
        timeout cut to what was left): the cases after it are not run."""
        if self._cut and getattr(getattr(result, "status", None), "value", None) == "TimeLimitExceeded":
            self.exceeded = True
        return self.exceeded

    def note(self, runs: Sequence[object]) -> str:
        """The response's message once the budget ran out (``runs``: a run result per case, ``None``
        for a case not run)."""
        ran = sum(r is not None for r in runs)
        return (f"max_request_seconds={self.seconds:g} ran out: {ran} of {len(runs)} cases ran (a case stopped at "
                f"it is TimeLimitExceeded), {len(runs) - ran} were not run (run_result null); raise it with "
                "--max-request-seconds / JUDGEBOX_MAX_REQUEST_SECONDS, or send fewer cases per request")
