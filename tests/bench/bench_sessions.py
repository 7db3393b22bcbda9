"""Benchmark of sandbox sessions: warm-cell latency, create latency, memory per idle session.

Run: ``python3 tests/bench/bench_sessions.py [--calls 200] [--idle 16]``. It starts one
``judgebox serve`` on loopback (and an nginx that hides ``/sessions``, for the replay fallback),
stopped at the end, and prints figures; it asserts nothing.

Figures:
- p50/p95 ms of ``x += 1`` in a warm session: embedded (``LocalSandbox``) and over HTTP
  (``SandboxClient``), against ``/run_code`` of the same code (a fresh process per call) and against
  the replay fallback (``code_interpreter`` behind a plain SandboxFusion: call n re-runs n-1 cells
  in a fresh kernel, measured at the 10th call);
- p50/p95 ms to create a session (kernel start) over HTTP;
- memory of one idle session (PSS of the kernel process and its cgroup's ``memory.usage_in_bytes``
  where readable) and how many idle sessions fit in 24 GiB.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from string import Template
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.conftest
from judgebox.agent.tools import CodeInterpreterTool  # noqa: E402
from judgebox.sandbox import LocalSandbox, SandboxClient  # noqa: E402
from tests.conftest import free_port, start_live_server  # noqa: E402

NGINX = Path(__file__).resolve().parents[1] / "sandbox" / "nginx"


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def latency_ms(call: Callable[[], object], n: int) -> tuple[float, float]:
    """p50 and p95 of ``n`` sequential calls, in milliseconds (after 5 warm-up calls)."""
    for _ in range(5):
        call()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return percentiles(times)


def pss_MiB(pid: int) -> float:
    """Proportional set size of ``pid`` in MiB (shared pages split among their users)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return sum(int(line.split()[1]) for line in f if line.startswith("Pss:")) / 1024
    except OSError:
        return 0.0


def kernel_pids(server_pid: int) -> list[int]:
    """Kernel processes started by the server (children running ipykernel_launcher)."""
    out = subprocess.run(["pgrep", "-P", str(server_pid), "-f", "ipykernel_launcher"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def nginx_without_sessions(upstream: str) -> tuple[subprocess.Popen, str, str]:
    """An nginx in front of ``upstream`` that answers 404 for /run_tests and /sessions."""
    prefix = tempfile.mkdtemp(prefix="judgebox-bench-nginx-")
    port = free_port()
    locations = Template((NGINX / "sandboxfusion.locations").read_text()).substitute(read_timeout="120s")
    conf = Template((NGINX / "base.conf.tmpl").read_text()).substitute(
        prefix=prefix, port=port, upstream=upstream.removeprefix("http://"), locations=locations)
    Path(prefix, "nginx.conf").write_text(conf)
    proc = subprocess.Popen(["nginx", "-p", prefix, "-c", f"{prefix}/nginx.conf", "-e", "stderr"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(0.5)
    return proc, f"http://127.0.0.1:{port}", prefix


async def replay_ms(url: str, calls: int) -> tuple[float, float]:
    """ms of the ``calls``-th ``x += 1`` through the replay fallback, and the mean over all calls."""
    tool = CodeInterpreterTool({"sandbox_url": url})
    iid, _ = await tool.create()
    await tool.execute(iid, {"code": "x = 0"})
    times = []
    for _ in range(calls - 1):
        start = time.perf_counter()
        await tool.execute(iid, {"code": "x += 1"})
        times.append((time.perf_counter() - start) * 1000)
    await tool.release(iid)
    tool.close()
    return times[-1], statistics.mean(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per latency figure")
    parser.add_argument("--creates", type=int, default=10, help="sessions created for the create latency")
    parser.add_argument("--idle", type=int, default=16, help="idle sessions held for the memory figure")
    args = parser.parse_args()

    local = LocalSandbox()
    with local.create_session() as s:
        s.run("x = 0")
        emb = latency_ms(lambda: s.run("x += 1"), args.calls)
    print(f"x += 1, warm session, embedded:       p50 {emb[0]:6.1f} ms  p95 {emb[1]:6.1f} ms")

    server = start_live_server()
    try:
        with SandboxClient(server.url) as client:
            with client.create_session() as s:
                s.run("x = 0")
                http = latency_ms(lambda: s.run("x += 1"), args.calls)
            print(f"x += 1, warm session, HTTP:           p50 {http[0]:6.1f} ms  p95 {http[1]:6.1f} ms")
            run_code = latency_ms(lambda: client.run_code({"code": "x = 0\nx += 1", "language": "python"}),
                                  max(20, args.calls // 5))
            print(f"x = 0; x += 1 via /run_code, HTTP:    p50 {run_code[0]:6.1f} ms  p95 {run_code[1]:6.1f} ms")

            proc, gw, prefix = nginx_without_sessions(server.url)
            try:
                last, mean = asyncio.run(replay_ms(gw, 10))
            finally:
                proc.terminate()
                proc.wait()
                shutil.rmtree(prefix, ignore_errors=True)
            print(f"x += 1, replay fallback (10th call):  {last:6.1f} ms  (mean of calls 2-10: {mean:.1f} ms)")

            creates = []
            for _ in range(args.creates):
                start = time.perf_counter()
                s = client.create_session()
                creates.append((time.perf_counter() - start) * 1000)
                s.close()
            c50, c95 = percentiles(creates)
            print(f"session create (kernel start), HTTP:  p50 {c50:6.0f} ms  p95 {c95:6.0f} ms")

            before = set(kernel_pids(server.process.pid))
            idle = [client.create_session() for _ in range(args.idle)]
            for s in idle:
                s.run("x = 1")
            time.sleep(1)
            pids = [p for p in kernel_pids(server.process.pid) if p not in before]
            per = statistics.mean(pss_MiB(p) for p in pids) if pids else float("nan")
            server_own = pss_MiB(server.process.pid)
            for s in idle:
                s.close()
            print(f"idle session memory (kernel PSS):     {per:6.1f} MiB over {len(pids)} kernels "
                  f"(the server itself: {server_own:.0f} MiB)")
            print(f"idle sessions that fit in 24 GiB:     {int(24 * 1024 / per)} (memory alone; the default "
                  "JUDGEBOX_MAX_SESSIONS is 64)")
    finally:
        server.stop()
        local.sessions.close_all()


if __name__ == "__main__":
    main()
