"""What a dataset's official harness gives its programs, checked against the sandbox before scoring.

A manifest's ``libraries`` (:class:`~judgebox.reward.loaders.manifest.Manifest`) name the modules the
official harness provides. A sandbox whose runtime lacks one would score every correct solution that
imports it 0 (``ModuleNotFoundError`` is the program's own error): :func:`require_libraries` refuses
to start instead, naming what is missing and the build command. A ``ModuleNotFoundError`` for a
module the dataset does not declare stays the program's own error.

Per row, where nothing can refuse up front (verl's ``compute_score``, TRL's ``code_reward``, the
judge), a spec whose ``prelude`` (the harness's import block) imports a module outside Python's
standard library that the sandbox lacks is judged ``infra_error`` without running the solution
(:func:`spec_missing_libraries`; one probe per client and set of names): the reward is masked, not 0.
"""

from __future__ import annotations

import ast
import functools
import json
import sys
import threading
import weakref
from typing import Optional, Sequence

from judgebox.sandbox.client import SandboxClient
from judgebox.sandbox.runtime import BUILD_COMMAND
from judgebox.sandbox.speedups.preload import preloadable

#: Probe programs per language: print the JSON list of the names in ``NAMES`` that cannot be loaded.
_PROBES = {
    "python": "import importlib.util, json\nNAMES = {names}\n"
              "print(json.dumps([n for n in NAMES if importlib.util.find_spec(n) is None]))",
    "nodejs": "const NAMES = {names};\nconsole.log(JSON.stringify(NAMES.filter(n => {{ try {{ require.resolve(n); "
              "return false; }} catch (e) {{ return true; }} }})));",
}


class MissingLibraries(ValueError):
    """The sandbox lacks libraries a dataset's harness provides; the message names them and the fix.
    ``missing``: their names."""

    def __init__(self, message: str, missing: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.missing = list(missing)


def missing_libraries(client: SandboxClient, language: str, names: Sequence[str]) -> list[str]:
    """The ``names`` (Python modules, Node.js packages) the sandbox's ``language`` programs cannot load
    (TypeScript's are Node.js's). Other languages are not checked (``[]``).

    Raises:
        SandboxInfraError: the sandbox did not answer; RuntimeError: the probe itself failed.
    """
    language = "nodejs" if language == "typescript" else language  # tsx runs on node, with the same NODE_PATH
    probe = _PROBES.get(language)
    if probe is None or not names:
        return []
    r = client.run_code({"code": probe.format(names=json.dumps(list(names))), "language": language,
                         "run_timeout": 60, "memory_limit_MB": 1024})
    if r.status != "Success" or r.run_result is None:
        raise RuntimeError(f"the library probe of {language} failed: {r.status} {r.message} "
                           f"{r.run_result and r.run_result.stderr[-300:]}")
    return list(json.loads(r.run_result.stdout))


def require_libraries(client: SandboxClient, dataset: str, language: str, names: Sequence[str],
                      profile: str = "default") -> None:
    """Refuse to score ``dataset`` when the sandbox lacks any of ``names`` (see the module docstring).
    ``profile``: the runtime profile that has them (named in the error).

    Raises:
        MissingLibraries: naming the dataset, the missing libraries and the build command.
    """
    missing = missing_libraries(client, language, names)
    if missing:
        raise MissingLibraries(missing_message(f"{dataset}: the", language, missing, profile), missing)


def missing_message(subject: str, language: str, missing: Sequence[str], profile: Optional[str] = "default") -> str:
    """The text of :class:`MissingLibraries` (``subject``: e.g. ``"humaneval: the"``; ``profile``: the
    runtime profile that has the libraries, ``None`` when the caller does not know the dataset's)."""
    if profile is None:
        build = (f"a program runtime that has them (`{BUILD_COMMAND.format(name='PROFILE')}`: `default`, or the "
                 "profile the dataset's manifest names, e.g. `bigcodebench`, run with JUDGEBOX_RUNTIME=PROFILE)")
    else:
        use = "" if profile == "default" else f" and run the sandbox with JUDGEBOX_RUNTIME={profile}"
        build = f"the program runtime (`{BUILD_COMMAND.format(name=profile)}`){use}"
    return (f"{subject} sandbox's {language} programs cannot import {', '.join(missing)}, which the "
            f"dataset's official harness provides; every correct solution using them would score 0. Build "
            f"{build} or use a sandbox that has them")


def prelude_libraries(prelude: str) -> list[str]:
    """The top-level modules outside Python's standard library (``sys.stdlib_module_names``) that the
    Python source ``prelude`` imports, sorted; ``[]`` when it does not parse."""
    return list(_prelude_modules(prelude))


@functools.lru_cache(maxsize=64)
def prelude_preload(prelude: str) -> tuple[str, ...]:
    """The standard-library modules the Python source ``prelude`` imports (dotted, sorted) that a
    sandbox may fork the run with already imported (``forkserver_preload``): a prelude of ~30
    ``from m import *`` lines then costs a few dictionary copies instead of ~20 ms of imports per run."""
    return tuple(sorted(m for m in _imported(prelude) if preloadable(m)))


@functools.lru_cache(maxsize=64)
def _prelude_modules(prelude: str) -> tuple[str, ...]:  # the judge asks once per submission
    tops = {m.split(".")[0] for m in _imported(prelude)}
    return tuple(sorted(tops - set(sys.stdlib_module_names) - {"__future__"}))


@functools.lru_cache(maxsize=64)
def _imported(prelude: str) -> frozenset[str]:
    """Every module (dotted name) an ``import`` or absolute ``from ... import`` of ``prelude`` names."""
    try:
        tree = ast.parse(prelude)
    except (SyntaxError, ValueError):
        return frozenset()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return frozenset(names)


_probed: "weakref.WeakKeyDictionary[SandboxClient, dict[tuple[str, ...], list[str]]]" = weakref.WeakKeyDictionary()
_probed_lock = threading.Lock()


def spec_missing_libraries(client: SandboxClient, language: str, prelude: str,
                           libraries: Sequence[str] = ()) -> list[str]:
    """The libraries a spec's ``prelude`` imports, and its declared ``libraries``, that ``client``'s
    sandbox lacks (``[]`` when it has them, for a spec with neither, and when the probe could not run:
    the judge's own run then reports the sandbox's failure). Probed once per client and set of names
    (a ~50 ms run).
    """
    names = _prelude_modules(prelude) if prelude else ()
    if libraries:
        names = tuple(sorted({*names, *libraries}))
    if not names:
        return []
    with _probed_lock:
        known = _probed.setdefault(client, {}).get(names)
    if known is None:
        try:
            known = missing_libraries(client, language, names)
        except Exception:  # noqa: BLE001 - the probe's failure is the sandbox's: the judge's run tells it
            return []
        with _probed_lock:
            _probed.setdefault(client, {})[names] = known
    return list(known)
