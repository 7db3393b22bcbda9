"""The numbers of a report page: the overview (summary fields, verdict counts, unscorable samples
apart, timing, splits, agent counters, verl scores) and the per-problem comparison of two runs.

A sample's *label* is its verdict; a verl dump line without a ``verdict`` extra is labelled by its
score (``"score 0.5"``; ``"no score"`` when it has none). Unscorable labels (:data:`UNSCORED`) are
left out of pass rates and mean scores and counted apart, never as failures.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from typing import Any, Optional

from judgebox.report.records import Records, verl_task_id
from judgebox.reward.report import summarize, tamper_summary
from judgebox.reward.verdict import Verdict

#: labels that say nothing about the program: left out of pass rates and mean scores
NO_SCORE = "no score"
UNSCORED = (Verdict.infra_error.value, Verdict.test_data_error.value, NO_SCORE)
#: what the page says of a pass@k computed without the run's summary
UNKNOWN = "unknown without --summary"


def problem_key(row: dict, kind: str) -> str:
    """The problem a record belongs to: its ``task_id``, or for verl its prompt's id."""
    return verl_task_id(row) if kind == "verl" else str(row["task_id"])


def verdict_of(row: dict, kind: str) -> str:
    """A record's label (module docstring)."""
    if kind == "verl" and row.get("verdict") is None:
        score = row.get("score")
        return f"score {float(score):g}" if isinstance(score, (int, float)) else NO_SCORE
    return str(row.get("verdict"))


def passed(row: dict, kind: str) -> bool:
    """Accepted; a verl line without a verdict passes on a score of at least 1."""
    if kind == "verl" and row.get("verdict") is None:
        return isinstance(row.get("score"), (int, float)) and row["score"] >= 1
    return row.get("verdict") == Verdict.accepted.value


def natural_key(value: Any) -> tuple:
    """A sort key that orders the digit runs of ``value``'s text as numbers (``HumanEval/2`` before
    ``HumanEval/10``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", str(value)) if part)


def _rate(c: int, n: int) -> Optional[float]:
    return c / n if n else None


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return {"mean": statistics.fmean(values), "p50": pick(0.5), "p95": pick(0.95), "max": values[-1]}


def _splits(records: Records, field: str) -> dict[str, dict]:
    """Per value of ``field`` (language, data_source): samples, scored, passed, unscorable."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in records.rows:
        value = row.get(field)
        if value is None:
            continue
        label = verdict_of(row, records.kind)
        c = out[str(value)]
        c["samples"] += 1
        c["unscorable"] += label in UNSCORED
        c["scored"] += label not in UNSCORED
        c["passed"] += label not in UNSCORED and passed(row, records.kind)
    return {k: dict(v) for k, v in sorted(out.items())} if len(out) > 1 or field == "language" else {}


def compare(mine: Records, other: Records) -> list[dict]:
    """Per problem in either file: pass rate here and in ``other`` (fractions 0..1 over scored samples;
    ``delta`` = here - other), regressions (lower here) first, largest drop first, then improvements,
    then problems in one file only; ties in task order (:func:`natural_key`). Problems whose rates are
    equal are left out."""
    def rates(records: Records) -> dict[str, tuple[int, int]]:
        acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for row in records.rows:
            if verdict_of(row, records.kind) in UNSCORED:
                continue
            key = problem_key(row, records.kind)
            acc[key][0] += passed(row, records.kind)
            acc[key][1] += 1
        return {k: (c, n) for k, (c, n) in acc.items()}

    a, b = rates(mine), rates(other)
    rows = []
    for key in dict.fromkeys([*a, *b]):
        ra, rb = a.get(key), b.get(key)
        pa = _rate(*ra) if ra else None
        pb = _rate(*rb) if rb else None
        if pa == pb:
            continue
        delta = None if pa is None or pb is None else pa - pb
        change = "only_other" if pa is None else "only_here" if pb is None else ("regression" if delta < 0 else "improvement")
        rows.append({"task_id": key, "here": pa, "other": pb, "here_n": ra[1] if ra else 0,
                     "other_n": rb[1] if rb else 0, "delta": delta, "change": change})
    order = {"regression": 0, "improvement": 1, "only_here": 2, "only_other": 3}
    rows.sort(key=lambda r: (order[r["change"]], r["delta"] if r["change"] == "regression" else -(r["delta"] or 0),
                             natural_key(r["task_id"])))
    return rows


def dataset_of(records: Records) -> Optional[str]:
    """The dataset every record names (``dataset``; a verl line's ``data_source``), or ``None`` when
    the records name none or several."""
    names = {r.get("data_source" if records.kind == "verl" else "dataset") for r in records.rows}
    return str(next(iter(names))) if len(names) == 1 and None not in names else None


