"""What a command may write (issue 39): before any work, every output path of a run is checked against
every input and output of the same run, and against what the file already is.

- Two roles of one run naming the same file (``--html`` over ``--results``, ``--summary`` over
  ``--samples``) are refused, always.
- An output the run *replaces* (a summary, a report page, a chart, a parquet) may replace only the
  same kind of file written for the same run: a summary or chart of the same results file, a page
  of the same records file, a parquet of the same dataset. Anything else that is there (a results
  file, a dataset, another run's summary or page, a file judgebox did not write) is refused with one
  line naming the flag, the path and what it holds, unless ``--force`` (never for a results or
  trajectories file: those are hours of work, replaced by no run). (One of the same kind that
  names no run, written before these files named theirs, is replaced: it can be made again from its
  results.) These files are then written whole or not at all
  (:func:`judgebox.reward.results.replace_atomically`).
- An output the run *appends* to (``eval --results``, ``rollout --out``) is resumed when it is the
  same kind of file for the same dataset (its first record's task is one of the dataset's), and
  refused otherwise (``--force`` never makes a run append to a file of another kind).
- A path that does not exist, or an empty file, is never refused.

Each written file names its run so that a later run can tell: the summary's ``results_file``, the
page's ``<meta name="judgebox-source">``, the chart's PNG text chunk ``judgebox-source`` and the
parquet's ``judgebox`` schema metadata (``{"dataset": ...}``).
"""

from __future__ import annotations

import html
import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Optional

Kind = Literal["input", "results", "trajectories", "summary", "page", "chart", "parquet"]
#: the kinds a run appends to (resumed, never replaced)
APPENDED = ("results", "trajectories")
#: what each kind is called in a message
NAMES = {"results": "a judgebox results file", "trajectories": "a judgebox trajectories file",
         "summary": "a judgebox summary", "page": "a judgebox report page", "chart": "a judgebox chart",
         "parquet": "a parquet file"}
#: the name of the chart's PNG text chunk and of the page's meta tag that name the run's file
SOURCE_KEY = "judgebox-source"
_HEAD_BYTES = 1 << 16
_LINE_BYTES = 1 << 24


class OutputRefused(ValueError):
    """An output path the run may not write; the message is one line naming the flag, the path, what
    the file is (or which other role of the run names it) and the fix."""


@dataclass(frozen=True)
class Role:
    """One file of a run: the flag that named it, its path, and what the run does with it."""

    flag: str
    path: Path
    kind: Kind


@dataclass(frozen=True)
class Found:
    """What a file already holds: its kind (``None``: absent or empty; ``"other"``: not a file judgebox
    writes), the run it names (a path or dataset; ``None`` when it names none) and a description."""

    kind: Optional[str]
    owner: Optional[str]
    text: str


