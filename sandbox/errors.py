"""One exception hierarchy for talking to sandboxes.

``SandboxInfraError`` and its subclasses mean *the sandbox could not answer*: the program's verdict
is unknown and must not be scored (case BUG-007: reward ``None``, never ``0.0``). A program that ran
and failed is never an exception: it is a ``RunCodeResponse`` with ``status == "Failed"``.
``SandboxRequestError`` means the request itself is wrong: retrying cannot help, fix the request.

Hierarchy::

    SandboxError
    ├── SandboxInfraError            (retried already; verdict unknown)
    │   ├── SandboxUnavailable       refused / reset connection, read timeout, no live endpoint
    │   ├── SandboxOverloaded        HTTP 429 / 503 / 504 until the attempts or the deadline ran out
    │   └── SandboxServerError       HTTP 500 / other 5xx, or a body that is not the expected JSON
    └── SandboxRequestError          HTTP 4xx other than 429, or a request that fails validation
        ├── SessionNotFound          HTTP 404 for a session id (closed, reaped, server restarted)
        └── SessionsUnsupported      the endpoint has no /sessions (plain SandboxFusion)

Server side (the engine and the faces that serve it): :class:`Overloaded`, raised when no execution
slot or session can be had in time; the server answers it with HTTP 504 and ``Retry-After``, the
embedded sandbox raises :class:`SandboxOverloaded` for it.
"""

from __future__ import annotations

from typing import Optional


class SandboxError(Exception):
    """Base class of every judgebox sandbox client error."""


class SandboxInfraError(SandboxError):
    """The sandbox could not run the request (after retries): unreachable, overloaded, 5xx, deadline.

    Attributes:
        endpoint: base URL of the last endpoint tried (``None`` when none could be chosen).
        status_code: HTTP status of the last answer (``None`` when there was no HTTP answer).
        attempts: how many HTTP attempts were made before giving up (``0`` = none was possible).
    """

    def __init__(self, message: str, *, endpoint: Optional[str] = None,
                 status_code: Optional[int] = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status_code = status_code
        self.attempts = attempts


class SandboxUnavailable(SandboxInfraError):
    """No HTTP answer: connection refused or reset, read timeout, or every endpoint cooling down."""


class SandboxOverloaded(SandboxInfraError):
    """The sandbox kept answering 429, 503 or 504 (queue deadline or gateway timeout)."""


class SandboxServerError(SandboxInfraError):
    """The sandbox answered HTTP 500 (or another non-retry 5xx) or a body that is not valid JSON."""


class SandboxRequestError(SandboxError, ValueError):
    """The request is malformed (HTTP 4xx other than 429, or client-side validation): fix the request.

    Attributes:
        status_code: the HTTP status (``422`` for validation failures found before sending).
    """

    def __init__(self, message: str, status_code: int = 422) -> None:
        super().__init__(message)
        self.status_code = status_code


class SessionNotFound(SandboxRequestError):
    """HTTP 404: the session id is unknown where it should live (closed, reaped after its
    ``idle_timeout``, or the server restarted). Its state is lost: create a new session.

    Attributes:
        session_id: the id that was asked for.
    """

    def __init__(self, message: str, session_id: str = "") -> None:
        super().__init__(message, 404)
        self.session_id = session_id


class SessionsUnsupported(SandboxRequestError):
    """The endpoint has no ``/sessions`` (a plain SandboxFusion server answers 404/405)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 404)


class Overloaded(Exception):
    """No execution slot could be had in time.

    Attributes:
        reason: ``"queue_full"`` (rejected on arrival) or ``"queue_timeout"`` (waited too long).
        retry_after: seconds a client should wait before retrying (the ``Retry-After`` header).
    """

    def __init__(self, message: str, reason: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after
