"""A client that disconnects cancels its request: nothing of it keeps running (real HTTP on loopback).

The programs start a ``sleep`` with a duration no other process uses, so the test can see its own
processes in ``/proc`` (and only those) appear and disappear.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time

import httpx
import pytest

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.cancel import Cancel
from tests.conftest import HTTP_TIMEOUT
from tests.sandbox.procs import alive_with, unique_sleep


def sleeper(marker: str) -> dict:
    return {"code": f"import subprocess\nsubprocess.run(['sleep', '{marker}'])\n", "language": "python",
            "run_timeout": 120}


def send_and_hold(port: int, body: dict) -> socket.socket:
    """POST ``/run_code`` and return the open connection without reading the answer."""
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /run_code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
    return sock


def wait_until(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def cancelled(metrics: str, stage: str) -> float:
    m = re.search(rf'^judgebox_cancelled_total{{stage="{stage}"}} (\S+)$', metrics, re.M)
    return float(m.group(1)) if m else 0.0


def test_disconnect_kills_the_running_request_and_drops_the_queued_one(live_server_factory):
    server = live_server_factory("--max-concurrency", "1")
    running, queued = unique_sleep(), unique_sleep()
    a = send_and_hold(server.port, sleeper(running))
    try:
        assert wait_until(lambda: alive_with(f"sleep {running}"), 60), "the first request never started"
        b = send_and_hold(server.port, sleeper(queued))
        assert wait_until(lambda: httpx.get(f"{server.url}/health", timeout=HTTP_TIMEOUT).json()["waiting"] == 1, 30)
        b.close()  # disconnect while queued
        assert wait_until(lambda: httpx.get(f"{server.url}/health", timeout=HTTP_TIMEOUT).json()["waiting"] == 0, 30)
    finally:
        a.close()  # disconnect while running
    assert wait_until(lambda: not alive_with(running), 10), alive_with(running)
    r = httpx.post(f"{server.url}/run_code", json={"code": "print(5)", "language": "python"}, timeout=120)
    assert r.json()["run_result"]["stdout"] == "5\n"  # the slot came back
    assert not alive_with(queued)  # the queued request never ran
    metrics = httpx.get(f"{server.url}/metrics", timeout=HTTP_TIMEOUT).text
    assert (cancelled(metrics, "queued"), cancelled(metrics, "running")) == (1.0, 1.0)


def test_client_timeout_then_retry_does_not_double_the_work(live_server_factory):
    """The gateway-504 pattern: the client gives up and retries; only the retry's program runs."""
    server = live_server_factory("--max-concurrency", "2")
    marker = unique_sleep()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/run_code", json=sleeper(marker), timeout=httpx.Timeout(60, read=3))
    assert wait_until(lambda: not alive_with(marker), 10), alive_with(marker)
    sock = send_and_hold(server.port, sleeper(marker))
    try:
        assert wait_until(lambda: alive_with(f"sleep {marker}"), 60)
        time.sleep(0.5)
        assert len(alive_with(f"sleep {marker}")) == 1
    finally:
        sock.close()
    assert wait_until(lambda: not alive_with(marker), 10)


def test_cancel_token_kills_an_embedded_run_and_skips_the_rest():
    """The same mechanism without HTTP: cancelling from another thread ends the run at once."""
    import threading

    sandbox = LocalSandbox()
    marker = unique_sleep()
    cancel = Cancel()
    threading.Timer(0.1, lambda: wait_until(lambda: alive_with(f"sleep {marker}"), 60) and cancel.cancel()).start()
    start = time.monotonic()
    from judgebox.sandbox.models import RunTestsRequest

    resp = sandbox.executor.run_tests(RunTestsRequest(code=sleeper(marker)["code"], language="python",
                                                      run_timeout=120, cases=[{"stdin": ""}] * 3), cancel)
    assert time.monotonic() - start < 60
    assert resp.status == "SandboxError" and "cancelled" in resp.message
    assert not alive_with(marker)
    assert os.getpid()  # the test process itself is untouched


def test_server_runs_on_uvloop_and_httptools_where_installed(live_server_process):
    """``judgebox serve`` picks uvloop and httptools when its interpreter has them (both are
    dependencies); the disconnect tests above then exercise httptools' protocol."""
    import importlib.util

    with open(f"/proc/{live_server_process.process.pid}/maps") as f:
        maps = f.read()
    for module in ("uvloop", "httptools"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed in this interpreter")
        assert f"/{module}/" in maps, f"{module} is installed but the server did not load it"


def test_serve_says_where_it_listens_and_that_it_stopped():
    """A new user's finding: ``judgebox serve`` printed nothing, neither its address nor its end."""
    from tests.conftest import start_live_server

    server = start_live_server()
    try:
        assert f"judgebox serve: {server.url} (full isolation, " in server.log(), server.log()
        server.process.send_signal(signal.SIGINT)
        server.process.wait(60)
        assert "judgebox serve: stopped" in server.log(), server.log()
    finally:
        server.stop()
