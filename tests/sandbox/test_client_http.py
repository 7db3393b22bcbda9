"""SandboxClient over real HTTP: real ``judgebox serve`` processes, a real nginx gateway, real failures.

nginx (``tests/sandbox/nginx/``) plays four parts: a gateway whose short ``proxy_read_timeout``
turns slow programs into genuine 504s (and whose dead upstream gives 502); a plain SandboxFusion
(``/run_tests`` answers 404); a broken sandbox answering 500 (case BUG-007); a rate limiter answering
429 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Iterator

import httpx
import pytest

from judgebox.sandbox import RunStatus
from judgebox.sandbox.client.client import SandboxClient
from judgebox.sandbox.errors import (
    SandboxInfraError,
    SandboxOverloaded,
    SandboxRequestError,
    SandboxServerError,
    SandboxUnavailable,
)
from judgebox.sandbox.models import RunCodeRequest

NGINX_DIR = Path(__file__).resolve().parent / "nginx"
FAST = {"backoff_initial": 0.1, "backoff_max": 1.0, "backoff_jitter": 0.1}
pytestmark = pytest.mark.timeout(180)


@dataclass
class Gateway:
    """A running nginx: ``url``, its ``access.log`` and the process."""

    url: str
    prefix: Path
    process: subprocess.Popen

    def statuses(self, path: str, at_least: int = 0) -> list[int]:
        """HTTP statuses nginx logged for ``POST path``, in order. nginx logs a request after its
        response is sent, so a client can see the answer before its line is written: with
        ``at_least``, wait (up to 30 s) until that many lines are there, then read them all."""
        deadline = time.monotonic() + 30
        while True:
            text = (self.prefix / "access.log").read_text()
            found = [int(m) for m in re.findall(rf'"POST {re.escape(path)} HTTP/1\.1" (\d{{3}})', text)]
            if len(found) >= at_least or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


@pytest.fixture
def nginx() -> Iterator:
    """``start(kind, upstream_url, read_timeout="120s") -> Gateway``; ``kind`` names a ``*.locations``."""
    if not shutil.which("nginx"):
        pytest.fail("nginx is not installed (scripts/install.sh installs nginx-light)")
    started: list[Gateway] = []

    def start(kind: str, upstream: str = "http://127.0.0.1:9", read_timeout: str = "120s") -> Gateway:
        prefix = Path(tempfile.mkdtemp(prefix="judgebox-nginx-"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        locations = Template((NGINX_DIR / f"{kind}.locations").read_text()).substitute(
            read_timeout=read_timeout)
        conf = Template((NGINX_DIR / "base.conf.tmpl").read_text()).substitute(
            prefix=prefix, port=port, upstream=upstream.removeprefix("http://"), locations=locations)
        (prefix / "nginx.conf").write_text(conf)
        proc = subprocess.Popen(["nginx", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", "stderr"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        gw = Gateway(f"http://127.0.0.1:{port}", prefix, proc)
        started.append(gw)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                httpx.get(f"{gw.url}/v1/ping", timeout=1)
                return gw
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"nginx did not start: {proc.stderr.read().decode() if proc.poll() is not None else ''}")

    yield start
    for gw in started:
        gw.process.terminate()
        try:
            gw.process.wait(5)
        except subprocess.TimeoutExpired:
            gw.process.kill()
            gw.process.wait()
        shutil.rmtree(gw.prefix, ignore_errors=True)


def sleeper(seconds: float, value: int) -> dict:
    """A python program that sleeps ``seconds`` then prints ``value``."""
    return {"code": f"import time\ntime.sleep({seconds})\nprint({value})", "language": "python"}


# ---- plain round trip and errors -----------------------------------------------------------------

def test_run_code_over_http_gives_exact_fields_bug_046(live_server):
    """BUG-046: ``print(2 + 2)`` over HTTP is stdout ``"4\\n"`` exactly, no envelope."""
    with SandboxClient(live_server) as client:
        r = client.run_code({"code": "print(2 + 2)", "language": "python"})
    assert (r.status, r.run_result.stdout, r.run_result.stderr, r.run_result.return_code) == \
        (RunStatus.Success, "4\n", "", 0)


async def test_async_face_over_http(live_server):
    """``arun_code`` / ``arun_tests`` work from the caller's own event loop."""
    async with SandboxClient(live_server) as client:
        r, t = await asyncio.gather(
            client.arun_code({"code": "print(input()[::-1])", "language": "python", "stdin": "abc\n"}),
            client.arun_tests({"code": "print(int(input()) * 2)", "language": "python",
                               "cases": [{"stdin": "2\n"}, {"stdin": "x\n"}]}))
    assert r.run_result.stdout == "cba\n"
    assert t.status == RunStatus.Failed
    assert t.run_results[0].stdout == "4\n" and t.run_results[1].return_code == 1


