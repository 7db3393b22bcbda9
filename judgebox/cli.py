"""``judgebox`` console script. Each subcommand lives in the package it drives and is imported lazily.

Subcommands: ``serve`` (the sandbox HTTP server).
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
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``judgebox`` command."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
