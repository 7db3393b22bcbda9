"""Code extraction from model completions (fenced Markdown blocks, or bare code).

Rules (BUG-023/024/025):

- only the response is searched: text before the last chat-template assistant header
  (``<|im_start|>assistant``, ``<|start_header_id|>assistant<|end_header_id|>``, ``[/INST]``,
  ``<|assistant|>``) is dropped, then chat special tokens (``<|...|>``, ``</s>``) are removed;
- ``\\r\\n`` and lone ``\\r`` become ``\\n``;
- fence lines are three or more backticks; the tag is matched case-insensitively, trailing
  whitespace ignored, against the language's tags (``python``: python, py, python3, py3, ...; each
  sandbox language has its own set). Blocks with a matching tag win; then untagged blocks; then any;
- ``policy="last"`` (default; LiveCodeBench, open-r1, PRIME, rllm) takes the last block,
  ``policy="first"`` the first (SandboxFusion ``default_extract_helper`` parity);
- an unterminated final block (the model hit ``max_tokens``) counts, up to the end;
- a lone closing fence with code before it (no opening fence) yields the text before it;
- no fence at all: the whole (cleaned) text is the code.
"""

from __future__ import annotations

import re
from typing import Literal

#: sandbox language -> fence tags that mean it (lower case).
LANGUAGE_TAGS: dict[str, frozenset[str]] = {
    "python": frozenset({"python", "py", "python3", "py3", "python2", "pycon"}),
    "cpp": frozenset({"cpp", "c++", "cc", "cxx", "c", "hpp"}),
    "java": frozenset({"java"}),
    "go": frozenset({"go", "golang"}),
    "nodejs": frozenset({"javascript", "js", "node", "nodejs", "mjs"}),
    "typescript": frozenset({"typescript", "ts"}),
    "rust": frozenset({"rust", "rs"}),
    "bash": frozenset({"bash", "sh", "shell", "zsh"}),
}
LANGUAGE_TAGS["go_test"] = LANGUAGE_TAGS["go"]
LANGUAGE_TAGS["pytest"] = LANGUAGE_TAGS["python"]

_ASSISTANT = re.compile(r"<\|im_start\|>\s*assistant|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>"
                        r"|\[/INST\]|<\|assistant\|>", re.I)
_SPECIAL = re.compile(r"<\|[A-Za-z0-9_:.\- ]{1,40}\|>|</s>|<s>")
_FENCE = re.compile(r"^[ \t]*(`{3,})[ \t]*([^\s`]*)[ \t]*$")


def _tags(language: str) -> frozenset[str]:
    lang = language.lower()
    for name, tags in LANGUAGE_TAGS.items():
        if lang == name or lang in tags:
            return tags | {name}
    return frozenset({lang})


def clean_completion(completion: str) -> str:
    """The response part of ``completion`` without chat special tokens, with ``\\n`` line ends."""
    heads = list(_ASSISTANT.finditer(completion))
    text = completion[heads[-1].end():] if heads else completion
    return _SPECIAL.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``[(tag, body)]`` of the fenced blocks of ``text`` (tag lower-cased, ``""`` if none).

    An unterminated last block runs to the end of the text.
    """
    blocks: list[tuple[str, str]] = []
    tag, body, inside = "", [], False
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if inside and m and not m.group(2):
            blocks.append((tag, "\n".join(body)))
            inside = False
        elif not inside and m:
            tag, body, inside = m.group(2).lower(), [], True
        elif inside:
            body.append(line)
    if inside:
        blocks.append((tag, "\n".join(body)))
    return blocks


def extract_code(completion: str, language: str = "python", policy: Literal["last", "first"] = "last") -> str:
    """The program in a model completion (see the module docstring for the rules).

    Args:
        completion: the model output (may include the prompt, chat tokens, prose and fences).
        language: the sandbox language the code should be in (selects fence tags).
        policy: ``"last"`` or ``"first"`` matching block.

    Returns:
        the code, with a trailing newline when not empty.

    Raises:
        ValueError: ``policy`` is neither ``"last"`` nor ``"first"``.
    """
    if policy not in ("last", "first"):
        raise ValueError(f"policy: {policy!r} is not 'last' or 'first'")
    text = clean_completion(completion)
    fence_lines = [m for m in map(_FENCE.match, text.split("\n")) if m]
    if len(fence_lines) == 1 and not fence_lines[0].group(2):
        before = text[: text.find(fence_lines[0].group(0))]
        if before.strip():  # a lone closing fence after bare code
            return _tidy(before)
    blocks = fenced_blocks(text)
    if not blocks:
        return _tidy(text)
    tags = _tags(language)
    for choose in (lambda t: t in tags, lambda t: t == "", lambda t: True):
        chosen = [body for tag, body in blocks if choose(tag)]
        if chosen:
            return _tidy(chosen[-1] if policy == "last" else chosen[0])
    return ""


def _tidy(code: str) -> str:
    code = code.strip("\n")
    return code + "\n" if code.strip() else ""
