"""Benchmark of ``ray://``: the per-call overhead over the embedded sandbox, and GRPO completions/s on
1, 2 and 3 nodes.

Run: ``python tests/bench/bench_ray.py [--calls 1000] [--groups 32] [--nodes 1,2,3]``. It starts its
own Ray cluster on this machine (``ray.cluster_utils.Cluster``: a head that runs no executor, plus
worker nodes with ``--cpus-per-node`` CPUs each), a judgebox pool on it, and stops both at the end;
it prints figures and asserts nothing. The same script runs unchanged on a larger machine.

Figures:
- overhead: p50/p99 in ms of ``print(1)`` and of a 10-test ``run_tests``, embedded and through
  ``ray://``, ``--calls`` calls of each, interleaved (embedded, ray, embedded, ...) so both see the
  same machine; overhead = p50(ray) - p50(embedded) (target: <= 2 ms);
- throughput: completions/s of a GRPO-style batch (``--groups`` problems x 4 completions, through
  ``compute_score``, 4 x the executors' slots in flight) with 1, 2 and 3 worker nodes.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.sandbox
from judgebox.reward import compute_score  # noqa: E402
from judgebox.sandbox import LocalSandbox, SandboxClient  # noqa: E402
from tests.sandbox.test_ray_grpo import batch  # noqa: E402

PRINT = {"code": "print(1)", "language": "python"}
TESTS10 = {"code": "print(int(input()) + 1)", "language": "python",
           "cases": [{"stdin": f"{i}\n"} for i in range(10)]}


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def overhead(client: SandboxClient, local: LocalSandbox, calls: int) -> None:
    for name, method, request in (("print(1)", "run_code", PRINT), ("run_tests x10", "run_tests", TESTS10)):
        times: dict[str, list[float]] = {"embedded": [], "ray": []}
        for _ in range(calls):
            for face, call in (("embedded", getattr(local, method)), ("ray", getattr(client, method))):
                start = time.perf_counter()
                call(request)
                times[face].append((time.perf_counter() - start) * 1000)
        e, r = times["embedded"], times["ray"]
        print(f"{name:<14} embedded p50 {statistics.median(e):7.2f} ms p99 {pct(e, .99):7.2f} ms | ray:// p50 "
              f"{statistics.median(r):7.2f} ms p99 {pct(r, .99):7.2f} ms | overhead p50 "
              f"{statistics.median(r) - statistics.median(e):+.2f} ms  ({calls} interleaved calls each)")


def throughput(rows, slots: int) -> float:
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(4 * slots) as threads:
        results = list(threads.map(lambda row: compute_score("grpo", row[1], row[0], sandbox_fusion_url="ray://"),
                                   rows))
    took = time.perf_counter() - start
    infra = sum(r["infra_error"] for r in results)
    if infra:
        print(f"  ({infra} of {len(rows)} completions were infrastructure errors)")
    return len(rows) / took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls of each kind per face (default 1000)")
    parser.add_argument("--groups", type=int, default=32, help="GRPO problems, 4 completions each (default 32)")
    parser.add_argument("--nodes", default="1,2,3", help="worker node counts to measure (default 1,2,3)")
    parser.add_argument("--cpus-per-node", type=int, default=1, help="CPUs of each worker node (default 1)")
    args = parser.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    from judgebox.sandbox.ray import Pool, PoolConfig

    counts = sorted(int(n) for n in args.nodes.split(","))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.add_node(num_cpus=args.cpus_per_node)
        cluster.wait_for_nodes()
        pool = Pool.up(config=PoolConfig(reconcile_s=0.5))
        pool.wait(1)
        print(f"machine: {os.cpu_count()} CPUs; Ray {ray.__version__}; worker nodes of {args.cpus_per_node} CPU(s)")
        local = LocalSandbox(max_concurrency=args.cpus_per_node)
        with SandboxClient("ray://") as client:
            for _ in range(20):  # warm both: the executor's fork-server, the client's Ray connection
                client.run_code(PRINT)
                local.run_code(PRINT)
            print(f"overhead on 1 worker node ({args.cpus_per_node} CPU(s)):")
            overhead(client, local, args.calls)
        rows = batch()[: 4 * args.groups]
        for n in counts:
            while len(cluster.worker_nodes) < n:
                cluster.add_node(num_cpus=args.cpus_per_node)
                cluster.wait_for_nodes()
            live = pool.wait(n)
            slots = sum(m["slots"] for m in live)
            rate = throughput(rows, slots)
            print(f"throughput: {n} node(s), {len(live)} executor(s), {slots} slot(s): "
                  f"{rate:7.1f} completions/s ({len(rows)} completions)")
        pool.down()
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