def test_run_jupyter_over_http(live_server):
    """Cells run in order in one kernel and come back per cell."""
    with SandboxClient(live_server) as client:
        r = client.run_jupyter({"cells": ["x = 2", "print(x * 3)"]})
    assert r.status == RunStatus.Success
    assert [c.stdout for c in r.cells] == ["", "6\n"]


def _in_child(client: SandboxClient, queue) -> None:
    queue.put(client.run_code({"code": "print(7)", "language": "python"}).run_result.stdout)


def test_client_inherited_by_a_forked_worker_still_works(live_server):
    """A client used in the parent, then inherited through fork (verl/TRL workers), answers in the child."""
    ctx = multiprocessing.get_context("fork")
    with SandboxClient(live_server) as client:
        assert client.run_code({"code": "print(6)", "language": "python"}).run_result.stdout == "6\n"
        queue = ctx.Queue()
        child = ctx.Process(target=_in_child, args=(client, queue))
        child.start()
        child.join(60)
        assert child.exitcode == 0
        assert queue.get(timeout=5) == "7\n"
        assert client.run_code({"code": "print(8)", "language": "python"}).run_result.stdout == "8\n"


def test_server_422_is_a_request_error_and_not_retried(live_server):
    """A body the server rejects (422) raises SandboxRequestError naming the field after one attempt."""
    bad = RunCodeRequest.model_construct(code="print(1)", language="python", compile_timeout=10,
                                         run_timeout=-1, memory_limit_MB=-1, stdin=None, files={},
                                         fetch_files=[])
    with SandboxClient(live_server, max_attempts=5) as client:
        with pytest.raises(SandboxRequestError, match="run_timeout") as info:
            client.run_code(bad)
        assert info.value.status_code == 422
        assert client.endpoints[0]["served"] == 1


def test_bug_007_http_500_is_an_infrastructure_error(nginx):
    """BUG-007: a sandbox answering HTTP 500 is SandboxServerError (infra), never a failed program."""
    gw = nginx("http500")
    with SandboxClient(gw.url, max_attempts=3, **FAST) as client:
        with pytest.raises(SandboxInfraError) as info:
            client.run_code({"code": "print(1)", "language": "python"})
    assert isinstance(info.value, SandboxServerError)
    assert not isinstance(info.value, SandboxRequestError)
    assert (info.value.status_code, info.value.attempts, info.value.endpoint) == (500, 3, gw.url)
    assert gw.statuses("/run_code", 3) == [500, 500, 500]


@pytest.mark.slow
def test_429_waits_as_long_as_retry_after_says(nginx):
    """429 with ``Retry-After: 2`` is retried no sooner than 2 s later, then SandboxOverloaded."""
    gw = nginx("http429")
    with SandboxClient(gw.url, max_attempts=2, **FAST) as client:
        start = time.monotonic()
        with pytest.raises(SandboxOverloaded) as info:
            client.run_code({"code": "print(1)", "language": "python"})
        elapsed = time.monotonic() - start
        assert client.endpoints[0]["healthy"] is True  # busy is not broken
    assert elapsed >= 2.0, elapsed
    assert (info.value.status_code, info.value.attempts) == (429, 2)
    assert gw.statuses("/run_code", 2) == [429, 429]


