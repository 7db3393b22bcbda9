"""``judgebox eval``: score samples of a dataset in the sandbox, resumably, and report pass@k."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judgebox.cli.common import (
    FORCE_HELP,
    UsageError,
    html_page,
    infra_exit,
    ks,
    outputs,
    readable,
    resumable,
    resume_notes,
    writable,
)
from judgebox.cli.sandboxes import checked_client


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``eval``'s flags."""
    p.add_argument("dataset", help="a dataset name (see `judgebox datasets`) or a data file path")
    p.add_argument("--format", help="loader format for a data file path (e.g. humaneval, mbpp, apps)")
    p.add_argument("--samples", required=True,
                   help="jsonl of task_id + completion, or 'gold' (reference solutions), or 'column:NAME'")
    p.add_argument("--results", help="results jsonl, appended and resumed "
                                     "(default: judgebox-results/DATASET-SAMPLES.results.jsonl)")
    p.add_argument("--summary", help="write the summary JSON here")
    p.add_argument("--chart", help="write a PNG chart of pass@k and verdict counts here")
    p.add_argument("--html", help="write the report page here (as `judgebox report`)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--sandbox-url", action="append", default=[],
                   help="sandbox base URL (repeatable); default: the embedded sandbox")
    p.add_argument("--concurrency", type=int, help="samples judged at once (default: 2 x CPU count); "
                   "embedded, also the programs run at once (JUDGEBOX_MAX_CONCURRENCY overrides)")
    p.add_argument("--k", type=ks, default=[1, 10, 100], help="pass@k budgets (default 1,10,100)")
    p.add_argument("--retries", type=int, default=2, help="extra attempts on infrastructure errors")
    p.add_argument("--stop-on-first-failure", action="store_true",
                   help="stop a sample's tests at its first failure (faster, less per-test detail)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--sanitize", action=argparse.BooleanOptionalAction, default=None,
                   help="evalplus-style sanitizing of Python function completions (default: the manifest's)")
    p.add_argument("--allow-partial", action="store_true",
                   help="accept a samples file that leaves problems out (they count 0 in pass@k)")
    p.add_argument("--on-tamper", choices=("report", "reject"), default=None,
                   help="report (default): tamper signals are counted beside the verdicts; reject: a sample "
                        "whose code raises any is judged wrong_answer without running")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score ``--samples`` of the dataset, resumably; exit status: the package's docstring."""
    import os

    from judgebox.reward.evaluate import Evaluation, check_run_options, check_sanitizable
    from judgebox.reward.loaders import load_dataset
    from judgebox.reward.report import print_table, write_chart, write_summary

    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    samples, tag = samples_of(args, problems)
    results = writable("--results", args.results or f"judgebox-results/{name}-{tag}.results.jsonl",
                       make_parent=True)
    for flag, out in (("--summary", args.summary), ("--chart", args.chart), ("--html", args.html)):
        if out:
            writable(flag, out)
    source = str(results.resolve())
    outputs([("DATASET", args.dataset, "input"), ("--samples", args.samples, "input"),
             ("--results", results, "results"), ("--summary", args.summary, "summary"),
             ("--chart", args.chart, "chart"), ("--html", args.html, "page")],
             {"summary": source, "chart": source, "page": source}, args.force, {p.task_id for p in problems})
    if args.chart:
        from judgebox.extras import require

        if Path(args.chart).suffix.lower() != ".png":  # it wrote PNG bytes into c.pdf
            raise UsageError(f"--chart {args.chart}: the chart is a PNG image; give a path ending in .png")
        require("matplotlib")  # before the scoring, not after it
    sanitize = args.sanitize if args.sanitize is not None else bool(manifest and manifest.sanitize)
    if sanitize:
        check_sanitizable(problems)
    attempted = {s.task_id for s in samples}
    concurrency = 2 * (os.cpu_count() or 1) if args.concurrency is None else args.concurrency
    check_run_options(concurrency, args.retries)  # before the embedded sandbox's settings take it
    client = checked_client(args.sandbox_url, manifest, [p for p in problems if p.task_id in attempted], concurrency)
    evaluation = Evaluation(problems, results, client=client, concurrency=concurrency,
                            retries=args.retries, stop_on_first_failure=args.stop_on_first_failure,
                            dataset=name, sanitize=sanitize, on_tamper=args.on_tamper)
    def announce(done: dict, pending: list) -> None:
        if done:
            redo = sum(1 for s in pending if s.key in done)
            print(f"resuming from {results}: keeping {len(samples) - len(pending)} of {len(samples)} results; "
                  f"re-scoring {redo} infrastructure errors; scoring {len(pending) - redo} new samples")
            mine = {s.key for s in samples}
            resume_notes(results, len(set(done) - mine), evaluation.duplicates_dropped, "results",
                         "samples not in this run", sum(1 for k, r in done.items() if k in mine
                                                        and "tests_sha256" not in r and r["verdict"] != "infra_error"))

    summary, code = resumable(evaluation.run(samples, args.k, progress=not args.no_progress, announce=announce),
                              "results", results)
    if summary is None:
        return code
    print_table(summary)
    print(f"results: {results}")
    summary.results_file = source
    if args.summary:
        write_summary(summary, Path(args.summary))
        print(f"summary: {args.summary}")
    if args.chart:
        write_chart(summary, Path(args.chart))
        print(f"chart: {args.chart}")
    html_page(args.html, results, summary)
    if evaluation.gave_up:
        print(f"judgebox eval: {evaluation.gave_up}; {summary.n_samples_pending} samples were not scored; results so far "
              f"are in {results}: run the same command to resume", file=sys.stderr)
        return 2
    return infra_exit(summary, "samples hit infrastructure errors after retries", "score them")


def samples_of(args: argparse.Namespace, problems: list) -> tuple[list, str]:
    """``(samples, tag)``: ``--samples`` read (``gold``, ``column:NAME`` or a file) and the name its
    default results file takes.

    Raises:
        UsageError: the file cannot be read, or leaves problems out without ``--allow-partial``.
        ValueError: the dataset has no such samples (the message says what it has).
    """
    from judgebox.reward.evaluate import dataset_samples, read_samples, unattempted

    if args.samples in ("gold",) or args.samples.startswith("column:"):
        return dataset_samples(problems, args.samples), args.samples.replace("column:", "")
    path = readable("--samples", args.samples, "give a jsonl/json/parquet samples file, 'gold' or 'column:NAME'")
    samples = read_samples(path, problems)
    missing = unattempted(problems, samples)
    if missing and not args.allow_partial:
        raise UsageError(f"--samples {args.samples}: {len(missing)} of {len(problems)} problems have no sample "
                         f"(e.g. {missing[0]!r}); pass --allow-partial to score the whole benchmark with those "
                         "problems counted as unsolved (pass@k over all problems, unattempted = 0)")
    return samples, path.name.split(".")[0]
