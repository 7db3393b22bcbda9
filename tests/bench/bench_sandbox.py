"""Benchmark: requests/s and p50/p99 latency of ``print(1)`` in python, next to the spawn floor.

Rows, for each concurrency (default 1, 8, 64):

* ``floor``: spawning a bare ``python -c "print(1)"`` (``subprocess.run``, no sandbox) from that many
  threads: the cost no sandbox can avoid on this machine;
* ``embedded``: ``LocalSandbox.run_code`` from that many threads;
* ``http``: ``POST /run_code`` to a live ``judgebox serve`` on loopback from that many concurrent
  ``httpx.AsyncClient`` requests.

The figure to drive down is the per-request overhead above the floor at concurrency 1
(``p50(embedded) - p50(floor)``, and the same for HTTP). Run it on a quiet machine::

    python tests/bench/bench_sandbox.py [--requests 200] [--concurrency 1 8 64]

Not collected by pytest (the file name does not start with ``test_``). Prints a table; asserts only
that every request succeeded with stdout ``"1\\n"`` (a benchmark of wrong answers is worthless).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import httpx

from sandbox import LocalSandbox, SandboxSettings  # before tests/ is on the path (tests/sandbox/)

sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests/, for conftest's server helper
from conftest import start_live_server  # noqa: E402

BODY = {"code": "print(1)", "language": "python"}


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by nearest rank, in the values' unit."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def threaded(call: Callable[[], None], requests: int, concurrency: int) -> tuple[float, list[float]]:
    """Run ``call`` ``requests`` times from ``concurrency`` threads; (wall seconds, latencies in s)."""
    def timed(_: int) -> float:
        t = time.perf_counter()
        call()
        return time.perf_counter() - t

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        latencies = list(pool.map(timed, range(requests)))
    return time.perf_counter() - start, latencies


def over_http(url: str, requests: int, concurrency: int) -> tuple[float, list[float]]:
    """``requests`` POSTs with at most ``concurrency`` in flight; (wall seconds, latencies in s)."""
    async def main() -> tuple[float, list[float]]:
        sem = asyncio.Semaphore(concurrency)
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
            async def one() -> float:
                async with sem:
                    t = time.perf_counter()
                    r = await client.post("/run_code", json=BODY)
                    elapsed = time.perf_counter() - t
                body = r.json()
                assert r.status_code == 200 and body["run_result"]["stdout"] == "1\n", body
                return elapsed

            start = time.perf_counter()
            latencies = await asyncio.gather(*(one() for _ in range(requests)))
            return time.perf_counter() - start, list(latencies)

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per row")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    args = parser.parse_args()

    settings = SandboxSettings()
    python = settings.python
    sandbox = LocalSandbox(settings)

    def floor() -> None:
        out = subprocess.run([python, "-c", "print(1)"], capture_output=True, stdin=subprocess.DEVNULL)
        assert out.stdout == b"1\n"

    def embedded() -> None:
        r = sandbox.run_code(BODY)
        assert r.status == "Success" and r.run_result.stdout == "1\n", r

    server = start_live_server()
    rows = []
    try:
        for call in (floor, embedded):  # warm caches (page cache, imports, uid pool)
            call()
        over_http(server.url, 4, 2)
        for c in args.concurrency:
            for name, run in (("floor", lambda c=c: threaded(floor, args.requests, c)),
                              ("embedded", lambda c=c: threaded(embedded, args.requests, c)),
                              ("http", lambda c=c: over_http(server.url, args.requests, c))):
                wall, lat = run()
                rows.append((c, name, args.requests / wall, statistics.median(lat), percentile(lat, 99)))
    finally:
        server.stop()

    print(f"python: {python}; max_concurrency: {settings.max_concurrency}; requests per row: {args.requests}")
    print(f"{'conc':>5} {'mode':<9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'p50 over floor ms':>18}")
    floors = {c: p50 for c, name, _, p50, _ in rows if name == "floor"}
    for c, name, rps, p50, p99 in rows:
        over = "" if name == "floor" else f"{(p50 - floors[c]) * 1000:+.1f}"
        print(f"{c:>5} {name:<9} {rps:>8.1f} {p50 * 1000:>8.1f} {p99 * 1000:>8.1f} {over:>18}")


if __name__ == "__main__":
    main()
