"""Tool-call parsers (judgebox.agent.parsers): the agent cases BUG-101, 102, 103, 105, 106 with their exact
expected values, the real Qwen3 template's own rendering parsed back, and "never raises" over every
prefix of real turns."""

from __future__ import annotations

import random

import jsonschema
import pytest

from judgebox.agent.parsers import ParsedTurn, Segment, ToolCallParser, get_parser, parser_names, register_parser
from tests.agent.qwen_fixtures import CODE_INTERPRETER_TOOL, qwen_tokenizer


def hermes_call(code: str) -> str:
    return '<tool_call>{"name":"code_interpreter","arguments":{"code":"%s"}}</tool_call>' % code


def coder_call(body: str) -> str:
    return f"<tool_call>\n<function=code_interpreter>\n{body}\n</function>\n</tool_call>"


def args(turn: ParsedTurn) -> list[dict]:
    assert all(c.name == "code_interpreter" for c in turn.calls), turn.calls
    return [c.arguments for c in turn.calls]


# --- BUG-101: a call drafted inside <think> is not executed -------------------------------------

BUG101_A = f"<think>plan: maybe {hermes_call('print(1)')} first</think>\n{hermes_call('print(2)')}<|im_end|>"
BUG101_D = (
    f"<think>plan: maybe {coder_call('<parameter=code>' + chr(10) + 'print(1)' + chr(10) + '</parameter>')} first</think>\n"
    f"{coder_call('<parameter=code>' + chr(10) + 'print(2)' + chr(10) + '</parameter>')}<|im_end|>"
)


@pytest.mark.parametrize("fmt,text", [("hermes", BUG101_A), ("qwen3_coder", BUG101_D)], ids=["a-hermes", "d-qwen3_coder"])
def test_bug101_drafted_call_in_think_is_not_run(fmt, text):
    turn = get_parser(fmt).parse(text)
    assert args(turn) == [{"code": "print(2)"}]
    assert turn.metrics["calls_in_reasoning_ignored"] == 1
    assert turn.reasoning.startswith("plan: maybe <tool_call>")
    assert turn.errors == [] and turn.content == ""


def test_bug101b_call_only_in_think_is_a_final_answer():
    turn = get_parser("hermes").parse(
        f"<think>I could run {hermes_call('1/0')} but no.</think>\nThe answer is 7.<|im_end|>")
    assert turn.calls == []
    assert turn.content == "The answer is 7."
    assert turn.metrics["calls_in_reasoning_ignored"] == 1


def test_bug101c_prefilled_think_tag_still_makes_the_draft_reasoning():
    # the prompt ends "<|im_start|>assistant\n<think>\n": the generated text has only the closing tag
    turn = get_parser("hermes").parse(f"draft {hermes_call('x')}</think>\n{hermes_call('y')}<|im_end|>")
    assert args(turn) == [{"code": "y"}]
    assert turn.reasoning == f"draft {hermes_call('x')}"


def test_bug101_unclosed_think_runs_nothing():
    turn = get_parser("hermes").parse(f"<think>let me try {hermes_call('print(1)')} and then")
    assert turn.calls == [] and turn.errors == []
    assert turn.metrics["calls_in_reasoning_ignored"] == 1


@pytest.mark.parametrize("fmt,text", [("hermes", BUG101_A), ("qwen3_coder", BUG101_D)], ids=["hermes", "qwen3_coder"])
def test_bug101_allow_merges_a_draft_issued_again(fmt, text):
    # The case says "(a) still yields 1 call" with calls_in_reasoning=allow because identical drafts
    # are merged. (a)'s draft is print(1) and its real call print(2): they are not identical, so
    # "allow" runs both, in emitted order. The merge is pinned on a draft identical to the real call.
    allow = get_parser(fmt, calls_in_reasoning="allow")
    assert args(allow.parse(text)) == [{"code": "print(1)"}, {"code": "print(2)"}]
    same = allow.parse(text.replace("print(1)", "print(2)"))
    assert args(same) == [{"code": "print(2)"}]
    assert same.metrics["duplicate_calls_merged"] == 1


def test_allow_keeps_two_identical_real_calls():
    # merging only removes a reasoning draft; two identical calls after the reasoning are both meant
    turn = get_parser("hermes", calls_in_reasoning="allow").parse(
        f"<think>ok</think>{hermes_call('x += 1')}{hermes_call('x += 1')}")
    assert args(turn) == [{"code": "x += 1"}, {"code": "x += 1"}]


