"""The tamper scan's Python pass, on the parsed code (where it parses): what text matching cannot see.

* Strings built from constants: ``"s" "ys"``, ``"_get" + "frame"``, ``"".join(["f_lo", "cals"])``,
  ``"\\x5fgetframe"``, ``"emarf"[::-1]``, ``b"...".decode()``, ``"...".lower()``: each value that is
  not in the code as written is scanned by the language's rules (:func:`strings`).
* The dynamic-access primitives themselves (``introspection``): ``eval``/``exec``/``compile``,
  ``globals()``/``vars()``, ``getattr``/``setattr``/``delattr`` with a name that is not a constant,
  any of them used as a value (``g = getattr``), ``x.__dict__[name]`` with a name that is not a
  constant (``__import__``, ``import_module`` and ``__getattribute__`` are the rules' words).
* ``redefines_check``: an assignment to (or deletion of) an attribute of a name the code imports or
  does not bind itself (a module, a name of the prompt or the tests: ``math.fabs = ...``,
  ``np.testing.assert_array_equal = ...``, ``setattr(math, ...)``, ``poly.__code__ = ...``); a
  module-level binding of a builtin's name (``def sum(...)`` beside the entry point, ``set = ...``,
  ``global len``), which the tests would call in its place when they share the solution's namespace.

Names computed at run time (``"".join(chr(c) for c in ...)``, a string read from a file) evade this
pass as they evade any static scan: what it sees then is the primitive that resolves them.
"""

from __future__ import annotations

import ast
import builtins
import sys
import warnings
from typing import Any, Callable, Optional

#: a HumanEval-style completion (a function's body, maybe followed by module-level code) parses
#: inside this line; its node lines are one more than the completion's
BODY_WRAPPER = "def _judgebox_body():\n"

#: __import__ is a rule's word (judgebox.reward.tamper.rules), wherever it appears
_PRIMITIVES = frozenset({"eval", "exec", "compile", "globals", "vars"})
_ATTR_FUNCS = frozenset({"getattr", "setattr", "delattr"})
#: builtins the tests could call; input is left out (``input = sys.stdin.readline`` is an idiom, and
#: reading stdin signals on its own)
_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_")) - {"input"}
_IMPLICIT = frozenset({"self", "cls"})
_FOLD_LIMIT = 4096  # characters of one folded string
_FOLD_BUDGET = 65536  # characters of folded strings per scan
_STR_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "replace", "swapcase", "title", "capitalize",
                          "casefold"})

Signal = tuple[int, int, str, str]  # (line, column, kind, evidence)


def parse(code: str) -> Optional[tuple[ast.Module, int]]:
    """``(tree, line_offset)`` of ``code``, parsed as it is or, where it begins indented, as a
    function's body (:data:`BODY_WRAPPER`); ``None`` where it does not parse."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(code), 0
        except IndentationError:
            pass
        except Exception:  # SyntaxError, ValueError (a NUL byte), RecursionError, MemoryError
            return None
        try:
            return ast.parse(BODY_WRAPPER + code), 1
        except Exception:
            return None


def comments_trusted(parsed: tuple[ast.Module, int]) -> Callable[[str, list[tuple[int, int]]], bool]:
    """The lexer's ``trusted`` check for parsed code: blanking the comments it found leaves the same
    tree. Before Python 3.12 a text that parses has no string the lexer misreads (a quote never nests
    in an f-string), so its comments are comments; from 3.12 the text is parsed again, blanked."""
    tree, offset = parsed

    def trusted(code: str, spans: list[tuple[int, int]]) -> bool:
        if sys.version_info < (3, 12):
            return True
        out, last = [], 0
        for start, end in spans:
            out += [code[last:start], "".join(c if c in "\r\n" else " " for c in code[start:end])]
            last = end
        out.append(code[last:])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                again = ast.parse((BODY_WRAPPER if offset else "") + "".join(out))
            except Exception:
                return False
        return ast.dump(again) == ast.dump(tree)

    return trusted


_FOLD_OPS = (ast.Add, ast.Mult, ast.Mod)
_FOLD_METHODS = _STR_METHODS | {"join", "decode"}


#: fields that never hold a node worth visiting (names, operators, contexts, constants' values)
_LEAF_FIELDS = frozenset({"ctx", "id", "arg", "attr", "kind", "type_comment", "level", "module", "asname",
                          "conversion", "is_async", "op", "name", "names", "kwd_attrs"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, each before its children (``ast.walk``'s order aside, several times
    faster: no generators, and only the fields that can hold nodes are read)."""
    out, todo = [], [tree]
    push, AST, children = todo.append, ast.AST, _CHILD_FIELDS
    while todo:
        node = todo.pop()
        out.append(node)
        t = type(node)
        fields = children.get(t)
        if fields is None:
            fields = children[t] = tuple(f for f in t._fields if f not in _LEAF_FIELDS)
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(value, AST):
                push(value)
    return out


def _root(node: ast.AST) -> Optional[ast.Name]:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        parts.append("." + node.attr if isinstance(node, ast.Attribute) else "[...]")
        node = node.value
    return (node.id if isinstance(node, ast.Name) else "...") + "".join(reversed(parts))


