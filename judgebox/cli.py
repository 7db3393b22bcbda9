"""``judgebox`` console script. Each subcommand lives in the package it drives and is imported lazily.

Subcommands: ``serve`` (the sandbox HTTP server), ``eval`` (score samples of a dataset, pass@k),
``datasets`` (list the dataset manifests and what is available locally) and ``data convert`` (write a
dataset as verl parquet rows).
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from sandbox.config import SandboxSettings
    from sandbox.server import create_app

    overrides = {k: v for k, v in {
        "python": args.python, "max_concurrency": args.max_concurrency,
        "queue_timeout": args.queue_timeout, "allow_network": args.allow_network or None,
    }.items() if v is not None}
    settings = SandboxSettings(**overrides)
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k {text!r}: use comma-separated integers, e.g. 1,10,100")
    if not ks or ks[0] < 1:
        raise argparse.ArgumentTypeError(f"--k {text!r}: every k must be >= 1")
    return ks


def _eval(args: argparse.Namespace) -> int:
    import asyncio
    import os
    from pathlib import Path

    from reward.evaluate import Evaluation, dataset_samples, load_results, read_samples
    from reward.loaders import load_dataset
    from reward.report import print_table, write_chart, write_summary
    from sandbox import SandboxClient

    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    if args.samples in ("gold",) or args.samples.startswith("column:"):
        samples = dataset_samples(problems, args.samples)
        tag = args.samples.replace("column:", "")
    else:
        samples = read_samples(Path(args.samples), problems)
        tag = Path(args.samples).name.split(".")[0]
    results = Path(args.results or Path("judgebox-results") / f"{name}-{tag}.results.jsonl")
    already = len(load_results(results))
    if already:
        print(f"resuming from {results}: {already} of {len(samples)} samples already have a result")
    client = SandboxClient(args.sandbox_url or None)
    concurrency = 2 * (os.cpu_count() or 1) if args.concurrency is None else args.concurrency
    evaluation = Evaluation(problems, results, client=client, concurrency=concurrency,
                            retries=args.retries, stop_on_first_failure=args.stop_on_first_failure,
                            dataset=name)
    try:
        summary = asyncio.run(evaluation.run(samples, args.k, progress=not args.no_progress))
    except KeyboardInterrupt:
        print(f"\ninterrupted: results so far are in {results}; run the same command to resume")
        return 130
    print_table(summary)
    print(f"results: {results}")
    if args.summary:
        write_summary(summary, Path(args.summary))
        print(f"summary: {args.summary}")
    if args.chart:
        write_chart(summary, Path(args.chart))
        print(f"chart: {args.chart}")
    if summary.excluded.get("infra_error"):
        print(f"{summary.excluded['infra_error']} samples hit infrastructure errors after retries and are "
              "not in pass@k; re-run to score them")
        return 2
    return 0


def _datasets(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from reward.loaders import list_manifests

    table = Table(title="judgebox datasets", show_lines=False)
    for column in ("name", "format", "language", "--samples", "local file / how to get it"):
        table.add_column(column, overflow="fold")
    for m in list_manifests():
        found = m.locate()
        where = f"[green]{found}[/green]" if found else f"[yellow]missing[/yellow]: {m.source}"
        samples = "gold" if m.has_gold else ", ".join(f"column:{c}" for c in m.sample_columns) or "-"
        table.add_row(m.name, m.format, m.language or "(per row)", samples, where)
    Console().print(table)
    return 0


def _convert(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from reward.loaders import load_dataset
    from reward.loaders.verl import to_row

    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    usable = [p for p in problems if p.spec is not None]
    tools = [t for t in args.tool_selection.split(",") if t] if args.tool_selection is not None else None
    rows = [to_row(p, i, agent_name=args.agent_name, tool_selection=tools, system=args.system)
            for i, p in enumerate(usable)]
    out = Path(args.out or f"{name}.verl.parquet")
    pq.write_table(pa.Table.from_pylist(rows), out)
    skipped = len(problems) - len(usable)
    print(f"wrote {len(rows)} rows to {out}" + (f" ({skipped} problems with unusable tests skipped)" if skipped else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="judgebox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the SandboxFusion-compatible HTTP server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--python", help="interpreter for python programs (default: this one)")
    serve.add_argument("--max-concurrency", type=int, help="programs at once (default: CPU count)")
    serve.add_argument("--queue-timeout", type=float, help="seconds to wait for a slot before 504")
    serve.add_argument("--allow-network", action="store_true", help="let programs use the network")
    serve.add_argument("--log-level", default="warning")
    serve.set_defaults(func=_serve)

    ev = sub.add_parser("eval", help="score samples of a dataset in the sandbox and report pass@k")
    ev.add_argument("dataset", help="a dataset name (see `judgebox datasets`) or a data file path")
    ev.add_argument("--format", help="loader format for a data file path (e.g. humaneval, mbpp, apps)")
    ev.add_argument("--samples", required=True,
                    help="jsonl of task_id + completion, or 'gold' (reference solutions), or 'column:NAME'")
    ev.add_argument("--results", help="results jsonl, appended and resumed "
                                      "(default: judgebox-results/DATASET-SAMPLES.results.jsonl)")
    ev.add_argument("--summary", help="write the summary JSON here")
    ev.add_argument("--chart", help="write a PNG chart of pass@k and verdict counts here")
    ev.add_argument("--sandbox-url", action="append", default=[],
                    help="sandbox base URL (repeatable); default: the embedded sandbox")
    ev.add_argument("--concurrency", type=int, help="samples judged at once (default: 2 x CPU count)")
    ev.add_argument("--k", type=_ks, default=[1, 10, 100], help="pass@k budgets (default 1,10,100)")
    ev.add_argument("--retries", type=int, default=2, help="extra attempts on infrastructure errors")
    ev.add_argument("--stop-on-first-failure", action="store_true",
                    help="stop a sample's tests at its first failure (faster, less per-test detail)")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.set_defaults(func=_eval)

    ds = sub.add_parser("datasets", help="list dataset manifests and which are available locally")
    ds.set_defaults(func=_datasets)

    data = sub.add_parser("data", help="dataset utilities")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    conv = data_sub.add_parser("convert", help="write a dataset as GRPO-ready verl parquet rows")
    conv.add_argument("dataset", help="a dataset name or a data file path")
    conv.add_argument("--to", choices=["verl-parquet"], required=True, help="output format")
    conv.add_argument("--format", help="loader format for a data file path")
    conv.add_argument("--out", help="output path (default: DATASET.verl.parquet)")
    conv.add_argument("--agent-name", help="verl agent loop name, written as the agent_name column")
    conv.add_argument("--tool-selection", help="comma-separated tool names -> extra_info.tool_selection")
    conv.add_argument("--system", help="a system message put before each prompt")
    conv.set_defaults(func=_convert)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``judgebox`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (FileNotFoundError, KeyError, ValueError) as exc:
        parser.exit(2, f"judgebox {args.command}: {exc.args[0] if exc.args else exc}\n")


if __name__ == "__main__":
    sys.exit(main())