@pytest.mark.parametrize("code", ["print('</think>')", "print('<think>')", "s = '<think>' + x + '</think>'"])
def test_think_tags_inside_a_call_are_code_not_reasoning(code):
    # the kind of BUG-102 for reasoning tags: a tag inside a JSON string does not open or end reasoning
    for text in (hermes_call(code) + "<|im_end|>", f"<think>ok</think>\n{hermes_call(code)}<|im_end|>"):
        turn = get_parser("hermes").parse(text)
        assert args(turn) == [{"code": code}], text
        assert turn.metrics["calls_in_reasoning_ignored"] == 0
    xml = coder_call(f"<parameter=code>\n{code}\n</parameter>")
    if "</think>" not in code:  # XML values have no boundary a closing tag could be checked against
        assert args(get_parser("qwen3_coder").parse(xml)) == [{"code": code}]


# --- BUG-102: a literal </tool_call> inside a JSON string -------------------------------------

BUG102 = ('<tool_call>{"name": "code_interpreter", "arguments": {"code": "s = \'</tool_call>\'; print(len(s))"}}'
          "</tool_call>")


def test_bug102_end_tag_inside_json_string(local_sandbox):
    turn = get_parser("hermes").parse(BUG102 + "<|im_end|>")
    assert args(turn) == [{"code": "s = '</tool_call>'; print(len(s))"}]
    assert turn.errors == []
    result = local_sandbox.run_code({"code": turn.calls[0].arguments["code"], "language": "python"})
    assert result.run_result.stdout == "12\n"


def test_bug102_two_blocks_back_to_back():
    turn = get_parser("hermes").parse(BUG102 + BUG102 + "<|im_end|>")
    assert args(turn) == [{"code": "s = '</tool_call>'; print(len(s))"}] * 2


def test_bug102_unterminated_object_is_an_observation():
    turn = get_parser("hermes").parse(
        '<tool_call>{"name": "code_interpreter", "arguments": {"code": "print(1)"}</tool_call><|im_end|>')
    assert turn.calls == []
    assert len(turn.errors) == 1 and turn.errors[0].startswith("error: could not parse tool call")
    assert "<tool_call>" in turn.errors[0]  # the expected format is shown to the model


def test_bug102_kind_qwen3_coder_end_tag_inside_a_value():
    code = "print('</parameter>')\nprint('</function>')"
    turn = get_parser("qwen3_coder").parse(coder_call(f"<parameter=code>\n{code}\n</parameter>") + "<|im_end|>")
    assert args(turn) == [{"code": code}]


# --- BUG-103: several JSON values in one block -------------------------------------------------

def test_bug103a_two_values_in_one_block_are_two_calls_in_order():
    turn = get_parser("hermes").parse(
        '<tool_call>\n{"name":"code_interpreter","arguments":{"code":"a = 1"}}\n'
        '{"name":"code_interpreter","arguments":{"code":"print(a)"}}\n</tool_call><|im_end|>')
    assert args(turn) == [{"code": "a = 1"}, {"code": "print(a)"}]
    assert turn.errors == []


def test_bug103b_trailing_text_keeps_the_call_and_is_counted():
    turn = get_parser("hermes").parse(
        '<tool_call>\n{"name":"code_interpreter","arguments":{"code":"print(3)"}}\nDone.\n</tool_call><|im_end|>')
    assert args(turn) == [{"code": "print(3)"}]
    assert turn.metrics["trailing_text_in_call"] == 1
    assert turn.errors == []


def test_bug103_invalid_first_value_is_an_observation():
    turn = get_parser("hermes").parse(
        '<tool_call>\n{"name":"code_interpreter","arguments":{"code":print(3)}}\n</tool_call><|im_end|>')
    assert turn.calls == []
    assert turn.errors[0].startswith("error: could not parse tool call: invalid JSON")


@pytest.mark.parametrize("block,error", [
    ('{"arguments":{"code":"1"}}', 'the call has no "name" string'),
    ('{"name":"code_interpreter","arguments":[1]}', '"arguments" of \'code_interpreter\' must be a JSON object, got list'),
    ('"code_interpreter"', "no JSON object after <tool_call>"),
    ("[1]", "a call must be a JSON object, got int"),
    ("", "empty <tool_call> block"),
])
def test_hermes_wrong_shapes_name_the_problem(block, error):
    turn = get_parser("hermes").parse(f"<tool_call>{block}</tool_call>")
    assert turn.calls == []
    assert turn.errors[0].split("; expected")[0] == f"error: could not parse tool call: {error}"