class _Folder:
    """Constant string values of expressions built from constants (memoized per node)."""

    def __init__(self) -> None:
        self.memo: dict[int, Optional[Any]] = {}

    def __call__(self, node: ast.AST) -> Optional[Any]:
        key = id(node)
        if key not in self.memo:
            self.memo[key] = None  # a cycle cannot happen in a tree, but a deep one may recurse
            try:
                value = self._fold(node)
            except Exception:  # RecursionError, a % that fails, a bad slice
                value = None
            if isinstance(value, (str, bytes)) and len(value) > _FOLD_LIMIT:
                value = None
            self.memo[key] = value
        return self.memo[key]

    def _fold(self, node: ast.AST) -> Optional[Any]:
        t = type(node)
        if t is ast.Constant:
            return node.value if isinstance(node.value, (str, bytes, int)) and not isinstance(node.value, bool) else None
        if t is ast.BinOp:
            left, right = self(node.left), self(node.right)
            if left is None or right is None:
                return None
            op = type(node.op)
            if op is ast.Add and type(left) is type(right) and isinstance(left, (str, bytes)):
                return left + right
            if op is ast.Mult and isinstance(left, (str, bytes)) and isinstance(right, int) and 0 <= right <= 64:
                return left * right
            if op is ast.Mod and isinstance(left, str) and isinstance(right, (str, int)):
                return left % right
            return None
        if t is ast.UnaryOp and type(node.op) is ast.USub:  # -1 in a slice
            value = self(node.operand)
            return -value if type(value) is int else None
        if t is ast.Tuple and isinstance(node.ctx, ast.Load):  # the right side of a %
            parts = [self(e) for e in node.elts]
            return tuple(parts) if all(isinstance(p, (str, int)) for p in parts) else None
        if t is ast.JoinedStr:
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    if v.format_spec is not None or v.conversion not in (-1, 115):
                        return None
                    v = v.value
                part = self(v)
                if not isinstance(part, str):
                    return None
                parts.append(part)
            return "".join(parts)
        if t is ast.Subscript:
            value = self(node.value)
            if not isinstance(value, (str, bytes)):
                return None
            s = node.slice
            if isinstance(s, ast.Slice):
                bounds = [self(b) if b is not None else None for b in (s.lower, s.upper, s.step)]
                if any(b is not None and not isinstance(b, int) for b in bounds):
                    return None
                return value[slice(*bounds)]
            return None
        if t is ast.Call and isinstance(node.func, ast.Attribute) and not node.keywords:
            method, value = node.func.attr, self(node.func.value)
            if method == "join":
                if not (isinstance(value, str) and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple))):
                    return None
                parts = [self(e) for e in node.args[0].elts]
                return value.join(parts) if all(isinstance(p, str) for p in parts) else None
            args = [self(a) for a in node.args]
            if any(a is None for a in args):
                return None
            if method == "decode" and isinstance(value, bytes) and not args:
                return value.decode("utf-8", "replace")
            if method in _STR_METHODS and isinstance(value, str) and all(isinstance(a, str) for a in args):
                return getattr(value, method)(*args)
            return None
        return None


