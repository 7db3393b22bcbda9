"""Benchmark: the peak memory of ``judgebox serve`` answering a ``/run_tests_batch`` whose programs
print control characters (each costs 6 bytes of JSON, ``\\u0001``) as fast as they can.

Each item is a 10-case problem whose program writes ``"\\x01"`` to stdout and stderr in a loop until
its ``run_timeout`` (1 s): every case fills both streams to ``output_limit_bytes``. For each batch
size (default 4 and 16 items) a fresh server is started, the batch is posted, and the server's peak
resident memory (``VmHWM``) is printed with its growth over the idle server's, and what the answer
weighed::

    python tests/bench/bench_batch_memory.py [--items 4 16] [--cases 10] [-- <judgebox serve flags>]

Not collected by pytest. Issue 37, finding 7: at 2056cab every item held ~840 MiB (the budgets
were one item's, counted in the program's bytes, and the whole answer was built at the end).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.conftest
from tests.conftest import start_live_server  # noqa: E402

FLOOD = "import sys\nchunk = '\\x01' * 65536\nwhile True:\n    sys.stdout.write(chunk)\n    sys.stderr.write(chunk)\n"


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(f"{field}:"))


def measure(items: int, cases: int, flags: list[str]) -> None:
    server = start_live_server(*flags)
    try:
        pid = server.process.pid
        httpx.post(f"{server.url}/run_code", json={"code": "print(1)", "language": "python"}, timeout=60)
        idle = status_kib(pid, "VmRSS")
        item = {"code": FLOOD, "language": "python", "run_timeout": 1, "cases": [{}] * cases}
        start = time.monotonic()
        with httpx.stream("POST", f"{server.url}/run_tests_batch", json={"requests": [item] * items},
                          timeout=3600) as r:
            size = sum(len(chunk) for chunk in r.iter_raw())
            code = r.status_code
        peak = status_kib(pid, "VmHWM")
        print(f"{items:>5} items x {cases} cases: HTTP {code}, answer {size / 2**20:8.1f} MiB, server RSS idle "
              f"{idle >> 10} MiB, peak {peak >> 10} MiB (+{(peak - idle) >> 10} MiB, "
              f"{(peak - idle) / items / 1024:.0f} MiB per item), {time.monotonic() - start:.0f} s", flush=True)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("flags", nargs="*", help="judgebox serve flags (after --)")
    args = parser.parse_args()
    for items in args.items:
        measure(items, args.cases, args.flags)


if __name__ == "__main__":
    main()
