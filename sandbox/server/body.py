"""Request bodies: their size bounded on every endpoint, and ``/run_tests`` parsed with its case count
checked before its cases become models.

:class:`BodyLimit` is an ASGI middleware: a body whose ``Content-Length`` is over the limit is
answered HTTP 422 before any of it is read; a body without one (chunked) is counted as it arrives
and refused once past the limit. The limit is ``max_batch_bytes`` on ``/run_tests_batch`` and
``max_request_bytes`` everywhere else; the 422's ``detail`` names the setting and its flag and
variable (:mod:`judgebox.sandbox.request_limits`). The rest of a refused body is read and dropped
(up to :data:`DRAIN_BYTES`) before the answer, so a client still sending it reads the 422 instead
of a reset connection (which it would retry as a server failure).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, TypeVar

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from judgebox.sandbox.errors import SandboxRequestError

__all__ = ["BodyLimit", "body_schema", "document_bodies", "parse_body"]

M = TypeVar("M", bound=BaseModel)
#: ``check(path, size)``: raises :class:`SandboxRequestError` when ``size`` bytes are too many for ``path``.
SizeCheck = Callable[[str, int], None]
#: Bytes of a refused body read and dropped before the connection is closed under the client.
DRAIN_BYTES = 1 << 30


class BodyLimit:
    """ASGI middleware refusing a request body over ``check``'s limit for its path (HTTP 422).

    Args:
        app: the ASGI app it wraps.
        check: ``(path, size in bytes)``; raises :class:`SandboxRequestError` when over.
    """

    def __init__(self, app: Any, check: SizeCheck) -> None:
        self.app, self.check = app, check

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]],
                       send: Callable[[dict], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        length = dict(scope.get("headers") or ()).get(b"content-length")
        try:
            if length is not None and length.isdigit():
                self.check(path, int(length))  # refused before any of it is kept
        except SandboxRequestError as exc:
            await _drain(receive, 0)
            await _refuse(send, exc)
            return
        seen = 0

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body") or b"")
                try:
                    self.check(path, seen)
                except SandboxRequestError as exc:
                    if message.get("more_body"):
                        await _drain(receive, seen)
                    # FastAPI lets an HTTPException raised while it reads a body through as itself
                    raise HTTPException(exc.status_code, str(exc)) from None
            return message

        await self.app(scope, counted, send)


async def _drain(receive: Callable[[], Awaitable[dict]], seen: int) -> None:
    """Read and drop the rest of a body (``seen`` bytes of it read) up to :data:`DRAIN_BYTES`."""
    while seen < DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body") or b"")
        if not message.get("more_body"):
            return


async def _refuse(send: Callable[[dict], Awaitable[None]], exc: SandboxRequestError) -> None:
    body = json.dumps({"detail": str(exc)}).encode()
    await send({"type": "http.response.start", "status": exc.status_code,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


async def parse_body(http: Request, model: type[M], check: Callable[[Any], None]) -> M:
    """The body of ``http`` as ``model``, parsed and validated off the event loop, with ``check``
    run on its parsed JSON before the model is built (a count of cases: a million empty cases cost
    the server 684 MiB as models).

    Raises:
        RequestValidationError: the body is not JSON, or not a valid ``model`` (HTTP 422 naming the
            fields, as FastAPI's own parsing answers).
        SandboxRequestError: ``check`` refused it (HTTP 422 naming the setting).
    """
    body = await http.body()

    def parse() -> M:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: a nesting bomb
            raise RequestValidationError([{"type": "json_invalid", "loc": ("body", getattr(exc, "pos", 0)),
                                           "msg": "JSON decode error", "input": {},
                                           "ctx": {"error": getattr(exc, "msg", str(exc))}}]) from None
        check(data)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise RequestValidationError([{**e, "loc": ("body", *e["loc"])}
                                          for e in exc.errors(include_url=False)]) from None

    return await asyncio.get_running_loop().run_in_executor(None, parse)


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads its body itself (:func:`parse_body`): its request
    body is ``model`` (a reference into the schema's components, see :func:`document_bodies`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


def document_bodies(app: Any, *models: type[BaseModel]) -> None:
    """Add ``models`` (and the models they use) to ``app``'s OpenAPI components: a body a route
    parses itself is not in FastAPI's own schema."""
    plain = app.openapi

    def openapi() -> dict[str, Any]:
        schema = plain()  # FastAPI's, cached on the app
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in models:
            if model.__name__ not in components:
                own = model.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, sub in own.pop("$defs", {}).items():
                    components.setdefault(name, sub)
                components[model.__name__] = own
        return schema

    app.openapi = openapi
