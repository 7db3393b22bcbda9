"""Tamper checks that need the code's brace structure, read from its code-only text (comments and the
inside of literals blanked: :func:`judgebox.reward.tamper.lexer.code_only`).

A completion usually begins inside the prompt's function (``func f(...) T {``, ``long f(long x) {``)
and may close it to declare more at file scope; the text alone does not say where it begins. Depths
are therefore relative to its start: where it goes below its start, it has closed the prompt's
function, and the lowest depth it reaches is file scope; where it never does, it is at file scope from
its start only if it declares a function there (Go) or has no ``return`` there (C++: a ``return``
outside every brace is a function's body).
"""

from __future__ import annotations

import bisect
import re
from typing import Optional

Found = tuple[int, str]  # (offset in the code, evidence)

_BRACES = re.compile(r"[{}]")


def _min_depth(text: str) -> tuple[int, list[tuple[int, int]]]:
    """The lowest relative depth ``text`` reaches, and ``(offset, depth after it)`` per brace."""
    depth, low, events = 0, 0, []
    for m in _BRACES.finditer(text):
        depth += 1 if m.group() == "{" else -1
        low = min(low, depth)
        events.append((m.start(), depth))
    return low, events


def _depth_at(events: list[tuple[int, int]], pos: int) -> int:
    """The relative depth at ``pos`` (after the last brace before it)."""
    i = bisect.bisect_left(events, (pos, -(1 << 30)))
    return events[i - 1][1] if i else 0


# ---------------------------------------------------------------------------------------------- Go

