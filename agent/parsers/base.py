"""What every tool-call parser shares: the parsed records, the registry, reasoning splitting.

A format module subclasses :class:`ToolCallParser`, declares what differs (its end-of-turn
markers, how one call looks) and registers itself with ``@register_parser("name")``, the way
DMOJ's executors register one language per module. :meth:`ToolCallParser.parse` is the one
public entry: it never raises; a malformed call becomes an observation text in
``ParsedTurn.errors`` and the loop continues.

Rules every format keeps (each format's module says how it applies them):

- a tool name (Harmony: the recipient) is ASCII letters, digits, ``_``, ``.`` and ``-``
  (:data:`TOOL_NAME`); any other name — one holding a control token (:data:`CONTROL_TOKEN`) such
  as ``run<|call|>x``, or a space, a quote — is not a call but an error naming it;
- an argument *name* holding a control token is an error, never a call; an argument *value* may
  hold text that looks like a control token only where the format bounds the value without
  ambiguity (a JSON string): ``"print('<|im_end|>')"`` is data;
- a malformed block (bad JSON, another format, a missing end tag, a bad name) is one error, and
  the scan resumes at the next block: it never hides the valid calls before or after it;
- ``calls`` keep the order of the text.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence, TypeVar

logger = logging.getLogger(__name__)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

#: Counters every :class:`ParsedTurn` carries (all present, 0 when nothing happened).
#: ``trailing_text_in_call``: text inside a call block that was not part of any call (e.g. "Done."
#: after the JSON object); the call itself is kept. ``calls_in_reasoning_ignored``: calls found in
#: the reasoning and not run (``calls_in_reasoning="ignore"``). ``duplicate_calls_merged``: calls in
#: the reasoning dropped because the same name and arguments were issued after it
#: (``calls_in_reasoning="allow"``). ``unclosed_call``: a complete call whose block end tag is
#: missing (kept: its JSON or XML structure is complete).
PARSER_METRICS = ("trailing_text_in_call", "calls_in_reasoning_ignored", "duplicate_calls_merged", "unclosed_call")

CallsInReasoning = Literal["ignore", "allow"]

#: What a tool name may be: OpenAI's function-name alphabet plus "." (namespaces, Harmony recipients).
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
#: The control tokens of the built-in formats: ``<|...|>`` specials (ChatML, Harmony, Llama 3),
#: ``<tool_call>``/``</tool_call>``, ``<think>``, ``<tool_response>`` and Qwen3-Coder's
#: ``<function=``/``</function>``/``<parameter=``/``</parameter>``.
CONTROL_TOKEN = re.compile(r"<\|[A-Za-z0-9_]+\|>|</?(?:tool_call|tool_response|think)>|</?(?:function|parameter)[=>]")


def name_error(name: str) -> str | None:
    """Why ``name`` cannot be a tool name (see :data:`TOOL_NAME`), or None when it can."""
    if TOOL_NAME.fullmatch(name):
        return None
    token = CONTROL_TOKEN.search(name)
    why = f"contains the control token {token.group()!r}" if token else "allowed: letters, digits, '_', '.', '-'"
    return f"invalid tool name {name!r} ({why})"


@dataclass
class ParsedToolCall:
    """One call the model issued: ``name`` (the tool), ``arguments`` (always a dict), ``raw`` (its source text)."""

    name: str
    arguments: dict[str, Any]
    raw: str


@dataclass
class ParsedTurn:
    """One assistant turn split into what the loop needs.

    - ``content``: the text outside calls and reasoning, end-of-turn markers removed, stripped
      (the assistant message's ``content`` in the transcript).
    - ``reasoning``: the reasoning text (``<think>`` block, Harmony ``analysis`` channel) or None.
    - ``calls``: the calls to run, in the order emitted.
    - ``errors``: one observation text per malformed call, each starting ``error: could not parse
      tool call``; the loop shows them to the model instead of dropping the call silently.
    - ``metrics``: the :data:`PARSER_METRICS` counters.
    """

    content: str = ""
    reasoning: str | None = None
    calls: list[ParsedToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARSER_METRICS, 0))


@dataclass
class Segment:
    """What a format's scanner found in one stretch of text (the reasoning, or the rest)."""

    content: str = ""
    calls: list[ParsedToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARSER_METRICS, 0))
    #: ``(start, end, json_bounded)`` of each call found, as indices into the scanned text
    spans: list[tuple[int, int, bool]] = field(default_factory=list)

    def fail(self, reason: str, hint: str = "") -> None:
        """Record a malformed call as the observation text the model will read."""
        self.errors.append(f"error: could not parse tool call: {reason}" + (f"; expected {hint}" if hint else ""))