def test_hermes_string_encoded_arguments_and_missing_end_tag():
    turn = get_parser("hermes").parse('<tool_call>{"name":"code_interpreter","arguments":"{\\"code\\": \\"1\\"}"}<|im_end|>')
    assert args(turn) == [{"code": "1"}]
    assert turn.metrics["unclosed_call"] == 1


# --- BUG-105: qwen3_coder values typed by the tool's schema ------------------------------------

@pytest.mark.parametrize("body,expected", [
    ("<parameter=code>\nprint(1)\n</parameter>\n<parameter=timeout>\nten\n</parameter>", {"code": "print(1)", "timeout": "ten"}),
    ("<parameter=code>\nprint(1)\n</parameter>\n<parameter=timeout>\n\n</parameter>", {"code": "print(1)"}),
    ("<parameter=code>\nprint(1)\n</parameter>\n<parameter=reset>\nNone\n</parameter>", {"code": "print(1)", "reset": None}),
    ("<parameter=code>\n007\n</parameter>", {"code": "007"}),
    ("<parameter=code>\nprint(1)\n</parameter>\n<parameter=timeout>\n30\n</parameter>", {"code": "print(1)", "timeout": 30}),
], ids="abcde")
def test_bug105_values_typed_by_schema(body, expected):
    turn = get_parser("qwen3_coder", tools=[CODE_INTERPRETER_TOOL]).parse(coder_call(body) + "<|im_end|>")
    assert args(turn) == [expected]
    assert type(turn.calls[0].arguments.get("timeout", 0)) is type(expected.get("timeout", 0))
    assert turn.errors == []


def test_bug105a_the_tool_schema_rejects_the_kept_string():
    turn = get_parser("qwen3_coder", tools=[CODE_INTERPRETER_TOOL]).parse(
        coder_call("<parameter=code>\nprint(1)\n</parameter>\n<parameter=timeout>\nten\n</parameter>"))
    with pytest.raises(jsonschema.ValidationError) as err:
        jsonschema.validate(turn.calls[0].arguments, CODE_INTERPRETER_TOOL["function"]["parameters"])
    assert list(err.value.path) == ["timeout"] and err.value.validator == "type"


def test_qwen3_coder_without_schema_keeps_strings():
    turn = get_parser("qwen3_coder").parse(coder_call("<parameter=timeout>\n30\n</parameter>"))
    assert args(turn) == [{"timeout": "30"}]


def test_qwen3_coder_schema_types_cover_unions_objects_and_booleans():
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": ["number", "null"]}, "opts": {"type": "object"}, "flag": {"type": "boolean"},
        "tags": {"type": "array"}, "mode": {"enum": ["a", "b"]}}}}}
    body = ("<function=f>\n<parameter=n>\n2.5\n</parameter>\n<parameter=opts>\n{'k': 1}\n</parameter>\n"
            "<parameter=flag>\nTrue\n</parameter>\n<parameter=tags>\n[1, 2]\n</parameter>\n"
            "<parameter=mode>\na\n</parameter>\n</function>")
    turn = get_parser("qwen3_coder", tools=[tool]).parse(f"<tool_call>\n{body}\n</tool_call>")
    assert turn.calls[0].arguments == {"n": 2.5, "opts": {"k": 1}, "flag": True, "tags": [1, 2], "mode": "a"}


def test_qwen3_coder_cut_mid_call_is_an_error_not_a_call():
    # BUG-116 (a)'s text: the loop never runs a cut turn; the parser does not make a call of it either
    turn = get_parser("qwen3_coder").parse(
        "<tool_call>\n<function=code_interpreter>\n<parameter=code>\nimport shutil; shutil.rmtree('")
    assert turn.calls == []
    assert turn.errors[0].startswith("error: could not parse tool call: parameter 'code' of 'code_interpreter' is not closed")


def test_qwen3_coder_function_without_wrapper():
    turn = get_parser("qwen3_coder").parse("Running it.\n<function=code_interpreter>\n<parameter=code>\n1\n</parameter>\n</function>")
    assert args(turn) == [{"code": "1"}] and turn.content == "Running it."


# --- BUG-106: gpt-oss (Harmony) ---------------------------------------------------------------

BUG106 = {
    "a": "<|channel|>analysis<|message|>Need to run code.<|end|><|start|>assistant<|channel|>commentary "
         'to=functions.code_interpreter <|constrain|>json<|message|>{"code":"print(6*7)"}<|call|>',
    "c": "<|start|>assistant to=functions.code_interpreter<|channel|>commentary <|constrain|>json<|message|>"
         '{"code":"print(1)"}<|call|>',
    "d": '<|channel|>analysis to=functions.code_interpreter code<|message|>{"code":"print(2)"}<|call|>',
}
BUG106["b"] = BUG106["a"].removesuffix("<|call|>")


