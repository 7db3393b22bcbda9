"""Scoring throughput: submissions/s for a 10-case stdio problem in Python and in C++, judged as one
``/run_tests`` batch per submission (compile once) vs one ``/run_code`` per case (verl's way).

Run: ``python tests/bench/bench_reward.py [--submissions N] [--concurrency C] [--http]``. Without
``--http`` the embedded sandbox (or ``JUDGEBOX_SANDBOX_URL``) is used; ``--http`` starts a local
``judgebox serve`` on loopback and goes through HTTP. Prints one line per (language, mode).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from judgebox.reward import StdioCase, TestSpec, judge
from judgebox.reward.checkers import get_checker
from judgebox.sandbox import SandboxClient

CASES = [(f"{i} {i + 1}\n", f"{2 * i + 1}\n") for i in range(10)]
CODE = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "cpp": "#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n",
}


def batched(client: SandboxClient, spec: TestSpec, code: str) -> bool:
    return judge(spec, code, client=client).passed


def per_case(client: SandboxClient, spec: TestSpec, code: str) -> bool:
    check = get_checker("lines")
    ok = True
    for case in spec.stdio:
        r = client.run_code({"code": code, "language": spec.language, "stdin": case.stdin, "run_timeout": 10})
        ok &= r.status == "Success" and check(r.run_result.stdout or "", case.expected)
    return ok


@contextlib.contextmanager
def local_server():
    """A ``judgebox serve`` subprocess on a free loopback port; yields its URL, stops it after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "judgebox.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/v1/ping", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--submissions", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--http", action="store_true", help="go through a local judgebox serve")
    args = ap.parse_args()
    if args.http:
        with local_server() as url, SandboxClient(url) as client:
            print(f"# over HTTP: {url}")
            run(client, args)
    else:
        print("# embedded sandbox" if not os.environ.get("JUDGEBOX_SANDBOX_URL") else "# JUDGEBOX_SANDBOX_URL")
        run(SandboxClient(), args)


def run(client: SandboxClient, args: argparse.Namespace) -> None:
    """Time both modes for each language and print a table row each."""
    print(f"{'language':8} {'mode':22} {'subs':>5} {'seconds':>8} {'subs/s':>7}")
    for language, code in CODE.items():
        spec = TestSpec(kind="stdio", language=language, stdio=[StdioCase(stdin=i, expected=o) for i, o in CASES])
        for name, fn in (("batched /run_tests", batched), ("per-case /run_code", per_case)):
            fn(client, spec, code)  # warm-up (toolchain caches)
            t0 = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
                results = list(pool.map(lambda _: fn(client, spec, code), range(args.submissions)))
            dt = time.perf_counter() - t0
            assert all(results), f"{language} {name}: a correct submission failed"
            print(f"{language:8} {name:22} {args.submissions:5d} {dt:8.2f} {args.submissions / dt:7.2f}")


if __name__ == "__main__":
    main()
