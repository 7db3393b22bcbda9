"""The prompt's declarations that a MultiPL-E program restating the prompt's function must keep.

MultiPL-E runs ``prompt + completion + tests``: the tests rely on what the prompt declares before
the function (C++ ``#include``/``using``/``typedef``, Java ``import`` lines and the class the tests
close, Rust ``use`` lines, Go imports, Node ``require`` bindings, Scala ``import`` lines and the
object the tests close). A chat answer that restates the
function is judged as its own program (:func:`judgebox.reward.loaders.completion.multipl_candidate`) and may have
dropped some of them; one keeper per sandbox language adds back what the program lacks, never a
second copy of what it has where the language rejects one (a Rust ``use`` of a name already
imported, a Go import, a JS ``const``). Go rejects unused imports: an import only code cut away
after the function used becomes a blank import; one the answer never used stays (and fails). Languages without a keeper (``bash``) have no
declarations to keep.
"""

from __future__ import annotations

import re
from typing import Callable


def _lines(preamble: str, pattern: str) -> list[str]:
    return [ln.strip() for ln in preamble.splitlines() if re.match(pattern, ln)]


def _cpp(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    # A repeated #include, using-directive/declaration or typedef (same type) is valid C++.
    kept = _lines(preamble, r"\s*(#\s*include\b|using\s|typedef\s)")
    return "".join(ln + "\n" for ln in kept) + program


def _owner_and_imports(preamble: str, program: str, header_at: int, owner: str, kinds: str, package: str) -> str:
    """Java and Scala: the tests close the prompt's class (``owner`` matches its opening line), so a
    bare method gets it opened again before its header (unless a ``kinds`` type is declared before
    it); the prompt's ``import`` lines the program lacks go after its ``package`` line."""
    opening = re.search(rf"(?m)^[^\n]*\b{owner}\s+\w+[^\n]*\{{[^\n]*$", preamble)
    if opening and not re.search(rf"\b({kinds})\s+\w+", program[:header_at]):
        line_start = program.rfind("\n", 0, header_at) + 1
        program = program[:line_start] + opening.group(0).strip() + "\n" + program[line_start:]
    missing = [ln for ln in _lines(preamble, r"\s*import\s") if ln not in program]
    found = re.search(package, program)
    at = found.end() if found else 0
    return program[:at] + "".join(ln + "\n" for ln in missing) + program[at:]


def _java(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    # A repeated import of the same type or package is ignored by javac (JLS 7.5).
    return _owner_and_imports(preamble, program, header_at, "class", "class|interface|enum|record",
                              r"(?m)^\s*package\s[^;]*;[^\n]*\n?")


def _scala(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    # Only imports the program lacks: the same name imported twice in one scope is ambiguous in Scala 2.
    return _owner_and_imports(preamble, program, header_at, "object", "object|class|trait",
                              r"(?m)^\s*package\s[^\n]*\n?")


def _use_names(use: str) -> list[str]:
    """The names a Rust ``use`` item binds (``a::{B, C as D}`` -> B, D); ``[]`` for a glob."""
    body = use.strip()[3:].rstrip(";").strip()
    inner = re.search(r"\{(.*)\}", body, re.S)
    parts = inner.group(1).split(",") if inner else [body]
    names = []
    for part in (p.strip() for p in parts if p.strip()):
        alias = re.search(r"\bas\s+(\w+)$", part)
        last = alias.group(1) if alias else part.rsplit("::", 1)[-1]
        if last not in ("*", "self") and re.fullmatch(r"\w+", last):
            names.append(last)
    return names


def _rust(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    # A second `use` of a name already bound is error E0252, so only names the program does not
    # import yet are added, one `use` each; a glob is added unless the program has the same line.
    own = re.findall(r"(?m)^\s*(?:pub\s+)?use\s[^;]*;", program)
    bound = {n for u in own for n in _use_names(u)}
    added = []
    for use in _lines(preamble, r"\s*use\s"):
        names = _use_names(use)
        if not names:
            added += [] if any(use == u.strip() for u in own) else [use]
            continue
        prefix = use[3:].split("{", 1)[0].strip().rstrip(":") if "{" in use else None
        for name in (n for n in names if n not in bound):
            added.append(use if prefix is None else f"use {prefix}::{_rust_item(use, name)};")
    # Inner attributes (#![...]) and inner doc comments (//!) must stay first in the crate.
    head = re.match(r"(?:[ \t]*(?:#!\[[^\n]*\]|//![^\n]*)?\n)*", program)
    at = head.end() if head else 0
    return program[:at] + "".join(u + "\n" for u in added) + program[at:]


def _rust_item(use: str, name: str) -> str:
    """The entry inside ``use a::{...}`` that binds ``name`` (``B`` or ``C as name``)."""
    inner = use.split("{", 1)[1].rsplit("}", 1)[0]
    return next(p.strip() for p in inner.split(",") if p.strip() == name or re.search(rf"\bas\s+{name}$", p.strip()))


_GO_IMPORT = re.compile(r'^\s*import\s*\(([^)]*)\)|^\s*import\s+(?:\w+\s+)?("[^"]+")', re.M)


def go_imports(source: str) -> set[str]:
    """The package paths a Go source imports (``import "x"`` and ``import ( ... )`` forms)."""
    found = set()
    for block, single in _GO_IMPORT.findall(source):
        found |= set(re.findall(r'"([^"]+)"', block or single))
    return found


def add_go_imports(program: str, needed: set[str]) -> str:
    """``program`` with ``import "p"`` added after its package clause for each needed package it
    lacks (a Go import may not repeat)."""
    missing = sorted(needed - go_imports(program))
    match = re.search(r"(?m)^\s*package\s+\w+[^\n]*\n", program)
    if not missing or not match:
        return program
    lines = "".join(f'import "{p}"\n' for p in missing)
    return program[: match.end()] + lines + program[match.end():]


def blank_unused_go_imports(program: str, tests: str, dropped: str) -> str:
    """``program`` with each unaliased import that neither it nor ``tests`` uses, but ``dropped`` (the
    answer's code cut away after the function: its own tests or ``main``) does, turned into a blank
    import (``_ "strings"``): Go refuses to compile an unused import. An import the whole answer
    never uses stays, and the program fails to compile as the answer itself would."""
    first_func = program.find("\nfunc ")
    head, body = (program, "") if first_func < 0 else (program[:first_func], program[first_func:])
    for path in sorted(go_imports(head)):
        used = re.compile(rf"\b{re.escape(path.rsplit('/', 1)[-1])}\.")
        if not used.search(body + tests) and used.search(dropped):
            head = re.sub(rf'(?m)^(\s*(?:import\s+)?)"{re.escape(path)}"', rf'\1_ "{path}"', head, count=1)
    return head + body


def _go(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    return blank_unused_go_imports(add_go_imports(program, go_imports(preamble)), tests, dropped)


_JS_BINDING = re.compile(r"^\s*(?:const|let|var)\s+(\{[^}]*\}|\w+)\s*=\s*require\s*\(")


def _js_names(binding: str) -> list[str]:
    """The names a ``require`` binding declares (``x``; ``{a, b: c}`` -> a, c)."""
    parts = binding.strip("{} ").split(",") if binding.startswith("{") else [binding]
    return [p.split(":")[-1].strip() for p in parts if p.strip()]


def _nodejs(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    # A top-level name may be declared once (a second `const x` is a SyntaxError): a prompt
    # `require` binding is added when the program declares none of its names.
    added = []
    for line in _lines(preamble, _JS_BINDING.pattern):
        names = _js_names(_JS_BINDING.match(line).group(1))
        if not any(re.search(rf"\b(?:const|let|var|function|class)\s+(?:\{{[^}}]*)?\b{n}\b", program)
                   for n in names):
            added.append(line)
    return "".join(ln + "\n" for ln in added) + program


def _d(preamble: str, program: str, header_at: int, tests: str, dropped: str) -> str:
    # Importing a module twice is valid D; a module declaration stays first.
    missing = [ln for ln in _lines(preamble, r"\s*import\s") if ln not in program]
    module = re.match(r"\s*module\s[^;]*;[^\n]*\n?", program)
    at = module.end() if module else 0
    return program[:at] + "".join(ln + "\n" for ln in missing) + program[at:]


#: sandbox language -> ``(prompt preamble, program, offset of the header in program, tests, dropped) -> program``.
KEEPERS: dict[str, Callable[[str, str, int, str, str], str]] = {
    "cpp": _cpp, "java": _java, "rust": _rust, "go_test": _go, "nodejs": _nodejs, "typescript": _nodejs, "D_ut": _d,
    "scala": _scala,
}


def keep_prompt_declarations(language: str, preamble: str, program: str, header_at: int, tests: str,
                             dropped: str = "") -> str:
    """``program`` (a restated MultiPL-E solution whose function header starts at ``header_at``)
    with the declarations of the prompt's ``preamble`` (its text before the function) that it lacks.

    ``tests`` is the text appended after the program and ``dropped`` the answer's code that was cut
    away (Go: an import only ``dropped`` uses becomes blank). Languages without a keeper return
    ``program`` unchanged.
    """
    keeper = KEEPERS.get(language)
    return keeper(preamble, program, header_at, tests, dropped) if keeper else program
