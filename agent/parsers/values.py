"""Typing the untyped text values of XML-style calls (``<parameter=x>30</parameter>``) by the tool's
JSON Schema.

Rules (BUG-105): a value whose schema allows ``string`` (or has no type) is kept verbatim, never
coerced ("007" stays "007"); ``null``/``None`` is None for non-string types; an empty value of a
non-string type is omitted (:data:`OMIT`); a value that does not convert to its type (``"ten"``
for an integer) is kept as the raw string, so the tool's schema validation rejects it with an
observation naming the field, instead of the parser dropping the call or raising.
"""

from __future__ import annotations

import ast
import json
from typing import Any

OMIT = object()  #: returned for an empty non-string value: leave the parameter out

_NULLS = {"null", "none"}


def schema_types(schema: Any) -> set[str]:
    """The JSON Schema types ``schema`` allows (``type`` string or list, ``anyOf``/``oneOf``, ``enum``, ``const``)."""
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    types = {declared} if isinstance(declared, str) else {t for t in declared or () if isinstance(t, str)}
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            types |= schema_types(sub)
    for value in list(schema.get("enum") or ()) + ([schema["const"]] if "const" in schema else []):
        types.add(json_type(value))
    return types


def json_type(value: Any) -> str:
    """The JSON Schema type name of a decoded JSON value (``"null"``, ``"boolean"``, ``"integer"``,
    ``"number"``, ``"string"``, ``"array"``, ``"object"``); ``bool`` is never ``"integer"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "string")


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # NaN/Infinity are not JSON numbers


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return OMIT


def convert_value(raw: str, schema: Any) -> Any:
    """``raw`` typed by ``schema`` (the parameter's JSON Schema, or None when unknown); see module doc."""
    types = schema_types(schema)
    if not types or "string" in types:
        return raw
    text = raw.strip()
    if not text:
        return OMIT
    if text.lower() in _NULLS:
        return None
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    value = _loads(text)
    if value is OMIT and types & {"object", "array"}:
        try:  # Python-literal dicts/lists ({'a': 1}) that models write for object parameters
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = OMIT
    if isinstance(value, float) and value.is_integer() and "integer" in types and "number" not in types:
        value = int(value)
    if value is not OMIT and json_type(value) in types | ({"integer"} if "number" in types else set()):
        return value
    return raw
