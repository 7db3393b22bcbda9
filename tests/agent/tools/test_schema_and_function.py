"""Tool schemas keep the full JSON Schema; @function_tool derives one and normalizes returns."""

from __future__ import annotations

import asyncio
from typing import Optional

import pytest

from judgebox.agent.tools import BaseTool, FunctionTool, OpenAIFunctionToolSchema, ToolResponse, function_tool
from judgebox.agent.tools.function import normalize_return
from tests.agent.tools.sample_tools import add, scored, shout_async

NESTED = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search.",
        "parameters": {
            "type": "object",
            "properties": {
                "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "filters": {"type": "object", "properties": {"year": {"type": "integer", "default": 2024}},
                            "additionalProperties": False},
                "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
            },
            "required": ["queries"],
            "additionalProperties": False,
        },
    },
}


def test_nested_schema_is_kept_verbatim():
    schema = OpenAIFunctionToolSchema.model_validate(NESTED)
    assert schema.to_openai() == NESTED  # verbatim: no default key added


@pytest.mark.parametrize("change, message", [
    ({"parameters": {"type": "array"}}, "parameters must be a JSON Schema with \"type\": \"object\", got type 'array'"),
    ({"parameters": {"type": "object", "properties": {"a": {"type": "int"}}}},
     "parameters is not a valid JSON Schema at properties/a/type"),
    ({"parameters": {"type": "object", "required": "a"}}, "parameters is not a valid JSON Schema at required"),
    ({"name": "has space"}, "function name 'has space' must match [A-Za-z0-9_-]{1,64}"),
    ({"paramters": {}}, "function.paramters"),
])
def test_bad_schemas_are_rejected_naming_the_problem(change, message):
    bad = {"type": "function", "function": {**NESTED["function"], **change}}
    with pytest.raises(ValueError) as e:
        BaseTool({}, bad)
    assert message in str(e.value)


def test_a_tool_without_a_schema_is_an_error():
    with pytest.raises(ValueError, match="no tool_schema was given and the class does not define one"):
        BaseTool({})


def test_function_schema_from_hints_and_docstring():
    assert add.tool_schema.to_openai()["function"] == {
        "name": "add", "description": "Add two integers.",
        "parameters": {"type": "object", "required": ["a"], "properties": {
            "a": {"type": "integer", "description": "The first addend."},
            "b": {"type": "integer", "description": "The second addend.", "default": 2}}}}
    props = shout_async.tool_schema.function.parameters["properties"]
    assert shout_async.name == "shout"
    assert props["times"] == {"type": ["integer", "null"], "description": "How many times.", "default": 1}
    assert props["style"] == {"type": "string", "enum": ["upper", "title"], "description": "How to shout.",
                              "default": "upper"}


def test_decorated_functions_stay_callable():
    assert isinstance(add, FunctionTool) and isinstance(add, BaseTool)
    assert add(2, 3) == 5 and add.__name__ == "add"
    assert asyncio.run(shout_async("hi", 2)) == "HI HI"


async def test_sync_async_and_triple_returns():
    assert await add.execute("i", {"a": 1}) == (ToolResponse(text="3"), None, {})
    assert await shout_async.execute("i", {"text": "a b", "style": "title"}) == (ToolResponse(text="A B"), None, {})
    assert await scored.execute("i", {"answer": "42"}) == (ToolResponse(text="got 42"), 1.0, {"length": 2})


@pytest.mark.parametrize("ret, expected", [
    ("x", (ToolResponse(text="x"), None, {})),
    (ToolResponse(text="y"), (ToolResponse(text="y"), None, {})),
    (("z",), (ToolResponse(text="z"), None, {})),
    (("z", 1), (ToolResponse(text="z"), 1.0, {})),
    (("z", None, {"k": 1}), (ToolResponse(text="z"), None, {"k": 1})),
    ({"a": 1}, (ToolResponse(text='{"a": 1}'), None, {})),
    (7, (ToolResponse(text="7"), None, {})),
    (None, (ToolResponse(), None, {})),
])
def test_normalize_return(ret, expected):
    assert normalize_return(ret) == expected


def test_a_tuple_of_four_is_an_authoring_error():
    with pytest.raises(TypeError, match="tuple of length 4"):
        normalize_return(("a", 1, {}, 2))


def test_renaming_and_explicit_schema():
    @function_tool("renamed")
    def f(x: int) -> int:
        """Identity.

        Args:
            x: A number.
        """
        return x

    @function_tool(schema=NESTED)
    def g(queries: list, filters: Optional[dict] = None, mode: str = "fast") -> str:
        return mode

    assert f.name == "renamed"
    assert g.name == "search" and g.tool_schema.function.parameters == NESTED["function"]["parameters"]


def test_undocumented_or_variadic_functions_are_rejected():
    with pytest.raises(Exception, match="docstring|description"):
        @function_tool
        def undocumented(x: int) -> int:
            return x

    with pytest.raises(ValueError, match=r"variadic parameters \['rest'\]"):
        @function_tool
        def variadic(x: int, *rest: int) -> int:
            """Sum.

            Args:
                x: First.
            """
            return x


def test_process_tools_must_be_module_level():
    with pytest.raises(ValueError, match="process=True needs a module-level function"):
        @function_tool(process=True)
        def local(x: int) -> int:
            """Identity.

            Args:
                x: A number.
            """
            return x
