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
"""

from __future__ import annotations

from typing import Any, Optional, Sequence


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

    def ids(self, messages: list[dict], add_generation_prompt: bool) -> list[int]:
        """``messages`` rendered and tokenized by the template (special tokens as single ids)."""
        out = self.tokenizer.apply_chat_template(messages, tools=self.tools, tokenize=True,
                                                 add_generation_prompt=add_generation_prompt, **self.kwargs)
        if not isinstance(out, list):  # transformers >= 5 returns a BatchEncoding
            out = out["input_ids"]
        return list(out)

    def prompt(self, messages: list[dict]) -> list[int]:
        """The prompt ids of a conversation, ending with the generation prompt."""
        return self.ids(messages, add_generation_prompt=True)

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