@pytest.mark.parametrize("case,code", [("a", "print(6*7)"), ("b", "print(6*7)"), ("c", "print(1)"), ("d", "print(2)")])
def test_bug106_harmony_call_shapes(case, code):
    turn = get_parser("gpt-oss").parse(BUG106[case])
    assert args(turn) == [{"code": code}]
    assert turn.errors == []


def test_bug106a_analysis_is_the_reasoning():
    assert get_parser("gpt-oss").parse(BUG106["a"]).reasoning == "Need to run code."


def test_bug106e_final_channel_is_the_content():
    turn = get_parser("gpt-oss").parse(
        "<|channel|>analysis<|message|>done<|end|><|start|>assistant<|channel|>final<|message|>42<|return|>")
    assert turn.calls == [] and turn.content == "42" and turn.reasoning == "done"


def test_harmony_bad_arguments_and_made_up_tool_reply():
    turn = get_parser("gpt-oss").parse(
        "<|channel|>commentary to=functions.code_interpreter <|constrain|>json<|message|>{code: 1}<|call|>")
    assert turn.calls == [] and turn.errors[0].startswith("error: could not parse tool call: arguments of 'code_interpreter': invalid JSON")
    # a reply the model wrote for the tool is not its own message: the turn ends there
    turn = get_parser("gpt-oss").parse(
        BUG106["a"] + "<|start|>functions.code_interpreter to=assistant<|channel|>commentary<|message|>42<|end|>")
    assert args(turn) == [{"code": "print(6*7)"}]


# --- llama3_json ------------------------------------------------------------------------------

def test_llama3_json_calls_answers_and_errors():
    p = get_parser("llama3_json")
    turn = p.parse('{"name": "code_interpreter", "parameters": {"code": "1"}}; '
                   '{"name": "code_interpreter", "parameters": {"code": "2"}}<|eot_id|>')
    assert args(turn) == [{"code": "1"}, {"code": "2"}]
    turn = p.parse('<|python_tag|>{"name": "code_interpreter", "arguments": {"code": "a = \'};\'"}}<|eom_id|>')
    assert args(turn) == [{"code": "a = '};'"}]
    answer = p.parse('{"result": 5}<|eot_id|>')  # JSON without "name" is an answer, not a call
    assert answer.calls == [] and answer.errors == [] and answer.content == '{"result": 5}'
    broken = p.parse('{"name": "code_interpreter", "parameters": {"code": "1"}<|eot_id|>')
    assert broken.calls == [] and broken.errors[0].startswith("error: could not parse tool call: invalid JSON")
    assert p.parse("The answer is 4.").content == "The answer is 4."


# --- the real template's own rendering, parsed back -------------------------------------------

