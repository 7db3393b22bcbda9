"""Benchmark: compiled languages over HTTP (compile cache, precompiled ``bits/stdc++.h``, JVM start).

Rows (``--rows`` picks some; default all):

* ``cpp_stdcpp_unique``: a competitive-style ``bits/stdc++.h`` solution, a distinct source per
  request (every request misses the compile cache; the precompiled header is what helps);
* ``cpp_hello_unique``: an ``<iostream>`` hello, distinct per request (bound by g++ itself);
* ``cpp_repeat``, ``java_repeat``, ``rust_repeat``, ``go_repeat``: the same source every time (after
  the first request, compile-cache hits);
* ``java_unique``: a distinct Java hello per request (javac and the JVM every time).

Each row reports requests/s, p50/p99 latency and the server's CPU milliseconds per request
(children included: compilers and programs), which moves far less with load from other processes
than latency does. The 1-minute load average before and after each row is printed: on a shared
machine only ranges over several runs mean something. Usage::

    python tests/bench/bench_compile.py [--checkout /path/to/judgebox] [--rows cpp_repeat java_repeat]

``--checkout`` serves that checkout's code (``PYTHONPATH``), so one script measures before and
after. Not collected by pytest. Asserts that every answer is right (a benchmark of wrong answers is
worthless).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.conftest
from tests.bench.bench_sandbox import cpu_seconds, percentile  # noqa: E402
from tests.conftest import start_live_server  # noqa: E402

_STDCPP = ("#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n    long long n = 0, s = 0, x;\n"
           "    cin >> n;\n    vector<long long> v(n);\n    for (auto& e : v) { cin >> e; s += e; }\n"
           "    sort(v.begin(), v.end());\n    cout << s << ' ' << v.back() << endl;\n    return 0;\n}\n")
_CPP_HELLO = '#include <iostream>\nint main() {\n    std::cout << "hello" << std::endl;\n    return 0;\n}\n'
_JAVA = 'public class Main {\n    public static void main(String[] a) {\n        System.out.println("hello");\n    }\n}\n'
_RUST = 'fn main() {\n    println!("hello");\n}\n'
_GO = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n'


@dataclass(frozen=True)
class Row:
    language: str
    code: str
    expected: str
    concurrency: int
    requests: int
    unique: Optional[str] = None  # appended with a counter: a distinct source per request
    stdin: str = ""


ROWS = {
    "cpp_stdcpp_unique": Row("cpp", _STDCPP, "10 5\n", 8, 16, "// request {n}\n", "3\n1 4 5\n"),
    "cpp_hello_unique": Row("cpp", _CPP_HELLO, "hello\n", 8, 16, "// request {n}\n"),
    "cpp_repeat": Row("cpp", _STDCPP, "10 5\n", 1, 30, None, "3\n1 4 5\n"),
    "java_unique": Row("java", _JAVA, "hello\n", 1, 10, "// request {n}\n"),
    "java_repeat": Row("java", _JAVA, "hello\n", 1, 20),
    "rust_repeat": Row("rust", _RUST, "hello\n", 1, 20),
    "go_repeat": Row("go", _GO, "hello\n", 1, 20),
}


def loadavg() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


async def run_row(url: str, row: Row, salt: str) -> tuple[float, list[float], list[float]]:
    """Send ``row.requests`` requests with ``row.concurrency`` in flight; returns (wall s, latencies s,
    ``compile_result.execution_time`` s of each answer)."""
    counter = itertools.count()
    lats: list[float] = []
    compiles: list[float] = []

    async def one(client: httpx.AsyncClient) -> None:
        while (n := next(counter)) < row.requests:
            code = row.code + (row.unique.format(n=f"{salt}-{n}") if row.unique else "")
            t = time.monotonic()
            r = await client.post(f"{url}/run_code", json={"code": code, "language": row.language,
                                                           "stdin": row.stdin, "compile_timeout": 60})
            lats.append(time.monotonic() - t)
            body = r.json()
            assert r.status_code == 200 and body["status"] == "Success" \
                and body["run_result"]["stdout"] == row.expected, body
            compiles.append(body["compile_result"]["execution_time"])

    async with httpx.AsyncClient(timeout=600) as client:
        start = time.monotonic()
        await asyncio.gather(*(one(client) for _ in range(row.concurrency)))
        return time.monotonic() - start, lats, compiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", help="serve this checkout's code (default: this one)")
    parser.add_argument("--rows", nargs="+", choices=list(ROWS), default=list(ROWS))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every row's request count")
    args = parser.parse_args()
    env = {"SHLVL": "1"}
    if args.checkout:  # "python -m" puts the working folder first on sys.path: serve from there too
        env["PYTHONPATH"] = str(Path(args.checkout).resolve())
        os.chdir(env["PYTHONPATH"])
    server = start_live_server("--queue-timeout", "3600", env=env)
    salt = f"{os.getpid()}-{time.time_ns()}"
    print(f"checkout: {args.checkout or Path(__file__).resolve().parents[2]}; cores: {os.cpu_count()}")
    print("compile ms: median compile_result.execution_time (a cache hit: the time to copy the outputs in)")
    print(f"{'row':<18} {'conc':>4} {'n':>4} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'cpu ms/req':>10}"
          f" {'compile ms':>10} {'load':>10}")
    try:
        for name in args.rows:
            row = ROWS[name]
            row = Row(**{**row.__dict__, "requests": max(row.concurrency, int(row.requests * args.scale))})
            if row.unique is None:  # the first request fills the cache; measure the rest
                asyncio.run(run_row(server.url, Row(**{**row.__dict__, "requests": 1, "concurrency": 1}), salt))
            load0, cpu0 = loadavg(), cpu_seconds(server.process.pid)
            wall, lats, compiles = asyncio.run(run_row(server.url, row, salt))
            cpu = (cpu_seconds(server.process.pid) - cpu0) / len(lats)
            print(f"{name:<18} {row.concurrency:>4} {len(lats):>4} {len(lats) / wall:>7.2f}"
                  f" {statistics.median(lats) * 1000:>8.1f} {percentile(lats, 99) * 1000:>8.1f}"
                  f" {cpu * 1000:>10.1f} {statistics.median(compiles) * 1000:>10.1f}"
                  f" {load0:>4.1f}-{loadavg():<4.1f}", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
