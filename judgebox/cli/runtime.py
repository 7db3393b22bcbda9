"""``judgebox runtime build|prebuild|show``: the program runtimes (the libraries programs may import)
and the compile speed-ups."""

from __future__ import annotations

import argparse
import sys

from judgebox.cli.common import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``runtime``'s subcommands and their flags."""
    rt_sub = p.add_subparsers(dest="runtime_command", metavar="COMMAND", required=True)
    build = rt_sub.add_parser("build", help="build a runtime profile (outside the server's environment)")
    build.add_argument("--profile", default="default", help="the profile to build (default: default)")
    build.add_argument("--languages", help="comma-separated package kinds to build: python, node, debian "
                                           "(default: all of the profile's)")
    build.set_defaults(func=_runtime_build)
    pre = rt_sub.add_parser("prebuild", help="build the compile speed-ups now (precompiled bits/stdc++.h, javac's "
                                             "archive, Go's standard library) in the sandbox's workdir root")
    pre.set_defaults(func=_runtime_prebuild)
    show = rt_sub.add_parser("show", help="print the runtime programs use here (JSON)")
    show.set_defaults(func=_runtime_show)


def _runtime_build(args: argparse.Namespace) -> int:
    from judgebox.sandbox.runtime import PROFILES
    from judgebox.sandbox.runtime.build import BuildError, build_runtime, select

    if args.profile not in PROFILES:
        raise UsageError(f"--profile {args.profile}: no such profile; choose among {', '.join(PROFILES)}")
    kinds = [k.strip() for k in args.languages.split(",") if k.strip()] if args.languages else None
    try:
        build_runtime(select(PROFILES[args.profile], kinds))
    except BuildError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _runtime_prebuild(args: argparse.Namespace) -> int:
    import json

    from judgebox.sandbox.config import SandboxSettings
    from judgebox.sandbox.executor import Executor

    ready = Executor(SandboxSettings()).prebuild()
    print(json.dumps(ready, indent=1))
    return 0 if all(ready.values()) else 1


def _runtime_show(args: argparse.Namespace) -> int:
    import json

    from judgebox.sandbox.config import SandboxSettings

    runtime = SandboxSettings().program_runtime
    print(json.dumps(runtime.describe() if runtime else {"name": "host", "python": sys.executable}, indent=1))
    return 0