def test_hermes_parses_what_the_qwen3_template_renders():
    tok = qwen_tokenizer()
    code = "s = '</tool_call>'\nprint(len(s))"
    calls = [{"type": "function", "function": {"name": "code_interpreter", "arguments": {"code": c}}} for c in (code, "print(2)")]
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "Let me run.", "reasoning_content": "think a bit", "tool_calls": calls}]
    rendered = tok.apply_chat_template(messages, tools=[CODE_INTERPRETER_TOOL], tokenize=False)
    turn_text = rendered[rendered.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n"):]
    ids = tok.encode(turn_text, add_special_tokens=False)
    assert 151657 in ids and 151645 in ids  # <tool_call> and <|im_end|> are single tokens
    turn = get_parser("hermes").parse(tok.decode(ids, skip_special_tokens=False))
    assert args(turn) == [{"code": code}, {"code": "print(2)"}]
    assert turn.reasoning == "think a bit" and turn.content == "Let me run."


# --- never raises; the registry ---------------------------------------------------------------

PREFIX_TURNS = {
    "hermes": BUG101_A + BUG102 + '<tool_call>\n{"name":"x","arguments":{"a":[1,{"b":null}]}}\nok\n</tool_call>',
    "qwen3_coder": BUG101_D + coder_call("<parameter=code>\nprint('</parameter>')\n</parameter>\n<parameter=timeout>\n3\n</parameter>"),
    "llama3_json": '<|python_tag|>{"name": "f", "parameters": {"a": "};"}}; {"name": "g", "parameters": {}}<|eom_id|>',
    "gpt-oss": BUG106["a"] + "<|start|>assistant<|channel|>final<|message|>42<|return|>",
}


@pytest.mark.parametrize("fmt", sorted(PREFIX_TURNS))
def test_every_prefix_parses_without_internal_error(fmt):
    parser = get_parser(fmt, tools=[CODE_INTERPRETER_TOOL], calls_in_reasoning="allow")
    text = PREFIX_TURNS[fmt]
    full = parser.parse(text)
    assert full.calls and not full.errors
    for cut in range(len(text) + 1):
        turn = parser.parse(text[:cut])
        assert not any("internal parser error" in e for e in turn.errors), (cut, turn.errors)
        # a cut turn never yields a call the whole turn does not have (no half-read arguments)
        got = [(c.name, c.arguments) for c in turn.calls]
        assert got == [(c.name, c.arguments) for c in full.calls][:len(got)], (cut, got)


@pytest.mark.parametrize("fmt", sorted(PREFIX_TURNS))
def test_mangled_turns_parse_without_internal_error(fmt):
    # seeded random edits with the characters and tags that steer the scanners
    rng = random.Random(fmt)
    pieces = ['"', "{", "}", "[", "\\", "<", ">", ";", "\n", "<tool_call>", "</tool_call>", "<think>", "</think>",
              "<parameter=code>", "</parameter>", "</function>", "<|message|>", "<|call|>", "<|channel|>", " to=functions.f"]
    parser = get_parser(fmt, tools=[CODE_INTERPRETER_TOOL])
    for _ in range(400):
        text = PREFIX_TURNS[fmt]
        for _ in range(rng.randint(1, 4)):
            i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
            text = text[:i] + rng.choice(pieces) + text[j if rng.random() < 0.3 else i:]
        turn = parser.parse(text)
        assert not any("internal parser error" in e for e in turn.errors), (text, turn.errors)
        assert all(isinstance(c.arguments, dict) and c.name for c in turn.calls)


def test_registry_extends_and_rejects_unknown_names():
    assert {"hermes", "qwen3_coder", "llama3_json", "gpt-oss"} <= set(parser_names())

    @register_parser("test-upper")
    class Upper(ToolCallParser):
        def scan(self, text: str) -> Segment:
            return Segment(content=text.upper())

    assert get_parser("test-upper").parse("<think>r</think>hi<|im_end|>").content == "HI"
    with pytest.raises(ValueError, match="already registered"):
        register_parser("hermes")(Upper)
    with pytest.raises(ValueError, match=r"unknown tool-call parser format 'nope'; known: .*hermes"):
        get_parser("nope")
    with pytest.raises(ValueError, match="calls_in_reasoning must be 'ignore' or 'allow'"):
        get_parser("hermes", calls_in_reasoning="yes")


def test_a_parser_bug_becomes_an_observation():
    @register_parser("test-broken")
    class Broken(ToolCallParser):
        def scan(self, text: str) -> Segment:
            raise KeyError("bug")

    turn = get_parser("test-broken").parse("hello")
    assert turn.calls == [] and turn.content == "hello"
    assert turn.errors == ["error: could not parse tool call: internal parser error (KeyError)"]


# --- BUG-225: a turn that stopped inside a tool-call envelope ----------------------------------
def test_bug225_a_stop_inside_the_envelope_is_a_call_or_an_error_never_silence():
    """(a) complete JSON, no </tool_call>: one call, counted unclosed (vLLM hermes accepts a final
    unterminated block); (b) the stop token cut the arguments: no call, one parse error; (c) no
    </tool_call>: one call; (d) no </parameter>: the value ends at ``\\n</function>``."""
    hermes, coder = get_parser("hermes"), get_parser("qwen3_coder")
    a = hermes.parse('<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(1)"}}\n')
    assert (args(a), a.errors, a.metrics["unclosed_call"]) == ([{"code": "print(1)"}], [], 1)
    b = hermes.parse('<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "s = \'')
    assert b.calls == [] and len(b.errors) == 1 and b.errors[0].startswith("error: could not parse tool call")
    c = coder.parse("<tool_call>\n<function=code_interpreter>\n<parameter=code>\nprint(1)\n</parameter>\n</function>\n")
    assert (args(c), c.errors) == ([{"code": "print(1)"}], [])
    d = coder.parse("<tool_call>\n<function=code_interpreter>\n<parameter=code>\nprint(2)\n</function>\n</tool_call>")
    assert (args(d), d.errors, d.metrics["unclosed_call"]) == ([{"code": "print(2)"}], [], 1)
