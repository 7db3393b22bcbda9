"""Benchmark of the compose deployment: image build, start-up, throughput through the gateway, and the
cost of losing a replica.

Run: ``python3 tests/bench/bench_compose.py [--requests 200] [--concurrency 16] [--replicas 2]``.
It builds the images (scripts/docker-setup.sh: cached base image and wheelhouse), brings up its own
compose project on a free loopback port, sends ``print(1)`` programs through the gateway with
``SandboxClient``, `docker kill`s one executor half-way through a second round, and brings the project
down. It prints figures and asserts nothing.

Figures: seconds for docker-setup.sh and for `compose up` until every replica is healthy; p50/p99
latency (ms) and requests per second with all replicas; the same round with one replica killed
half-way (every request must still succeed: failures are counted and printed).

``--versus-serve``: in the same sitting, ``print(1)`` one at a time (p50 ms) and ``judgebox eval
humaneval --samples gold`` (wall seconds) through the gateway and through a ``judgebox serve`` on the
host, before the kill round (issue 40's comparison).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from judgebox.sandbox import SandboxClient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.docker.stack
from tests.docker.stack import Stack, free_port, setup_images  # noqa: E402

PRINT = {"code": "print(1)", "language": "python"}


def load(client: SandboxClient, requests: int, concurrency: int, midway=None) -> dict[str, float]:
    """Send ``requests`` print(1) programs, ``concurrency`` at once; call ``midway()`` half-way."""
    def one(_: int) -> tuple[float, bool]:
        start = time.perf_counter()
        try:
            ok = client.run_code(PRINT).run_result.stdout == "1\n"
        except Exception:  # noqa: BLE001 - a benchmark counts failures instead of stopping
            ok = False
        return (time.perf_counter() - start) * 1000, ok

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        futures = [pool.submit(one, i) for i in range(requests)]
        if midway:
            while sum(f.done() for f in futures) < requests // 2:
                time.sleep(0.05)
            midway()
        results = [f.result() for f in futures]
    elapsed = time.perf_counter() - started
    times = sorted(t for t, _ in results)
    return {"p50_ms": statistics.median(times), "p99_ms": times[int(0.99 * (len(times) - 1))],
            "rps": requests / elapsed, "failed": sum(not ok for _, ok in results)}


def versus(name: str, url: str) -> None:
    """``print(1)`` one at a time and HumanEval gold through ``url``, printed under ``name``."""
    with SandboxClient(url, failure_threshold=1000, max_attempts=8) as client:
        client.run_code(PRINT)
        one = load(client, 50, 1)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", "import sys; from judgebox.cli import main; sys.exit(main())",
                               "eval", "humaneval", "--samples", "gold", "--sandbox-url", url, "--no-progress",
                               "--results", os.path.join(tmp, "r.jsonl")], capture_output=True, text=True)
        wall = time.perf_counter() - started
    passed = [line for line in done.stdout.splitlines() if "samples passed" in line]
    print(f"{name:8s} print(1) c=1 p50 {one['p50_ms']:.0f} ms p99 {one['p99_ms']:.0f} ms; "
          f"HumanEval gold {wall:.1f} s ({passed[0].strip() if passed else done.stderr[-300:]})")


def serve(port: int) -> subprocess.Popen:
    """``judgebox serve`` on the host at ``port``, answering ``/v1/ping``."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from judgebox.cli import main; sys.exit(main())",
                             "serve", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/ping", timeout=5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("judgebox serve did not answer /v1/ping within 60 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--versus-serve", action="store_true", help="compare with judgebox serve on the host")
    args = parser.parse_args()

    started = time.monotonic()
    proc = setup_images()
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        return 1
    print(f"docker-setup.sh: {time.monotonic() - started:.0f} s")

    stack = Stack(project="judgebox-bench", port=free_port(), env={"JUDGEBOX_REPLICAS": str(args.replicas)})
    stack.env["JUDGEBOX_PORT"] = str(stack.port)
    stack.compose("down", "-v", "--remove-orphans", "-t", "1")
    try:
        started = time.monotonic()
        stack.compose("up", "-d", "--no-build")
        stack.wait_healthy(replicas=args.replicas)
        print(f"compose up -> {args.replicas} healthy replicas: {time.monotonic() - started:.1f} s")
        # the gateway balances replicas itself: keep the client's per-endpoint breaker out of reach
        # (see tests/docker/test_compose.py's client fixture)
        if args.versus_serve:
            host = serve(free_port())
            try:
                versus("serve", f"http://127.0.0.1:{host.args[-1]}")
                versus("gateway", stack.url)
                versus("serve", f"http://127.0.0.1:{host.args[-1]}")
            finally:
                host.terminate()
                host.wait(30)
        with SandboxClient(stack.url, failure_threshold=1000, max_attempts=8) as client:
            client.run_code(PRINT)  # warm-up
            steady = load(client, args.requests, args.concurrency)
            print("all replicas:     p50 {p50_ms:.0f} ms  p99 {p99_ms:.0f} ms  {rps:.1f} req/s  failed {failed}"
                  .format(**steady))
            victim = stack.containers("executor")[0]
            kill = lambda: subprocess.run(["docker", "kill", victim], check=True, capture_output=True)  # noqa: E731
            degraded = load(client, args.requests, args.concurrency, midway=kill)
            print("one killed midway: p50 {p50_ms:.0f} ms  p99 {p99_ms:.0f} ms  {rps:.1f} req/s  failed {failed}"
                  .format(**degraded))
    finally:
        stack.compose("down", "-v", "--remove-orphans", "-t", "1", check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
