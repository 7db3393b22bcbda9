"""Benchmark of ``SandboxClient``: per-request overhead, throughput, and the cost of a dead endpoint.

Run: ``python3 tests/bench/bench_client.py [--requests 64] [--concurrency 8]``. It starts one
``judgebox serve`` on loopback (stopped at the end) and prints figures; it asserts nothing.

Figures:
- p50/p95 latency in ms of ``print(1)``: embedded, raw httpx to the server, SandboxClient to the server
  (the difference of the last two is the client's own overhead);
- requests per second for ``--requests`` programs with ``--concurrency`` in flight;
- the same with a dead endpoint (closed port) listed first: the extra cost of failing over.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import httpx

from judgebox.sandbox import SandboxClient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.conftest
from tests.conftest import start_live_server  # noqa: E402

PRINT = {"code": "print(1)", "language": "python"}


def latency_ms(call: Callable[[], object], n: int) -> tuple[float, float]:
    """p50 and p95 of ``n`` sequential calls, in milliseconds."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (n - 1))]


def throughput(client: SandboxClient, n: int) -> float:
    """Requests per second for ``n`` concurrent ``print(1)`` programs (bounded by the client)."""
    async def burst() -> None:
        results = await asyncio.gather(*(client.arun_code(PRINT) for _ in range(n)))
        assert all(r.run_result.stdout == "1\n" for r in results)

    start = time.perf_counter()
    asyncio.run(burst())
    return n / (time.perf_counter() - start)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--samples", type=int, default=30, help="sequential calls per latency figure")
    args = parser.parse_args()
    server = start_live_server("--max-concurrency", str(args.concurrency))
    try:
        embedded = SandboxClient("")
        raw = httpx.Client()
        with SandboxClient(server.url, max_concurrency=args.concurrency) as client, \
                SandboxClient([closed_port_url(), server.url], max_concurrency=args.concurrency) as failover:
            client.run_code(PRINT)  # warm up connections and the interpreter cache
            rows = [
                ("embedded", latency_ms(lambda: embedded.run_code(PRINT), args.samples)),
                ("raw httpx -> server", latency_ms(
                    lambda: raw.post(f"{server.url}/run_code", json=PRINT, timeout=60).json(), args.samples)),
                ("SandboxClient -> server", latency_ms(lambda: client.run_code(PRINT), args.samples)),
            ]
            for name, (p50, p95) in rows:
                print(f"latency {name:<26} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")
            print(f"throughput 1 endpoint            {throughput(client, args.requests):7.1f} req/s "
                  f"({args.requests} requests, {args.concurrency} in flight)")
            print(f"throughput dead + live endpoint  {throughput(failover, args.requests):7.1f} req/s "
                  f"(dead endpoint state: {failover.endpoints[0]['healthy'] and 'live' or 'cooling down'})")
        raw.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
