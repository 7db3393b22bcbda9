"""docs/explanation/cases.md resolves every failure-case id the repository cites.

Code, tests and docs cite failure cases by id (the word ``BUG``, a hyphen, digits). The page gives
each id a table row: the rule judgebox keeps and the tests that pin it, written as a backticked test
file followed by backticked test function names of that file. These tests keep the page whole
(every cited id has exactly one row, every row names a test) and true (every test file and function
it names exists).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "explanation" / "cases.md"
# where ids are cited: Python of the package's parts, tests and scripts; Markdown of the docs and README
PY_DIRS = ("judgebox", "sandbox", "reward", "agent", "integrations", "tests", "scripts")
MD_DIRS = ("docs",)
MD_FILES = ("README.md",)
SKIP_PARTS = {"_build", "build", "__pycache__", ".venv-agent", "node_modules"}

ID = re.compile(r"\bBUG-\d+\b")
ROW = re.compile(r"^\|\s*(BUG-\d+)\s*\|")
CODE = re.compile(r"`([^`]+)`")
TEST_PATH = re.compile(r"tests/[\w./-]+\.py")
NAME = re.compile(r"^[A-Za-z_]\w*$")


def cited_files() -> list[Path]:
    files: list[Path] = []
    for folder, suffix in [(d, ".py") for d in PY_DIRS] + [(d, ".md") for d in MD_DIRS]:
        base = ROOT / folder
        if base.is_dir():
            files += [p for p in base.rglob(f"*{suffix}") if not SKIP_PARTS & set(p.relative_to(ROOT).parts)]
    files += [ROOT / name for name in MD_FILES if (ROOT / name).is_file()]
    return sorted(p for p in files if p.resolve() != PAGE.resolve())


def cited_ids() -> dict[str, list[str]]:
    """Each id cited outside the page -> the files that cite it."""
    where: dict[str, list[str]] = {}
    for path in cited_files():
        for case_id in sorted(set(ID.findall(path.read_text(encoding="utf-8", errors="replace")))):
            where.setdefault(case_id, []).append(str(path.relative_to(ROOT)))
    return where


def page_rows() -> dict[str, list[str]]:
    """Each table row of the page: its id -> its cells (the id's first row; duplicates are a test)."""
    rows: dict[str, list[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows.setdefault(m.group(1), [c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def pinned_tests(cell: str) -> list[tuple[str, str]]:
    """``(test file, function)`` pairs of a "Pinned by" cell: a backticked path, then its functions."""
    pairs: list[tuple[str, str]] = []
    current = None
    for token in CODE.findall(cell):
        if token.endswith(".py"):
            current = token
        elif NAME.match(token):
            assert current is not None, f"function `{token}` named before any test file in: {cell}"
            pairs.append((current, token))
    return pairs


@lru_cache(maxsize=None)
def functions_of(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)
    return frozenset(n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def test_the_repository_cites_ids_and_the_page_is_scanned_apart():
    # a sanity check of the scan itself: an empty result would make the next test pass vacuously
    assert len(cited_ids()) > 10
    assert PAGE not in cited_files()


def test_every_cited_id_has_a_row():
    rows = page_rows()
    missing = {case_id: files for case_id, files in cited_ids().items() if case_id not in rows}
    assert not missing, f"ids cited in the repository with no row on docs/explanation/cases.md: {missing}"


def test_each_id_has_one_row_with_a_rule_and_a_test():
    seen: dict[str, int] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            seen[m.group(1)] = seen.get(m.group(1), 0) + 1
    assert {i: n for i, n in seen.items() if n > 1} == {}
    for case_id, cells in page_rows().items():
        assert len(cells) == 3, f"{case_id}: a row is | id | rule | pinned by |, got {cells}"
        assert cells[1], f"{case_id}: no rule"
        assert pinned_tests(cells[2]), f"{case_id}: names no test function"


def test_every_named_test_file_exists():
    paths = set(TEST_PATH.findall(PAGE.read_text(encoding="utf-8")))
    assert paths
    assert sorted(p for p in paths if not (ROOT / p).is_file()) == []


def test_every_named_test_function_exists_in_its_file():
    wrong = []
    for case_id, cells in page_rows().items():
        for path, name in pinned_tests(cells[2]):
            if not (ROOT / path).is_file():
                wrong.append(f"{case_id}: {path} does not exist")
            elif name not in functions_of(path):
                wrong.append(f"{case_id}: {path} has no function {name}")
    assert wrong == []
