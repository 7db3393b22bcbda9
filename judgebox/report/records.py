"""Read what ``judgebox report`` shows: a results jsonl (``judgebox eval``), a trajectories jsonl
(``judgebox rollout``) or a verl rollout dump (the summary JSON: :mod:`judgebox.report.summary`).

Every file is read by the one rule of :mod:`judgebox.reward.results` (a torn last line is skipped
with a warning naming ``file:line``; any other bad line, a file with no complete record, a line of
another format or with a field out of range (:mod:`judgebox.report.validate`) is an error naming
``file:line`` and the field); a report never changes the files it reads. Text is kept as read: a
lone surrogate (``"\\ud800"``, valid JSON, not valid UTF-8) is shown on the page as U+FFFD.

The three formats, told apart by their first complete record (a record that has only some of its
format's keys is blamed on its own line, by the keys it lacks):

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from judgebox.report.validate import check_row
from judgebox.reward.results import scan_jsonl

Kind = Literal["eval", "rollout", "verl"]

#: keys that tell each format apart (all must be present in a record)
SIGNATURES: dict[str, tuple[str, ...]] = {
    "rollout": ("task_id", "sample_index", "response_ids", "response_mask"),
    "eval": ("task_id", "sample_id", "verdict"),
    "verl": ("input", "output", "score", "step"),
}
#: keys only a trajectory has: a record with one of them is a rollout record, whatever else it lacks
ROLLOUT_ONLY = ("sample_index", "response_ids", "response_mask")


@dataclass
class Records:
    """The newest record per key of one file, in file order, with what the reading dropped."""

    path: Path
    kind: Kind
    rows: list[dict[str, Any]]
    duplicates: int
    torn: Optional[int]


def article(word: str) -> str:
    """``word`` with its indefinite article: ``an eval``, ``a rollout``."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _kind_of(row: dict) -> Optional[str]:
    """The format a record is meant to be: ``rollout`` when it has a key only trajectories have (a
    trajectory also carries eval's keys); else the format whose keys it all has; else ``eval`` when it
    has ``task_id`` and ``verdict`` or ``sample_id``, ``verl`` when it has three of verl's four keys
    (its missing keys are then reported on its own line); else ``None``."""
    if any(k in row for k in ROLLOUT_ONLY):
        return "rollout"
    full = next((kind for kind, keys in SIGNATURES.items() if all(k in row for k in keys)), None)
    if full is not None:
        return full
    if "task_id" in row and ("verdict" in row or "sample_id" in row):
        return "eval"
    if sum(k in row for k in SIGNATURES["verl"]) >= 3:
        return "verl"
    return None


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
    """Read one results, trajectories or verl dump file (format and rules in the module docstring;
    each record's fields checked by :func:`judgebox.report.validate.check_row`).

    Raises:
        ValueError: the file is missing, a line is bad (not the last), a line is of another format or
            lacks a key of its format, a field is out of its range (``response_mask`` longer than
            ``response_ids``, a mask value 2, a negative token id ...), or no record is complete; the
            message names the file, the line and the field.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file; give the results jsonl of `judgebox eval` or the "
                         "trajectories jsonl of `judgebox rollout`")
    kind = _first_kind(path)
    needed = SIGNATURES[kind]
    order = iter(range(1 << 62))

    def key(row: dict) -> Any:
        mine = _kind_of(row)
        if mine != kind:
            raise TypeError(f"{article(mine + ' record') if mine else 'a record of no known format'} in a file "
                            f"whose first record is {article(kind + ' record')}")
        missing = [k for k in needed if k not in row]
        if missing:
            raise ValueError(f"{', '.join(missing)} missing: {article(kind)} file's records all have "
                             f"{', '.join(needed)}")
        check_row(kind, row)
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


def verl_task_id(row: dict) -> str:
    """A verl dump line's problem. The dump carries no problem id (its ``request_id`` names the
    sample), so the prompt text (``input``) names it: ``prompt-<first 10 hex digits of its sha256>``
    (of its UTF-8 bytes; a lone surrogate, which JSON allows, is hashed as its own three bytes)."""
    return "prompt-" + hashlib.sha256(str(row.get("input", "")).encode("utf-8", "surrogatepass")).hexdigest()[:10]
