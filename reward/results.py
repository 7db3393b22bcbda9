"""The one rule for reading a results or trajectory jsonl (``judgebox eval``, ``judgebox rollout``,
their resume and their summaries), BUG-211:

- a last line cut short by a kill (no newline, not parseable JSON) is dropped with a warning naming
  ``file:line`` and truncated away, so appends start on a fresh line;
- a bad line anywhere else, or a file with content but no complete record, is an error naming
  ``file:line`` (never skipped: it would silently lose or double-count a sample);
- a key written twice (a re-scored infrastructure error, a copied line) counts once, the newest;
  :func:`compact` rewrites the file with one line per key.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger("judgebox.reward")

Key = tuple[str, int]


@dataclass
class ResultsFile:
    """What :func:`read_results` found: the newest ``records`` per ``(task_id, sample_id)``, how many
    older lines of a key were dropped (``duplicates``), and the line number of a torn last line that
    was dropped (``torn``, or ``None``)."""

    records: dict[Any, dict[str, Any]] = field(default_factory=dict)
    duplicates: int = 0
    torn: int | None = None
    size: int = 0  #: bytes read
    tail: int = 0  #: bytes after the last newline (a torn line, or a record whose newline was cut)


def scan_jsonl(path: Path, key: Callable[[dict], Any] = lambda row: (row["task_id"], row["sample_id"]),
               what: str = "result record", torn_note: str = "the records before it are read") -> ResultsFile:
    """Parse ``path`` by the rule of the module docstring without changing it: ``records`` keyed by
    ``key(row)`` (newest wins), ``torn`` the line number of a torn last line (skipped, with a
    warning naming ``file:line`` and ending with ``torn_note``). A missing file is empty. A last line
    is torn only when it does not parse as JSON: a complete JSON line that ``key`` refuses is an error
    like any other (a kill cannot cut a record into a shorter valid one).

    Raises:
        ValueError: a line other than a torn last one is not a JSON object that ``key`` accepts
            (``what`` names the record expected), or the file has content and no complete record;
            the message names ``file:line``.
    """
    path = Path(path)
    if not path.exists():
        return ResultsFile()
    data = path.read_bytes()
    lines = data.split(b"\n")
    found = ResultsFile()
    an = "an" if what[:1].lower() in "aeiou" else "a"
    last = len(lines) - 1  # the text after the final newline: empty, or a line the writer did not finish
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError as exc:
            if number - 1 == last:  # a line cut by a kill does not parse; a complete one is checked below
                found.torn = number
                continue
            raise ValueError(f"{path}:{number}: not {an} {what} ({type(exc).__name__}: {exc}); fix or "
                             "remove that line (only a torn last line is dropped by itself)") from None
        try:
            if not isinstance(row, dict):
                raise TypeError(f"a JSON {type(row).__name__}, not an object")
            row_key = key(row)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not {an} {what} ({type(exc).__name__}: {exc}); fix or "
                             "remove that line (only a torn last line is dropped by itself)") from None
        if row_key in found.records:
            found.duplicates += 1
        found.records[row_key] = row
    if found.torn is not None:
        if not found.records:
            raise ValueError(f"{path}:{found.torn}: the only line is torn (cut by a kill) and no record is "
                             "complete; remove the file to start again")
        log.warning("%s:%d: a torn last line (cut by a kill) was dropped; %s", path, found.torn, torn_note)
    found.size = len(data)
    found.tail = len(lines[-1])
    return found


def read_results(path: Path) -> ResultsFile:
    """Read ``path`` by the rule of the module docstring (a missing file is empty) for a run that
    appends to it: a torn last line is also truncated away, and a last record whose newline was cut
    gets one.

    Raises:
        ValueError: a line other than a torn last one is not a JSON record with ``task_id`` and
            ``sample_id``, or the file has content and no complete record; the message names
            ``file:line``.
    """
    path = Path(path)
    found = scan_jsonl(path, torn_note="its sample is scored again")
    if found.torn is not None:
        with open(path, "r+b") as fh:
            fh.truncate(found.size - found.tail)
    elif found.tail:  # a complete record whose newline was cut: give it one
        with open(path, "ab") as fh:
            fh.write(b"\n")
    return found


def compact(path: Path, records: dict[Key, dict[str, Any]]) -> None:
    """Rewrite ``path`` with one line per key (``records``: the newest of each), atomically."""
    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            for row in records.values():
                out.write(json.dumps(row) + "\n")
            out.flush()
            os.fsync(out.fileno())

    replace_atomically(path, write)


def replace_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Write ``path`` whole or not at all: ``write(tmp)`` fills a temporary file beside it (same folder,
    a hidden name), which then replaces ``path`` in one rename; a crash or an error leaves ``path`` as
    it was and no temporary file. The file keeps the mode of the one it replaces (a new one: 0666
    less the umask)."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}"
    # made with 0666, which the kernel lowers by the umask (os.umask would change it for every thread)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        write(tmp)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class JsonlAppender:
    """Append one JSON record per line to ``path`` as results complete (``judgebox eval``, ``judgebox rollout``).

    Each record is written and flushed at once, so a killed or crashed process loses nothing it
    wrote (the kernel holds it). ``fsync`` runs at most once per ``sync_every_s`` seconds and at
    :meth:`close`, so a machine crash loses at most that window, which a resume scores again. An
    fsync per record cost about 1.3 ms of the event loop each: 0.2 s of a 3.3 s HumanEval eval.

    One writer per file: the file is locked (``flock``) while open, so a second run on the same
    file stops at once instead of scoring every sample again beside the first.

    Args:
        path: the jsonl file, opened for appending (created if missing).
        sync_every_s: seconds between fsyncs (0: after every record).

    Raises:
        ValueError: another process is writing ``path`` (the message names it and the fix).
    """

    def __init__(self, path: Path, sync_every_s: float = 1.0) -> None:
        self._out = open(path, "a", encoding="utf-8")
        try:
            fcntl.flock(self._out.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._out.close()
            raise ValueError(f"{path}: another process is writing these results now (a second run on the "
                             f"same file); wait for it to end, or give another output path") from None
        self.sync_every_s = sync_every_s
        self._synced = time.monotonic()

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line, flushed (fsynced when ``sync_every_s`` has passed)."""
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()
        now = time.monotonic()
        if now - self._synced >= self.sync_every_s:
            os.fsync(self._out.fileno())
            self._synced = now

    def close(self) -> None:
        """fsync what is left, then close."""
        if not self._out.closed:
            try:
                self._out.flush()
                os.fsync(self._out.fileno())
            finally:
                self._out.close()

    def __enter__(self) -> "JsonlAppender":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
