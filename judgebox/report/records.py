"""Read what ``judgebox report`` shows: a results jsonl (``judgebox eval``), a trajectories jsonl
(``judgebox rollout``) or a verl rollout dump, and the optional summary JSON.

Every file is read by the one rule of :mod:`judgebox.reward.results` (a torn last line is skipped
with a warning naming ``file:line``; any other bad line, a file with no complete record, or a line of
another format is an error naming ``file:line``); a report never changes the files it reads.

The three formats, told apart by their first complete record:

- ``eval``: ``task_id``, ``sample_id``, ``verdict`` (one sample per line, newest line per
  ``(task_id, sample_id)`` wins);
- ``rollout``: ``task_id``, ``sample_index``, ``response_ids``, ``response_mask`` (one trajectory per
  line, newest per ``(task_id, sample_index)``);
- ``verl``: verl's ``trainer.rollout_data_dir`` dump (``RayPPOTrainer._write_generations``, verl
  0.9.1): ``input``, ``output``, ``score``, ``step``, plus the reward function's extra keys
  (``judgebox``'s ``compute_score`` adds ``verdict``, ``pass_rate`` ...). It carries decoded text,
  no token ids and no ``response_mask``: the page shows its text, not a policy/observation split.
  Its problems are its distinct prompts (``input``); each line is one sample.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from judgebox.reward.results import scan_jsonl

Kind = Literal["eval", "rollout", "verl"]

#: keys that tell each format apart (all must be present in a record)
SIGNATURES: dict[str, tuple[str, ...]] = {
    "rollout": ("task_id", "sample_index", "response_ids", "response_mask"),
    "eval": ("task_id", "sample_id", "verdict"),
    "verl": ("input", "output", "score", "step"),
}


@dataclass
class Records:
    """The newest record per key of one file, in file order, with what the reading dropped."""

    path: Path
    kind: Kind
    rows: list[dict[str, Any]]
    duplicates: int
    torn: Optional[int]


def _kind_of(row: dict) -> Optional[str]:
    return next((kind for kind, keys in SIGNATURES.items() if all(k in row for k in keys)), None)


def _first_kind(path: Path) -> Kind:
    """The format of the file's first line that is a complete JSON object."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError as exc:
                if not raw.endswith(b"\n"):
                    raise ValueError(f"{path}:{number}: the only line is torn (cut by a kill) and no record "
                                     "is complete; there is nothing to report") from None
                raise ValueError(f"{path}:{number}: not a JSON record ({exc}); give a judgebox eval results "
                                 "jsonl, a judgebox rollout jsonl or a verl rollout dump") from None
            kind = _kind_of(row) if isinstance(row, dict) else None
            if kind is None:
                keys = ", ".join(list(row)[:8]) if isinstance(row, dict) else type(row).__name__
                raise ValueError(f"{path}:{number}: not a judgebox eval result, rollout trajectory or verl "
                                 f"rollout dump record (keys: {keys}); give one of those files")
            return kind  # type: ignore[return-value]
    raise ValueError(f"{path}: no complete record (empty, or only a line cut by a kill); give a results "
                     "or trajectories jsonl with at least one record")


def read_records(path: Path) -> Records:
    """Read one results, trajectories or verl dump file (format and rules in the module docstring).

    Raises:
        ValueError: the file is missing, a line is bad (not the last), a line is of another format,
            or no record is complete; the message names the file (and line).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file; give the results jsonl of `judgebox eval` or the "
                         "trajectories jsonl of `judgebox rollout`")
    kind = _first_kind(path)
    needed = SIGNATURES[kind]
    order = iter(range(1 << 62))

    def key(row: dict) -> Any:
        missing = [k for k in needed if k not in row]
        if missing:
            raise KeyError(f"{', '.join(missing)} missing: a {kind} file's records all have {', '.join(needed)}")
        if _kind_of(row) != kind:
            raise TypeError(f"a {_kind_of(row)} record in a file whose first record is a {kind} record")
        if kind == "eval":
            return row["task_id"], row["sample_id"]
        if kind == "rollout":
            return row["task_id"], row["sample_index"]
        return next(order)  # verl: every line is its own sample

    found = scan_jsonl(path, key=key, what=f"{kind} record", torn_note="the report shows the records before it")
    if not found.records:
        raise ValueError(f"{path}: no complete record; give a results or trajectories jsonl with at least one record")
    return Records(path=path, kind=kind, rows=list(found.records.values()), duplicates=found.duplicates,
                   torn=found.torn)


def read_summary(path: Path, records: Records) -> dict[str, Any]:
    """The summary JSON written with ``records`` (``judgebox eval/rollout --summary``), checked
    against them: its sample count and verdict counts must be the file's.

    Raises:
        ValueError: the file is missing or not JSON (naming ``file:line``), not a judgebox summary,
            given for a verl dump, or its counts differ from the records' (naming both).
    """
    path = Path(path)
    if records.kind == "verl":
        raise ValueError(f"--summary {path}: a verl rollout dump has no judgebox summary; leave --summary out")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"--summary {path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not JSON ({exc.msg}); give the summary JSON that "
                         "`judgebox eval/rollout --summary` wrote") from None
    if not isinstance(data, dict) or not {"dataset", "verdicts", "n_samples", "pass_at_k"} <= set(data):
        raise ValueError(f"{path}: not a judgebox eval or rollout summary (it needs dataset, n_samples, "
                         "verdicts, pass_at_k); give the file `--summary` wrote")
    mine = Counter(str(r.get("verdict")) for r in records.rows)
    theirs = {str(k): int(v) for k, v in (data.get("verdicts") or {}).items() if v}
    if data["n_samples"] != len(records.rows) or theirs != dict(mine):
        raise ValueError(f"{path} does not match {records.path}: the summary counts {data['n_samples']} samples "
                         f"({_counts(theirs)}), the file holds {len(records.rows)} ({_counts(mine)}); give the "
                         "summary written with this file, or leave --summary out (the report then computes one)")
    return data


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def verl_task_id(row: dict) -> str:
    """A verl dump line's problem. The dump carries no problem id (its ``request_id`` names the
    sample), so the prompt text (``input``) names it: ``prompt-<first 10 hex digits of its sha256>``."""
    return "prompt-" + hashlib.sha256(str(row.get("input", "")).encode()).hexdigest()[:10]
