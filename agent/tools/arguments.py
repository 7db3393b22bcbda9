"""Decode and validate a model's tool-call arguments against the tool's JSON Schema (``jsonschema``).

:func:`prepare_arguments` never raises: a bad call becomes one observation line for the model,
fixed here (tests pin them)::

    error: arguments are not valid JSON (Expecting value: line 1 column 1 (char 0))
    error: arguments must be a JSON object, got array
    error: timeout must be an integer, got string "ten"
    error: code is required
    error: mode must be one of "a", "b", got "c"
    error: unexpected argument 'foo' (accepted: code, reset, timeout)
    error: items[0].name must be a string, got integer 3

Several violations are joined with ``"; "`` in the order of their field paths. Before validation a
``null`` given for an optional parameter whose schema does not accept ``null`` is dropped (models
write ``None``/``null`` to mean "not given"; the default then applies), and an empty string means
``{}`` (a call without arguments).
"""

from __future__ import annotations

import json
from typing import Any, Optional, Union

import jsonschema

from judgebox.agent.parsers.values import json_type

__all__ = ["prepare_arguments", "validator_for"]

_ARTICLE = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "a boolean",
            "object": "an object", "array": "an array", "null": "null"}


def validator_for(parameters: dict[str, Any]) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for a tool's ``parameters`` schema (already checked)."""
    return jsonschema.Draft202012Validator(parameters)


def _field(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _got(value: Any) -> str:
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{json_type(value)} {text}"


def _describe(error: jsonschema.ValidationError) -> str:
    field = _field(error.absolute_path)
    if error.validator == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        expected = " or ".join(_ARTICLE.get(t, t) for t in types)
        return f"{field or 'arguments'} must be {expected}, got {_got(error.instance)}"
    if error.validator == "required":
        missing = next((k for k in error.validator_value if k not in error.instance), "?")
        return f"{_field([*error.absolute_path, missing])} is required"
    if error.validator == "enum":
        options = ", ".join(json.dumps(v, ensure_ascii=False) for v in error.validator_value)
        return f"{field} must be one of {options}, got {json.dumps(error.instance, ensure_ascii=False)}"
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        where = f" in {field}" if field else ""
        names = ", ".join(repr(k) for k in extra)
        return (f"unexpected argument{'s' if len(extra) > 1 else ''} {names}{where} "
                f"(accepted: {', '.join(sorted(allowed)) or 'none'})")
    return f"{field or 'arguments'}: {error.message}"


def _drop_nulls(arguments: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    required = set(parameters.get("required", []))
    properties = parameters.get("properties", {})
    out = {}
    for key, value in arguments.items():
        prop = properties.get(key)
        if value is None and key not in required and isinstance(prop, dict) \
                and not jsonschema.Draft202012Validator(prop).is_valid(None):
            continue
        out[key] = value
    return out


def prepare_arguments(arguments: Union[str, dict, Any], parameters: dict[str, Any],
                      validator: Optional[jsonschema.protocols.Validator] = None
                      ) -> tuple[Optional[dict[str, Any]], Optional[str]]:
    """``(arguments as a dict, None)`` when valid, else ``(None, "error: ...")``.

    Args:
        arguments: a JSON object text (as a model writes it) or an already decoded dict.
        parameters: the tool's ``parameters`` JSON Schema.
        validator: a cached :func:`validator_for` of ``parameters``.
    """
    if isinstance(arguments, (str, bytes)):
        text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
        if not text.strip():
            arguments = {}
        else:
            try:
                arguments = json.loads(text)
            except json.JSONDecodeError as e:
                return None, f"error: arguments are not valid JSON ({e})"
    if not isinstance(arguments, dict):
        return None, f"error: arguments must be a JSON object, got {json_type(arguments)}"
    arguments = _drop_nulls(arguments, parameters)
    validator = validator or validator_for(parameters)
    errors = sorted(validator.iter_errors(arguments),
                    key=lambda e: (_field(e.absolute_path), str(e.validator)))
    if errors:
        return None, "error: " + "; ".join(dict.fromkeys(_describe(e) for e in errors))
    return arguments, None
