"""Mutants of reference solutions for gold/mutant tests: a wrong program that is close to a right one.

:func:`mutate` flips every comparison (``==``/``!=``, ``<``/``>=``, ``>``/``<=``, ``in``/``not in``,
``is``/``is not``) from line ``first_line`` on; a program without comparisons gets every integer
constant off by one; one with neither returns ``None`` from every ``return``.
"""

from __future__ import annotations

import ast
import warnings

_FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
         ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


class _Mutator(ast.NodeTransformer):
    def __init__(self, first_line: int, how: str) -> None:
        self.first_line, self.how, self.changed = first_line, how, 0

    def _ours(self, node: ast.AST) -> bool:
        return getattr(node, "lineno", 0) >= self.first_line

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if self.how == "flip" and self._ours(node):
            node.ops = [_FLIP[type(op)]() for op in node.ops]
            self.changed += 1
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if self.how == "off_by_one" and self._ours(node) and type(node.value) is int:
            self.changed += 1
            return ast.copy_location(ast.Constant(node.value + 1), node)
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        if self.how == "return_none" and self._ours(node) and node.value is not None:
            self.changed += 1
            return ast.copy_location(ast.Return(ast.Constant(None)), node)
        return node


OPERATORS = ("flip", "off_by_one", "return_none")


def mutants(source: str, first_line: int = 1) -> list[tuple[str, str]]:
    """``[(operator name, mutated source)]`` for each operator of :data:`OPERATORS` that changes
    something from line ``first_line`` on (empty when the source does not parse)."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(source)
        except SyntaxError:
            return []
        for how in OPERATORS:
            m = _Mutator(first_line, how)
            tree = ast.fix_missing_locations(m.visit(ast.parse(source)))
            if m.changed:
                out.append((how, ast.unparse(tree) + "\n"))
    return out
