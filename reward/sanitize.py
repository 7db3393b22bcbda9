"""evalplus-style sanitizing of function-completion samples: keep imports and the definitions the
entry point needs, drop top-level statements (demo prints, loops, ``if __name__ == "__main__":``).

The work is done by evalplus's own sanitizer (``evalplus.sanitize.sanitize``, tree-sitter based;
github.com/evalplus/evalplus), an optional dependency: ``pip install "judgebox[sanitize]"``. Asking
for sanitizing without it is an error, never a silent no-op. What judgebox adds:

- a completion that continues the prompt (HumanEval) is sanitized together with the prompt, and
  the result replaces both;
- every top-level definition of the prompt that the tests name (HumanEval/38's ``encode_cyclic``,
  HumanEval/50's ``encode_shift``) is kept even when the entry point does not call it;
- only Python function-completion problems (``harness`` with an ``entry_point``, ``assert``,
  ``call``) can be sanitized; a ``stdio`` program's top-level code is the program.
"""

from __future__ import annotations

import ast
from typing import Optional

from .spec import TestSpec


def sanitize(code: str, entry_point: Optional[str] = None) -> str:
    """evalplus's ``sanitize(code, entry_point)``: imports, then the classes, functions (with a
    ``return``) and assignments reachable from ``entry_point`` (all of them when ``None``).

    Raises:
        ImportError: evalplus is not installed (the message says how to install it).
    """
    try:
        from evalplus.sanitize import sanitize as evalplus_sanitize
    except ImportError as exc:
        raise ImportError(f"sanitize: evalplus's sanitizer is not importable ({exc}); install it with "
                          'pip install "judgebox[sanitize]" (or run without --sanitize)') from None
    return evalplus_sanitize(code, entry_point)


def sanitize_candidate(spec: TestSpec, code: str) -> tuple[TestSpec, str]:
    """The spec and program to judge for a sanitized function-completion sample.

    ``spec.prefix + code`` is sanitized (entry point: ``spec.entry_point`` for harness problems;
    none for ``assert``/``call``, so every definition stays); prompt definitions the tests name are
    appended when sanitizing dropped them; the returned spec has an empty ``prefix``.

    Raises:
        ValueError: the spec is not a Python function-completion problem.
        ImportError: see :func:`sanitize`.
    """
    if spec.language not in ("python", "py", "python3"):
        raise ValueError(f"sanitize: applies to Python, not {spec.language!r}")
    if spec.kind == "stdio" or (spec.kind == "harness" and not spec.entry_point):
        raise ValueError(f"sanitize: applies to function-completion problems (call, assert, harness with "
                         f"entry_point), not {spec.kind} programs")
    entry = spec.entry_point if spec.kind == "harness" else None
    out = sanitize(spec.prefix + code, entry).rstrip("\n") + "\n"
    out += "".join(f"\n{src}\n" for src in _prompt_definitions_for_tests(spec, out))
    return spec.model_copy(update={"prefix": ""}), out


def _prompt_definitions_for_tests(spec: TestSpec, sanitized: str) -> list[str]:
    """Source of the prompt's top-level definitions that the tests name and ``sanitized`` lacks."""
    try:
        prompt = ast.parse(spec.prefix)
        kept = {n.name for n in ast.parse(sanitized).body if isinstance(n, (ast.FunctionDef, ast.ClassDef,
                                                                            ast.AsyncFunctionDef))}
    except SyntaxError:
        return []
    tests = "\n".join([spec.harness or "", spec.setup_code, *spec.asserts])
    try:
        named = {n.id for n in ast.walk(ast.parse(tests)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return []
    return [ast.get_source_segment(spec.prefix, node) or "" for node in prompt.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and node.name in named and node.name not in kept and node.name != spec.entry_point]


__all__ = ["sanitize", "sanitize_candidate"]
