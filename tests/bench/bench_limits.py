"""Benchmark: throughput and verdict stability of a CPU-bound program under concurrency (BUG-031).

The program burns about 0.3 s of CPU (``sum(range(4_000_000))`` in a loop, ``run_timeout=1``).
For each concurrency (default 1 2 4 8 16 32 64) it sends that many simultaneous ``POST /run_code``
requests to a live ``judgebox serve`` on loopback, three times, and prints one row:

* ``progs/s``: programs finished per second (all three bursts);
* ``p50``/``p99``: request latency in seconds (queue wait included);
* ``cpu p50``: the programs' own CPU time (what the verdict reads), to compare with the limit;
* ``success``: share of ``Success`` with the exact stdout; ``stable``: whether the three bursts gave
  identical verdict lists (the figure BUG-031 is about: it must be ``yes`` on every row).

A last row sends ``--burst`` (default 256) concurrent ``print(1)`` (BUG-036) and prints its p50/p99.

Run::

    python tests/bench/bench_limits.py [--concurrency 1 2 4 8 16 32 64] [--repeats 3] [--burst 256]

Not collected by pytest. Prints a table and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.conftest
from tests.conftest import start_live_server  # noqa: E402

CPU_BOUND = {"code": "s = 0\nfor i in range(4_000_000): s += i\nprint(s)", "language": "python",
             "run_timeout": 1}
EXPECTED = "7999998000000\n"
PRINT_1 = {"code": "print(1)", "language": "python", "run_timeout": 10}


async def burst(url: str, body: dict, n: int) -> list[tuple[float, dict]]:
    """``n`` simultaneous requests; ``(latency seconds, response JSON)`` for each."""
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(timeout=900, limits=limits) as client:
        async def one() -> tuple[float, dict]:
            start = time.perf_counter()
            r = await client.post(f"{url}/run_code", json=body)
            return time.perf_counter() - start, (r.json() if r.status_code == 200 else {"status": r.status_code})
        return await asyncio.gather(*(one() for _ in range(n)))


def verdict(resp: dict) -> str:
    run = resp.get("run_result") or {}
    return f"{resp['status']}/{run.get('status')}/{run.get('stdout') == EXPECTED}"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--burst", type=int, default=256)
    args = parser.parse_args()
    server = start_live_server()
    try:
        health = httpx.get(f"{server.url}/health").json()
        print(f"server: max_concurrency={health['max_concurrency']}, memory limit by "
              f"{health['isolation']['memory_limit']}, network namespace {health['isolation']['network_namespace']}")
        print(f"{'conc':>5} {'progs/s':>8} {'p50 s':>7} {'p99 s':>7} {'cpu p50':>8} {'success':>8} {'stable':>7}")
        for c in args.concurrency:
            start = time.perf_counter()
            rounds = [asyncio.run(burst(server.url, CPU_BOUND, c)) for _ in range(args.repeats)]
            elapsed = time.perf_counter() - start
            flat = [x for r in rounds for x in r]
            lat = [t for t, _ in flat]
            cpu = [(resp.get("run_result") or {}).get("cpu_time") or 0.0 for _, resp in flat]
            ok = sum(verdict(resp) == "Success/Finished/True" for _, resp in flat) / len(flat)
            stable = all([verdict(x) for _, x in r] == [verdict(x) for _, x in rounds[0]] for r in rounds)
            print(f"{c:>5} {len(flat) / elapsed:>8.2f} {statistics.median(lat):>7.2f} {pct(lat, 0.99):>7.2f} "
                  f"{statistics.median(cpu):>8.3f} {ok:>8.0%} {'yes' if stable else 'NO':>7}")
        start = time.perf_counter()
        flat = asyncio.run(burst(server.url, PRINT_1, args.burst))
        elapsed = time.perf_counter() - start
        lat = [t for t, _ in flat]
        ok = sum(r["status"] == "Success" and r["run_result"]["stdout"] == "1\n" for _, r in flat)
        print(f"print(1) x{args.burst}: {elapsed:.1f}s, {args.burst / elapsed:.1f} req/s, "
              f"p50 {statistics.median(lat):.2f}s, p99 {pct(lat, 0.99):.2f}s, Success {ok}/{args.burst}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
