"""What the Python tests' namespace holds, decided on the host from the tests and the problem alone.

The process-isolated harness (``main.py --process``) builds the tests' namespace in a process where
the solution's code never runs. Nothing in that namespace is named by the solution: every free name
of the tests (used, never bound by them) is resolved here, from the tests' own AST, the problem's
prompt (``TestSpec.prefix``), its prelude and its entry point, in this order:

1. the entry point, and a function or class the prompt declares without defining it (a stub whose
   body is only a docstring, ``pass`` or ``...``): a *proxy*, answered by the solution's process (a
   call, or its value as data);
2. a name the prompt's own code binds (its complete functions, even decorated, its classes, its
   constants, what its top-level ``if``/``try``/``with``/``for`` blocks bind): that code, run in the
   tests' process (HumanEval's ``poly``, ``encode_cyclic``, a ``MOD`` a helper reads), so a solution
   that redefines any of it changes nothing the tests compute with it;
3. a builtin: always the real builtin (``def set(*a): return 0`` beside the answer changes nothing);
4. imported in the tests' process, whose import path does not hold the working folder: a name the
   prompt or the prelude imports, when the problem has an entry point or the tests use the name only
   as a module (``math.isclose``); a standard-library module the tests use only as a module; with an
   entry point, a name that a prompt's or prelude's ``from <stdlib module> import *`` provides;
5. anything else: a proxy. Without an entry point (MBPP rows without a reference, verl
   ``assert_case``) the function under test is not known, so a name the tests call that the prelude
   also provides is the solution's, as in the official harness, where the solution's definition
   comes after the prelude.

The in-process harness (tests that need the solution's own objects) shares the solution's names, as
the official MBPP/HumanEval harnesses do; rules 2 and 3 apply there too (the prompt's own code is run
in the tests' namespace after the solution, and :attr:`TestsNames.builtins` are removed from it).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
import sys
from dataclasses import dataclass
from typing import Iterable, Optional

_BUILTINS = frozenset(dir(builtins))
_STDLIB = frozenset(sys.stdlib_module_names) - {"__future__", "antigravity", "this"}


@dataclass(frozen=True)
class TestsNames:
    """The tests' namespace plan: JSON-able, sent to the runner inside the task (``"names"``)."""

    __test__ = False  # not a pytest test class

    proxies: tuple[str, ...]  #: names answered by the solution's process
    bootstrap: str  #: Python source run in the tests' namespace first: imports and the prompt's own code
    builtins: tuple[str, ...]  #: builtin names the tests use that must stay the real builtin

    def task_field(self) -> dict:
        return {"proxies": list(self.proxies), "bootstrap": self.bootstrap, "builtins": list(self.builtins)}


def tests_names(tests: Iterable[str], setup: str = "", prompt: str = "", prelude: str = "",
                entry_point: Optional[str] = None) -> TestsNames:
    """The :class:`TestsNames` of tests (``tests``: each a module's source) run after ``setup``,
    for a problem with ``prompt`` (prepended to the solution), ``prelude`` (the official harness's
    import block) and ``entry_point`` (the function the tests call as the candidate).

    Raises:
        SyntaxError: the tests or the setup do not parse (``TestSpec.check_data`` refuses them first).
    """
    return _tests_names(tuple(tests), setup or "", prompt or "", prelude or "", entry_point or "")


@functools.lru_cache(maxsize=512)
def _tests_names(tests: tuple[str, ...], setup: str, prompt: str, prelude: str, entry: str) -> TestsNames:
    trees = [ast.parse(setup), *(ast.parse(t) for t in tests)]
    declared, owned, prompt_imports, prompt_stars = _prompt_parts(prompt, entry)
    prelude_imports, prelude_stars = _imports(_parse_or_none(prelude))
    code = ast.Module(body=owned, type_ignores=[])
    bound_by_prompt = _bound_names(owned)
    wanted = _free_names(trees) | _free_names([code])
    as_module = _module_uses([*trees, code])
    proxies, imports, kept_builtins = [entry] if entry else [], [], []
    for name in sorted(wanted):
        if name == entry or name in declared:
            proxies.append(name)
        elif name in bound_by_prompt:
            continue  # the prompt's own code binds it in the tests' process
        elif name in _BUILTINS:
            kept_builtins.append(name)
        elif (entry or name in as_module) and (name in prompt_imports or name in prelude_imports):
            imports.append(prompt_imports.get(name) or prelude_imports[name])
        elif name in as_module and name in _STDLIB:
            imports.append(f"import {name}")
        else:
            star = entry and next((m for m in (*prompt_stars, *prelude_stars) if _star_provides(m, name)), None)
            if star:
                imports.append(f"from {star} import {name}")
            else:
                proxies.append(name)
    source = "\n".join([*dict.fromkeys(imports), *(ast.unparse(node) for node in owned)])
    return TestsNames(tuple(dict.fromkeys(proxies)), source + "\n" if source else "", tuple(kept_builtins))


