"""Batches of ``/run_tests`` requests (``POST /run_tests_batch``): reading one, and its per-item errors.

Shared by every face that serves or sends batches (the server, the embedded sandbox, the client): a
batch is ``{"requests": [<RunTestsRequest>, ...]}``; its answer is one item per request, in order,
each a :class:`~judgebox.sandbox.models.RunTestsResponse` or a
:class:`~judgebox.sandbox.models.BatchItemError` (``index``, ``status_code``, ``detail``). Only the
batch's own size is refused as a whole (HTTP 422 naming ``max_batch_items`` or ``max_batch_bytes``).
"""

from __future__ import annotations

import json
from typing import Any, Optional, TypeVar, Union

from pydantic import BaseModel, ValidationError

from .config import SandboxSettings
from .errors import (
    Overloaded,
    SandboxError,
    SandboxInfraError,
    SandboxOverloaded,
    SandboxRequestError,
    SandboxServerError,
    SandboxUnavailable,
)
from .models import BatchItemError, RunTestsRequest
from .request_limits import check_cases, over_limit

__all__ = ["check_batch_bytes", "error_of", "item_error", "parse_batch", "validation_detail"]


def check_batch_bytes(size: int, settings: SandboxSettings) -> None:
    """Raise :class:`SandboxRequestError` (422) when a body of ``size`` bytes exceeds ``max_batch_bytes``."""
    if size > settings.max_batch_bytes:
        raise over_limit("batch", size, "bytes", "max_batch_bytes", settings.max_batch_bytes,
                         "send fewer requests per batch")


def parse_batch(body: bytes, settings: SandboxSettings) -> list[Union[RunTestsRequest, BatchItemError]]:
    """The items of a ``/run_tests_batch`` body: each a valid :class:`RunTestsRequest`, or the
    :class:`BatchItemError` (422, naming the bad fields) that answers it.

    An item with more than ``max_cases`` cases is its own 422 :class:`BatchItemError` (naming
    ``max_cases``), refused before its cases are parsed.

    Raises:
        SandboxRequestError: (422) the body is over ``max_batch_bytes``, is not JSON of the form
            ``{"requests": [...]}``, or has more than ``max_batch_items`` requests; the message names
            the limit and the setting that raises it.
    """
    check_batch_bytes(len(body), settings)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: a nesting bomb
        raise SandboxRequestError(f"body: not JSON ({exc})", 422) from None
    requests = data.get("requests") if isinstance(data, dict) else None
    if not isinstance(requests, list):
        raise SandboxRequestError('body: expected {"requests": [<a /run_tests body>, ...]}', 422)
    if len(requests) > settings.max_batch_items:
        raise over_limit("requests", len(requests), "items", "max_batch_items", settings.max_batch_items,
                         "send fewer requests per batch")
    items: list[Union[RunTestsRequest, BatchItemError]] = []
    for i, raw in enumerate(requests):
        try:
            check_cases(raw, settings)  # before a model is built for each case
            items.append(RunTestsRequest.model_validate(raw))
        except ValidationError as exc:
            items.append(BatchItemError(index=i, status_code=422, detail=validation_detail(exc)))
        except SandboxRequestError as exc:
            items.append(BatchItemError(index=i, status_code=exc.status_code, detail=str(exc)))
    return items


def field_errors(errors: Any) -> str:
    """``loc: msg`` of each error of a pydantic / FastAPI error list, joined by ``; `` (an error with
    no location is the body's); anything else as text. One wording for every face: the server's
    422 items, the embedded sandbox's and the client's."""
    if not isinstance(errors, list):
        return str(errors)
    return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())) or 'body'}: {error_message(e)}"
                     if isinstance(e, dict) else str(e) for e in errors)


