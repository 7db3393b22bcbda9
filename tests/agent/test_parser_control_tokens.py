"""Control tokens, malformed blocks and call order in every tool-call parser (no model, no torch).

For each format: (a) a control token (or a character outside ``[A-Za-z0-9_.-]``) in a tool name or
Harmony recipient, or in an argument name, is a parse error naming it, never a call, while one
inside a value is kept where the format bounds the value (JSON strings); (b) a malformed block,
put before, between and after two valid ones, is one error and both valid calls are still
parsed; (c) calls keep the order of the text. Last, one round's observations come back in call
order when a later call finishes first (``judgebox.agent.loop.run_calls``).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from judgebox.agent.loop import run_calls
from judgebox.agent.parsers import get_parser
from judgebox.agent.tools import function_tool
from judgebox.agent.tools.runner import TrajectoryTools

PREFIX = "error: could not parse tool call: "


def hermes(name: str, arguments: dict | None = None) -> str:
    return "<tool_call>%s</tool_call>" % json.dumps({"name": name, "arguments": arguments or {}})


def coder(name: str, arguments: dict | None = None) -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in (arguments or {}).items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def harmony(recipient: str, body: str = "{}", stop: str = "<|call|>") -> str:
    return f"<|start|>assistant<|channel|>commentary to={recipient} <|constrain|>json<|message|>{body}{stop}"


def call(name: str, arguments: dict | None = None) -> str:
    return json.dumps({"name": name, "parameters": arguments or {}})


def llama(*blocks: str) -> str:
    return "<|python_tag|>" + "; ".join(blocks)


def parsed(fmt: str, text: str) -> tuple[list[tuple[str, dict]], list[str]]:
    """``([(name, arguments)], [error without the format hint])`` of one turn."""
    turn = get_parser(fmt).parse(text)
    assert all(e.startswith(PREFIX) for e in turn.errors), turn.errors
    return [(c.name, c.arguments) for c in turn.calls], [e[len(PREFIX):].split("; expected ")[0] for e in turn.errors]


B = ("b", {"code": "2"})


# --- (a) control tokens in a tool name / recipient ---------------------------------------------

def named(name: str) -> str:
    return f"invalid tool name {name!r} (contains the control token "


NAME_CASES = [
    ("hermes", hermes("run<|im_end|>") + hermes(*B), named("run<|im_end|>") + "'<|im_end|>')"),
    ("hermes", hermes("run</tool_call>") + hermes(*B), named("run</tool_call>") + "'</tool_call>')"),
    ("hermes", hermes("run<|call|>x") + hermes(*B), named("run<|call|>x") + "'<|call|>')"),
    ("hermes", hermes("run x") + hermes(*B), "invalid tool name 'run x' (allowed: letters, digits, '_', '.', '-')"),
    ("qwen3_coder", coder("run<|im_end|>") + coder(*B), named("run<|im_end|>") + "'<|im_end|>')"),
    ("qwen3_coder", coder("run<|call|>x") + coder(*B), named("run<|call|>x") + "'<|call|>')"),
    ("qwen3_coder", coder("run x") + coder(*B), "invalid tool name 'run x' (allowed: letters, digits, '_', '.', '-')"),
    ("qwen3_coder", coder('run"') + coder(*B), "invalid tool name 'run\"' (allowed: letters, digits, '_', '.', '-')"),
    ("gpt-oss", harmony("functions.run<|call|>x", '{"code": "1"}') + harmony("functions.b", '{"code": "2"}'),
     "recipient 'functions.run<|call|>x': " + named("run<|call|>x") + "'<|call|>')"),
    ("gpt-oss", harmony("functions.run<|end|>", '{"code": "1"}') + harmony("functions.b", '{"code": "2"}'),
     "recipient 'functions.run<|end|>': " + named("run<|end|>") + "'<|end|>')"),
    ("gpt-oss", harmony("functions.run<|im_end|>", "not json") + harmony("functions.b", '{"code": "2"}'),
     "recipient 'functions.run<|im_end|>': " + named("run<|im_end|>") + "'<|im_end|>')"),
    ("llama3_json", llama(call("run<|eot_id|>"), call(*B)), named("run<|eot_id|>") + "'<|eot_id|>')"),
    # a turn that starts with JSON: the tag inside its string marks nothing
    ("llama3_json", call("run<|python_tag|>") + "; " + call(*B), named("run<|python_tag|>") + "'<|python_tag|>')"),
]


@pytest.mark.parametrize("fmt,text,error", NAME_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(NAME_CASES)])
def test_a_control_token_in_a_name_is_an_error_naming_it(fmt, text, error):
    calls, errors = parsed(fmt, text)
    assert calls == [B]
    assert errors == [error]


# --- (a) control tokens in arguments ------------------------------------------------------------

ARGUMENT_CASES = [
    # an argument name is never a control token...
    ("hermes", hermes("run", {"code<|im_end|>": "1"}) + hermes(*B), [B],
     ["argument name 'code<|im_end|>' of 'run' contains a control token"]),
    ("gpt-oss", harmony("functions.run", '{"code<|call|>": "1"}') + harmony("functions.b", '{"code": "2"}'), [B],
     ["argument name 'code<|call|>' of 'run' contains a control token"]),
    ("llama3_json", llama(call("run", {"code<|eot_id|>": "1"}), call(*B)), [B],
     ["argument name 'code<|eot_id|>' of 'run' contains a control token"]),
    ("qwen3_coder", "<tool_call>\n<function=run>\n<parameter=code<|im_end|>>\n1\n</parameter>\n</function>\n</tool_call>"
     + coder(*B), [B], ["invalid parameter name 'code<|im_end|>' of 'run'"]),
    # ...but a JSON string value holding one is data
    ("hermes", hermes("run", {"code": "print('<|im_end|>')", "s": "</tool_call><tool_call>"}) + hermes(*B),
     [("run", {"code": "print('<|im_end|>')", "s": "</tool_call><tool_call>"}), B], []),
    ("gpt-oss", harmony("functions.run", '{"code": "print(\'<|call|>\')"}') + harmony("functions.b", '{"code": "2"}'),
     [("run", {"code": "print('<|call|>')"}), B], []),
    ("llama3_json", llama(call("run", {"code": "<|eot_id|>; {"}), call(*B)), [("run", {"code": "<|eot_id|>; {"}), B], []),
    # an XML value keeps its text up to its own </parameter>...
    ("qwen3_coder", coder("run", {"code": "print('<|im_end|>')\nprint('</parameter>')"}) + coder(*B),
     [("run", {"code": "print('<|im_end|>')\nprint('</parameter>')"}), B], []),
    # ...and never crosses the next block: a value that lost its </parameter> does not swallow it
    ("qwen3_coder", "<tool_call>\n<function=run>\n<parameter=code>\n1\n</tool_call>" + coder(*B), [B],
     ["parameter 'code' of 'run' is not closed (no </parameter>)"]),
    ("qwen3_coder", "<tool_call>\n<function=run>\n<parameter=code>\n1\n" + coder(*B), [B],
     ["parameter 'code' of 'run' is not closed (no </parameter>)"]),
    ("qwen3_coder", "<tool_call>\n<function=run>\n<parameter=code>\n1\n</parameter>\n" + coder(*B), [B],
     ["function 'run' is not closed (no </function>)"]),
    # BUG-225's recovery (a value missing </parameter> ends at \n</function>) stays inside its block
    ("qwen3_coder", "<tool_call>\n<function=run>\n<parameter=code>\n1\n</function>\n</tool_call>" + coder(*B),
     [("run", {"code": "1"}), B], []),
]


@pytest.mark.parametrize("fmt,text,calls,errors", ARGUMENT_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ARGUMENT_CASES)])
def test_control_tokens_in_arguments(fmt, text, calls, errors):
    assert parsed(fmt, text) == (calls, errors)


# --- (b) a malformed block never hides the valid ones beside it --------------------------------

A = ("a", {"code": "1"})
MALFORMED = [
    ("hermes", '<tool_call>{"name": "x", "arguments": {"code": 1}</tool_call>', "invalid JSON (Expecting ',' delimiter"),
    ("hermes", '<tool_call>{"name": "x", "arguments": {"code": "1', "invalid JSON ("),  # no end tag
    ("hermes", "<tool_call>not json</tool_call>", "no JSON object after <tool_call>"),
    ("hermes", "<tool_call><function=x></function></tool_call>", "no JSON object after <tool_call>"),  # other format
    ("hermes", hermes("bad name"), "invalid tool name 'bad name'"),
    ("qwen3_coder", "<tool_call>\n<function=bad name>\n</function>\n</tool_call>", "invalid tool name 'bad name'"),
    ("qwen3_coder", '<tool_call>\n{"name": "x"}\n</tool_call>', "expected <function=NAME> after <tool_call>"),
    ("qwen3_coder", "<tool_call>\n<function=x>\ngarbage\n</function>\n</tool_call>", "unexpected text in function 'x'"),
    ("qwen3_coder", "<tool_call>\n<function=x>\n<parameter=code>\n1\n", "parameter 'code' of 'x' is not closed"),
    ("qwen3_coder", "<tool_call>\n<function=x>\n<parameter=code>\n1\n</parameter>\n", "function 'x' is not closed"),
    ("gpt-oss", harmony("functions.x", '{"code": 1'), "arguments of 'x': invalid JSON (Expecting ',' delimiter"),
    ("gpt-oss", harmony("functions.x", "not json"), "arguments of 'x': invalid JSON (Expecting value"),
    ("gpt-oss", harmony("functions.x", "[1]"), "arguments of 'x' must be a JSON object, got list"),
    # the stop token inside the broken string once made "<|call|>" the next message's role
    ("gpt-oss", harmony("functions.x", '{"code": "a<|call|>'), "arguments of 'x': invalid JSON"),
    # a header cut before <|message|> once merged into the next message's header, silently
    ("gpt-oss", "<|start|>assistant<|channel|>commentary to=functions.x <|constrain|>json<|call|>",
     "the message to 'functions.x' has no <|message|> body"),
    ("llama3_json", '{"name": "x", "parameters": {"code": 1}', "invalid JSON (Expecting ',' delimiter"),
    ("llama3_json", "not json", "invalid JSON (Expecting value"),
    ("llama3_json", 'brave_search.call(query="x")', "invalid JSON (Expecting value"),
    ("llama3_json", '{"parameters": {}}', 'the call has no "name" string'),
]


def valid(fmt: str, name: str, arguments: dict) -> str:
    if fmt == "gpt-oss":
        return harmony(f"functions.{name}", json.dumps(arguments))
    return {"hermes": hermes, "qwen3_coder": coder, "llama3_json": call}[fmt](name, arguments)


@pytest.mark.parametrize("where", ["before", "between", "after"])
@pytest.mark.parametrize("fmt,bad,error", MALFORMED, ids=[f"{m[0]}-{i}" for i, m in enumerate(MALFORMED)])
def test_a_malformed_block_is_one_error_and_hides_nothing(fmt, bad, error, where):
    a, b = valid(fmt, *A), valid(fmt, *B)
    blocks = {"before": [bad, a, b], "between": [a, bad, b], "after": [a, b, bad]}[where]
    text = llama(*blocks) if fmt == "llama3_json" else "".join(blocks)
    calls, errors = parsed(fmt, text)
    assert calls == [A, B]
    assert len(errors) == 1 and errors[0].startswith(error), errors


# --- (c) calls keep the order of the text ------------------------------------------------------

ORDERED = [("zeta", {"i": "0"}), ("alpha", {"i": "1"}), ("zeta", {"i": "2"}), ("mid", {"i": "3"})]


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "gpt-oss", "llama3_json"])
def test_calls_keep_the_order_of_the_text(fmt):
    blocks = [valid(fmt, name, args) for name, args in ORDERED]
    text = llama(*blocks) if fmt == "llama3_json" else "\n".join(blocks)
    assert parsed(fmt, text) == (ORDERED, [])


def test_hermes_calls_in_reasoning_allowed_come_first_in_text_order():
    text = f"<think>{hermes('alpha')}</think>{hermes('zeta')}{hermes('mid')}"
    turn = get_parser("hermes", calls_in_reasoning="allow").parse(text)
    assert [c.name for c in turn.calls] == ["alpha", "zeta", "mid"]


# --- one round's observations come back in call order ------------------------------------------

FINISHED: list[str] = []


def _schema(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": name,
                                             "parameters": {"type": "object", "properties": {"i": {"type": "string"}}}}}


@function_tool(name="slow", schema=_schema("slow"))
async def slow(i: str = "") -> str:
    """Answer after 0.2 s."""
    await asyncio.sleep(0.2)
    FINISHED.append(f"slow {i}")
    return f"slow {i}"


@function_tool(name="fast", schema=_schema("fast"))
async def fast(i: str = "") -> str:
    """Answer at once."""
    FINISHED.append(f"fast {i}")
    return f"fast {i}"


def test_observations_come_back_in_call_order_when_a_later_call_finishes_first():
    turn = get_parser("hermes").parse(
        hermes("slow", {"i": "1"}) + "<tool_call>not json</tool_call>" + hermes("nope")
        + hermes("fast", {"i": "2"}) + hermes("slow", {"i": "3"}) + "<|im_end|>")
    assert [c.name for c in turn.calls] == ["slow", "nope", "fast", "slow"]
    assert len(turn.errors) == 1

    async def round_() -> list:
        async with TrajectoryTools([slow, fast], timeout_s=10) as tt:
            return await run_calls(tt, turn.calls)

    FINISHED.clear()
    results = asyncio.run(round_())
    assert FINISHED == ["fast 2", "slow 1", "slow 3"]  # fast finished first; same-tool calls in order
    assert [r.text for r in results] == [
        "slow 1", "error: unknown tool 'nope' (available: slow, fast)", "fast 2", "slow 3"]
    assert [r.status for r in results] == ["ok", "unknown_tool", "ok", "ok"]
