"""Read dataset rows from local files: JSON Lines, JSON (a list, or ``{"data": [...]}``) and Parquet,
each optionally gzip-compressed (``.gz``)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any, Union


def read_rows(path: Union[str, Path]) -> list[dict[str, Any]]:
    """All rows of a dataset file, in file order (:func:`read_numbered_rows` without the places)."""
    return [row for _, row in read_numbered_rows(path)]


def read_numbered_rows(path: Union[str, Path]) -> list[tuple[str, dict[str, Any]]]:
    """All rows of a dataset file, in file order, each with where it is, as errors name it:
    ``file:LINE`` in a JSON Lines file (1-based, blank lines counted), ``file: row N`` (1-based)
    otherwise.

    Args:
        path: ``*.jsonl``, ``*.json`` or ``*.parquet``, optionally with a ``.gz`` suffix.

    Returns:
        ``(place, row)`` per row (Parquet nested columns become dicts/lists).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the suffix is not one of the above, or a line is not a JSON object (the message
            names the file and line).
    """
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    kind = suffixes[-2] if gz and len(suffixes) > 1 else (suffixes[-1] if suffixes else "")
    data = path.read_bytes()
    if gz:
        data = gzip.decompress(data)
    if kind == ".parquet":
        import pyarrow.parquet as pq

        return _numbered(path, pq.read_table(io.BytesIO(data)).to_pylist())
    text = data.decode("utf-8")
    if kind == ".json":
        loaded = json.loads(text)
        rows = loaded.get("data", loaded) if isinstance(loaded, dict) else loaded
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a JSON list of rows or {{'data': [...]}}")
        return _numbered(path, rows)
    if kind != ".jsonl":
        raise ValueError(f"{path}: unknown file type {kind or '(none)'}; use .jsonl, .json or .parquet"
                         " (optionally .gz)")
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{lineno}: expected a JSON object per line")
        rows.append((f"{path}:{lineno}", row))
    return rows


def _numbered(path: Path, rows: list) -> list[tuple[str, Any]]:
    return [(f"{path}: row {i}", row) for i, row in enumerate(rows, 1)]