def error_message(error: dict) -> str:
    """One error's words; an unknown key of a ``/run_tests`` case says what a case holds."""
    if error.get("type") == "extra_forbidden" and "cases" in error.get("loc", ()):
        return ("not a field of a case (a case has stdin, files and fetch_files; /run_tests compares no "
                "output: judge the run results, e.g. with judgebox.reward.judge)")
    return str(error.get("msg")).removeprefix("Value error, ")  # pydantic's prefix to a validator's words


def validation_detail(exc: ValidationError) -> str:
    """:func:`field_errors` of ``exc`` (the input values are left out)."""
    return field_errors(exc.errors(include_input=False, include_url=False))


M = TypeVar("M", bound=BaseModel)


def as_model(model: type[M], request: Any) -> M:
    """``request`` as ``model``: ``model`` itself, a dict, or another pydantic model with the same
    fields, such as the official ``sandbox_fusion.RunCodeRequest`` (a pydantic v1 model: converted
    with ``.dict()``). Raises ``pydantic.ValidationError`` naming each bad field."""
    if isinstance(request, model):
        return request
    if not isinstance(request, dict):
        dump = getattr(request, "model_dump", None) or getattr(request, "dict", None)
        request = dump() if callable(dump) else request
    return model.model_validate(request)


def validated(model: type[M], request: Any) -> M:
    """``request`` as ``model`` (what :func:`as_model` accepts), the one check of a request on every
    Python face (the embedded sandbox, the client).

    Raises:
        SandboxRequestError: (422) ``invalid <model>: <field>: <why>; ...``, the fields as the
            server's 422 names them (the input values left out).
    """
    try:
        return as_model(model, request)
    except ValidationError as exc:
        raise SandboxRequestError(f"invalid {model.__name__}: {validation_detail(exc)}", 422) from exc


def item_error(index: int, exc: BaseException) -> Optional[BatchItemError]:
    """The :class:`BatchItemError` that answers item ``index`` which raised ``exc``, or ``None`` when
    ``exc`` is not a sandbox error (a bug: the caller decides).

    ``Overloaded`` is 504 with its ``retry_after``; ``SandboxRequestError`` keeps its status;
    ``SandboxInfraError`` keeps the status of the last HTTP answer, else 503 (no answer).
    """
    if isinstance(exc, Overloaded):
        return BatchItemError(index=index, status_code=504, detail=str(exc), retry_after=max(1.0, exc.retry_after))
    if isinstance(exc, SandboxRequestError):
        return BatchItemError(index=index, status_code=exc.status_code, detail=str(exc))
    if isinstance(exc, SandboxInfraError):
        code = exc.status_code if exc.status_code and exc.status_code >= 500 else (
            504 if isinstance(exc, SandboxOverloaded) else 503)
        return BatchItemError(index=index, status_code=code, detail=str(exc))
    return None


def error_of(item: BatchItemError) -> SandboxError:
    """The exception the single ``run_tests`` call would have raised for ``item``:
    :class:`SandboxRequestError` for a 4xx other than 429, :class:`SandboxOverloaded` for 429/504,
    :class:`SandboxUnavailable` for 502/503, else :class:`SandboxServerError`."""
    message = f"requests[{item.index}]: HTTP {item.status_code}: {item.detail}"
    if 400 <= item.status_code < 500 and item.status_code != 429:
        return SandboxRequestError(message, item.status_code)
    kind = {429: SandboxOverloaded, 504: SandboxOverloaded, 502: SandboxUnavailable,
            503: SandboxUnavailable}.get(item.status_code, SandboxServerError)
    return kind(message, status_code=item.status_code)


def request_list(requests: object) -> list:
    """The requests of a client-side batch call as a list (any iterable of requests).

    Raises:
        TypeError: ``requests`` is one request (a dict, a model), text or not iterable: a string was
            iterated into one 422 item per character.
    """
    if isinstance(requests, (str, bytes, bytearray, dict, BaseModel)) or not hasattr(requests, "__iter__"):
        raise TypeError(f"requests: a list of run_tests requests (dicts or RunTestsRequest), not "
                        f"{type(requests).__name__}; wrap a single request in a list")
    return list(requests)

