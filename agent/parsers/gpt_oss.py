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

Control tokens (:mod:`judgebox.agent.parsers.base` rules): a recipient whose tool name holds a
control token or a character outside ``[A-Za-z0-9_.-]`` (``to=functions.run<|call|>x``) is an
error naming it, never a call; its body is skipped. A control token inside a JSON string of the
body is data. Stop tokens (``<|end|>``, ``<|call|>``, ``<|return|>``) between messages are
skipped, never read as a role; a ``<|start|>`` before the next ``<|message|>`` begins a new
message, so a header that never got its ``<|message|>`` (a call cut at ``<|constrain|>json``) is
an error when it names a recipient and never merges into the next message's header. A body that
is not JSON ends at the next stop token or header, so the next message is still read.
"""

from __future__ import annotations

from judgebox.agent.parsers.base import (
    ParsedTurn,
    Segment,
    ToolCallParser,
    call_from_object,
    decode_json,
    name_error,
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


def _skip_stops(text: str, pos: int) -> int:
    """The index after the whitespace and stop tokens at ``pos`` (what ends one message before the next)."""
    while (pos := skip_space(text, pos)) < len(text) and text.startswith(STOPS, pos):
        pos += len(next(t for t in STOPS if text.startswith(t, pos)))
    return pos


@register_parser("gpt-oss")
class GptOssParser(ToolCallParser):
    end_markers = (*STOPS, "<|endoftext|>")
    hint = "<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{JSON object}<|call|>"

    def _parse(self, text: str) -> ParsedTurn:
        seg, reasoning, content = Segment(), [], []
        pos = 0
        while (pos := _skip_stops(text, pos)) < len(text):
            m = text.find(MESSAGE, pos)
            heads = [pos]  # each <|start|> before the <|message|> opens a message of its own
            while (i := text.find(START, heads[-1] + 1, len(text) if m < 0 else m)) >= 0:
                heads.append(i)
            ends = heads[1:] + [len(text) if m < 0 else m]
            bodiless = list(zip(heads, ends))[: None if m < 0 else -1]
            if not self._bodiless(text, bodiless, seg, content) or m < 0:
                break
            role, channel, recipient = _header(text[heads[-1]:m])
            if role and role != "assistant":
                break
            pos = m + len(MESSAGE)
            if recipient:
                pos = self._call(text, pos, recipient, seg)
            else:
                end = _body_end(text, pos)
                (reasoning if channel == "analysis" else content).append(text[pos:end].strip())
                pos = end
        return ParsedTurn(content="\n".join(filter(None, content)), reasoning="\n".join(filter(None, reasoning)) or None,
                          calls=seg.calls, errors=seg.errors, metrics=seg.metrics)

    def _bodiless(self, text: str, spans: list[tuple[int, int]], seg: Segment, content: list[str]) -> bool:
        """Headers with no ``<|message|>``: one naming a recipient is an error; text that is no
        header is content. False when one is another role's (the turn ends there)."""
        for start, end in spans:
            piece = text[start:end]
            if not piece.lstrip().startswith((START, CHANNEL)):
                content.append(piece.strip())
                continue
            cut = min((i for i in (piece.find(t) for t in STOPS) if i >= 0), default=len(piece))
            role, _, recipient = _header(piece[:cut])  # what follows a stop token is no header
            if role and role != "assistant":
                return False
            if recipient:
                seg.fail(f"the message to {recipient!r} has no {MESSAGE} body", self.hint)
        return True

    def _call(self, text: str, pos: int, recipient: str, seg: Segment) -> int:
        """Read the JSON body of a message to ``recipient`` at ``pos``; return where the message ends."""
        name = recipient.removeprefix("functions.")
        start = skip_space(text, pos)
        value = decode_json(text, start)
        if why := (name_error(name) if name else None):  # no name: call_from_object says so
            seg.fail(f"recipient {recipient!r}: {why}", self.hint)
        elif isinstance(value, str):
            seg.fail(f"arguments of {name!r}: {value}", self.hint)
        elif not isinstance(value[0], dict):
            seg.fail(f"arguments of {name!r} must be a JSON object, got {type(value[0]).__name__}", self.hint)
        else:
            call_from_object({"name": name, "arguments": value[0]}, text[start:value[1]], seg, self.hint)
        if isinstance(value, str):
            return _body_end(text, start)
        end = value[1]
        after = skip_space(text, end)
        stop = _body_end(text, after)
        if stop > after:
            seg.metrics["trailing_text_in_call"] += 1
        return stop
