"""``Session``: the caller's handle on one sandbox session, the same over ``LocalSandbox`` and HTTP.

``LocalSandbox.create_session(...)`` and ``SandboxClient.create_session(...)`` (and their ``a``
versions) return a :class:`Session`; its ``run``/``arun`` send one cell to the place that holds
the session (the embedded :class:`~judgebox.sandbox.sessions.manager.SessionManager`, or the one HTTP endpoint that
created it: a session's calls never go to another endpoint), ``close``/``aclose`` end it. Server
semantics (timeouts, state kept or lost, limits) are in :mod:`judgebox.sandbox.sessions.manager`.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

from judgebox.sandbox.errors import SessionNotFound
from judgebox.sandbox.models import CreateSessionRequest, SessionInfo, SessionRunRequest, SessionRunResult

#: Seconds a session's kernel may take to start (the server's ``KERNEL_STARTUP_TIMEOUT``).
SESSION_START_S = 60.0
#: The HTTP header that carries a session's token (``GET /sessions``: several, comma-separated).
SESSION_TOKEN_HEADER = "X-Session-Token"

__all__ = ["SESSION_TOKEN_HEADER", "Session", "SessionOwner", "create_session_request", "split_tokens"]


def split_tokens(header: Optional[str]) -> list[str]:
    """The tokens of an ``X-Session-Token`` header value (comma-separated; blanks dropped)."""
    return [t.strip() for t in (header or "").split(",") if t.strip()]


def create_session_request(language: str = "python", memory_limit_MB: Optional[int] = None,
                           idle_timeout: float = 300.0) -> CreateSessionRequest:
    """The ``POST /sessions`` body for these arguments (``memory_limit_MB=None``: server default).

    Raises:
        pydantic.ValidationError: a field is invalid (e.g. a language other than ``"python"``).
    """
    return CreateSessionRequest(language=language, idle_timeout=idle_timeout,
                                memory_limit_MB=-1 if memory_limit_MB is None else memory_limit_MB)


class SessionOwner(Protocol):
    """What a :class:`Session` calls: ``LocalSandbox`` or ``SandboxClient``."""

    def run_session(self, session_id: str, request: Any, endpoint: Optional[str] = None,
                    token: Optional[str] = None) -> SessionRunResult: ...
    async def arun_session(self, session_id: str, request: Any, endpoint: Optional[str] = None,
                           token: Optional[str] = None) -> SessionRunResult: ...
    def close_session(self, session_id: str, endpoint: Optional[str] = None, token: Optional[str] = None) -> None: ...
    async def aclose_session(self, session_id: str, endpoint: Optional[str] = None,
                             token: Optional[str] = None) -> None: ...


class Session:
    """One live session: ``session_id``, ``token`` (what every call of it sends: its creator's
    capability, :attr:`SessionInfo.session_token`), ``info`` (as created), ``endpoint`` (the base URL
    that holds it, ``None`` when embedded).

    ``run(code, timeout=None)`` / ``await arun(...)`` return a :class:`~judgebox.sandbox.models.SessionRunResult`
    (``timeout`` in seconds; ``None`` = the server's default). They raise
    :class:`~judgebox.sandbox.errors.SessionNotFound` when the session is gone (closed, reaped, server
    restarted: its state is lost), :class:`~judgebox.sandbox.errors.SandboxInfraError` when the endpoint does
    not answer (the call is not retried elsewhere), :class:`~judgebox.sandbox.errors.SandboxRequestError`
    for a bad cell (e.g. over ``max_code_bytes``: 422).

    ``close()`` / ``await aclose()`` end it (idempotent; a session already gone counts as closed).
    Use as a context manager (``with`` / ``async with``) to close it on every exit path.
    """

    def __init__(self, info: SessionInfo, owner: SessionOwner, endpoint: Optional[str] = None) -> None:
        self.info, self.session_id, self.endpoint, self.token = info, info.session_id, endpoint, info.session_token
        self._owner = owner
        self.closed = False

    def __repr__(self) -> str:
        where = f" at {self.endpoint}" if self.endpoint else ""
        return f"<Session {self.session_id}{where}{' closed' if self.closed else ''}>"

    def run(self, code: str, timeout: Optional[float] = None) -> SessionRunResult:
        """Run one cell (see the class docstring)."""
        return self._owner.run_session(self.session_id, SessionRunRequest(code=code, timeout=timeout),
                                       self.endpoint, self.token)

    async def arun(self, code: str, timeout: Optional[float] = None) -> SessionRunResult:
        """Async :meth:`run`."""
        return await self._owner.arun_session(self.session_id, SessionRunRequest(code=code, timeout=timeout),
                                              self.endpoint, self.token)

    def close(self) -> None:
        """End the session (idempotent)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._owner.close_session(self.session_id, self.endpoint, self.token)
        except SessionNotFound:
            pass

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        if self.closed:
            return
        self.closed = True
        try:
            await self._owner.aclose_session(self.session_id, self.endpoint, self.token)
        except SessionNotFound:
            pass

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
