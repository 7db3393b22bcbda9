"""``judgebox datasets``: the dataset manifests, which are here, and how to get the others."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``datasets``'s arguments."""
    p.add_argument("name", nargs="?", metavar="NAME", help="one dataset: where it is looked for and how to get it")
    p.add_argument("--long", action="store_true", help="every dataset's format, files and how to get it, "
                                                       "a block each")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``judgebox datasets``: a table that fits 80 columns (name, language, --samples, found or
    missing); ``judgebox datasets NAME``: where it is looked for and how to get it; ``--long``: that
    block for every dataset."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from judgebox.reward.loaders import list_manifests
    from judgebox.reward.loaders.hub import hub_library
    from judgebox.reward.loaders.manifest import get_manifest

    reader = "is read when there is network" if hub_library() else \
        "can be read with the datasets library (pip install \"judgebox[hub]\") when there is network"

    def how(m) -> str:
        source = m.how_to_get
        return f"the hub's {m.hub} {reader}; or {source[:1].lower()}{source[1:]}" if m.hub else source

    def samples(m) -> str:
        return "gold" if m.has_gold else ", ".join(f"column:{c}" for c in m.sample_columns) or "-"

    console = Console()
    width = max(40, min(console.width, 100))  # wrapped here, each line indented under its label

    def describe(m) -> None:
        import textwrap

        found = m.locate()
        print(textwrap.fill(f"{m.name}: {m.description}", width, subsequent_indent="    "))
        for label, value in (("format", m.format), ("language", m.language or "(per row)"), ("--samples", samples(m)),
                             ("looked for", ", ".join(m.files) + " under $JUDGEBOX_DATA_DIR, ./data, "
                                                                 "~/.cache/judgebox/data"),
                             ("found", str(found) if found else "no: " + how(m))):
            print(textwrap.fill(f"{label}: {value}", width, initial_indent="  ", subsequent_indent="      ",
                                break_long_words=False, break_on_hyphens=False))

    if args.name:
        describe(get_manifest(args.name))
        return 0
    manifests = list_manifests()
    if args.long:  # one block per dataset: a wide table squeezed into 80 columns reads one word a line
        for i, m in enumerate(manifests):
            print() if i else None
            describe(m)
        return 0
    table = Table(title="judgebox datasets", show_lines=False)
    for column in ("name", "language", "--samples", "here"):
        table.add_column(column, overflow="fold")
    missing = 0
    for m in manifests:
        found = m.locate()
        missing += found is None
        table.add_row(m.name, m.language or "(per row)", escape(samples(m)),
                      "[green]found[/green]" if found else "[yellow]missing[/yellow]")
    console.print(table)
    print(f"{len(manifests)} datasets, {missing} missing here. `judgebox datasets NAME` says where one is\n"
          "looked for and how to get it; --long shows every one's details.")
    return 0