_DECODER = json.JSONDecoder()


def decode_json(text: str, pos: int) -> tuple[Any, int] | str:
    """The JSON value starting at ``text[pos]`` and the index just past it, or the decode error text.

    Bounded by the JSON grammar (``json.JSONDecoder.raw_decode``), so a literal end tag inside
    a string never ends the value and text after it is left for the caller.
    """
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        return f"invalid JSON ({exc.msg} at char {exc.pos - pos})"
    except RecursionError:
        return "invalid JSON (nested too deeply)"


def skip_space(text: str, pos: int) -> int:
    """The index of the first non-whitespace character at or after ``pos``."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def call_from_object(obj: Any, raw: str, seg: Segment, hint: str) -> None:
    """Append the call a decoded ``{"name": ..., "arguments": {...}}`` object describes, or its error.

    ``parameters`` is accepted for ``arguments`` (Llama 3.1's spelling); arguments encoded as a
    JSON string are decoded; a missing ``arguments`` means no arguments. A list is a list of calls.
    A name outside :data:`TOOL_NAME` or an argument name holding a :data:`CONTROL_TOKEN` is an error.
    """
    if isinstance(obj, list):
        for item in obj:
            call_from_object(item, raw, seg, hint)
        return
    if not isinstance(obj, dict):
        seg.fail(f"a call must be a JSON object, got {type(obj).__name__}", hint)
        return
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        seg.fail('the call has no "name" string', hint)
        return
    name = name.strip()
    if why := name_error(name):
        seg.fail(why, hint)
        return
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        decoded = decode_json(args, skip_space(args, 0)) if args.strip() else ({}, 0)
        if isinstance(decoded, str) or skip_space(args, decoded[1]) != len(args):
            seg.fail(f'"arguments" of {name!r} is a string that is not one JSON object', hint)
            return
        args = decoded[0]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        seg.fail(f'"arguments" of {name!r} must be a JSON object, got {type(args).__name__}', hint)
        return
    if bad := next((key for key in args if CONTROL_TOKEN.search(key)), None):
        seg.fail(f"argument name {bad!r} of {name!r} contains a control token", hint)
        return
    seg.calls.append(ParsedToolCall(name=name, arguments=args, raw=raw))


def split_reasoning(text: str, spans: Sequence[tuple[int, int, bool]] = ()) -> tuple[str | None, str]:
    """``(reasoning, rest)``: everything before the first ``</think>`` is reasoning.

    This holds when the opening ``<think>`` was prefilled by the chat template and is not in the
    generated text. An unclosed ``<think>`` makes the rest of the turn reasoning (the model never
    finished thinking, so nothing in it is a real call). No tags: ``(None, text)``.

    ``spans`` are the ``(start, end, json_bounded)`` of the calls a scan of the whole turn found:
    a ``<think>`` after the start of a call is not a reasoning opener (reasoning comes first), and
    a ``</think>`` inside a call's JSON value is text in a JSON string (``<`` is not valid JSON
    elsewhere), e.g. code that prints the tag. XML values have no such boundary: their tags count.
    """
    first_call = min((start for start, _, _ in spans), default=len(text))
    opened = text.find(THINK_OPEN)
    opened = opened if 0 <= opened < first_call else -1
    close = text.find(THINK_CLOSE, max(opened, 0))
    while close >= 0 and any(exact and start < close < end for start, end, exact in spans):
        close = text.find(THINK_CLOSE, close + 1)
    if close >= 0:
        head, tail = text[:close], text[close + len(THINK_CLOSE):]
        if opened >= 0:
            return head[opened + len(THINK_OPEN):].strip(), head[:opened] + tail
        return head.strip(), tail
    if opened >= 0:
        return text[opened + len(THINK_OPEN):].strip(), text[:opened]
    return None, text


def tool_parameters(tools: Sequence[Any] | None) -> dict[str, dict]:
    """``{tool name: its JSON Schema "parameters"}`` from OpenAI tool dicts or pydantic tool schemas."""
    found: dict[str, dict] = {}
    for tool in tools or ():
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump()
        fn = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            found[fn["name"]] = dict(params) if isinstance(params, Mapping) else {}
    return found


class ToolCallParser:
    """Base of every format: splits reasoning off, scans for calls, never raises.

    Options (keyword arguments of :func:`get_parser`):

    - ``calls_in_reasoning``: ``"ignore"`` (default) — calls drafted in the reasoning are not
      run (counted in ``calls_in_reasoning_ignored``); ``"allow"`` — they are, except one that is
      issued again after the reasoning with the same name and arguments (merged, counted in
      ``duplicate_calls_merged``).
    - ``tools``: the tools' OpenAI schemas (dicts or ``OpenAIFunctionToolSchema``); formats whose
      values are untyped text (``qwen3_coder``) convert values by these JSON Schema types.

    A subclass sets ``end_markers`` (end-of-turn texts removed from the end of a turn), ``hint``
    (the call format, shown to the model in parse errors) and implements :meth:`scan`; the
    helpers :func:`decode_json`, :func:`call_from_object` and :func:`skip_space` do the JSON part.
    A format with its own reasoning markup (Harmony's channels) overrides ``_parse`` instead.
    """

    name: str = ""
    end_markers: tuple[str, ...] = ("<|im_end|>", "<|endoftext|>")
    hint: str = ""

    def __init__(self, *, calls_in_reasoning: CallsInReasoning = "ignore", tools: Sequence[Any] | None = None):
        if calls_in_reasoning not in ("ignore", "allow"):
            raise ValueError(f"calls_in_reasoning must be 'ignore' or 'allow', got {calls_in_reasoning!r}")
        self.calls_in_reasoning = calls_in_reasoning
        self.parameters = tool_parameters(tools)

    def scan(self, text: str) -> Segment:
        """Find the calls in ``text`` (no reasoning in it); the rest is content."""
        raise NotImplementedError

    def parse(self, text: str) -> ParsedTurn:
        """Parse one assistant turn's decoded text (special tokens kept). Never raises."""
        try:
            return self._parse(self.strip_end(text))
        except Exception as exc:  # a parser bug must not end a trajectory: report it to the model
            logger.exception("%s parser failed on a turn of %d characters", self.name, len(text or ""))
            turn = ParsedTurn(content=text if isinstance(text, str) else "")
            turn.errors.append(f"error: could not parse tool call: internal parser error ({type(exc).__name__})")
            return turn

    def strip_end(self, text: str) -> str:
        """``text`` without the end-of-turn markers (and whitespace) it ends with."""
        text = text.rstrip()
        while any(text.endswith(m) for m in self.end_markers):
            text = text[: -len(next(m for m in self.end_markers if text.endswith(m)))].rstrip()
        return text

    def _parse(self, text: str) -> ParsedTurn:
        spans = self.scan(text).spans if THINK_OPEN in text or THINK_CLOSE in text else ()
        reasoning, rest = split_reasoning(text, spans)
        main = self.scan(rest)
        turn = ParsedTurn(content=main.content.strip(), reasoning=reasoning, errors=main.errors, metrics=main.metrics)
        if reasoning is None:
            turn.calls = main.calls
            return turn
        drafted = self.scan(reasoning)
        if self.calls_in_reasoning == "ignore":
            turn.calls = main.calls
            turn.metrics["calls_in_reasoning_ignored"] = len(drafted.calls) + len(drafted.errors)
            return turn
        unmatched = [(c.name, c.arguments) for c in main.calls]
        for call in drafted.calls:
            if (call.name, call.arguments) in unmatched:
                unmatched.remove((call.name, call.arguments))
                turn.metrics["duplicate_calls_merged"] += 1
            else:
                turn.calls.append(call)
        turn.calls += main.calls
        turn.errors = drafted.errors + main.errors
        for key in ("trailing_text_in_call", "unclosed_call"):
            turn.metrics[key] += drafted.metrics[key]
        return turn


_REGISTRY: dict[str, type[ToolCallParser]] = {}
P = TypeVar("P", bound=type[ToolCallParser])


def register_parser(name: str) -> Callable[[P], P]:
    """Class decorator: make ``get_parser(name)`` build this parser. A taken name is a ValueError."""

    def register(cls: P) -> P:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"tool-call parser {name!r} is already registered ({_REGISTRY[name].__qualname__})")
        _REGISTRY[name] = cls
        cls.name = cls.name or name
        return cls

    return register


def get_parser(name: str, **options: Any) -> ToolCallParser:
    """A new parser for format ``name`` (``hermes``, ``qwen3_coder``, ``llama3_json``, ``gpt-oss``,
    or one registered with :func:`register_parser`); ``options`` go to its constructor
    (``calls_in_reasoning``, ``tools``). Unknown name or option value: ValueError naming it."""
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown tool-call parser format {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None
    return cls(**options)


def parser_names() -> list[str]:
    """The registered format names, sorted."""
    return sorted(_REGISTRY)
