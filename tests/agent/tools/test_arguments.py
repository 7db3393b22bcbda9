"""Run-time argument validation: fixed observation texts, the tool not called, limits clamped.

Includes the tool side of case BUG-105 (agent-cases.md): the parser keeps raw values; the tool
rejects a value of the wrong type with an observation naming the field and the expected type.
"""

from __future__ import annotations

import json

import pytest

from judgebox.agent.tools import TrajectoryTools, function_tool
from judgebox.agent.tools.arguments import prepare_arguments

received: list[dict] = []


@function_tool(config={"clamp": {"timeout": 10}})
def code_interpreter(code: str, timeout: int = 30, reset: bool = False) -> str:
    """Run Python code (records what it was called with).

    Args:
        code: The code to run.
        timeout: Seconds allowed.
        reset: Start from a fresh state first.
    """
    received.append({"code": code, "timeout": timeout, "reset": reset})
    return json.dumps(received[-1])


@pytest.fixture(autouse=True)
def _clear():
    received.clear()


@pytest.mark.parametrize("arguments, status, text, called_with", [
    # (a) the raw string is kept by the parser; the tool rejects it and is not called
    ({"code": "print(1)", "timeout": "ten"}, "invalid_arguments",
     'error: timeout must be an integer, got string "ten"', None),
    ('{"code": "print(1)", "timeout": "ten"}', "invalid_arguments",
     'error: timeout must be an integer, got string "ten"', None),
    # (b) an empty non-string parameter was omitted by the parser: the default applies
    ({"code": "print(1)"}, "ok", None, {"code": "print(1)", "timeout": 30, "reset": False}),
    # (c) null for an optional parameter means "not given"
    ({"code": "print(1)", "reset": None}, "ok", None, {"code": "print(1)", "timeout": 30, "reset": False}),
    # (d) a string-typed value is never coerced
    ({"code": "007"}, "ok", None, {"code": "007", "timeout": 30, "reset": False}),
    ({"code": 7}, "invalid_arguments", "error: code must be a string, got integer 7", None),
    # (e) the integer 30, clamped to the configured maximum of 10 s
    ({"code": "print(1)", "timeout": 30}, "ok", None, {"code": "print(1)", "timeout": 10, "reset": False}),
    ({"code": "print(1)", "timeout": 5}, "ok", None, {"code": "print(1)", "timeout": 5, "reset": False}),
])
async def test_bug_105_argument_types_tool_side(arguments, status, text, called_with):
    async with TrajectoryTools([code_interpreter], timeout_s=5) as tt:
        result = await tt.call("code_interpreter", arguments)
    assert result.status == status
    if text is not None:
        assert result.text == text
    assert received == ([called_with] if called_with else [])


SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "timeout": {"type": ["integer", "null"]},
        "mode": {"enum": ["a", "b"]},
        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}},
                                             "required": ["name"]}},
        "ratio": {"type": "number", "minimum": 0},
    },
    "required": ["code"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("arguments, expected", [
    ("{bad", "error: arguments are not valid JSON (Expecting property name enclosed in double quotes: "
             "line 1 column 2 (char 1))"),
    ("[1, 2]", "error: arguments must be a JSON object, got array"),
    ('"x"', "error: arguments must be a JSON object, got string"),
    ("", "error: code is required"),
    ({"code": "x", "mode": "c"}, 'error: mode must be one of "a", "b", got "c"'),
    ({"code": "x", "foo": 1}, "error: unexpected argument 'foo' (accepted: code, items, mode, ratio, timeout)"),
    ({"code": "x", "items": [{"name": 3}, {}]},
     "error: items[0].name must be a string, got integer 3; items[1].name is required"),
    ({"code": "x", "ratio": -1}, "error: ratio: -1 is less than the minimum of 0"),
    ({"code": "x", "timeout": 1.5}, "error: timeout must be an integer or null, got number 1.5"),
    ({"code": True}, "error: code must be a string, got boolean true"),
])
def test_violations_become_one_fixed_observation(arguments, expected):
    assert prepare_arguments(arguments, SCHEMA) == (None, expected)


def test_null_is_kept_where_the_schema_allows_it():
    assert prepare_arguments({"code": "x", "timeout": None}, SCHEMA) == ({"code": "x", "timeout": None}, None)


def test_null_for_a_required_parameter_is_a_violation():
    assert prepare_arguments({"code": None}, SCHEMA) == (None, "error: code must be a string, got null")


@pytest.mark.parametrize("arguments, text, interpreter_text", [
    ({"code": 5}, "error: code must be a string, got integer 5", None),
    ({}, "error: code is required", None),
    ({"code": "print(1)", "timeout": "ten"}, 'error: timeout must be an integer, got string "ten"',
     'error: timeout must be a number, got string "ten"'),  # the code interpreter's timeout is a number
])
async def test_execute_called_directly_checks_its_arguments_and_runs_nothing(arguments, text, interpreter_text):
    """Issue 39, item 11: ``execute`` called directly (verl's and TRL's adapters, users' code) ran
    ``{"code": 5}`` as the cell ``5`` and a call without ``code`` as an empty cell; each tool now
    checks its own schema inside ``execute``, as the agent loop does, and answers the same
    observation without running anything."""
    from judgebox.agent.tools.code_interpreter import CodeInterpreterTool

    instance, _ = await code_interpreter.create()
    assert await code_interpreter.execute(instance, arguments) == (
        code_interpreter_response(text), None, {"status": "invalid_arguments"})
    assert received == []
    # clamped as the loop clamps: 30 s asked, 10 s configured
    response, _, _ = await code_interpreter.execute(instance, {"code": "x", "timeout": 30})
    assert json.loads(response.text) == {"code": "x", "timeout": 10, "reset": False}
    tool = CodeInterpreterTool({})
    instance, _ = await tool.create()
    try:
        response, _, metrics = await tool.execute(instance, arguments)
        assert (response.text, metrics) == (interpreter_text or text, {"status": "invalid_arguments"})
        response, _, metrics = await tool.execute(instance, {"code": "print(6 * 7)"})
        assert (response.text, metrics["status"]) == ("[ok]\n[stdout]\n42", "ok")
    finally:
        await tool.release(instance)


def code_interpreter_response(text: str):
    from judgebox.agent.tools import ToolResponse

    return ToolResponse(text=text)
