"""``llama3_json``: Llama 3.1+/3.2 JSON tool calls (the format of vLLM's ``llama3_json`` parser and
Meta's JSON tool-calling template): the turn *is* the call, ``{"name": ..., "parameters": {...}}``
(``arguments`` also accepted), optionally after ``<|python_tag|>``, several separated by ``;``.

A turn that starts with a JSON object without ``"name"`` is an answer written in JSON, not a
call. A turn that starts with ``{`` (or has ``<|python_tag|>``) but is not valid JSON is a
malformed call (an error observation). Prose before the JSON is content unless
``<|python_tag|>`` marks where the call starts; text after the calls is content.

Control tokens (:mod:`judgebox.agent.parsers.base` rules): a name outside ``[A-Za-z0-9_.-]`` or
an argument name holding a control token is an error; a control token inside a JSON string is
data, so a ``<|python_tag|>`` inside the JSON a turn starts with marks nothing. A call that is
not valid JSON (or not JSON: ``brave_search.call(...)``) is one error and the scan resumes at
the next ``;`` followed by a JSON call object, so it never hides the calls after it.
"""

from __future__ import annotations

from judgebox.agent.parsers.base import (
    Segment,
    ToolCallParser,
    call_from_object,
    decode_json,
    register_parser,
    skip_space,
)

PYTHON_TAG = "<|python_tag|>"


def _looks_like_call(obj: object) -> bool:
    items = obj if isinstance(obj, list) else [obj]
    return bool(items) and all(isinstance(i, dict) and "name" in i for i in items)


def _resync(text: str, pos: int) -> int:
    """Index of the next call after a malformed one at ``pos``: a ``;`` then a JSON call object; or -1."""
    while (pos := text.find(";", pos)) >= 0:
        pos = skip_space(text, pos + 1)
        value = decode_json(text, pos) if text.startswith(("{", "["), pos) else "no JSON"
        if not isinstance(value, str) and _looks_like_call(value[0]):
            return pos
    return -1


@register_parser("llama3_json")
class Llama3JsonParser(ToolCallParser):
    end_markers = ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>")
    hint = '{"name": <tool name>, "parameters": {<JSON object>}} (several separated by ";")'

    def scan(self, text: str) -> Segment:
        seg = Segment()
        head = skip_space(text, 0)
        tag = -1 if text.startswith(("{", "["), head) else text.find(PYTHON_TAG)  # in the JSON: data
        if tag >= 0:
            seg.content, pos = text[:tag], skip_space(text, tag + len(PYTHON_TAG))
        elif text.startswith(("{", "["), head):
            pos = head
        else:
            seg.content = text
            return seg
        first = True
        while pos < len(text):
            value = decode_json(text, pos)
            if isinstance(value, str):
                seg.fail(value, self.hint)
                first, pos = False, _resync(text, pos)
                if pos < 0:
                    return seg
                continue
            obj, end = value
            if first and tag < 0 and not _looks_like_call(obj):
                seg.content = text  # an answer that happens to be JSON
                return seg
            call_from_object(obj, text[pos:end], seg, self.hint)
            seg.spans.append((pos, end, True))
            first = False
            pos = skip_space(text, end)
            if text.startswith(";", pos):
                pos = skip_space(text, pos + 1)
            elif pos < len(text):
                seg.content += text[pos:]
                break
        if first:
            seg.fail(f"no call after {PYTHON_TAG}", self.hint)
        return seg
