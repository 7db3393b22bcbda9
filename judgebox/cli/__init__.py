"""``judgebox`` console script: one module per command (its flags in ``add_arguments``, its work in
``run``), named in :data:`COMMANDS`; only the typed command's module is imported.

Subcommands: ``serve`` (the sandbox HTTP server), ``eval`` (score samples of a dataset, pass@k),
``rollout`` (generate scored agent trajectories with a model: tool calls, pass@k), ``ray up/status/down``
(the sandbox fleet on a Ray cluster), ``report`` (an HTML page of a run), ``runtime`` (the libraries
programs may import), ``datasets`` (list the dataset manifests and what is available locally) and
``data convert`` (write a dataset as verl parquet rows).

Exit status: 0 done; 1 a usage or input error (one line on stderr naming the argument, the path, the
reason and the fix), or a sandbox that cannot apply the isolation it promises (see ``--isolation``);
2 ``eval`` finished but infrastructure errors remain (run it again to score those samples);
128 + the signal number (130 Ctrl-C, 143 SIGTERM) ``eval`` was interrupted, its results kept.
``rollout`` uses the same statuses.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from judgebox.cli.common import USAGE_ERROR, UsageError

#: command -> (its module, its one-line help); each module has ``add_arguments(parser)``, which sets
#: ``func`` to what runs the command (its subcommands' too)
COMMANDS = {
    "serve": ("judgebox.cli.serve", "run the SandboxFusion-compatible HTTP server (+ OpenRLHF's /get_reward)"),
    "eval": ("judgebox.cli.evaluate", "score samples of a dataset in the sandbox and report pass@k"),
    "rollout": ("judgebox.cli.rollout", "generate scored agent trajectories (tool calls, pass@k) with a model"),
    "report": ("judgebox.cli.report", "write one self-contained HTML page for an eval or a rollout"),
    "datasets": ("judgebox.cli.datasets", "list dataset manifests and which are available locally"),
    "runtime": ("judgebox.cli.runtime", "program runtimes: the libraries programs may import"),
    "ray": ("judgebox.cli.fleet", "the sandbox fleet on a Ray cluster (ray:// sandbox URLs; the ray extra)"),
    "data": ("judgebox.cli.data", "dataset utilities"),
}

#: ``judgebox --help``'s text above the commands (plain text at 80 columns: the module docstring is reST)
DESCRIPTION = """\
Run untrusted, model-written code in a sandbox and turn the result into a reward
or pass@k. `judgebox COMMAND --help` describes each command."""

#: ``judgebox --help``'s text below the commands
EXIT_STATUS = """\
exit status: 0 done; 1 a usage or input error (one line on stderr naming the
argument, the path, the reason and the fix), or isolation that cannot be
applied; 2 eval or rollout finished with infrastructure errors (run it again to
redo those); 128 + the signal number (130 Ctrl-C, 143 SIGTERM) interrupted,
what was done kept (run the same command to resume)."""


def version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("judgebox")
    except PackageNotFoundError:
        return "unknown (not installed)"


class Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting ``USAGE_ERROR`` (argparse uses 2, which ``eval`` reserves for
    "infrastructure errors remain")."""

    def error(self, message: str):
        """Print ``message`` as one line on stderr, with where the usage is, and exit ``USAGE_ERROR``
        (the whole usage of ``eval`` is 30 lines, which hid the one that names the bad flag)."""
        import re

        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:  # a misspelt command: the closest names first (Python 3.14's argparse suggests; 3.10 does not)
            import difflib

            names = re.findall(r"'([^']*)'", choice[2]) or [c.strip() for c in choice[2].split(",")]
            near = difflib.get_close_matches(choice[1], names, n=1, cutoff=0.6)
            if near:
                message = f"{message}; did you mean {near[0]!r}?"
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The argument parser: every command listed, each with its flags (``only``: that command's flags
    alone, the other commands' modules not imported; ``""``: none).

    Raises:
        KeyError: ``only`` names no command.
    """
    parser = Parser(prog="judgebox", description=DESCRIPTION, epilog=EXIT_STATUS,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"judgebox {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        if only is None or only == name:
            importlib.import_module(module).add_arguments(command)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``judgebox`` command (exit statuses: the module's docstring)."""
    import os

    # transformers' advice on import ("PyTorch was not found...") is not for a command's user: a
    # command that needs torch says so itself (rollout --backend hf, vllm)
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    typed = next((a for a in argv if not a.startswith("-")), "")  # the command: its module alone is loaded
    parser = build_parser(typed if typed in COMMANDS else "")
    args = parser.parse_args(argv)
    from judgebox.extras import missing_extra
    from judgebox.sandbox.isolation.unit import IsolationUnavailable

    # the whole command errors are prefixed with: "data convert", not "data"
    command = " ".join(filter(None, (args.command, getattr(args, f"{args.command}_command", None))))
    try:
        return args.func(args)
    except ModuleNotFoundError as exc:  # a module an extra brings: one line naming the extra
        line = missing_extra(exc)
        if line is None:
            raise
        parser.exit(USAGE_ERROR, f"judgebox {command}: {line}\n")
    except (UsageError, OSError, KeyError, ValueError, IsolationUnavailable) as exc:
        if isinstance(exc, OSError) and exc.strerror:  # an OS error with no message of ours
            message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
        else:
            message = exc.args[0] if exc.args else str(exc)
        parser.exit(USAGE_ERROR, f"judgebox {command}: {message}\n")


__all__ = ["COMMANDS", "USAGE_ERROR", "UsageError", "build_parser", "main"]
