"""The summary JSON ``judgebox report --summary`` takes, checked against the records it claims to
summarise: every field the records can confirm must agree, or the report stops with an error naming
the summary file, the field and both values (a page never shows a summary of another run).

What the records confirm (a field the summary leaves out is not checked):

- ``n_samples`` and ``verdicts``: the file's sample count and samples per verdict;
- ``dataset``: the records' own ``dataset`` field, when every record carries the same one;
- ``problems`` (task ids with their ``n`` scored samples and ``c`` accepted ones), ``n_problems_scored``,
  ``n_scored``, ``n_passed``, ``min_n``/``max_n``, and ``n_problems - n_problems_unattempted`` (the
  problems with a sample: those in the file);
- ``pass_at_k``, ``pass_at_k_attempted`` and which k ``pass_at_k_omitted`` leaves out: recomputed
  from the records (:func:`judgebox.reward.report.summarize`, with the summary's own unattempted
  problems counted 0) for the k the summary names, equal within ``1e-9``;
- rollouts: ``mean_reward`` (over ``reward_score`` values, within ``1e-9``) and ``stop_reasons``.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from judgebox.report.records import Records
from judgebox.reward.report import summarize

#: absolute and relative tolerance for a recomputed float (pass@k, mean reward)
TOLERANCE = 1e-9
REQUIRED = ("dataset", "verdicts", "n_samples", "pass_at_k")


def read_summary(path: Path, records: Records) -> dict[str, Any]:
    """The summary JSON written with ``records`` (``judgebox eval/rollout --summary``), checked
    against them (the fields of the module docstring).

    Raises:
        ValueError: the file is missing or not JSON (naming ``file:line``), not a judgebox summary,
            given for a verl dump, or a field the records can confirm differs (naming the summary
            file, the records file, the field, and both values).
    """
    path = Path(path)
    if records.kind == "verl":
        raise ValueError(f"--summary {path}: a verl rollout dump has no judgebox summary; leave --summary out")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"--summary {path}: no such file") from None
    except json.JSONDecodeError as exc:
        # the first line of the text already read (a results file can be hundreds of MB: not read again)
        first = re.match(r"\s*(.*)", exc.doc).group(1)
        try:  # a line of JSON objects: a results or trajectories file given for the summary
            lines = isinstance(json.loads(first), dict) and exc.msg == "Extra data"
        except json.JSONDecodeError:
            lines = False
        what = "a results or trajectories file (one JSON object a line), not a summary" if lines else \
            f"not JSON ({exc.msg})"
        raise ValueError(f"{path}:{exc.lineno}: {what}; give the summary JSON that "
                         "`judgebox eval/rollout --summary` wrote") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"--summary {path}: not UTF-8 text ({exc.reason} at byte {exc.start}); give the "
                         "summary JSON that `judgebox eval/rollout --summary` wrote") from None
    if not isinstance(data, dict) or not set(REQUIRED) <= set(data):
        raise ValueError(f"{path}: not a judgebox eval or rollout summary (it needs dataset, n_samples, "
                         "verdicts, pass_at_k); give the file `--summary` wrote")

    def differ(field: str, theirs: Any, mine: Any) -> ValueError:
        return ValueError(f"{path} does not match {records.path}: {field}: the summary says {theirs}, the "
                          f"file gives {mine}; give the summary written with this file, or leave --summary out "
                          "(the report then computes one)")

    mine = Counter(str(r.get("verdict")) for r in records.rows)
    try:
        theirs = {str(k): int(v) for k, v in (data.get("verdicts") or {}).items() if v}
    except (TypeError, ValueError, AttributeError):
        raise differ("verdicts", json.dumps(data.get("verdicts")), _counts(mine)) from None
    if data["n_samples"] != len(records.rows) or theirs != dict(mine):
        raise ValueError(f"{path} does not match {records.path}: the summary counts {data['n_samples']} samples "
                         f"({_counts(theirs)}), the file holds {len(records.rows)} ({_counts(mine)}); give the "
                         "summary written with this file, or leave --summary out (the report then computes one)")
    _check_fields(data, records, differ)
    return data


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def _same(a: Any, b: Any) -> bool:
    """Equal, floats within :data:`TOLERANCE` (NaN equal to NaN: a NaN reward makes both means NaN)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE) or (a != a and b != b)
    return a == b


def _ks(data: dict, differ) -> list[int]:
    """The k of every ``pass@K`` key the summary names (reported, attempted-only or omitted)."""
    ks = set()
    for field in ("pass_at_k", "pass_at_k_attempted", "pass_at_k_omitted"):
        value = data.get(field) or {}
        if not isinstance(value, dict):
            raise differ(field, json.dumps(value), "an object of pass@K keys")
        for name in value:
            head, _, k = str(name).partition("@")
            if head != "pass" or not k.isdigit() or int(k) < 1:
                raise differ(f"{field}[{name!r}]", "a key of no k", "pass@K keys (pass@1, pass@10 ...)")
            ks.add(int(k))
    return sorted(ks)


