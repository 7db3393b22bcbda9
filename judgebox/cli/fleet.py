"""``judgebox ray up|status|down``: the sandbox fleet on a Ray cluster (``ray://`` sandbox URLs)."""

from __future__ import annotations

import argparse
from typing import Optional, get_args

from judgebox.cli.common import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``ray``'s subcommands and their flags."""
    from judgebox.sandbox.config import SandboxSettings

    ray_sub = p.add_subparsers(dest="ray_command", metavar="COMMAND", required=True)
    address = {"help": "the cluster's address HOST:PORT, as `ray start --head` prints it (default: RAY_ADDRESS, "
                       "else the cluster started on this machine)"}
    up = ray_sub.add_parser("up", help="check every node, then start the pool: executors on every node, "
                                       "found by name (idempotent)")
    up.add_argument("--address", **address)
    up.add_argument("--cpus-per-executor", type=int, metavar="N",
                    help="CPUs each executor reserves and runs programs on at once (default: all of its node's)")
    up.add_argument("--per-node", type=int, default=1, metavar="K", help="executors on each node (default 1)")
    up.add_argument("--min-executors", type=int, default=0, metavar="N",
                    help="executors wanted in all; those the nodes cannot hold wait as pending demand for "
                         "Ray's autoscaler (default 0)")
    up.add_argument("--resource", metavar="NAME",
                    help="a Ray custom resource: executors only on the nodes that advertise it, one unit each "
                         "(e.g. judgebox_executor; default: every node)")
    up.add_argument("--isolation", choices=get_args(SandboxSettings.model_fields["isolation"].annotation),
                    help="full (the default: root and CAP_SYS_ADMIN on every node, or refuse) or minimal")
    up.add_argument("--languages", default="python",
                    help="comma-separated languages every node must have a toolchain for (default: python)")
    up.add_argument("--wait", type=float, default=300.0, help="seconds to wait for a first live executor")
    up.set_defaults(func=_ray_up)
    st = ray_sub.add_parser("status", help="executors per node, in flight, queued, runs, failures, restarts")
    st.add_argument("--address", **address)
    st.add_argument("--json", action="store_true", help="print pool.stats() as JSON")
    st.set_defaults(func=_ray_status)
    down = ray_sub.add_parser("down", help="stop every executor (their sessions close) and the pool")
    down.add_argument("--address", **address)
    down.set_defaults(func=_ray_down)


def ray_address(flag_value: Optional[str]) -> Optional[str]:
    """``--address`` as ``HOST:PORT`` (a ``ray://HOST:PORT`` form is accepted); ``None``: this
    process's cluster, else ``RAY_ADDRESS``, else ``auto``."""
    if not flag_value:
        return None
    from judgebox.sandbox.ray.cluster import is_ray_url, parse_ray_url

    return parse_ray_url(flag_value) if is_ray_url(flag_value) else flag_value


def ray_call(fn, *args):
    """``fn(*args)`` with no cluster or no pool turned into a :class:`UsageError` (its message says how to
    start one)."""
    from judgebox.sandbox.errors import SandboxUnavailable

    try:
        return fn(*args)
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None


def _ray_up(args: argparse.Namespace) -> int:
    from judgebox.sandbox.ray import Pool, PoolConfig
    from judgebox.sandbox.ray.cluster import connect
    from judgebox.sandbox.ray.pool import check_nodes

    settings = {"isolation": args.isolation} if args.isolation else {}
    try:  # bad flags are refused before any cluster is reached
        config = PoolConfig(cpus_per_executor=args.cpus_per_executor, per_node=args.per_node,
                            min_executors=args.min_executors, settings=settings, resource=args.resource)
    except ValueError as exc:
        raise UsageError(f"judgebox ray up: {exc}") from None
    ray = ray_call(connect, ray_address(args.address))
    languages = [k.strip() for k in args.languages.split(",") if k.strip()]
    try:
        reports = check_nodes(ray, settings, languages, args.resource)
    except RuntimeError as exc:
        raise UsageError(str(exc)) from None
    pool = Pool.up(None, config)
    try:
        pool.wait(1, timeout=args.wait)
    except TimeoutError as exc:
        raise UsageError(f"judgebox ray up: {exc}; `judgebox ray status` shows each executor") from None
    print(f"judgebox pool up on {ray.get_runtime_context().gcs_address}: {len(reports)} node(s) checked "
          f"({', '.join(languages)} there); sandbox URL: ray://{ray.get_runtime_context().gcs_address}")
    print_pool(pool.stats())
    return 0


def print_pool(stats: dict) -> None:
    print(f"{'executor':<28} {'node':<16} {'slots':>5} {'running':>7} {'queued':>6} {'runs':>6} "
          f"{'failures':>8} {'restarts':>8}  state")
    for e in stats["executors"]:
        state = "live" if e["live"] else (e["error"] or "pending")
        print(f"{e['name']:<28} {(e['node_id'] or '-')[:16]:<16} {e['slots']:>5} {e['running']:>7} "
              f"{e['waiting']:>6} {e['runs']:>6} {e['failures']:>8} {e['restarts']:>8}  {state}")
    print(f"nodes {len(stats['nodes'])}, executors {len(stats['executors'])} ({stats['pending']} not live), "
          f"slots {stats['slots']}, running {stats['running']}, queued {stats['waiting']}, runs {stats['runs']}, "
          f"retried elsewhere {stats['retries']}, dropped with their node {stats['dropped']}")


def _ray_status(args: argparse.Namespace) -> int:
    import json

    from judgebox.sandbox.ray import Pool

    stats = ray_call(Pool.find, ray_address(args.address)).stats()
    if args.json:
        print(json.dumps(stats, indent=1))
    else:
        print_pool(stats)
    return 0


def _ray_down(args: argparse.Namespace) -> int:
    from judgebox.sandbox.ray import Pool

    n = ray_call(Pool.find, ray_address(args.address)).down()
    print(f"judgebox pool stopped: {n} executor(s)")
    return 0