def test_gateway_502_for_a_dead_upstream_is_unavailable(nginx):
    """A gateway whose sandbox is down answers 502: SandboxUnavailable, the endpoint taken out."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    gw = nginx("gateway", dead)
    with SandboxClient(gw.url, max_attempts=3, failure_threshold=3, **FAST) as client:
        with pytest.raises(SandboxUnavailable) as info:
            client.run_code({"code": "print(1)", "language": "python"})
        assert client.endpoints[0]["healthy"] is False
    assert (info.value.status_code, info.value.attempts) == (502, 3)


def test_sandbox_error_answer_is_retried_once_on_another_endpoint(live_server_factory):
    """A ``SandboxError`` answer (here: no g++ on server A) is retried on server B, exactly once."""
    a = live_server_factory(env={"PATH": "/nonexistent", "JUDGEBOX_POD_NAME": "pod-a"})
    b = live_server_factory(env={"JUDGEBOX_POD_NAME": "pod-b"})
    cpp = {"code": "#include <cstdio>\nint main(){std::puts(\"hi\");}", "language": "cpp"}
    with SandboxClient([a.url, b.url], **FAST) as client:
        r = client.run_code(cpp)
        assert (r.status, r.run_result.stdout, r.executor_pod_name) == (RunStatus.Success, "hi\n", "pod-b")
        assert [e["served"] for e in client.endpoints] == [1, 1]
        julia = client.run_code({"code": "println(1)", "language": "julia"})
        assert julia.status == RunStatus.SandboxError  # nowhere installed: answered, not raised
        assert sum(e["served"] for e in client.endpoints) == 4


# ---- /run_tests on a plain SandboxFusion ---------------------------------------------------------

TESTS = {"code": "n = int(input())\nprint(n * n)\nassert n != 3", "language": "python",
         "cases": [{"stdin": "2\n"}, {"stdin": "3\n"}, {"stdin": "4\n"}]}


def _shape(r):
    return (r.status, r.compile_result and (r.compile_result.status, r.compile_result.return_code),
            [x and (x.status, x.return_code, x.stdout) for x in r.run_results])


@pytest.mark.parametrize("stop", [False, True])
def test_run_tests_falls_back_to_run_code_on_plain_sandboxfusion(live_server, nginx, stop):
    """No ``/run_tests`` (404): one ``/run_code`` per case, the same RunTestsResponse, detected once."""
    gw = nginx("sandboxfusion", live_server)
    request = {**TESTS, "stop_on_first_failure": stop}
    with SandboxClient(live_server) as direct:
        expected = direct.run_tests(request)
    with SandboxClient(gw.url) as client:
        got = client.run_tests(request)
        again = client.run_tests(request)
        assert client.endpoints[0]["supports_run_tests"] is False
    assert _shape(got) == _shape(expected) == _shape(again)
    assert got.status == RunStatus.Failed
    assert [x and x.stdout for x in got.run_results] == (["4\n", "9\n", None] if stop else ["4\n", "9\n", "16\n"])
    assert gw.statuses("/run_tests", 1) == [404]  # remembered: asked once for two calls
    assert len(gw.statuses("/run_code", 4 if stop else 6)) == (4 if stop else 6)


def test_run_tests_batch_falls_back_to_one_run_tests_per_item_on_plain_sandboxfusion(live_server, nginx):
    """No ``/run_tests_batch`` (404): remembered, and each item served as ``run_tests`` is there (one
    ``/run_code`` per case); the results are the batch's on a judgebox server, in order."""
    gw = nginx("sandboxfusion", live_server)
    requests = [TESTS, {**TESTS, "code": "print(", "cases": TESTS["cases"][:1]}, {"code": "x", "language": "nope"}]
    with SandboxClient(live_server) as direct:
        expected = direct.run_tests_batch(requests)
    with SandboxClient(gw.url) as client:
        got = client.run_tests_batch(requests)
        again = client.run_tests_batch(requests[:1])
        assert client.endpoints[0]["supports_batch"] is False
    assert [_shape(r) for r in got[:2]] == [_shape(r) for r in expected[:2]]
    assert _shape(again[0]) == _shape(expected[0])
    assert (got[2].index, got[2].status_code) == (expected[2].index, expected[2].status_code) == (2, 422)
    assert gw.statuses("/run_tests_batch", 1) == [404]  # remembered: asked once for two batches


def test_run_tests_fallback_compile_error_runs_no_case(live_server, nginx):
    """A compile error in the fallback: compile_result failed, every run_result None, status Failed."""
    gw = nginx("sandboxfusion", live_server)
    request = {"code": "int main( {", "language": "cpp", "cases": [{"stdin": ""}, {"stdin": ""}]}
    with SandboxClient(live_server) as direct, SandboxClient(gw.url) as client:
        assert _shape(client.run_tests(request)) == _shape(direct.run_tests(request))
    assert len(gw.statuses("/run_code", 1)) == 1


# ---- overload: the server's own 504 and a gateway's 504 ------------------------------------------

def test_server_queue_504_is_retried_until_it_succeeds(live_server_factory, caplog):
    """``--max-concurrency 1 --queue-timeout 0.5`` and 3 slow programs: 504s happen, retries win."""
    server = live_server_factory("--max-concurrency", "1", "--queue-timeout", "0.5")
    jobs = [sleeper(0.8, i) for i in range(3)]

    async def burst(client):
        return await asyncio.gather(*(client.arun_code(j) for j in jobs), return_exceptions=True)

    with SandboxClient(server.url, max_attempts=1) as once:
        first = asyncio.run(burst(once))
    overloaded = [e for e in first if isinstance(e, SandboxInfraError)]
    assert overloaded and all(e.status_code == 504 for e in overloaded)  # the 504s are real

    caplog.set_level(logging.INFO, logger="judgebox.client")
    with SandboxClient(server.url, max_attempts=10, backoff_initial=0.3, backoff_max=2) as client:
        results = asyncio.run(burst(client))
    assert [r.run_result.stdout for r in results] == ["0\n", "1\n", "2\n"]
    assert any("HTTP 504" in rec.getMessage() for rec in caplog.records)


