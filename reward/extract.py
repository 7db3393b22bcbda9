"""Code extraction from model completions (fenced Markdown blocks, or bare code).

Rules (BUG-023/024/025):

- only the response is searched: text before the last chat-template assistant header
  (``<|im_start|>assistant``, ``<|start_header_id|>assistant<|end_header_id|>``, ``[/INST]``,
  ``<|assistant|>``) is dropped, then chat special tokens (``<|...|>``, ``</s>``) are removed;
- ``\\r\\n`` and lone ``\\r`` become ``\\n``;
- reasoning is never the answer (BUG-212): everything up to the first ``</think>`` (also
  ``</thinking>``) is reasoning, whether or not its ``<think>`` is in the completion (a template
  may put it in the prompt), and so is everything after a ``<think>`` that is never closed (the
  model hit ``max_tokens`` while thinking). Code is looked for in the answer region only, the
  bare-code fallback included: an answer with no code gives ``""`` (a Python answer region that is
  prose, not a program, counts as no code), so draft code is never run. ``code_in_reasoning="use"``
  restores the lenient rule: the answer region when it has a fence or the reasoning has none, else
  the whole text;
- fences are three or more backticks. An opening fence stands on its own line (optional tag) or
  ends a line of prose with a tag (``Here```python``); inside a block, a line starting with a fence
  closes it whatever follows (``` ```</think>``, ``` ``` and done``) unless the rest is one bare
  tag, and a line ending with a fence (``print(1)```) closes it after its code. The tag is matched
  case-insensitively, trailing whitespace ignored, against the language's tags (``python``:
  python, py, python3, py3, ...; each sandbox language has its own set). Blocks with a matching tag
  win; then untagged blocks; then any;
- ``policy="last"`` (default; LiveCodeBench, open-r1, PRIME, rllm) takes the last block,
  ``policy="first"`` the first (SandboxFusion ``default_extract_helper`` parity);
- an unterminated final block (the model hit ``max_tokens``) counts, up to the end;
- a lone closing fence with code before it (no opening fence) yields the text before it;
- no fence at all: the whole (cleaned) text is the code.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

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
_THINK_END = re.compile(r"</think(?:ing)?>", re.I)
_THINK_START = re.compile(r"<think(?:ing)?>", re.I)
#: a fence on its own line, optional tag: opens a block (closes one when untagged)
_FENCE = re.compile(r"^[ \t]*(`{3,})[ \t]*([^\s`]*)[ \t]*$")
#: prose then a fence with a tag, ``Here```python``: opens a block
_OPEN_AFTER_TEXT = re.compile(r"^[^`]*\S[ \t]*`{3,}([\w+#.\-]+)[ \t]*$")
#: a line starting with a fence not followed by one bare tag (``` ``` and done``): closes a block
_CLOSE_BEFORE_TEXT = re.compile(r"^[ \t]*`{3,}(?![\w+#.\-]+[ \t]*$)")
#: code then a fence, ``print(1)```: closes a block after the code (group 1)
_CLOSE_AFTER_CODE = re.compile(r"^(.*\S)[ \t]*`{3,}[ \t]*$")


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

    Fence forms are those of the module docstring. An unterminated last block runs to the end of the text.
    """
    blocks: list[tuple[str, str]] = []
    tag, body, inside = "", [], False
    for line in text.split("\n"):
        own = _FENCE.match(line)
        if not inside:
            opener = own.group(2) if own else (m.group(1) if (m := _OPEN_AFTER_TEXT.match(line)) else None)
            if opener is not None:
                tag, body, inside = opener.lower(), [], True
            continue
        if (own and not own.group(2)) or _CLOSE_BEFORE_TEXT.match(line):
            blocks.append((tag, "\n".join(body)))
            inside = False
        elif (code := _CLOSE_AFTER_CODE.match(line)) and not own:
            blocks.append((tag, "\n".join([*body, code.group(1)])))
            inside = False
        else:
            body.append(line)
    if inside:
        blocks.append((tag, "\n".join(body)))
    return blocks


def split_reasoning(text: str) -> tuple[Optional[str], str]:
    """``(reasoning, answer)`` of ``text`` (see the module docstring); ``(None, text)`` without reasoning."""
    end = _THINK_END.search(text)
    if end is not None:
        return text[:end.start()], text[end.end():]
    start = _THINK_START.search(text)
    if start is not None:  # never closed: all of it reasoning
        return text[start.end():], text[:start.start()]
    return None, text


