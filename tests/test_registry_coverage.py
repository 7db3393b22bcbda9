"""Every registered name is named by a test: registering a checker, tool-call parser, language recipe,
loader format, harness builder or prelude without a test fails here, naming the entry.

A name counts as tested when some test source (``tests/**/*.py``, this file aside; the recordings'
cases in ``tests/reward/record_responses.py`` count, as ``test_judge_recorded.py`` runs them) holds it
as a quoted string literal (``"lines"``, ``'gpt-oss'``; inside a longer code string too, as in
``'{"checker": "float"}'``). A test that only loops over a registry does not name a new entry: name
it in a test that exercises it. Some registries accept other spellings that reach the same entry:

- harness builders (``judgebox.reward.harness.multipl.BUILDERS``, keyed by sandbox language): any
  dataset spelling that a harness spec resolves to that language (``js`` -> ``nodejs``, MultiPL-E's
  ``go`` -> ``go_test`` -> ``go``), looked for in ``tests/reward`` only (where harness specs are
  judged; ``"cpp"`` in a sandbox test says nothing of the C++ test-program builder);
- output checkers: looked for in ``tests/reward`` only;
- loader formats (``judgebox.reward.loaders.FORMATS``): the format's name, or the name of a dataset
  manifest of that format (``multipl-e-js`` is how the ``multipl-e`` format is loaded).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

import pytest

TESTS = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def sources(under: str = "") -> dict[str, str]:
    """``{path relative to tests/: text}`` of the test sources below ``tests/<under>``, this file aside."""
    root = TESTS / under if under else TESTS
    return {str(p.relative_to(TESTS)): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(root.rglob("*.py")) if p.resolve() != Path(__file__).resolve()}


def quoted(name: str) -> re.Pattern[str]:
    return re.compile(r"""(["'])%s\1""" % re.escape(name))


def naming(spellings: Iterable[str], under: str = "") -> list[str]:
    """The test files below ``tests/<under>`` that hold one of ``spellings`` as a quoted literal."""
    patterns = [quoted(s) for s in spellings]
    return [path for path, text in sources(under).items() if any(p.search(text) for p in patterns)]


# ------------------------------------------------------------------------------------- the registries
def checkers() -> dict[str, set[str]]:
    from judgebox.reward.checkers import CHECKERS
    return {name: {name} for name in CHECKERS}


def parsers() -> dict[str, set[str]]:
    from judgebox.agent.parsers import parser_names
    return {name: {name} for name in parser_names()}


def recipes() -> dict[str, set[str]]:
    from judgebox.sandbox.languages import RECIPES
    return {name: {name} for name in RECIPES}


def formats() -> dict[str, set[str]]:
    from judgebox.reward.loaders import FORMATS, get_manifest, list_manifests
    manifests = [m if not isinstance(m, str) else get_manifest(m) for m in list_manifests()]
    return {name: {name} | {m.name for m in manifests if m.format == name} for name in FORMATS}


def builders() -> dict[str, set[str]]:
    from judgebox.reward.harness import LANGUAGE_ALIASES, sandbox_language
    from judgebox.reward.harness.multipl import BUILDERS
    from judgebox.reward.loaders.multiple import LANGUAGES as MULTIPL_E_LANGUAGES
    from judgebox.reward.spec import TestSpec
    from judgebox.sandbox.languages import RECIPES

    def resolved(spelling: str) -> str:
        language = MULTIPL_E_LANGUAGES.get(spelling, spelling)
        return sandbox_language(TestSpec(kind="harness", language=language, harness="x"))

    spellings = {*LANGUAGE_ALIASES, *MULTIPL_E_LANGUAGES, *BUILDERS, *RECIPES}
    for language in MULTIPL_E_LANGUAGES.values():
        spellings.add(language)
    return {name: {s for s in spellings if resolved(s) == name} | {name} for name in BUILDERS}


def preludes() -> dict[str, set[str]]:
    from judgebox.reward.preludes import PRELUDES
    return {name: {name} for name in PRELUDES}


#: registry -> (its entries and the spellings that name each, the tests/ folder searched or "")
REGISTRIES: dict[str, tuple[Callable[[], dict[str, set[str]]], str]] = {
    "judgebox.reward.checkers.CHECKERS": (checkers, "reward"),
    "judgebox.agent.parsers.parser_names()": (parsers, ""),
    "judgebox.sandbox.languages.RECIPES": (recipes, ""),
    "judgebox.reward.loaders.FORMATS": (formats, ""),
    "judgebox.reward.harness.multipl.BUILDERS": (builders, "reward"),
    "judgebox.reward.preludes.PRELUDES": (preludes, ""),
}


@pytest.mark.parametrize("registry", list(REGISTRIES))
def test_every_registered_entry_is_named_by_a_test(registry):
    entries, under = REGISTRIES[registry]
    found = entries()
    assert found, f"{registry} is empty: the registry moved? update tests/test_registry_coverage.py"
    missing = {name: sorted(spellings) for name, spellings in found.items() if not naming(spellings, under)}
    where = f"tests/{under}" if under else "tests/"
    assert not missing, (f"{registry}: no test under {where} names {', '.join(sorted(missing))} "
                         f"(looked for the quoted spellings {missing}); add a test that exercises it")


def test_a_new_entry_without_a_test_fails_naming_it(monkeypatch):
    """Registering a checker no test names makes the check fail with its name."""
    from judgebox.reward.checkers import CHECKERS
    monkeypatch.setitem(CHECKERS, "judgebox-unnamed-mode", CHECKERS["lines"])
    with pytest.raises(AssertionError, match="judgebox-unnamed-mode"):
        test_every_registered_entry_is_named_by_a_test("judgebox.reward.checkers.CHECKERS")


def test_the_scan_sees_a_name_only_as_a_quoted_literal():
    """The scan itself: a quoted name counts, a bare word or a longer literal does not."""
    assert quoted("lines").search("checker='lines'") and quoted("lines").search('{"checker": "lines"}')
    assert not quoted("lines").search("# compare the lines") and not quoted("lines").search('"lines2"')
    assert "test_registry_coverage.py" not in sources()
