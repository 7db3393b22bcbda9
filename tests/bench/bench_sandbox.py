"""Benchmark: requests/s and p50/p99 latency of ``print(1)`` in python, next to the spawn floor.

Rows, for each concurrency (default 1, 8, 64):

* ``floor``: spawning a bare ``python -c "print(1)"`` (``subprocess.run``, no sandbox) from that many
  threads: the cost no sandbox can avoid on this machine;
* ``embedded``: ``LocalSandbox.run_code`` from that many threads, with the default full isolation
  (python runs forked by the fork-server, :mod:`judgebox.sandbox.speedups.forkserver`);
* ``spawn``: the same with the fork-server off (``zygote=False``: an interpreter started per run),
  the figure before the fork-server;
* ``minimal``: the same with ``isolation="minimal"`` (no filesystem view, PID namespace or disk
  quota): ``embedded - minimal`` is what the per-run view costs (printed as ``view cost``);
* ``http``: ``POST /run_code`` to a live ``judgebox serve`` on loopback from that many concurrent
  ``httpx.AsyncClient`` requests.

The figure to drive down is the per-request overhead above the floor at concurrency 1
(``p50(embedded) - p50(floor)``, and the same for HTTP). The three modes run in interleaved rounds
so that load from other processes skews them alike; still, run it on a quiet machine::

    python tests/bench/bench_sandbox.py [--requests 200] [--concurrency 1 8 64] [--rounds 5]

Not collected by pytest (the file name does not start with ``test_``). Prints a table; asserts only
that every request succeeded with stdout ``"1\\n"`` (a benchmark of wrong answers is worthless).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

import httpx

from judgebox.sandbox import LocalSandbox, SandboxSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.conftest
from tests.conftest import start_live_server  # noqa: E402

BODY = {"code": "print(1)", "language": "python"}


def cpu_seconds(pid: Optional[int] = None) -> float:
    """CPU seconds (user + system) of this process or ``pid``, plus those of its reaped children."""
    if pid is None:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


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
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds the requests are split into")
    args = parser.parse_args()

    settings = SandboxSettings()
    python = settings.python
    sandbox = LocalSandbox(settings)
    bare = LocalSandbox(settings, isolation="minimal")
    spawning = LocalSandbox(settings, zygote=False)

    def floor() -> None:
        out = subprocess.run([python, "-c", "print(1)"], capture_output=True, stdin=subprocess.DEVNULL)
        assert out.stdout == b"1\n"

    def embedded() -> None:
        r = sandbox.run_code(BODY)
        assert r.status == "Success" and r.run_result.stdout == "1\n", r

    def minimal() -> None:
        r = bare.run_code(BODY)
        assert r.status == "Success" and r.run_result.stdout == "1\n", r

    def spawn() -> None:
        r = spawning.run_code(BODY)
        assert r.status == "Success" and r.run_result.stdout == "1\n", r

    server = start_live_server()
    rows = []
    try:
        for call in (floor, embedded, minimal, spawn):  # warm caches (page cache, imports, uid pool)
            call()
        over_http(server.url, 4, 2)
        per_round = max(1, args.requests // args.rounds)
        for c in args.concurrency:
            modes = {"floor": lambda n, c=c: threaded(floor, n, c),
                     "embedded": lambda n, c=c: threaded(embedded, n, c),
                     "minimal": lambda n, c=c: threaded(minimal, n, c),
                     "spawn": lambda n, c=c: threaded(spawn, n, c),
                     "http": lambda n, c=c: over_http(server.url, n, c)}
            walls = {name: 0.0 for name in modes}
            cpus = {name: 0.0 for name in modes}
            lats: dict[str, list[float]] = {name: [] for name in modes}
            for _ in range(args.rounds):  # interleaved, so that load from others hits every mode alike
                for name, run in modes.items():
                    pid = server.process.pid if name == "http" else None
                    cpu = cpu_seconds(pid)
                    wall, lat = run(per_round)
                    cpus[name] += cpu_seconds(pid) - cpu
                    walls[name] += wall
                    lats[name] += lat
            for name in modes:
                lat = lats[name]
                rows.append((c, name, len(lat) / walls[name], statistics.median(lat), percentile(lat, 99),
                             cpus[name] / len(lat)))
    finally:
        server.stop()

    print(f"python: {python}; max_concurrency: {settings.max_concurrency}; requests per row: {args.requests}")
    print("cpu ms/req: CPU of the caller (floor, embedded) or of the server (http), children included;"
          " unlike latency it hardly moves with load from other processes")
    print(f"{'conc':>5} {'mode':<9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'p50 over floor':>15}"
          f" {'cpu ms/req':>11} {'cpu over floor':>15}")
    floors = {c: (p50, cpu) for c, name, _, p50, _, cpu in rows if name == "floor"}
    for c, name, rps, p50, p99, cpu in rows:
        over = "" if name == "floor" else f"{(p50 - floors[c][0]) * 1000:+.1f}"
        cpu_over = "" if name == "floor" else f"{(cpu - floors[c][1]) * 1000:+.1f}"
        print(f"{c:>5} {name:<9} {rps:>8.1f} {p50 * 1000:>8.1f} {p99 * 1000:>8.1f} {over:>15}"
              f" {cpu * 1000:>11.1f} {cpu_over:>15}")
    by = {(c, name): (p50, cpu) for c, name, _, p50, _, cpu in rows}
    for c in args.concurrency:
        (full_p50, full_cpu), (min_p50, min_cpu) = by[c, "embedded"], by[c, "minimal"]
        rates = {name: rps for cc, name, rps, *_ in rows if cc == c}
        print(f"concurrency {c}: http {rates['http']:.1f} req/s = {rates['http'] / rates['floor']:.2f}x the bare spawn "
              f"rate; embedded {rates['embedded'] / rates['spawn']:.2f}x the fork-server-off rate")
        print(f"view cost at concurrency {c}: {(full_p50 - min_p50) * 1000:+.1f} ms p50, "
              f"{(full_cpu - min_cpu) * 1000:+.1f} CPU ms per request (embedded full - minimal)")


if __name__ == "__main__":
    main()
