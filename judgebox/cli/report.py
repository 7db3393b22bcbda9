"""``judgebox report``: one self-contained HTML page for an eval, a rollout or a verl dump."""

from __future__ import annotations

import argparse

from judgebox.cli.common import FORCE_HELP, UsageError, outputs, readable, writable


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``report``'s flags."""
    p.add_argument("file", metavar="FILE", help="results jsonl (judgebox eval), trajectories jsonl (judgebox rollout) "
                                                "or a verl rollout dump (trainer.rollout_data_dir)")
    p.add_argument("--summary", help="the summary JSON written with FILE (checked against it; default: "
                                     "computed from FILE)")
    p.add_argument("--compare", help="another results or trajectories jsonl: per-problem differences, "
                                     "regressions first")
    p.add_argument("--tokenizer", help="model directory or hub id whose tokenizer gives the trajectory view's "
                                       "token texts (default: the model the summary names)")
    p.add_argument("--no-tokens", action="store_true", help="leave the token view out (no tokenizer loaded)")
    p.add_argument("--title", help="the page title (default: the dataset and file name)")
    p.add_argument("--out", help="the HTML file (default: FILE with .html)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgebox.report import write_report

    source = readable("FILE", args.file, "give the results jsonl of `judgebox eval`, the trajectories jsonl of "
                                         "`judgebox rollout` or a verl rollout dump")
    summary = readable("--summary", args.summary, "give the summary JSON written with this file") \
        if args.summary else None
    other = readable("--compare", args.compare, "give another results or trajectories jsonl") if args.compare else None
    from judgebox.outputs import identify

    if identify(source).kind == "page":  # the default --out would be the page itself
        raise UsageError(f"FILE {source}: it is a report page; give the results jsonl of `judgebox eval`, the "
                         "trajectories jsonl of `judgebox rollout` or the verl dump it was made from")
    out = writable("--out", args.out or str(source.with_suffix(".html")), make_parent=True)
    outputs([("FILE", source, "input"), ("--summary", summary, "input"), ("--compare", other, "input"),
             ("--out", out, "page")],  # the default (FILE with .html) is named as --out: give --out to change it
             {"page": str(source.resolve())}, args.force)
    write_report(source, out, summary_path=summary, compare_path=other,
                 tokenizer=None if args.no_tokens else (args.tokenizer or None), title=args.title,
                 token_view=not args.no_tokens)
    print(f"report: {out}")
    return 0
