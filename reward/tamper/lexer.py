"""Comment blanking that knows the language's literals (:data:`judgebox.reward.tamper.rules.LEXERS`).

A comment opener inside a string is not a comment: ``_h = " #"; sys._getframe()`` or
``const a = "/*"; process.exit(0); const b = "*/";`` keep their code. A comment is blanked (its
characters, but line ends, turned into spaces, so lines keep their numbers) only where the closer rule
of :class:`~judgebox.reward.tamper.rules.Lexer` says that no literal the small lexer may have misread
can end inside it.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Callable, Optional

from .rules import LEXERS, Lexer

_NOT_LINE_END = re.compile(r"[^\n\r]")
_LUA_LONG = re.compile(r"--\[(=*)\[")
_NEWLINE = re.compile(r"\n")


class _Compiled:
    __slots__ = ("tokens", "comments", "openers", "closers", "line_openers", "triggers", "evaluated")

    def __init__(self, lexer: Lexer) -> None:
        self.tokens = re.compile(lexer.tokens)
        # longest opener first: "--[" before "--", "/*" before "/"
        self.comments = sorted(lexer.comments, key=lambda c: -len(c[0]))
        self.openers = tuple(o for o, _ in self.comments)
        self.closers = [(text, re.compile(armed) if armed is not None else None, scope)
                        for text, armed, scope in lexer.closers]
        self.line_openers = tuple(o for o, c in lexer.comments if not c)
        self.triggers = lexer.triggers
        self.evaluated = re.compile(lexer.evaluated) if lexer.evaluated else None


@functools.lru_cache(maxsize=None)
def _compiled(language: str) -> Optional[_Compiled]:
    lexer = LEXERS.get(language)
    return _Compiled(lexer) if lexer else None


def _body(token: str, opener: str, closer: str) -> str:
    r"""The text of a comment that the closer rule reads: all of it but its first character (a literal
    that really holds an opener may end at the opener's second character: ``/a\//``, ``|a#|``) and its
    own closer."""
    if opener == "--[":  # a Lua long comment, --[==[ ... ]==], or a line comment that begins --[
        m = _LUA_LONG.match(token)
        if m and token.endswith("]" + m.group(1) + "]"):
            return token[m.end():len(token) - len(m.group(1)) - 2]
        return token[1:]
    return token[1:len(token) - len(closer)] if closer and token.endswith(closer) else token[1:]


class _Context:
    """One code's lexing state: the closer rule's look-ups, each computed once (a long line with many
    comments or quotes costs one pass, not one per token)."""

    def __init__(self, code: str, lexer: _Compiled) -> None:
        self.code, self.lexer = code, lexer
        self.newlines: Optional[list[int]] = None
        self.first: dict[tuple[object, int], float] = {}  # (what, from) -> where its first match ends

    def line_start(self, pos: int) -> int:
        """Where the logical line holding ``pos`` begins (backslash-newlines join lines)."""
        if self.newlines is None:
            self.newlines = [m.start() for m in _NEWLINE.finditer(self.code)]
        code, newlines = self.code, self.newlines
        i = bisect.bisect_left(newlines, pos)
        for _ in range(64):  # further back: the whole code before it (the wider scope keeps more)
            start = newlines[i - 1] + 1 if i else 0
            if not (start >= 2 and (code[start - 2] == "\\" or (code[start - 2] == "\r" and start >= 3 and
                                                                    code[start - 3] == "\\"))):
                return start
            i -= 1
        return 0

    def before(self, what: object, since: int, pos: int) -> bool:
        """Whether ``what`` (a string, or a compiled pattern) occurs in ``[since, pos)``, through its
        first occurrence from ``since`` (up to the end of ``pos``'s line when ``since`` is its start)."""
        key = (what, since)
        end = self.first.get(key)
        if end is None:
            until = len(self.code)
            if since:
                until = self.code.find("\n", pos)
                until = len(self.code) if until == -1 else until
            if isinstance(what, str):
                at = self.code.find(what, since, until)
                end = at + len(what) if at != -1 else float("inf")
            else:
                m = what.search(self.code, since, until)  # type: ignore[attr-defined]
                end = m.end() if m else float("inf")
            self.first[key] = end
        return end <= pos

    def suspect(self, start: int, body: str, closer: str) -> bool:
        """Whether a comment at ``start`` could hide code: it holds a delimiter that ends a literal
        opened before it (:class:`~judgebox.reward.tamper.rules.Lexer`), or, a block comment, it
        follows a line-comment opener (or a command that runs its text) on its line."""
        lexer = self.lexer
        line_start: Optional[int] = None
        if closer:
            line_start = self.line_start(start)
            if any(self.before(o, line_start, start) for o in lexer.line_openers):
                return True
            if lexer.evaluated is not None and self.before(lexer.evaluated, line_start, start):
                return True
        for text, armed, scope in lexer.closers:
            if text not in body:
                continue
            if armed is None:
                return True
            if scope == "line":
                if line_start is None:
                    line_start = self.line_start(start)
                if self.before(armed, line_start, start):
                    return True
            elif self.before(armed, 0, start):
                return True
        return False


def blank_comments(code: str, language: str,
                   trusted: Optional[Callable[[str, list[tuple[int, int]]], bool]] = None) -> str:
    """``code`` with its comments blanked (see the module). ``trusted(code, spans)``, when given, may
    vouch for comments the closer rule kept (the Python pass checks them against the parser)."""
    lexer = _compiled(language)
    if lexer is None or not any(t in code for t in lexer.triggers):
        return code
    blanked: list[tuple[int, int]] = []
    kept: list[tuple[int, int]] = []
    context = _Context(code, lexer)
    openers = lexer.openers
    for m in lexer.tokens.finditer(code):
        token = m.group()
        if not token.startswith(openers):
            continue  # a literal
        for opener, closer in lexer.comments:
            if token.startswith(opener):
                break
        start = m.start()
        (kept if context.suspect(start, _body(token, opener, closer), closer) else blanked).append((start, m.end()))
    if kept and trusted is not None and trusted(code, sorted(blanked + kept)):
        blanked += kept
    if not blanked:
        return code
    out, last = [], 0
    for start, end in sorted(blanked):
        out.append(code[last:start])
        text = code[start:end]
        out.append(_NOT_LINE_END.sub(" ", text) if "\n" in text or "\r" in text else " " * len(text))
        last = end
    out.append(code[last:])
    return "".join(out)


def literal_spans(code: str, language: str) -> list[tuple[int, int]]:
    """The spans of ``code``'s literals (strings, characters) as the lexer reads them."""
    lexer = _compiled(language)
    if lexer is None:
        return []
    return [m.span() for m in lexer.tokens.finditer(code) if not m.group().startswith(lexer.openers)]


def code_only(code: str, language: str) -> str:
    """``code`` (comments already blanked) with the inside of every literal blanked, its first and last
    character kept: the text that brace and statement structure is read from."""
    spans = literal_spans(code, language)
    if not spans:
        return code
    out, last = [], 0
    for start, end in spans:
        if end - start <= 2:
            continue
        out.append(code[last:start + 1])
        out.append(_NOT_LINE_END.sub(" ", code[start + 1:end - 1]))
        last = end - 1
    out.append(code[last:])
    return "".join(out)
