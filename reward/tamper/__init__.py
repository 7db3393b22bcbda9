"""Tamper signals: a static scan of a solution for the known mechanisms by which a program that
shares its tests' process could forge its verdict, and which harnesses are ``forgeable`` at all.

Every judged sample carries both (:class:`~judgebox.reward.verdict.Judgement`'s ``tamper_signals``
and ``forgeable``; ``compute_score``'s extras ``tamper_signals``, the kinds joined by ``,``, and
``forgeable``). ``on_tamper="reject"`` (a :func:`~judgebox.reward.judge` keyword, a
:class:`~judgebox.reward.spec.TestSpec` field, ``judgebox eval --on-tamper reject``) turns a
signalled sample's verdict into ``wrong_answer``.

What is scanned: the candidate's code (not the prompt) of every test kind whose verdict depends on a
harness run in the sandbox (``call``, ``assert``, ``harness``). A ``stdio`` program is judged on the
host from its output alone, so nothing in it can forge the verdict: it is not scanned (no signals).
The scan is text matching (:mod:`judgebox.reward.tamper.rules`) on the code less its comments
(:mod:`judgebox.reward.tamper.lexer`), with a pass on parsed Python (:mod:`judgebox.reward.tamper.python`)
and checks of Go's and C++'s structure (:mod:`judgebox.reward.tamper.structure`): a signal says
"look here", it may match a string or a harmless use; the verdict itself never depends on it unless
the user asked for ``reject``. Names computed at run time (``"".join(chr(c) for c in ...)``, a
string read from a file) evade it, as they evade any static scan.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Optional

from pydantic import BaseModel

from . import python as _python
from .lexer import blank_comments, code_only
from .rules import KINDS, RULES
from .structure import cpp_namespace_iife, go_early_init

#: At most this many signals are kept per sample (the first ones, by line).
MAX_SIGNALS = 32
_EVIDENCE = 60
_PYTHON = ("python", "pytest")

Rule = tuple[str, "re.Pattern[str]", Optional[list[str]]]


class TamperSignal(BaseModel):
    """One match of the scan: its ``kind`` (:data:`KINDS`), its 1-based ``line`` in the candidate's
    code and ``evidence``, the matched text (at most 60 characters)."""

    kind: str
    line: int
    evidence: str


@functools.lru_cache(maxsize=None)
def _pattern(language: str) -> Optional[list[Rule]]:
    """``[(kind, pattern, needles)]`` of a language: each rule alternative (:func:`_literal_first`)
    with the literal strings one of which every match of it contains (:func:`_needles`; ``None``:
    none found, always run)."""
    rules = RULES.get(language)
    if not rules:
        return None
    return [(kind, re.compile(fast, re.M), _needles(fast))
            for kind, p in rules for alt in _alternatives(p) for fast in _literal_first(alt)]


_GUARD = re.compile(r"\\b|\(\?<!(\\w|\[(?:\\.|[^\]\\])*\])\)")
_CHOICES = re.compile(r"\(\?:(\w+(?:\|\w+)*)\)(?![?*+{])")
_WORD = re.compile(r"\w+")


def _literal_first(alt: str) -> list[str]:
    """``alt`` rewritten to begin with its literal text, where it begins with a guard before one
    (``\\bsys\\s*\\.`` -> ``sys(?<!\\wsys)\\s*\\.``, ``(?<![\\w.])(?:exit|quit)\\(`` -> one per word):
    the same matches, but the regular-expression engine then jumps from one occurrence of the text to
    the next instead of trying every position (ten to thirty times faster per rule)."""
    guard = _GUARD.match(alt)
    if not guard:
        return [alt]
    behind, rest = guard.group(1) or r"\w", alt[guard.end():]
    choices = _CHOICES.match(rest)
    if choices:
        words = [(w, rest[choices.end():]) for w in choices.group(1).split("|")]
    else:
        word = _WORD.match(rest)
        if not word:
            return [alt]
        words = [(word.group(), rest[word.end():])]
    out = []
    for word, tail in words:
        if tail[:1] in ("?", "*", "+", "{"):  # the quantifier takes the word's last character
            word, tail = word[:-1], word[-1] + tail
        if not word:
            return [alt]
        out.append(f"{word}(?<!{behind}{word}){tail}")
    return out


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (each alternative is gated by its own needles)."""
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*parts, pattern[start:]]


def _needles(pattern: str) -> Optional[list[str]]:
    """Literal strings, one of which is in every match of ``pattern``, from its parsed form (the
    standard library's regular-expression parser); ``None`` when none is found. A rule none of whose
    needles is in the code cannot match, so the scan skips it (most rules, for most code)."""
    try:
        try:
            from re import _constants as constants
            from re import _parser as parser
        except ImportError:  # Python 3.10
            import sre_constants as constants  # type: ignore[no-redef]
            import sre_parse as parser  # type: ignore[no-redef]
        zero_width = {constants.AT, constants.ASSERT, constants.ASSERT_NOT}

        def need(items: Any) -> Optional[list[str]]:
            choices, run = [], ""
            for op, arg in [*items, (None, None)]:
                if op is constants.LITERAL:
                    run += chr(arg)
                    continue
                if op in zero_width:
                    continue
                if len(run) >= 2:
                    choices.append([run])
                run, sub = "", None
                if op is constants.SUBPATTERN:
                    sub = need(arg[-1])
                elif op is constants.BRANCH:
                    subs = [need(a) for a in arg[1]]
                    sub = None if any(s is None for s in subs) else [n for s in subs for n in s]  # type: ignore[union-attr]
                elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT) and arg[0] >= 1:
                    sub = need(arg[2])
                if sub:
                    choices.append(sub)
            # the fewest needles of at least 3 characters, else the longest shortest needle
            return max(choices, key=lambda c: (min(map(len, c)) >= 3, -len(c), min(map(len, c)))) if choices else None

        return need(parser.parse(pattern, re.M))
    except Exception:  # another interpreter's parser: every rule runs
        return None


