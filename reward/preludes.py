"""The import blocks that official Python harnesses put in front of every program.

A solution written for one of these harnesses may use names it never imports (starter code such as
``def f(self, a: List[int])`` relies on ``typing.List``). The loader of each dataset sets
:attr:`judgebox.reward.spec.TestSpec.prelude` to the block of the dataset's own harness, so the spec shows it
and nothing is guessed at run time (BUG-047). The block runs before the candidate module, in the
same file; ``from __future__`` imports of the candidate are moved above it (they must come first).

Sources (the lists of modules, written out here; read in each project's harness):

- ``apps``: APPS ``eval/testing_util.py`` (Hendrycks et al. 2021), the ``sol`` string it prefixes to
  both call-based and standard-input programs; TACO's harness is APPS's. Needs ``numpy``.
- ``livecodebench``: LiveCodeBench ``lcb_runner/evaluation/testing_util.py`` ``import_string``,
  prefixed to stdin and functional programs.
- ``verl``: verl's ``prime_code`` scorer (``verl/utils/reward_score/prime_code/testing_util.py``,
  verl 0.9.1), put before every Python solution of ``in_outs`` data, call-based and stdio alike:
  LiveCodeBench's module list with a recursion limit of 6·10⁵. :meth:`judgebox.reward.spec.TestSpec.from_in_outs`
  gives it to Python ``in_outs`` without a ``prelude`` key (verl's verdict); ``"prelude": "none"`` opts out.
- ``leetcode``: LeetCode's Python 3 environment, which pre-imports ``typing`` and the common
  standard-library modules and provides ``sortedcontainers``, ``ListNode`` and ``TreeNode``
  (the block follows LeetCodeDataset's prompt imports plus those names). Needs ``sortedcontainers``.
- ``bigcodebench``: BigCodeBench ``bigcodebench/eval/__init__.py`` and ``eval/utils.py``
  (``reliability_guard``): the module it runs each program in already holds ``sys``, ``os`` and
  ``environ`` (``os.environ``), and the guard sets ``TZ=UTC`` (with ``time.tzset()``),
  ``OMP_NUM_THREADS=1``, ``TF_CPP_MIN_LOG_LEVEL=3`` and ``TF_ENABLE_ONEDNN_OPTS=0`` before the program
  runs (tasks that print dates or time TensorFlow depend on them). Binds no other name.
"""

from __future__ import annotations

import ast

_APPS_IMPORTS = (
    "sys", "time", "itertools", "from itertools: accumulate, product, permutations, combinations",
    "collections", "from collections: Counter, OrderedDict, deque, defaultdict, ChainMap",
    "from functools: lru_cache", "math",
    "from math: sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2", "fractions",
    "from typing: List, Tuple", "numpy as np", "random", "heapq", "from heapq: *",
)
_LCB_STAR = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
             "statistics", "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing")
_LCB_PLAIN = tuple(m for m in _LCB_STAR if m not in ("builtins", "typing"))
_LEETCODE_PLAIN = ("random", "functools", "collections", "string", "math", "datetime", "heapq", "bisect",
                   "itertools", "operator", "re")
_LEETCODE_STAR = ("typing", "functools", "collections", "itertools", "heapq", "bisect", "string",
                  "operator", "math")
_LEETCODE_TYPES = '''
inf = float("inf")
from sortedcontainers import SortedList, SortedDict, SortedSet


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right
'''


def _line(item: str) -> str:
    if item.startswith("from "):
        module, _, names = item[5:].partition(": ")
        return f"from {module} import {names}"
    return f"import {item}"


#: prelude name -> the Python source put in front of the candidate.
PRELUDES: dict[str, str] = {
    "apps": "\n".join(_line(i) for i in _APPS_IMPORTS) + "\n",
    "livecodebench": "\n".join([*(f"from {m} import *" for m in _LCB_STAR), *(f"import {m}" for m in _LCB_PLAIN),
                                "sys.setrecursionlimit(50000)"]) + "\n",
    "verl": "\n".join([*(f"from {m} import *" for m in _LCB_STAR), *(f"import {m}" for m in _LCB_PLAIN),
                        "sys.setrecursionlimit(6 * 10**5)"]) + "\n",
    "leetcode": "\n".join([*(f"import {m}" for m in _LEETCODE_PLAIN), *(f"from {m} import *" for m in _LEETCODE_STAR)])
                + "\n" + _LEETCODE_TYPES,
}
PRELUDES["taco"] = PRELUDES["apps"]
PRELUDES["bigcodebench"] = (
    "import os\nimport sys\nenviron = os.environ\n"
    + "".join(f"os.environ[{k!r}] = {v!r}\n" for k, v in (
        ("TZ", "UTC"), ("OMP_NUM_THREADS", "1"), ("TF_CPP_MIN_LOG_LEVEL", "3"), ("TF_ENABLE_ONEDNN_OPTS", "0")))
    + "__import__('time').tzset()\n")


def get_prelude(name: str) -> str:
    """The prelude source called ``name`` (a key of :data:`PRELUDES`).

    Raises:
        ValueError: unknown name (the message lists the known ones).
    """
    try:
        return PRELUDES[name]
    except KeyError:
        raise ValueError(f"prelude: unknown name {name!r}; use one of {sorted(PRELUDES)}") from None


def with_prelude(prelude: str, source: str) -> str:
    """``prelude`` then ``source``; the leading docstring/``from __future__`` imports of ``source`` stay
    first so the program still compiles. Source that does not parse is returned after the prelude."""
    if not prelude:
        return source
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return prelude + source
    end = 0
    for i, node in enumerate(body):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            end = node.end_lineno or 0
        elif not (i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            break
    if not end:
        return prelude + source
    lines = source.splitlines(keepends=True)
    head = "".join(lines[:end])
    return head + ("" if head.endswith("\n") else "\n") + prelude + "".join(lines[end:])


#: The ``prelude`` value of ``in_outs`` data that asks for no prelude at all.
NO_PRELUDE = "none"

__all__ = ["NO_PRELUDE", "PRELUDES", "get_prelude", "with_prelude"]