def test_gateway_504_is_retried_and_succeeds_when_capacity_frees(live_server_factory, nginx):
    """nginx ``proxy_read_timeout 1s`` before a 1-slot server: genuine gateway 504s, all succeed."""
    server = live_server_factory("--max-concurrency", "1")
    gw = nginx("gateway", server.url, read_timeout="1s")
    with SandboxClient(gw.url, max_attempts=10, backoff_initial=0.5, backoff_max=3) as client:
        results = asyncio.run(_gather(client, [sleeper(0.4, i) for i in range(3)]))
    assert [r.run_result.stdout for r in results] == ["0\n", "1\n", "2\n"]
    assert 504 in gw.statuses("/run_code", 1)


def test_gateway_504_gives_up_at_the_deadline(live_server_factory, nginx):
    """A program slower than the gateway allows: infrastructure error at the deadline, not a verdict."""
    server = live_server_factory("--max-concurrency", "1")
    gw = nginx("gateway", server.url, read_timeout="1s")
    with SandboxClient(gw.url, max_attempts=50, deadline=3.0, **FAST) as client:
        start = time.monotonic()
        with pytest.raises(SandboxInfraError) as info:
            client.run_code(sleeper(5, 1))
        elapsed = time.monotonic() - start
    assert 1.0 <= elapsed < 3.0 + 7.0, elapsed  # 50 attempts of >= 1 s each without the deadline
    assert info.value.attempts >= 2
    assert gw.statuses("/run_code", 1)[0] == 504


async def _gather(client: SandboxClient, jobs: list[dict]) -> list:
    return await asyncio.gather(*(client.arun_code(j) for j in jobs))


# ---- concurrency bound and several endpoints -----------------------------------------------------

def test_client_bounds_requests_in_flight(live_server_factory):
    """``max_concurrency=2``: never more than 2 of 6 programs overlap, though the server allows 4."""
    server = live_server_factory("--max-concurrency", "4")
    code = "import time\na = time.time()\ntime.sleep(0.4)\nprint(a, time.time())"
    with SandboxClient(server.url, max_concurrency=2) as client:
        results = asyncio.run(_gather(client, [{"code": code, "language": "python"}] * 6))
    spans = [tuple(map(float, r.run_result.stdout.split())) for r in results]
    overlap = max(sum(s <= t < e for s, e in spans) for t, _ in spans)
    assert overlap <= 2, spans


@pytest.mark.slow
def test_two_servers_one_killed_mid_load_loses_nothing(live_server_factory):
    """Kill server A under load: every request still answers correctly (on B), A is cooled down;
    restarted on the same port, A is probed with /v1/ping and serves again."""
    a = live_server_factory("--max-concurrency", "2", env={"JUDGEBOX_POD_NAME": "pod-a"})
    b = live_server_factory("--max-concurrency", "2", env={"JUDGEBOX_POD_NAME": "pod-b"})
    client = SandboxClient([a.url, b.url], failure_threshold=2, cooldown=1.0, **FAST)
    restarted = None

    async def load():
        tasks = [asyncio.create_task(client.arun_code(sleeper(0.2, i))) for i in range(24)]
        while not any(t.done() and t.result().executor_pod_name == "pod-a" for t in tasks):
            await asyncio.sleep(0.02)  # A has served: kill it while it has more in flight
        os.killpg(a.process.pid, signal.SIGKILL)
        pending = sum(not t.done() for t in tasks)
        return await asyncio.gather(*tasks), pending

    try:
        results, pending = asyncio.run(load())
        assert pending >= 10  # killed mid-load
        assert [r.run_result.stdout for r in results] == [f"{i}\n" for i in range(24)]
        assert {r.executor_pod_name for r in results} == {"pod-a", "pod-b"}
        state = {e["url"]: e for e in client.endpoints}
        assert state[a.url]["healthy"] is False

        # A comes back on its old port (a new process, as after a crash and a restart)
        restarted = subprocess.Popen(
            [sys.executable, "-m", "judgebox.cli", "serve", "--port", str(a.port), "--max-concurrency", "2"],
            env={**os.environ, "JUDGEBOX_POD_NAME": "pod-a2"}, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        pods: set = set()
        deadline = time.monotonic() + 30
        while "pod-a2" not in pods and time.monotonic() < deadline:
            pods |= {r.executor_pod_name for r in asyncio.run(
                _gather(client, [{"code": "print(1)", "language": "python"}] * 4))}
            time.sleep(0.2)
        assert "pod-a2" in pods
        assert {e["url"]: e["healthy"] for e in client.endpoints} == {a.url: True, b.url: True}
    finally:
        client.close()
        if restarted is not None:
            os.killpg(restarted.pid, signal.SIGKILL)
            restarted.wait()