def compare_note(mine: Records, other: Records, dataset: Optional[str] = None) -> Optional[str]:
    """Why comparing ``mine`` with ``other`` may mean nothing: their records name different datasets
    (``dataset``: ``mine``'s from its summary, when its records name none), they share no problem, or
    they judged a shared problem against other tests (their ``tests_sha256``); ``None`` when none."""
    here, there = dataset_of(mine) or dataset, dataset_of(other)
    if here is not None and there is not None and here != there:
        return (f"--compare {other.path} is a run of the dataset {there}, {mine.path} of {here}: "
                "a comparison of two datasets, not of two runs of one")
    if not {problem_key(r, mine.kind) for r in mine.rows} & {problem_key(r, other.kind) for r in other.rows}:
        return (f"--compare {other.path} has no task id in common with {mine.path} (another dataset?): "
                "every problem is in one file only")
    # the tests each record was judged against (tests_sha256): one task id, other tests, another dataset
    tests: dict[str, set] = defaultdict(set)
    for r in mine.rows:
        tests[problem_key(r, mine.kind)].add(r.get("tests_sha256"))
    other_tests = set()
    for r in other.rows:
        key, digest = problem_key(r, other.kind), r.get("tests_sha256")
        # both sides recorded (a record without it, from an older judgebox, tells nothing) and differ
        if digest and key in tests and None not in tests[key] and digest not in tests[key]:
            other_tests.add(key)
    differ = sorted(other_tests, key=natural_key)
    if differ:
        return (f"--compare {other.path} judged {len(differ)} of the problems both files hold against other tests "
                f"than {mine.path} (e.g. {differ[0]}; another dataset, or its tests changed between the runs)")
    return None


def overview(records: Records, summary: Optional[dict], ks: tuple[int, ...] = (1, 10, 100)) -> dict:
    """The numbers of the overview: the summary's own (every field it carries) when given, else a
    summary computed from the records (:func:`judgebox.reward.report.summarize`: pass@k over the
    problems in the file for ``ks``; what only the run knew, its unattempted problems and pending
    samples, is :data:`UNKNOWN`), plus what only the records hold (timing in seconds, splits, tool
    and stop counts, verl's mean score over scorable lines and how many lines it averages)."""
    kind = records.kind
    if summary is None and kind != "verl":
        computed = summarize("", list(dict.fromkeys(str(r["task_id"]) for r in records.rows)),
                             [{**r, "task_id": str(r["task_id"])} for r in records.rows], ks)  # tamper fields too
        summary_fields = computed.model_dump(mode="json", exclude={"problems", "dataset", "pass_at_k_attempted"})
        summary_fields.update(n_problems_unattempted=UNKNOWN, n_samples_pending=UNKNOWN,
                              duplicates_dropped=records.duplicates)
        source = "computed from the records (no --summary given)"
    else:
        summary_fields = {k: v for k, v in (summary or {}).items() if k != "problems"}
        source = "the summary file" if summary is not None else "computed from the records"
    labels = Counter(verdict_of(r, kind) for r in records.rows)
    view: dict[str, Any] = {
        "source": source, "summary": summary_fields, "n_records": len(records.rows),
        "verdicts": dict(labels.most_common()),
        "unscorable": {v: labels[v] for v in UNSCORED if labels[v]},
        "duplicates_dropped": records.duplicates, "torn_line": records.torn,
        "elapsed_s": _percentiles([r["elapsed_s"] for r in records.rows if isinstance(r.get("elapsed_s"), (int, float))]),
        "splits": {"language": _splits(records, "language"), "data_source": _splits(records, "data_source")},
        "tamper": tamper_summary(records.rows).model_dump(),
    }
    if kind == "rollout":
        extras = [r.get("extra_fields") or {} for r in records.rows]
        view["stop_reasons"] = dict(Counter(e.get("stop_reason") for e in extras).most_common())
        view["tool_calls"] = dict(sorted(Counter(int(e.get("tool_calls", 0)) for e in extras).items()))
        view["parse_errors"] = sum(int(e.get("parse_errors", 0)) for e in extras)
        view["tool_errors"] = sum(int(e.get("tool_errors", 0)) for e in extras)
        view["tool_timeouts"] = sum(int(e.get("tool_timeouts", 0)) for e in extras)
        view["policy_tokens"] = sum(sum(r["response_mask"]) for r in records.rows)
        view["observation_tokens"] = sum(len(r["response_mask"]) - sum(r["response_mask"]) for r in records.rows)
    if kind == "verl":
        scores = [r["score"] for r in records.rows
                  if isinstance(r.get("score"), (int, float)) and verdict_of(r, kind) not in UNSCORED]
        view["mean_score"] = statistics.fmean(scores) if scores else None
        view["mean_score_of"] = len(scores)
        view["steps"] = dict(sorted(Counter(r.get("step") for r in records.rows).items(), key=lambda kv: str(kv[0])))
    return view