def _check_fields(data: dict, records: Records, differ) -> None:
    """Raise ``differ(field, summary's value, records' value)`` for the first field that disagrees."""
    rows = records.rows
    datasets = {r.get("dataset") for r in rows}
    if len(datasets) == 1 and None not in datasets and not _same(data["dataset"], next(iter(datasets))):
        raise differ("dataset", repr(data["dataset"]), repr(next(iter(datasets))))
    task_ids = list(dict.fromkeys(str(r["task_id"]) for r in rows))
    unattempted = data.get("n_problems_unattempted") or 0
    if not isinstance(unattempted, int) or unattempted < 0:
        raise differ("n_problems_unattempted", unattempted, "a count (0 or more)")
    if "n_problems" in data and data["n_problems"] != len(task_ids) + unattempted:
        raise differ("n_problems - n_problems_unattempted (the problems with a sample)",
                     f"{data['n_problems']} - {unattempted}", f"{len(task_ids)} problems")
    ks = _ks(data, differ)
    placeholders = [f"\0unattempted {i}" for i in range(unattempted)]  # the run's problems with no sample
    computed = summarize(str(data["dataset"]), task_ids + placeholders,
                         [{"task_id": str(r["task_id"]), "verdict": r["verdict"]} for r in rows], ks)
    if isinstance(data.get("problems"), list) and data["problems"]:
        _check_problems(data["problems"], computed, differ)
    for field in ("n_problems_scored", "n_scored", "n_passed", "min_n", "max_n"):
        if field in data and not _same(data[field], getattr(computed, field)):
            raise differ(field, data[field], getattr(computed, field))
    for field in ("pass_at_k", "pass_at_k_attempted"):
        if field not in data:
            continue  # pass_at_k_attempted: absent from an older summary, nothing to confirm
        theirs, mine = data[field] or {}, getattr(computed, field)
        for name in sorted(set(theirs) | set(mine), key=lambda n: int(n.split("@")[1])):
            if name not in theirs or name not in mine or not _same(theirs[name], mine[name]):
                raise differ(f"{field}[{name!r}]", theirs.get(name, "nothing"),
                             mine.get(name, f"nothing ({computed.pass_at_k_omitted.get(name, 'not computed')})"))
    if "pass_at_k_omitted" in data and set(data["pass_at_k_omitted"] or {}) != set(computed.pass_at_k_omitted):
        raise differ("pass_at_k_omitted", sorted(data["pass_at_k_omitted"] or {}), sorted(computed.pass_at_k_omitted))
    if records.kind == "rollout":
        rewards = [r["reward_score"] for r in rows if isinstance(r.get("reward_score"), (int, float))]
        mean = statistics.fmean(rewards) if rewards else None
        if "mean_reward" in data and not _same(data["mean_reward"], mean):
            raise differ("mean_reward", data["mean_reward"], mean)
        if isinstance(data.get("stop_reasons"), dict):
            stops = dict(Counter(str((r.get("extra_fields") or {}).get("stop_reason")) for r in rows))
            if {str(k): v for k, v in data["stop_reasons"].items() if v} != stops:
                raise differ("stop_reasons", _counts(data["stop_reasons"]), _counts(stops))


def _check_problems(problems: list, computed, differ) -> None:
    """The summary's per-problem ``task_id``/``n``/``c`` against the records'."""
    try:
        theirs = {str(p["task_id"]): (p.get("n"), p.get("c")) for p in problems}
    except (TypeError, KeyError):
        raise differ("problems", "entries without task_id", "one entry per problem with a sample") from None
    mine = {p.task_id: (p.n, p.c) for p in computed.problems}
    if set(theirs) != set(mine):
        extra, lacking = sorted(set(theirs) - set(mine)), sorted(set(mine) - set(theirs))
        raise differ("problems (task ids)", f"{len(theirs)} problems" + (f", {_few(extra)} not in the file" if extra else ""),
                     f"{len(mine)} problems" + (f", {_few(lacking)} not in the summary" if lacking else ""))
    for task_id, (n, c) in mine.items():
        if theirs[task_id] != (n, c):
            raise differ(f"problems[{task_id!r}] (n scored, c accepted)", f"n={theirs[task_id][0]}, c={theirs[task_id][1]}",
                         f"n={n}, c={c}")


def _few(ids: list[str]) -> str:
    return ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
