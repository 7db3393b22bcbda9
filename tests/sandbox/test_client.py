"""SandboxClient without a server: the embedded path, configuration, derived timeouts, refused
connections (BUG-007) and bad input. The HTTP behaviour lives in ``test_client_http.py``."""

from __future__ import annotations

import email.utils
import socket
import time

import pytest

from judgebox.sandbox import RunStatus, SandboxClient
from judgebox.sandbox.client.client import ClientSettings
from judgebox.sandbox.client.transport import request_timeout, retry_after_seconds
from judgebox.sandbox.errors import SandboxInfraError, SandboxRequestError, SandboxUnavailable
from judgebox.sandbox.models import RunCodeRequest, RunJupyterRequest, RunTestsRequest
from tests.conftest import free_port, start_live_server
from tests.sandbox.procs import load_per_core

FAST = {"backoff_initial": 0.05, "backoff_max": 0.2, "backoff_jitter": 0.05}


@pytest.fixture
def no_env(monkeypatch):
    """No sandbox URL in the environment."""
    for name in ("JUDGEBOX_SANDBOX_URL", "SANDBOX_FUSION_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def closed_port() -> str:
    """A loopback URL nobody listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_no_endpoint_runs_embedded(no_env):
    """``SandboxClient().run_code`` works with no server and no configuration."""
    client = SandboxClient()
    assert client.local is not None and client.endpoints == []
    r = client.run_code({"code": "print(6 * 7)", "language": "python"})
    assert (r.status, r.run_result.stdout, r.run_result.return_code) == (RunStatus.Success, "42\n", 0)
    t = client.run_tests({"code": "print(input())", "language": "python",
                          "cases": [{"stdin": "a\n"}, {"stdin": "b\n"}]})
    assert [x.stdout for x in t.run_results] == ["a\n", "b\n"]


def test_official_sandbox_fusion_request_models_are_accepted(no_env):
    """Drop-in for the official client: its (pydantic v1) ``RunCodeRequest`` is accepted as is."""
    import sandbox_fusion

    r = SandboxClient().run_code(sandbox_fusion.RunCodeRequest(code="print('sf')", language="python"))
    assert r.run_result.stdout == "sf\n"


async def test_no_endpoint_async_face(no_env):
    r = await SandboxClient().arun_code({"code": "import sys; sys.exit(3)", "language": "python"})
    assert (r.status, r.run_result.return_code) == (RunStatus.Failed, 3)


def test_endpoints_from_environment(no_env):
    """``JUDGEBOX_SANDBOX_URL`` (comma list) wins over ``SANDBOX_FUSION_ENDPOINT`` (official client)."""
    no_env.setenv("SANDBOX_FUSION_ENDPOINT", "http://sf:8080/run_code")  # verl's URL form
    with SandboxClient() as c:
        assert [e["url"] for e in c.endpoints] == ["http://sf:8080"]
    no_env.setenv("JUDGEBOX_SANDBOX_URL", "http://a:1, http://b:2,")
    no_env.setenv("JUDGEBOX_CLIENT_MAX_CONCURRENCY", "7")
    no_env.setenv("JUDGEBOX_CLIENT_COOLDOWN", "2.5")
    with SandboxClient() as c:
        assert [e["url"] for e in c.endpoints] == ["http://a:1", "http://b:2"]
        assert (c.settings.max_concurrency, c.settings.cooldown) == (7, 2.5)
    assert SandboxClient("").local is not None  # an explicit empty endpoint forces embedded


def test_bad_settings_name_the_field(no_env):
    with pytest.raises(ValueError, match="max_concurrency"):
        ClientSettings(max_concurrency=0)
    with pytest.raises(ValueError, match="max_attempts"):
        SandboxClient("http://127.0.0.1:1", max_attempts=0)
    with pytest.raises(TypeError, match="max_concurency"):
        SandboxClient("http://127.0.0.1:1", max_concurency=4)
    with pytest.raises(SandboxRequestError, match="http://"):
        SandboxClient("localhost:8080")


def test_request_timeout_is_derived_from_the_request():
    """compile + run (x cases) + margin, in seconds; jupyter: total + margin."""
    code = RunCodeRequest(code="", language="python", compile_timeout=10, run_timeout=5)
    tests = RunTestsRequest(code="", language="python", compile_timeout=10, run_timeout=2,
                            cases=[{"stdin": ""}] * 4)
    jupyter = RunJupyterRequest(cells=["1"], total_timeout=45)
    assert [request_timeout(r, 30) for r in (code, tests, jupyter)] == [45.0, 48.0, 75.0]


def test_retry_after_header_forms():
    """RFC 9110: delta-seconds or an HTTP-date; absent or garbage is 0."""
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) == retry_after_seconds("soon") == 0.0
    later = retry_after_seconds(email.utils.formatdate(time.time() + 30, usegmt=True))
    assert 25 <= later <= 31


@pytest.mark.parametrize("endpoint", [None, "closed"])
def test_invalid_request_is_a_request_error_naming_the_field(no_env, closed_port, endpoint):
    """Validated before anything is sent, the same error embedded and over HTTP (never infra)."""
    with SandboxClient(closed_port if endpoint else None) as client:
        with pytest.raises(SandboxRequestError, match="run_timeout") as info:
            client.run_code({"code": "print(1)", "language": "python", "run_timeout": -1})
        assert info.value.status_code == 422
        with pytest.raises(SandboxRequestError, match="cases"):
            client.run_tests({"code": "print(1)", "language": "python", "cases": []})


@pytest.mark.slow
def test_bug_007_refused_connection_is_an_infrastructure_error(closed_port):
    """BUG-007: a refused connection raises SandboxUnavailable after the retries, not a verdict,
    and the endpoint is taken out for a cool-down."""
    with SandboxClient(closed_port, max_attempts=3, failure_threshold=3, cooldown=1, **FAST) as client:
        with pytest.raises(SandboxInfraError) as info:
            client.run_code({"code": "print(1)", "language": "python"})
        assert isinstance(info.value, SandboxUnavailable)
        assert not isinstance(info.value, SandboxRequestError)
        assert (info.value.attempts, info.value.endpoint, info.value.status_code) == (3, closed_port, None)
        assert client.endpoints[0]["healthy"] is False
        # every endpoint resting: a new call waits out the cool-down, pings, and fails when the
        # ping finds nothing (it never reports a verdict)
        with pytest.raises(SandboxUnavailable, match="cooling down") as info:
            client.run_code({"code": "print(1)", "language": "python"})
        # ... and says why: the last real error, with the URL (was only "all 1 are cooling down")
        assert f"(last: GET {closed_port}/v1/ping: ConnectError: " in str(info.value), info.value
        assert client.endpoints[0]["last_error"].startswith(f"GET {closed_port}/v1/ping: ConnectError: ")


def test_check_names_each_dead_url_and_its_cause(closed_port, live_server):
    """``SandboxClient.check()``: nothing to do embedded; one live endpoint is enough; none raises
    ``SandboxUnavailable`` naming each URL and why."""
    with SandboxClient(closed_port) as client:
        with pytest.raises(SandboxUnavailable, match=f"no sandbox answers: GET {closed_port}/v1/ping: ConnectError: "):
            client.check(timeout=2)
    with SandboxClient(f"{closed_port},{live_server}") as client:
        client.check(timeout=2)
        assert [e["last_error"] != "" for e in client.endpoints] == [True, False]
    with SandboxClient("") as client:
        client.check()


async def test_bug_007_refused_connection_async(closed_port):
    async with SandboxClient(closed_port, max_attempts=2, **FAST) as client:
        with pytest.raises(SandboxUnavailable):
            await client.arun_tests({"code": "print(1)", "language": "python", "cases": [{}]})


def test_closed_client_says_so(closed_port):
    client = SandboxClient(closed_port)
    client.close()
    client.close()
    with pytest.raises(SandboxRequestError, match="closed"):
        client.run_code({"code": "print(1)", "language": "python"})


@pytest.mark.slow
def test_a_lone_endpoint_that_rests_is_waited_for_not_failed_fast():
    """Behind one gateway URL a few failures (a replica killed mid-request) must not turn every
    call into an infrastructure error for the whole cool-down: when all endpoints rest, the call
    waits for the earliest cool-down to end, pings it, and goes on when it answers (4 attempts: the
    server, started 1 s in, may take several seconds to start on a loaded host)."""
    import threading

    port = free_port()
    started = []
    timer = threading.Timer(1.0, lambda: started.append(start_live_server(port=port)))
    with SandboxClient(f"http://127.0.0.1:{port}", max_attempts=4, failure_threshold=1, cooldown=4,
                       **FAST) as client:
        timer.start()
        try:
            r = client.run_code({"code": "print(6 * 7)", "language": "python"})
        finally:
            timer.join()
            for server in started:
                server.stop()
    assert (r.status, r.run_result.stdout) == ("Success", "42\n")
    assert client.endpoints[0]["healthy"] is True


@pytest.mark.slow
def test_a_server_gone_for_good_fails_each_call_within_its_retries_not_its_cool_downs():
    """A ``judgebox eval`` whose only server died went on for minutes per sample: every call waited
    out a cool-down and pinged again. Once the ping after a cool-down finds nothing, calls fail
    within their retries (pings go on in the background); the server's return is still seen."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_live_server(port=port)
    with SandboxClient(url, max_attempts=2, failure_threshold=1, cooldown=1, **FAST) as client:
        assert client.run_code({"code": "print(1)", "language": "python"}).run_result.stdout == "1\n"
        server.stop()
        with pytest.raises(SandboxUnavailable):  # waits one cool-down, whose ping finds nothing
            client.run_code({"code": "print(1)", "language": "python"})
        start = time.monotonic()
        for _ in range(20):  # waiting out cool-downs: >= 20 s; failing within the retries: well under 10 s
            with pytest.raises(SandboxUnavailable, match="cooling down"):
                client.run_code({"code": "print(1)", "language": "python"})
        assert time.monotonic() - start < 10 * load_per_core()
        server = start_live_server(port=port)
        try:
            deadline = time.monotonic() + 60
            while not client.endpoints[0]["healthy"] and time.monotonic() < deadline:
                try:  # each failing call lets an expired cool-down's ping go out
                    client.run_code({"code": "print(1)", "language": "python"})
                except SandboxUnavailable:
                    time.sleep(0.2)
            assert client.run_code({"code": "print(2)", "language": "python"}).run_result.stdout == "2\n"
        finally:
            server.stop()
