"""``gpt-oss``: OpenAI's Harmony format (gpt-oss; vLLM's ``openai`` tool parser reads the same
messages through ``openai_harmony``). A turn is a run of messages::

    <|channel|>analysis<|message|>Need to run code.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.code_interpreter <|constrain|>json<|message|>{"code": "1"}<|call|>

A message addressed ``to=functions.NAME`` is a call to tool ``NAME``, wherever the recipient
sits (after the channel, or in the role header before ``<|channel|>``) and on any channel
(models also call from ``analysis``); its body is one JSON object, read by JSON boundaries.
The closing ``<|call|>`` may be missing: engines consume it as a stop token. ``analysis``
messages without a recipient are the reasoning; ``final`` and recipient-less ``commentary``
(preambles) are the content. The recipient is explicit, so ``calls_in_reasoning`` does not
apply. A message from another role (a tool reply the model made up) ends the turn.
"""

from __future__ import annotations

from judgebox.agent.parsers.base import (
    ParsedTurn,
    Segment,
    ToolCallParser,
    call_from_object,
    decode_json,
    register_parser,
    skip_space,
)

START, CHANNEL, MESSAGE, CONSTRAIN = "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"
STOPS = ("<|end|>", "<|call|>", "<|return|>")


def _header(header: str) -> tuple[str, str, str]:
    """``(role, channel, recipient)`` of a message header (the text before ``<|message|>``)."""
    before, _, after = header.replace(START, " ").replace(CONSTRAIN, " ").partition(CHANNEL)
    role, channel, recipient = "", "", ""
    for word in before.split():
        recipient, role = (word[3:], role) if word.startswith("to=") else (recipient, role or word)
    for word in after.split():  # the channel, then the content type (json, code)
        recipient, channel = (word[3:], channel) if word.startswith("to=") else (recipient, channel or word)
    return role, channel, recipient


def _body_end(text: str, pos: int) -> int:
    """Index where a plain-text body starting at ``pos`` ends (a stop token or the next header)."""
    ends = [i for i in (text.find(t, pos) for t in (*STOPS, START, CHANNEL)) if i >= 0]
    return min(ends, default=len(text))


@register_parser("gpt-oss")
class GptOssParser(ToolCallParser):
    end_markers = (*STOPS, "<|endoftext|>")
    hint = "<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{JSON object}<|call|>"

    def _parse(self, text: str) -> ParsedTurn:
        seg, reasoning, content = Segment(), [], []
        pos = 0
        while pos < len(text):
            m = text.find(MESSAGE, pos)
            if m < 0:
                content.append(text[pos:].strip())
                break
            role, channel, recipient = _header(text[pos:m])
            if role and role != "assistant":
                break
            pos = m + len(MESSAGE)
            if recipient:
                pos = self._call(text, pos, recipient, seg)
            else:
                end = _body_end(text, pos)
                (reasoning if channel == "analysis" else content).append(text[pos:end].strip())
                pos = end
            if text.startswith(STOPS, pos):
                pos += len(next(t for t in STOPS if text.startswith(t, pos)))
        return ParsedTurn(content="\n".join(filter(None, content)), reasoning="\n".join(filter(None, reasoning)) or None,
                          calls=seg.calls, errors=seg.errors, metrics=seg.metrics)

    def _call(self, text: str, pos: int, recipient: str, seg: Segment) -> int:
        """Read the JSON body of a message to ``recipient`` at ``pos``; return where the message ends."""
        name = recipient.removeprefix("functions.")
        start = skip_space(text, pos)
        value = decode_json(text, start)
        if isinstance(value, str):
            seg.fail(f"arguments of {name!r}: {value}", self.hint)
            return _body_end(text, start)
        obj, end = value
        if not isinstance(obj, dict):
            seg.fail(f"arguments of {name!r} must be a JSON object, got {type(obj).__name__}", self.hint)
        else:
            call_from_object({"name": name, "arguments": obj}, text[start:end], seg, self.hint)
        after = skip_space(text, end)
        stop = _body_end(text, after)
        if stop > after:
            seg.metrics["trailing_text_in_call"] += 1
        return stop