def _parse_or_none(source: str) -> Optional[ast.Module]:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _free_names(trees: Iterable[ast.AST]) -> set[str]:
    """Names the trees load and never bind, in any scope (an approximation that errs towards
    "bound": a name bound anywhere in the tests is the tests' own)."""
    used, bound = set(), set()
    for node in (n for t in trees for n in ast.walk(t)):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name != "*":
                bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return used - bound - {"__builtins__", "__name__", "__file__", "__doc__"}


def _module_uses(trees: Iterable[ast.AST]) -> set[str]:
    """Names every load of which is the object of an attribute access (``math.isclose``): used as
    modules. (``ast.walk`` visits an ``Attribute`` before the ``Name`` inside it.)"""
    loads, as_object, objects = set(), set(), set()
    for node in (n for t in trees for n in ast.walk(t)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            objects.add(id(node.value))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            (as_object if id(node) in objects else loads).add(node.id)
    return as_object - loads


def _imports(tree: Optional[ast.Module]) -> tuple[dict[str, str], list[str]]:
    """``({bound name: its import statement}, [modules star-imported])`` of a module's top level."""
    named, stars = {}, []
    for node in tree.body if tree else ():
        if isinstance(node, ast.Import):
            for a in node.names:
                bound = (a.asname or a.name).split(".")[0]
                named[bound] = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                if a.name == "*":
                    stars.append(node.module)
                else:
                    named[a.asname or a.name] = (f"from {node.module} import {a.name}"
                                                 + (f" as {a.asname}" if a.asname else ""))
    return named, stars


def _prompt_parts(prompt: str, entry: str):
    """``(declared, owned, imports, stars)`` of the prompt's top level: the names the solution
    writes (the entry point, function and class stubs), the prompt's own statements that run in the
    tests' process (complete functions and classes, assignments, ``if``/``try``/``with``/``for``
    blocks; not its imports, which are kept per name, not ``if __name__ == "__main__"`` blocks, not
    bare expressions), and its imports (see :func:`_imports`)."""
    tree = _parse_or_none(prompt) or _parse_or_none(prompt + "\n    pass\n")
    if tree is None:  # a prompt that is no module: every name it seems to define is declared
        declared = set(re.findall(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*[:=]", prompt, re.M))
        return {a or b for a, b in declared} - {""}, [], {}, []
    declared, owned = set(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == entry or _is_stub(node):
                declared.add(node.name)
            else:
                owned.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Try, ast.With, ast.For, ast.While)) \
                or (isinstance(node, ast.If) and not _is_main_guard(node)):
            owned.append(node)
    imports, stars = _imports(tree)
    declared -= _bound_names(owned)  # a name the prompt also binds in full is the prompt's
    return declared - set(imports), owned, imports, stars


def _is_main_guard(node: ast.If) -> bool:
    """``if __name__ == "__main__":`` (a demo the tests never run)."""
    test = node.test
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))


def _bound_names(nodes: list[ast.stmt]) -> set[str]:
    """The module-level names ``nodes`` bind (definitions, assignment and loop targets, imports, and
    the same inside top-level ``if``/``try``/``with``/``for`` blocks; not inside functions)."""
    bound: set[str] = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                bound |= _bound_names([child])
            elif isinstance(child, ast.excepthandler):
                bound |= ({child.name} if child.name else set()) | _bound_names(child.body)
            else:
                bound.update(n.id for n in ast.walk(child) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return bound


def _is_stub(node: ast.AST) -> bool:
    """A function whose body is only a docstring, ``pass`` or ``...`` (the solution writes it), or a
    class whose methods are all such stubs (LeetCode's ``class Solution``)."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return bool(methods) and all(_is_stub(m) for m in methods)
    for stmt in node.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and (isinstance(stmt.value.value, str) or stmt.value.value is Ellipsis):
            continue
        return False
    return True


@functools.lru_cache(maxsize=1024)
def _star_provides(module: str, name: str) -> bool:
    """Whether ``from <module> import *`` binds ``name``: looked up for standard-library modules
    only (imported here, on the host), never for others."""
    if module.split(".")[0] not in _STDLIB:
        return False
    try:
        mod = importlib.import_module(module)
    except Exception:
        return False
    public = getattr(mod, "__all__", None)
    if public is None:
        public = [n for n in vars(mod) if not n.startswith("_")]
    return name in public


__all__ = ["TestsNames", "tests_names"]