_GO_DECL = re.compile(r"(?<![\w.])(?:var\b|func\s*(?:\w|\([^()]*\)\s*\w+\s*\()|package\b)")  # not func(
_GO_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\s*\.\s*([A-Za-z_]\w*))?\s*\(|([)\]}])\s*\(")
_GO_HARMLESS = frozenset({
    "make", "new", "len", "cap", "append", "copy", "complex", "real", "imag", "min", "max", "string", "byte", "rune",
    "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
    "float32", "float64", "complex64", "complex128", "error", "any", "func", "map", "chan", "struct", "interface"})
#: packages whose functions compute a value from their arguments (a renamed import of another package
#: still shows its members' names: .Stdin, .Exit(, ... raise their own signals)
_GO_PURE = frozenset({"errors", "strings", "strconv", "math", "regexp", "big", "utf8", "unicode", "bytes", "sort",
                      "bits", "cmplx", "slices", "maps"})
_GO_FMT_PURE = frozenset({"Sprint", "Sprintf", "Sprintln", "Errorf"})
_OPEN = {"(": ")", "[": "]", "{": "}"}


def _matching(text: str, i: int) -> int:
    """The offset after the bracket that closes the one at ``i`` (``len(text)`` if none)."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def _go_spec_end(text: str, i: int) -> int:
    """Where the Go statement or spec that begins at ``i`` ends: a newline (or ``;``) outside brackets
    after a token that ends a statement (Go's semicolon rule)."""
    depth, last = 0, ""
    for j in range(i, len(text)):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return j
        elif depth == 0 and (c == ";" or (c == "\n" and (last.isalnum() or last in "_)]}\"'`"))):
            return j
        if not c.isspace():
            last = c
    return len(text)


def _go_initializer_runs_code(expr: str) -> bool:
    """Whether a package-level initializer calls anything but a builtin, a conversion or a pure
    package's function (a function literal's body runs only if it is invoked: ``func() {...}()``)."""
    i = 0
    while True:
        m = re.compile(r"(?<![\w.])func\s*\(").search(expr, i)
        if not m:
            break
        j = _matching(expr, m.end() - 1)
        body = expr.find("{", j)
        while body != -1 and re.search(r"(?:interface|struct)\s*$", expr[j:body]):
            j = _matching(expr, body)
            body = expr.find("{", j)
        if body == -1:
            break
        end = _matching(expr, body)
        if re.match(r"\s*\(", expr[end:]):
            return True
        expr = expr[:body] + "{}" + expr[end:]
        i = body + 2
    for m in _GO_CALL.finditer(expr):
        if m.group(3):
            return True
        name, member = m.group(1), m.group(2)
        if member is None:
            if name not in _GO_HARMLESS:
                return True
        elif not (name in _GO_PURE or (name == "fmt" and member in _GO_FMT_PURE)):
            return True
    return False


def go_early_init(text: str, code: str) -> list[Found]:
    """Package-level ``var`` initializers that run code before ``main`` (like ``init()``):
    ``var x = func() T {...}()``, ``var x = f()``; not ``make(``, ``new(``, composite literals,
    constants or pure packages' functions."""
    if "var" not in text:
        return []
    low, events = _min_depth(text)
    decls = list(_GO_DECL.finditer(text))
    if low < 0:
        level: Optional[int] = low
    else:
        level = 0 if any(not d.group().startswith("var") and _depth_at(events, d.start()) == 0 for d in decls) else None
    if level is None:
        return []
    found: list[Found] = []
    for d in decls:
        if not d.group().startswith("var") or _depth_at(events, d.start()) != level:
            continue
        rest = d.end()
        group = re.match(r"\s*\(", text[rest:])
        if group:
            open_at = rest + group.end() - 1
            inner_end = _matching(text, open_at) - 1
            specs, i = [], open_at + 1
            while i < inner_end:
                end = min(_go_spec_end(text, i), inner_end)
                specs.append((i, end))
                i = end + 1
        else:
            specs = [(rest, _go_spec_end(text, rest))]
        for start, end in specs:
            spec = text[start:end]
            eq = re.search(r"(?<![=!<>:])=(?!=)", spec)
            if eq and _go_initializer_runs_code(spec[eq.end():]):
                line_end = code.find("\n", d.start())
                found.append((d.start(), code[d.start():line_end if line_end != -1 else len(code)].strip()))
                break
    return found


# --------------------------------------------------------------------------------------------- C++

_CPP_IIFE = re.compile(r"\}\s*\([^;{}]*\)\s*[;,)}]")
_CPP_RETURN = re.compile(r"(?<![\w.])return\b")
_CPP_QUALIFIER = re.compile(r"(?:\b(?:const|noexcept|override|final|mutable|volatile|constexpr|consteval)|&&?|"
                            r"\bnoexcept\s*\([^()]*\))\s*$")


def _cpp_function_head(text: str, brace: int) -> bool:
    """Whether the ``{`` at ``brace`` opens a function's or a lambda's body: it follows ``)`` or ``]``,
    maybe through qualifiers (``) const noexcept {``)."""
    head = text[max(0, brace - 200):brace].rstrip()
    for _ in range(8):
        if head.endswith((")", "]")):
            return True
        m = _CPP_QUALIFIER.search(head, max(0, len(head) - 40))
        if not m:
            return False
        head = head[:m.start()].rstrip()
    return False


def cpp_namespace_iife(text: str) -> list[Found]:
    """Immediately invoked lambdas (``}();``) outside every function body: they run before ``main``,
    as a static initializer. One inside a function (``auto sq = [&]{...}();``) runs with it."""
    iifes = list(_CPP_IIFE.finditer(text))
    if not iifes:
        return []
    low, events = _min_depth(text)
    if low < 0:
        stack = [False] * (-low - 1) + [True]  # the prompt's function, in namespace scope
    else:
        stack = [True] if any(_depth_at(events, r.start()) == 0 for r in _CPP_RETURN.finditer(text)) else []
    scope_after: dict[int, bool] = {}
    last = iifes[-1].start()
    for m in _BRACES.finditer(text):
        if m.start() > last:
            break
        if m.group() == "{":
            stack.append(bool(stack and stack[-1]) or _cpp_function_head(text, m.start()))
        else:
            if stack:
                stack.pop()
            scope_after[m.start()] = bool(stack and stack[-1])
    return [(m.start(), m.group().strip()) for m in iifes if not scope_after.get(m.start(), False)]