Hit = tuple[int, int, str, str]  # (line, column, kind, evidence)


def _matches(rules: list[Rule], text: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, kind, matched text)`` of every rule in ``text``, less a match inside a longer one
    of its kind (``os._exit`` holds ``_exit``)."""
    found = []
    for kind, pattern, needles in rules:
        if needles is not None:
            for needle in needles:
                if needle in text:
                    break
            else:
                continue
        for m in pattern.finditer(text):
            found.append((m.start(), -m.end(), kind, m.group()))
    found.sort()
    reach: dict[str, int] = {}
    out = []
    for start, neg_end, kind, matched in found:
        if -neg_end <= reach.get(kind, -1):
            continue
        reach[kind] = -neg_end
        out.append((start, -neg_end, kind, matched))
    return out


def _hits(text: str, rules: list[Rule]) -> list[Hit]:
    out = []
    for start, _, kind, matched in _matches(rules, text):
        line_start = text.rfind("\n", 0, start) + 1
        out.append((text.count("\n", 0, start) + 1, start - line_start, kind, matched))
    return out


def _at(text: str, found: list[tuple[int, str]], kind: str) -> list[Hit]:
    return [(text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start) - 1, kind, evidence)
            for start, evidence in found]


#: the ``early_init`` checks that read the code's structure (:mod:`judgebox.reward.tamper.structure`):
#: language -> (text without which there is nothing to check, ``check(code-only text, text)``)
_STRUCTURE: dict[str, tuple[str, Callable[[str, str], list[tuple[int, str]]]]] = {
    "cpp": ("}", lambda bare, text: cpp_namespace_iife(bare)),
    "go": ("var", go_early_init),
}
_STRUCTURE["go_test"] = _STRUCTURE["go"]


#: Java, Kotlin, Scala: an import is not scanned (a use is what signals, not an import), up to its
#: ``;``, unless it names what it imports under another name (``as``, ``=>``) or imports members
#: (``import static``: ``exit(0)`` then needs no ``System.``)
_IMPORT_LINES = ("java", "kotlin_script", "scala")
_IMPORT_LINE = re.compile(r"^[ \t]*import\s+(?!static\b)(?![^\n;]*(?:=>|\sas\s))[^\n;]*", re.M)


def _blank_line(match: re.Match[str]) -> str:
    return " " * len(match.group())


def scan(code: str, language: str) -> list[TamperSignal]:
    """The tamper signals of ``code`` written in the sandbox language ``language`` (``python``,
    ``cpp``, ``java``, ...: :data:`judgebox.reward.tamper.rules.RULES`' keys), in line order, one per
    distinct ``(kind, evidence)``, at most :data:`MAX_SIGNALS`; ``[]`` for a language without rules.
    Comments are not scanned (:mod:`judgebox.reward.tamper.lexer`: a comment opener inside a string
    literal is not one), nor bash's single-quoted text or Java/Kotlin/Scala import lines. Python code
    that parses also goes through :mod:`judgebox.reward.tamper.python` (strings built from constants,
    dynamic access, redefinitions); Go and C++ through :mod:`judgebox.reward.tamper.structure` (code
    that runs before ``main``). Costs under 1 ms for a 2 KB answer
    (``tests/bench/bench_tamper.py``): a rule none of whose literal needles is in the code is skipped."""
    rules = _pattern(language)
    if rules is None or not code:
        return []
    parsed = _python.parse(code) if language in _PYTHON else None
    text = blank_comments(code, language, _python.comments_trusted(parsed) if parsed else None)
    if language in _IMPORT_LINES:
        text = _IMPORT_LINE.sub(_blank_line, text)
    hits = _hits(text, rules)
    if parsed is not None:
        own, strings = _python.analyse(*parsed, code)
        hits += own
        for line, column, value in strings:
            hits += [(line, column, kind, matched) for _, _, kind, matched in _matches(rules, value)]
    structure = _STRUCTURE.get(language)
    if structure is not None and structure[0] in text:
        hits += _at(text, structure[1](code_only(text, language), text), "early_init")
    found: list[TamperSignal] = []
    seen: set[tuple[str, str]] = set()
    for line, _, kind, matched in sorted(hits):
        evidence = matched.strip()[:_EVIDENCE]
        if (kind, evidence) in seen:
            continue
        seen.add((kind, evidence))
        found.append(TamperSignal(kind=kind, line=line, evidence=evidence))
        if len(found) >= MAX_SIGNALS:
            break
    return found


def signal_kinds(signals: list[TamperSignal]) -> str:
    """The distinct kinds of ``signals``, sorted, joined by ``,`` (``""`` for none): the scalar that
    ``compute_score``'s extras carry (verl's ``reward_extra_info`` holds one scalar per key)."""
    return ",".join(sorted({s.kind for s in signals}))


__all__ = ["KINDS", "MAX_SIGNALS", "RULES", "TamperSignal", "scan", "signal_kinds"]