def _code_region(text: str, reasoning: Optional[str], answer: str, code_in_reasoning: str) -> str:
    """The part of ``text`` (split as ``reasoning``, ``answer``) code is taken from: the answer region
    (``"ignore"``), or, with ``"use"``, the answer region when it has a fence or the reasoning has
    none, else the whole text."""
    if reasoning is None or code_in_reasoning == "ignore":
        return answer
    return answer if _has_fence(answer) or not _has_fence(reasoning) else text


def _has_fence(text: str) -> bool:
    return bool(fenced_blocks(text))


def extract_code(completion: str, language: str = "python", policy: Literal["last", "first"] = "last", *,
                 sanitize: bool = False, entry_point: Optional[str] = None,
                 code_in_reasoning: Literal["ignore", "use"] = "ignore", defines: Optional[str] = None) -> str:
    """The program in a model completion (see the module docstring for the rules).

    Args:
        completion: the model output (may include the prompt, chat tokens, prose and fences).
        language: the sandbox language the code should be in (selects fence tags).
        policy: ``"last"`` or ``"first"`` matching block.
        sanitize: then keep only imports and the definitions ``entry_point`` needs (all definitions
            when ``entry_point`` is ``None``), dropping top-level statements: evalplus's sanitizer
            (:mod:`judgebox.reward.sanitize`); Python only.
        entry_point: the function the tests call (with ``sanitize``).
        code_in_reasoning: ``"ignore"`` (default: code is taken from the answer after the reasoning
            only) or ``"use"`` (code fenced only in the reasoning counts); see the module docstring.
        defines: a Python function name: of the matching blocks, those that define it (``def NAME(``)
            are chosen from first, so an example-usage block after the solution is not taken for it.

    Returns:
        the code, with a trailing newline when not empty.

    Raises:
        ValueError: ``policy`` is neither ``"last"`` nor ``"first"``, or ``code_in_reasoning`` neither
            ``"ignore"`` nor ``"use"``; ``sanitize`` for a language other than Python.
        ImportError: ``sanitize`` without evalplus installed.
    """
    if policy not in ("last", "first"):
        raise ValueError(f"policy: {policy!r} is not 'last' or 'first'")
    if code_in_reasoning not in ("ignore", "use"):
        raise ValueError(f"code_in_reasoning: {code_in_reasoning!r} is not 'ignore' or 'use'")
    if sanitize:
        if _tags(language) != _tags("python"):
            raise ValueError(f"sanitize: applies to Python, not {language!r}")
        from .sanitize import sanitize as _sanitize

        code = extract_code(completion, language, policy, code_in_reasoning=code_in_reasoning)
        return _tidy(_sanitize(code, entry_point)) if code else code
    cleaned = clean_completion(completion)
    reasoning, answer = split_reasoning(cleaned)
    text = _code_region(cleaned, reasoning, answer, code_in_reasoning)
    lone = _lone_closing_fence(text)
    if lone is not None:
        return _tidy(lone)
    blocks = fenced_blocks(text)
    if not blocks:
        if reasoning is not None and _tags(language) == _tags("python") and not _is_python(text):
            return ""  # an answer region of prose after the reasoning: no code
        return _tidy(text)
    tags = _tags(language)
    if defines:
        defining = re.compile(rf"(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(defines)}[ \t]*\(")
        blocks = [b for b in blocks if defining.search(b[1])] or blocks
    for choose in (lambda t: t in tags, lambda t: t == "", lambda t: True):
        chosen = [body for tag, body in blocks if choose(tag)]
        if chosen:
            return _tidy(chosen[-1] if policy == "last" else chosen[0])
    return ""


def _lone_closing_fence(text: str) -> "str | None":
    """The code before the only fence of ``text`` when that fence is an untagged closing one."""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line and (
        _FENCE.match(line) or _OPEN_AFTER_TEXT.match(line) or _CLOSE_BEFORE_TEXT.match(line)
        or _CLOSE_AFTER_CODE.match(line))]
    if len(fences) != 1:
        return None
    i = fences[0]
    own = _FENCE.match(lines[i])
    if (own and own.group(2)) or _OPEN_AFTER_TEXT.match(lines[i]):
        return None  # an opening fence
    code = _CLOSE_AFTER_CODE.match(lines[i])
    before = "\n".join(lines[:i] + ([code.group(1)] if code and not own else []))
    return before if before.strip() else None


def _is_python(text: str) -> bool:
    """Whether ``text`` compiles as a Python program, or as the indented body of a function (a
    completion continuing a prompt); compiled, never run."""
    for source in (text, "def _judgebox_body():\n" + text):
        try:
            compile(source, "<answer>", "exec")
            return True
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    return False


def _tidy(code: str) -> str:
    code = code.strip("\n")
    return code + "\n" if code.strip() else ""
