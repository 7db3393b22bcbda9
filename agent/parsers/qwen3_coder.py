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

Control tokens and block boundaries (:mod:`judgebox.agent.parsers.base` rules):

- a function name outside ``[A-Za-z0-9_.-]`` (``<function=run<|im_end|>>``, ``<function=run x>``)
  and a parameter name holding ``<`` or ``>`` (so any control token) are errors naming them; the
  ``>`` of a ``<|...|>`` token does not end a header, so the error shows the whole name;
- a value never crosses the start of the next block: a ``<tool_call>`` followed by
  ``<function=``. A ``</parameter>`` (or, for a value missing it, ``\n</function>``) is only
  looked for before it, so a call that lost its end tags is an error ("not closed") and the
  next block is still read. Any other text that looks like a control token (``<|im_end|>``, a
  ``</parameter>`` not followed by a tag) is the value's text;
- after an error the scan resumes at the block's ``</function>``/``</tool_call>`` or the next
  block, whichever comes first, never at the end of the turn.
"""

from __future__ import annotations

from judgebox.agent.parsers.base import (
    ParsedToolCall,
    Segment,
    ToolCallParser,
    name_error,
    register_parser,
    skip_space,
)
from judgebox.agent.parsers.values import OMIT, convert_value

CALL, END_CALL = "<tool_call>", "</tool_call>"
FUNC, END_FUNC = "<function=", "</function>"
PARAM, END_PARAM = "<parameter=", "</parameter>"
_AFTER_PARAM = (PARAM, END_FUNC, END_CALL)


def _next_block(text: str, pos: int) -> int:
    """Index of the next ``<tool_call>`` that opens a call (``<function=`` follows it), or len(text)."""
    while (i := text.find(CALL, pos)) >= 0:
        if text.startswith(FUNC, skip_space(text, i + len(CALL))):
            return i
        pos = i + 1
    return len(text)


def _param_end(text: str, pos: int, limit: int) -> int:
    """Index of the ``</parameter>`` closing the value that starts at ``pos`` (before ``limit``), or -1."""
    while (end := text.find(END_PARAM, pos, limit)) >= 0:
        after = skip_space(text, end + len(END_PARAM))
        if after in (len(text), limit) or text.startswith(_AFTER_PARAM, after):
            return end
        pos = end + 1
    return -1


def _resync(text: str, pos: int, limit: int) -> int:
    """Where the scan resumes after an error at ``pos``: past this block's ``</function>``, at its
    ``</tool_call>``, or at the next block (``limit``), whichever comes first."""
    func, call = text.find(END_FUNC, pos, limit), text.find(END_CALL, pos, limit)
    if func >= 0 and (call < 0 or func < call):
        return func + len(END_FUNC)
    return call if call >= 0 else limit


def _header(text: str, pos: int, tag: str) -> tuple[str, int] | None:
    """``(name, index after '>')`` of the ``<tag=name>`` at ``pos``; None if no ``>`` ends it on its line.
    The ``>`` of a ``<|...|>`` token is not the end, so a name holding one is read whole."""
    start, close = pos + len(tag), pos + len(tag)
    eol = text.find("\n", start)
    eol = len(text) if eol < 0 else eol
    while (close := text.find(">", close, eol)) >= 0 and text[close - 1] == "|":
        close += 1
    name = text[start:close].strip() if close >= 0 else ""
    return (name, close + 1) if name else None


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
                elif pos < len(text) and pos < (nxt := _next_block(text, pos)):  # stray text: skip it
                    end = text.find(END_CALL, pos, nxt)
                    seg.metrics["trailing_text_in_call"] += 1
                    pos = nxt if end < 0 else end + len(END_CALL)
        seg.content += text[pos:]
        return seg

    def _call(self, text: str, pos: int, start: int, seg: Segment) -> int:
        """Read one ``<function=...>...</function>`` at ``pos``; return the index after it."""
        limit = _next_block(text, pos + 1)
        header = _header(text, pos, FUNC) if text.startswith(FUNC, pos) else None
        if header is None or (why := name_error(header[0])):
            seg.fail(why if header else f"expected {FUNC}NAME> after {CALL}", self.hint)
            return _resync(text, pos, limit)
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
            if param and ("<" in param[0] or ">" in param[0]):
                seg.fail(f"invalid parameter name {param[0]!r} of {name!r}", self.hint)
                return _resync(text, pos, limit)
            end = _param_end(text, param[1], limit) if param else -1
            if end < 0 and param and (func_end := text.find("\n" + END_FUNC, param[1], limit)) >= 0:
                value = convert_value(_strip_newlines(text[param[1] : func_end + 1]), schema.get(param[0]))
                if value is not OMIT:
                    arguments[param[0]] = value
                seg.metrics["unclosed_call"] += 1
                pos = func_end + 1
                continue
            if end < 0:
                if param:
                    what = f"parameter {param[0]!r} of {name!r} is not closed (no {END_PARAM})"
                elif pos >= limit:
                    what = f"function {name!r} is not closed (no {END_FUNC})"
                else:
                    what = f"unexpected text in function {name!r}: {text[pos:pos + 40]!r}"
                seg.fail(what, self.hint)
                return _resync(text, pos, limit)
            value = convert_value(_strip_newlines(text[param[1] : end]), schema.get(param[0]))
            if value is not OMIT:
                arguments[param[0]] = value
            pos = end + len(END_PARAM)
