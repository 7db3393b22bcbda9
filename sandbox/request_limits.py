"""The size limits of one request, worded once for every face (the server, the embedded sandbox, the
client, the Ray executors).

A request over a limit is the caller's to fix: :class:`~judgebox.sandbox.errors.SandboxRequestError`
(HTTP 422) naming the setting, the value found, and how to raise it (``--flag`` /
``JUDGEBOX_<NAME>``). The limits are checked before a request costs the server more than its bytes:
a body's size as it is read (``max_request_bytes``, ``max_batch_bytes``), the number of cases of a
request on its parsed JSON, before a model is built for each (``max_cases``).
"""

from __future__ import annotations

from typing import Any

from .config import SandboxSettings
from .errors import SandboxRequestError

__all__ = ["case_count", "check_cases", "check_request_bytes", "over_limit"]


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
