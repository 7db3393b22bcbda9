"""``qwen3_coder``: Qwen3-Coder's XML calls (the format of vLLM's ``qwen3_coder`` tool parser)::

    <tool_call>
    <function=code_interpreter>
    <parameter=code>
    print(1)
    </parameter>
    </function>
    </tool_call>

Values are raw text (one leading and one trailing newline removed) typed by the tool's JSON
Schema when the parser was given ``tools`` (:mod:`judgebox.agent.parsers.values`); without a schema
they stay strings. The format has no escaping, so a value ends at the first ``</parameter>``
that is followed by what may follow a parameter (another ``<parameter=``, ``</function>``,
``</tool_call>`` or the end of the turn): code that prints ``"</parameter>"`` keeps its text. A value
whose ``</parameter>`` never came (models drop it in long contexts) ends where ``\n</function>``
begins, counted as ``unclosed_call`` (BUG-225).
A ``<function=`` without the ``<tool_call>`` wrapper is also read. A call whose function is
not closed (a turn cut mid-call) is an error, never a call.
"""

from __future__ import annotations

from judgebox.agent.parsers.base import ParsedToolCall, Segment, ToolCallParser, register_parser, skip_space
from judgebox.agent.parsers.values import OMIT, convert_value

CALL, END_CALL = "<tool_call>", "</tool_call>"
FUNC, END_FUNC = "<function=", "</function>"
PARAM, END_PARAM = "<parameter=", "</parameter>"
_AFTER_PARAM = (PARAM, END_FUNC, END_CALL)


def _param_end(text: str, pos: int) -> int:
    """Index of the ``</parameter>`` closing the value that starts at ``pos``, or -1."""
    while (end := text.find(END_PARAM, pos)) >= 0:
        after = skip_space(text, end + len(END_PARAM))
        if after == len(text) or text.startswith(_AFTER_PARAM, after):
            return end
        pos = end + 1
    return -1


def _header(text: str, pos: int, tag: str) -> tuple[str, int] | None:
    """``(name, index after '>')`` of the ``<tag=name>`` at ``pos``; None if the name is not one line."""
    close = text.find(">", pos + len(tag))
    name = text[pos + len(tag) : close].strip() if close >= 0 else ""
    return (name, close + 1) if name and "\n" not in name and "<" not in name else None


def _strip_newlines(value: str) -> str:
    value = value[1:] if value.startswith("\n") else value
    return value[:-1] if value.endswith("\n") else value


@register_parser("qwen3_coder")
class Qwen3CoderParser(ToolCallParser):
    hint = "<tool_call>\\n<function=NAME>\\n<parameter=ARG>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>"

    def scan(self, text: str) -> Segment:
        seg = Segment()
        pos = 0
        while True:
            starts = [i for i in (text.find(CALL, pos), text.find(FUNC, pos)) if i >= 0]
            if not starts:
                break
            start = min(starts)
            seg.content += text[pos:start]
            wrapped = text.startswith(CALL, start)
            pos = self._call(text, skip_space(text, start + len(CALL)) if wrapped else start, start, seg)
            if wrapped:
                pos = skip_space(text, pos)
                if text.startswith(END_CALL, pos):
                    pos += len(END_CALL)
                elif pos < len(text):  # stray text before the end tag: skip it
                    end = text.find(END_CALL, pos)
                    seg.metrics["trailing_text_in_call"] += 1
                    pos = len(text) if end < 0 else end + len(END_CALL)
        seg.content += text[pos:]
        return seg

    def _call(self, text: str, pos: int, start: int, seg: Segment) -> int:
        """Read one ``<function=...>...</function>`` at ``pos``; return the index after it."""
        header = _header(text, pos, FUNC) if text.startswith(FUNC, pos) else None
        if header is None:
            seg.fail(f"expected {FUNC}NAME> after {CALL}", self.hint)
            end = text.find(END_CALL, pos)
            return len(text) if end < 0 else end
        name, pos = header
        schema = self.parameters.get(name, {}).get("properties")
        schema = schema if isinstance(schema, dict) else {}
        arguments: dict = {}
        while True:
            pos = skip_space(text, pos)
            if text.startswith(END_FUNC, pos) or text.startswith(END_CALL, pos):
                pos += len(END_FUNC) if text.startswith(END_FUNC, pos) else 0
                seg.calls.append(ParsedToolCall(name=name, arguments=arguments, raw=text[start:pos]))
                seg.spans.append((start, pos, False))
                return pos
            param = _header(text, pos, PARAM) if text.startswith(PARAM, pos) else None
            end = _param_end(text, param[1]) if param else -1
            if end < 0 and param and (func_end := text.find("\n" + END_FUNC, param[1])) >= 0:
                value = convert_value(_strip_newlines(text[param[1] : func_end + 1]), schema.get(param[0]))
                if value is not OMIT:
                    arguments[param[0]] = value
                seg.metrics["unclosed_call"] += 1
                pos = func_end + 1
                continue
            if end < 0:
                if param:
                    what = f"parameter {param[0]!r} of {name!r} is not closed (no {END_PARAM})"
                elif pos >= len(text):
                    what = f"function {name!r} is not closed (no {END_FUNC})"
                else:
                    what = f"unexpected text in function {name!r}: {text[pos:pos + 40]!r}"
                seg.fail(what, self.hint)
                return len(text)
            value = convert_value(_strip_newlines(text[param[1] : end]), schema.get(param[0]))
            if value is not OMIT:
                arguments[param[0]] = value
            pos = end + len(END_PARAM)
