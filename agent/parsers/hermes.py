"""``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks (Hermes 2 Pro,
Qwen2.5, Qwen3; the format of vLLM's ``hermes`` tool parser and of Qwen's chat templates).

A block is read by JSON boundaries (``raw_decode``), not by a regex up to the first end tag:
``</tool_call>`` inside a JSON string stays in the string, several JSON values in one block are
several calls, text after the values is counted (``trailing_text_in_call``) and skipped, and a
complete object whose end tag is missing still counts (``unclosed_call``).

Control tokens (:mod:`judgebox.agent.parsers.base` rules): a name outside ``[A-Za-z0-9_.-]``
(``"run<|im_end|>"``) or an argument name holding a control token is an error; a control token
inside a JSON string value is data and kept. A block whose JSON is malformed (or that is not
JSON: another format) is skipped to its end tag, or to the next ``<tool_call>`` opening a JSON
value if that comes first, so a block that lost its end tag never hides the block after it.
"""

from __future__ import annotations

import re

from judgebox.agent.parsers.base import (
    Segment,
    ToolCallParser,
    call_from_object,
    decode_json,
    register_parser,
    skip_space,
)


def _skip_to_end(text: str, pos: int, open_tag: str, close_tag: str) -> int:
    """Where a block that holds no (more) JSON at ``pos`` ends: its ``close_tag``, or the next
    ``open_tag`` followed by a JSON value when that comes first (the end tag is missing), or the end."""
    end = text.find(close_tag, pos)
    nxt = re.compile(re.escape(open_tag) + r"\s*[{\[]").search(text, pos)
    if nxt and (end < 0 or nxt.start() < end):
        return nxt.start()
    return len(text) if end < 0 else end


def scan_tagged_json(text: str, open_tag: str, close_tag: str, hint: str) -> Segment:
    """Calls in ``open_tag`` JSON... ``close_tag`` blocks; the text outside the blocks is content."""
    seg = Segment()
    pos = 0
    while (start := text.find(open_tag, pos)) >= 0:
        seg.content += text[pos:start]
        pos = skip_space(text, start + len(open_tag))
        found, errors = 0, len(seg.errors)
        while pos < len(text) and not text.startswith(close_tag, pos):
            value = decode_json(text, pos) if text[pos] in "{[" else None
            if value is None or isinstance(value, str):  # not a JSON value: skip to the end tag
                if value is not None or not found:
                    seg.fail(value or f"no JSON object after {open_tag}", hint)
                else:
                    seg.metrics["trailing_text_in_call"] += 1
                pos = _skip_to_end(text, pos, open_tag, close_tag)
                break
            obj, end = value
            call_from_object(obj, text[pos:end], seg, hint)
            seg.spans.append((pos, end, True))
            found += 1
            pos = skip_space(text, end)
        closed = text.startswith(close_tag, pos)
        pos += len(close_tag) if closed else 0
        if not found and len(seg.errors) == errors:
            seg.fail(f"empty {open_tag} block", hint)
        elif found and not closed:
            seg.metrics["unclosed_call"] += 1
    seg.content += text[pos:]
    return seg


@register_parser("hermes")
class HermesParser(ToolCallParser):
    hint = '<tool_call>{"name": <tool name>, "arguments": {<JSON object>}}</tool_call>'

    def scan(self, text: str) -> Segment:
        return scan_tagged_json(text, "<tool_call>", "</tool_call>", self.hint)