def check_outputs(roles: Iterable[Role], owners: dict[str, str], *, force: bool = False,
                  task_ids: Optional[set[str]] = None) -> None:
    """Refuse the run's outputs by the rules of the module docstring, before it starts.

    Args:
        roles: every input and output of the run (``None`` paths left out by the caller).
        owners: per output kind, the run it is written for (``summary``/``chart``: the results file's
            absolute path; ``page``: the records file's; ``parquet``: the dataset's name).
        force: replace a replaced output whatever it holds, except a results or trajectories file (never
            an appended one, never another role).
        task_ids: the dataset's task ids: an appended output must hold records of these.

    Raises:
        OutputRefused: the first output the run may not write.
    """
    roles = list(roles)
    for i, role in enumerate(roles):
        for other in roles[i + 1:]:
            if (role.kind != "input" or other.kind != "input") and _same_file(role.path, other.path):
                mine, theirs = (other, role) if other.kind != "input" else (role, other)  # blame the later output
                raise OutputRefused(f"{mine.flag} {mine.path}: it is also {theirs.flag} {theirs.path} of this run; "
                                    f"give {mine.flag} another path")
    for role in roles:
        if role.kind == "input":
            continue
        found = identify(role.path)
        if found.kind is None:
            continue
        if role.kind in APPENDED:
            if found.kind != role.kind:
                raise OutputRefused(f"{role.flag} {role.path}: it holds {found.text}, not {NAMES[role.kind]} to "
                                    f"resume; give {role.flag} another path (a run only appends to its own)")
            if task_ids is not None and found.owner is not None and found.owner not in task_ids:
                raise OutputRefused(f"{role.flag} {role.path}: it holds {found.text} of another dataset (its task "
                                    f"{found.owner!r} is not one of this one's); give {role.flag} another path")
            continue
        owner = owners.get(role.kind)
        if found.kind == role.kind and found.owner in (owner, None):  # None: written before files named their run
            continue
        if found.kind in APPENDED:  # hours of scoring or generation: never replaced, --force or not
            raise OutputRefused(f"{role.flag} {role.path}: it holds {found.text}, which no run replaces (not even "
                                f"with --force); give {role.flag} another path")
        if not force:
            whose = f" of {found.owner}" if found.kind == role.kind and found.owner else ""
            raise OutputRefused(f"{role.flag} {role.path}: it holds {found.text}{whose}, not this run's; pass "
                                f"--force to replace it, or give {role.flag} another path")


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def identify(path: Path) -> Found:
    """What ``path`` holds (see :class:`Found`), read from its first bytes (a jsonl's first line, a
    summary whole: it is small)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size == 0:
            return Found(None, None, "nothing")
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return Found(None, None, "nothing")
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        owner = _png_text(head).get(SOURCE_KEY)
        return Found("chart" if owner else "other", owner, NAMES["chart"] if owner else "a PNG image")
    if head.startswith(b"PAR1"):
        return Found("parquet", _parquet_dataset(path), "a parquet file")
    stripped = head.lstrip()
    if stripped[:15].lower().startswith((b"<!doctype html", b"<html")):
        if b'content="judgebox report"' not in head:
            return Found("other", None, "an HTML page judgebox did not write")
        m = re.search(rb'<meta name="judgebox-source" content="([^"]*)">', head)
        return Found("page", html.unescape(m.group(1).decode("utf-8", "replace")) if m else None, NAMES["page"])
    if stripped.startswith(b"{"):
        return _json_kind(path, head, size)
    return Found("other", None, f"a file of {size} bytes judgebox did not write")


def _json_kind(path: Path, head: bytes, size: int) -> Found:
    """A JSON or JSONL file: a results or trajectories file (its first record's task as the owner), a
    summary (its ``results_file``), or another (a dataset, samples)."""
    line = head.split(b"\n", 1)[0]
    if b"\n" not in head and size > len(head):
        with open(path, "rb") as f:
            line = f.readline(_LINE_BYTES)
    try:
        first = json.loads(line)
    except ValueError:
        first = None
    if isinstance(first, dict):
        if all(k in first for k in ("task_id", "sample_index", "response_ids", "response_mask")):
            return Found("trajectories", str(first["task_id"]), NAMES["trajectories"])
        if all(k in first for k in ("task_id", "sample_id", "verdict")):
            return Found("results", str(first["task_id"]), NAMES["results"])
        if not _summary(first):
            return Found("other", None, f"a JSON lines file of {size} bytes (a dataset or samples?)")
    whole = first
    if not isinstance(first, dict) and size <= _LINE_BYTES:
        try:
            whole = json.loads(path.read_bytes())
        except ValueError:
            whole = None
    if _summary(whole):
        owner = whole.get("results_file")
        return Found("summary", str(owner) if owner else None, f"{NAMES['summary']} of dataset {whole['dataset']!r}")
    return Found("other", None, f"a JSON file of {size} bytes judgebox did not write")


def _summary(value: object) -> bool:
    return isinstance(value, dict) and {"dataset", "n_samples", "pass_at_k"} <= set(value)


def _png_text(head: bytes) -> dict[str, str]:
    """The ``tEXt`` chunks before the image data of a PNG file's first bytes (the PNG specification's
    chunk layout: 4-byte big-endian length, type, data, CRC)."""
    found, at = {}, 8
    while at + 8 <= len(head):
        length, kind = struct.unpack(">I4s", head[at:at + 8])
        if kind == b"IDAT" or at + 12 + length > len(head):
            break
        if kind == b"tEXt":
            key, _, value = head[at + 8:at + 8 + length].partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        at += 12 + length
    return found


def _parquet_dataset(path: Path) -> Optional[str]:
    """The dataset a parquet file written by ``judgebox data convert`` names (its schema metadata
    ``judgebox``), or ``None``."""
    try:
        import pyarrow.parquet as pq

        meta = pq.read_schema(path).metadata or {}
        return json.loads(meta[b"judgebox"]).get("dataset") if b"judgebox" in meta else None
    except Exception:  # not readable as parquet: it names no dataset
        return None


__all__ = ["APPENDED", "Found", "OutputRefused", "Role", "SOURCE_KEY", "check_outputs", "identify"]