def _names(target: ast.AST) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body`` and of the blocks in it that run in the module's namespace."""
    out, todo = [], list(body)
    while todo:
        stmt = todo.pop()
        out.append(stmt)
        for field in ("body", "orelse", "finalbody"):
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                todo.extend(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            out.append(handler)
            todo.extend(handler.body)
        for case in getattr(stmt, "cases", None) or []:
            todo.extend(case.body)
    return out


_CONSTANT, _FOLDABLE, _NAME, _CALL, _ATTRIBUTE, _SUBSCRIPT, _ARG, _DEF, _HANDLER, _IMPORT, _GLOBAL, _MATCH, _REST = range(13)
_INTEREST: dict[type, int] = {
    ast.Constant: _CONSTANT, ast.BinOp: _FOLDABLE, ast.JoinedStr: _FOLDABLE, ast.Name: _NAME, ast.Call: _CALL,
    ast.Attribute: _ATTRIBUTE, ast.Subscript: _SUBSCRIPT, ast.arg: _ARG, ast.FunctionDef: _DEF,
    ast.AsyncFunctionDef: _DEF, ast.ClassDef: _DEF, ast.ExceptHandler: _HANDLER, ast.Import: _IMPORT,
    ast.ImportFrom: _IMPORT, ast.Global: _GLOBAL, ast.MatchAs: _MATCH, ast.MatchStar: _MATCH,
    ast.MatchMapping: _REST}


def analyse(tree: ast.Module, offset: int, code: str) -> tuple[list[Signal], list[tuple[int, int, str]]]:
    """The pass's own signals (primitives and redefinitions; see the module), and ``(line, column,
    value)`` of the constant strings (as folded) that are not in ``code`` as written, for the rules
    to read (the text cannot show them)."""
    found: list[Signal] = []
    texts: list[tuple[int, int, str]] = []
    bound: set[str] = set(_IMPLICIT)
    imported: set[str] = set()
    targets: list[tuple[ast.AST, bool]] = []  # (target, through setattr/delattr)
    called: set[int] = set()
    fold = _Folder()

    def add(node: ast.AST, kind: str, evidence: str) -> None:
        found.append((node.lineno - offset, node.col_offset, kind, evidence))  # type: ignore[attr-defined]

    covered: set[int] = set()  # the parts of a string already folded whole ("a" + "b" + "c")
    budget = [_FOLD_BUDGET]

    def folded(node: ast.AST) -> None:
        parts = (node.left, node.right) if type(node) is ast.BinOp else ()  # type: ignore[attr-defined]
        if id(node) in covered or budget[0] <= 0:
            covered.update(map(id, parts))
            return
        value = fold(node)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if type(value) is str:
            covered.update(map(id, parts))
            if len(value) >= 3 and value not in code:
                budget[0] -= len(value)
                texts.append((node.lineno - offset, node.col_offset, value))  # type: ignore[attr-defined]

    interest, load = _INTEREST, ast.Load
    for node in _walk(tree):
        what = interest.get(type(node))
        if what is None:
            continue
        if what == _CONSTANT:
            value = node.value
            if type(value) is str and len(value) >= 3 and value not in code:
                texts.append((node.lineno - offset, node.col_offset, value))
        elif what == _NAME:
            if type(node.ctx) is not load:
                bound.add(node.id)
            elif (node.id in _PRIMITIVES or node.id in _ATTR_FUNCS) and id(node) not in called:
                add(node, "introspection", node.id)
        elif what == _ATTRIBUTE:
            if type(node.ctx) is not load:
                targets.append((node, False))
        elif what == _CALL:
            func = node.func
            called.add(id(func))
            if type(func) is ast.Attribute:
                if func.attr in _FOLD_METHODS:
                    folded(node)
            elif type(func) is ast.Name:
                if func.id in _PRIMITIVES:
                    add(node, "introspection", func.id + "(")
                elif func.id in _ATTR_FUNCS:
                    if len(node.args) < 2:
                        add(node, "introspection", func.id + "(")
                        continue
                    if not isinstance(fold(node.args[1]), str):
                        add(node, "introspection", func.id + "(" + _dotted(node.args[0]) + ", <computed name>)")
                    if func.id != "getattr":
                        targets.append((node.args[0], True))
        elif what == _FOLDABLE:
            if type(node) is ast.JoinedStr or type(node.op) in _FOLD_OPS:
                folded(node)
        elif what == _SUBSCRIPT:
            if type(node.ctx) is not load:
                if type(node.value) is ast.Attribute:
                    targets.append((node, False))
            elif type(node.slice) is ast.Slice:
                folded(node)
            elif type(node.value) is ast.Attribute and node.value.attr == "__dict__" and not isinstance(
                    fold(node.slice), str):
                add(node, "introspection", _dotted(node.value) + "[<computed name>]")
        elif what == _ARG:
            bound.add(node.arg)
        elif what == _DEF:
            bound.add(node.name)
        elif what == _IMPORT:
            for alias in node.names:
                imported.add(alias.asname or alias.name.split(".")[0])
        elif what == _GLOBAL:
            for name in node.names:
                if name in _BUILTINS:
                    add(node, "redefines_check", "global " + name)
        elif what == _REST:
            if node.rest:
                bound.add(node.rest)
        elif node.name:  # _HANDLER, _MATCH
            bound.add(node.name)
    for target, through in targets:
        root = _root(target)
        if root is not None and (root.id in imported or root.id not in bound):
            add(target, "redefines_check", "setattr(" + _dotted(target) if through else _dotted(target) + " =")
    module_level = _module_level(tree.body[1:] if offset else tree.body)
    # the only function of a whole-module answer is its entry point (MBPP 126's def sum(a, b)): the tests
    # call it by that name; a body (offset) has its entry point in the prompt
    defs = offset + sum(type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) for stmt in module_level)
    for stmt in module_level:
        t = type(stmt)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if stmt.name in _BUILTINS and (defs > 1 or t is ast.ClassDef):
                add(stmt, "redefines_check", ("class " if t is ast.ClassDef else "def ") + stmt.name)
            continue
        if t is ast.Assign:
            names = [n for target in stmt.targets for n in _names(target)]
        elif t is ast.AnnAssign:
            names = _names(stmt.target) if stmt.value is not None else []
        elif t in (ast.AugAssign, ast.For, ast.AsyncFor):
            names = _names(stmt.target)
        elif t in (ast.With, ast.AsyncWith):
            names = [n for item in stmt.items if item.optional_vars is not None for n in _names(item.optional_vars)]
        elif t in (ast.Import, ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                if name in _BUILTINS:
                    add(stmt, "redefines_check", "import " + alias.name + (" as " + name if alias.asname else ""))
            continue
        elif t is ast.ExceptHandler:
            if stmt.name in _BUILTINS:
                add(stmt, "redefines_check", "except ... as " + stmt.name)
            continue
        else:
            continue
        for name in names:
            if name.id in _BUILTINS:
                add(name, "redefines_check", name.id + " =")
    return found, texts
