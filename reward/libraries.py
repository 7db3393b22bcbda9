"""What a dataset's official harness gives its programs, checked against the sandbox before scoring.

A manifest's ``libraries`` (:class:`~judgebox.reward.loaders.manifest.Manifest`) name the modules the
official harness provides. A sandbox whose runtime lacks one would score every correct solution that
imports it 0 (``ModuleNotFoundError`` is the program's own error): :func:`require_libraries` refuses
to start instead, naming what is missing and the build command. A ``ModuleNotFoundError`` for a
module the dataset does not declare stays the program's own error.
"""

from __future__ import annotations

import json
from typing import Sequence

from judgebox.sandbox.client import SandboxClient
from judgebox.sandbox.runtime import BUILD_COMMAND

#: Probe programs per language: print the JSON list of the names in ``NAMES`` that cannot be loaded.
_PROBES = {
    "python": "import importlib.util, json\nNAMES = {names}\n"
              "print(json.dumps([n for n in NAMES if importlib.util.find_spec(n) is None]))",
    "nodejs": "const NAMES = {names};\nconsole.log(JSON.stringify(NAMES.filter(n => {{ try {{ require.resolve(n); "
              "return false; }} catch (e) {{ return true; }} }})));",
}


class MissingLibraries(ValueError):
    """The sandbox lacks libraries a dataset's harness provides; the message names them and the fix."""


def missing_libraries(client: SandboxClient, language: str, names: Sequence[str]) -> list[str]:
    """The ``names`` (Python modules, Node.js packages) the sandbox's ``language`` programs cannot load.
    Other languages are not checked (``[]``).

    Raises:
        SandboxInfraError: the sandbox did not answer; RuntimeError: the probe itself failed.
    """
    probe = _PROBES.get(language)
    if probe is None or not names:
        return []
    r = client.run_code({"code": probe.format(names=json.dumps(list(names))), "language": language,
                         "run_timeout": 60, "memory_limit_MB": 1024})
    if r.status != "Success" or r.run_result is None:
        raise RuntimeError(f"the library probe of {language} failed: {r.status} {r.message} "
                           f"{r.run_result and r.run_result.stderr[-300:]}")
    return list(json.loads(r.run_result.stdout))


def require_libraries(client: SandboxClient, dataset: str, language: str, names: Sequence[str]) -> None:
    """Refuse to score ``dataset`` when the sandbox lacks any of ``names`` (see the module docstring).

    Raises:
        MissingLibraries: naming the dataset, the missing libraries and the build command.
    """
    missing = missing_libraries(client, language, names)
    if missing:
        raise MissingLibraries(
            f"{dataset}: the sandbox's {language} programs cannot import {', '.join(missing)}, which the "
            f"dataset's official harness provides; every correct solution using them would score 0. Build "
            f"the program runtime (`{BUILD_COMMAND.format(name='default')}`) or use a sandbox that has them")
