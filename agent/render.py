"""Token-level rendering with the model's own chat template: the prompt, and observation deltas.

The loop never decodes and re-encodes what the model generated (BUG-108). It renders text only
for what the model did not generate: the prompt (once) and, after each round, the new messages
(tool results, an interaction's reply). Those are rendered as the *template's own delta*:

1. ``base = render(context + [assistant])`` and ``full = render(context + [assistant] + new,
   add_generation_prompt=True)``, both tokenized by the template call itself;
2. the assistant turn ends at its ``k``-th end-of-turn id in ``base``; the same id is the
   ``k``-th in ``full``, and the observation is what ``full`` has after it. So one round's tool
   messages are grouped exactly as the template groups them (one ``<|im_start|>user`` for
   consecutive tool messages in Qwen templates, BUG-107), including the template's text between
   turns (``\\n`` after ``<|im_end|>``) and the next generation prompt;
3. if the generated turn did not end with the template's end-of-turn id (a secondary stop id such
   as ``<|endoftext|>``, or a cut turn), that id is inserted first, so the boundary exists (BUG-111).

The assistant's own earlier tokens are never taken from a re-render: a template that rewrites
earlier turns (Qwen3 drops ``<think>`` of turns before the last user message, BUG-110) cannot
change the trajectory. The part of ``full`` before the boundary must render the context exactly as
``base`` does, and the delta must tokenize to itself on its own; otherwise :class:`TemplateError`.

Text in a message can never make a control token (BUG-213): before rendering, each of the
tokenizer's added tokens written out in a message's content or tool-call arguments (``<|im_end|>``,
``<|im_start|>``, ``</tool_response>``, ``<think>``, ``<|eot_id|>``, ...) gets a zero-width space
(U+200B) after its first character, so it is tokenized as plain text: a tool output or a user reply
cannot close its turn and forge an assistant one. This also keeps the delta's boundary where the
template puts it when the policy's own call wrote such text in a string (its own tokens are never
taken from a re-render, so they are not changed).
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

#: What breaks a control string in a message's text (see the module docstring).
NEUTRALIZER = "\u200b"
#: Message and tool-call keys whose values are names, never neutralized.
_NAMES = frozenset({"role", "name", "type", "id", "tool_call_id"})


class TemplateError(RuntimeError):
    """The chat template cannot give a stable token delta for new messages (names the messages)."""


class Renderer:
    """Chat-template rendering of one model, with fixed ``tools`` and template arguments.

    Args:
        tokenizer: a ``transformers`` tokenizer with a chat template.
        tools: OpenAI tool dicts for ``apply_chat_template(tools=...)`` (``None``: no tools).
        end_of_turn_ids: the ids that end an assistant turn in the template's rendering (the model's
            stop ids; the first one found is the template's own).
        template_kwargs: extra ``apply_chat_template`` arguments (``enable_thinking``, ...).
    """

    def __init__(self, tokenizer: Any, tools: Optional[list[dict]], end_of_turn_ids: Sequence[int],
                 template_kwargs: Optional[dict] = None) -> None:
        self.tokenizer = tokenizer
        self.tools = tools or None
        self.end_ids = set(end_of_turn_ids)
        self.kwargs = dict(template_kwargs or {})
        controls = sorted((t for t in _added_tokens(tokenizer) if len(t) > 1), key=len, reverse=True)
        self._controls = re.compile("|".join(map(re.escape, controls))) if controls else None

    def neutralized(self, messages: list[dict]) -> list[dict]:
        """``messages`` with every control string in their content and tool-call arguments broken by
        :data:`NEUTRALIZER` (see the module docstring)."""
        if self._controls is None:
            return messages
        return [self._clean(m) for m in messages]

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            if not self._controls.search(value):
                return value
            return self._controls.sub(lambda c: c.group(0)[0] + NEUTRALIZER + c.group(0)[1:], value)
        if isinstance(value, dict):  # every text but the names the template keys on
            return {k: v if k in _NAMES else self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return value

    def ids(self, messages: list[dict], add_generation_prompt: bool) -> list[int]:
        """``messages`` rendered and tokenized by the template (special tokens as single ids)."""
        out = self.tokenizer.apply_chat_template(self.neutralized(messages), tools=self.tools, tokenize=True,
                                                 add_generation_prompt=add_generation_prompt, **self.kwargs)
        if not isinstance(out, list):  # transformers >= 5 returns a BatchEncoding
            out = out["input_ids"]
        return list(out)

    def prompt(self, messages: list[dict]) -> list[int]:
        """The prompt ids of a conversation, ending with the generation prompt."""
        return self.ids(messages, add_generation_prompt=True)

    def end_of_turn(self, context: list[dict], assistant: dict) -> Optional[int]:
        """The id the template ends ``assistant``'s turn with (after ``context``), or ``None``."""
        ends = [t for t in self.ids(context + [assistant], add_generation_prompt=False) if t in self.end_ids]
        return ends[-1] if ends else None

    def delta(self, context: list[dict], assistant: dict, new: list[dict], last_generated: Optional[int]) -> list[int]:
        """The ids to append after a generated assistant turn so that ``new`` messages follow it.

        Args:
            context: the messages before the assistant turn (rendered for the template's sake only).
            assistant: the assistant turn as a message (its calls in ``tool_calls``).
            new: the messages of one round (all tool results of the turn, or one user reply).
            last_generated: the last id the model generated in that turn (``None``: no tokens).

        Returns:
            the observation ids (mask 0), ending with the next generation prompt.

        Raises:
            TemplateError: the template renders no end-of-turn id for the assistant, or the context
                differently with the new messages, or a delta that does not tokenize to itself.
        """
        base = self.ids(context + [assistant], add_generation_prompt=False)
        full = self.ids(context + [assistant] + new, add_generation_prompt=True)
        ends = [i for i, t in enumerate(base) if t in self.end_ids]
        if not ends:
            raise TemplateError("the chat template renders the assistant turn without an end-of-turn id "
                                f"(looked for {sorted(self.end_ids)}); set stop_token_ids to the template's")
        k = len(ends)
        full_ends = [i for i, t in enumerate(full) if t in self.end_ids]
        context_len = max((i for i in ends[:-1]), default=-1) + 1  # the context's own turns
        if len(full_ends) < k or full[:context_len] != base[:context_len]:
            raise TemplateError(f"the chat template renders the context differently once "
                                f"{[m.get('role') for m in new]} messages follow; no stable delta")
        boundary = full_ends[k - 1]
        tail = full[boundary + 1:]
        text = self.tokenizer.decode(tail, skip_special_tokens=False)
        if self.tokenizer.encode(text, add_special_tokens=False) != tail:
            raise TemplateError(f"the template's delta for {[m.get('role') for m in new]} messages does not "
                                f"tokenize to itself: {text!r}")
        if last_generated == full[boundary]:
            return tail
        return [full[boundary]] + tail


def _added_tokens(tokenizer: Any) -> list[str]:
    """The strings the tokenizer turns into single added-token ids (special or not: Qwen's
    ``<think>`` and ``<tool_response>`` are added tokens that are not special)."""
    try:
        found = set(tokenizer.get_added_vocab())
    except (AttributeError, TypeError):
        found = set()
    found.update(getattr(tokenizer, "all_special_tokens", None) or ())
    return [t for t in found if isinstance(t, str) and t]
