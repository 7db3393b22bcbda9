"""``judgebox data convert``: write a dataset as GRPO-ready verl parquet rows."""

from __future__ import annotations

import argparse
from pathlib import Path

from judgebox.cli.common import FORCE_HELP, outputs, writable


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``data``'s subcommands and their flags."""
    data_sub = p.add_subparsers(dest="data_command", metavar="COMMAND", required=True)
    conv = data_sub.add_parser("convert", help="write a dataset as GRPO-ready verl parquet rows")
    conv.add_argument("dataset", help="a dataset name or a data file path")
    conv.add_argument("--to", choices=["verl-parquet"], required=True, help="output format")
    conv.add_argument("--format", help="loader format for a data file path")
    conv.add_argument("--out", help="output path (default: DATASET.verl.parquet)")
    conv.add_argument("--force", action="store_true", help=FORCE_HELP)
    conv.add_argument("--agent-name", help="verl agent loop name, written as the agent_name column")
    conv.add_argument("--tool-selection", help="comma-separated tool names -> extra_info.tool_selection")
    conv.add_argument("--system", help="a system message put before each prompt")
    conv.set_defaults(func=_convert)


def _convert(args: argparse.Namespace) -> int:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from judgebox.reward.loaders import load_dataset
    from judgebox.reward.loaders.verl import to_row
    from judgebox.reward.results import replace_atomically

    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    out = writable("--out", args.out or f"{name}.verl.parquet")
    outputs([("DATASET", args.dataset, "input"), ("--out", out, "parquet")], {"parquet": name}, args.force)
    usable = [p for p in problems if p.spec is not None]
    tools = [t for t in args.tool_selection.split(",") if t] if args.tool_selection is not None else None
    rows = [to_row(p, i, agent_name=args.agent_name, tool_selection=tools, system=args.system)
            for i, p in enumerate(usable)]
    table = pa.Table.from_pylist(rows)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"judgebox": json.dumps({"dataset": name})})
    replace_atomically(out, lambda tmp: pq.write_table(table, tmp))
    skipped = len(problems) - len(usable)
    print(f"wrote {len(rows)} rows to {out}" + (f" ({skipped} problems with unusable tests skipped)" if skipped else ""))
    return 0
