"""A request's size is bounded on every endpoint, not only ``/run_tests_batch`` (issue 37, finding 8):
``max_request_bytes`` (a body's bytes, refused before or while it is read) and ``max_cases`` (a
``/run_tests`` request's cases, counted before they are parsed). Every face refuses with the same
422 wording: the setting, the value, the flag and the variable that raise it.

Real ``judgebox serve`` processes on loopback, and the embedded sandbox."""

from __future__ import annotations

import json

import httpx
import pytest

from judgebox.sandbox import BatchItemError, LocalSandbox, SandboxClient, SandboxRequestError

pytestmark = pytest.mark.timeout(300)

PRINT = {"code": "print(1)", "language": "python"}
CASES_MESSAGE = ("cases: 6 cases exceeds max_cases=5 (raise it with --max-cases / JUDGEBOX_MAX_CASES, or split "
                 "the cases over several requests)")


def bytes_message(size: int) -> str:
    return (f"body: {size} bytes exceeds max_request_bytes=4096 (raise it with --max-request-bytes / "
            "JUDGEBOX_MAX_REQUEST_BYTES, or send smaller files or fewer cases per request)")


def memory_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(f"{field}:"))


def test_a_million_empty_cases_are_refused_before_they_are_parsed(live_server_factory):
    """Finding 8: a 2.9 MiB ``/run_tests`` body of 1,000,000 empty cases cost the server +684 MiB
    (one model per case) before anything ran, and no setting bounded it. It is 422 naming
    ``max_cases`` (default 4096), and the server's peak memory grows by far less than that."""
    server = live_server_factory()
    pid = server.process.pid
    assert httpx.post(f"{server.url}/run_tests", json={**PRINT, "cases": [{}]}, timeout=60).status_code == 200
    before = memory_kib(pid, "VmRSS")
    body = json.dumps({**PRINT, "cases": [{}] * 1_000_000}, separators=(",", ":")).encode()
    assert len(body) < 3 << 20
    r = httpx.post(f"{server.url}/run_tests", content=body, headers={"content-type": "application/json"}, timeout=120)
    assert r.status_code == 422, r.text[:300]
    assert r.json()["detail"].startswith("cases: 1000000 cases exceeds max_cases=4096 (raise it with --max-cases / "
                                         "JUDGEBOX_MAX_CASES")
    grew_mib = (memory_kib(pid, "VmHWM") - before) >> 10
    assert grew_mib < 256, f"the server's peak memory grew by {grew_mib} MiB"


def test_every_endpoint_refuses_a_body_over_max_request_bytes_naming_the_setting(live_server_factory):
    """Finding 8: only ``/run_tests_batch`` had a body limit. Over ``max_request_bytes`` a body is
    422 before it is read (``Content-Length``) or while it is (chunked), on every endpoint; a
    client still sending reads the 422 (the rest is drained), not a reset connection."""
    server = live_server_factory("--max-request-bytes", "4096", "--max-cases", "5")
    big = {**PRINT, "code": "print(1)#" + "x" * 5000}
    body = json.dumps(big).encode()
    for path, payload in (("/run_code", big), ("/run_tests", {**big, "cases": [{}]}),
                          ("/run_jupyter", {"cells": [big["code"]]}), ("/sessions", {"pad": "x" * 5000})):
        r = httpx.post(f"{server.url}{path}", json=payload, timeout=60)
        assert r.status_code == 422, (path, r.text[:300])
        assert "exceeds max_request_bytes=4096 (raise it with --max-request-bytes / JUDGEBOX_MAX_REQUEST_BYTES" \
            in r.json()["detail"], path
    chunked = httpx.post(f"{server.url}/run_code", content=iter([body[:100], body[100:]]),
                         headers={"content-type": "application/json"}, timeout=60)
    assert (chunked.status_code, chunked.json()["detail"]) == (422, bytes_message(len(body)))
    huge = httpx.post(f"{server.url}/run_code", content=b" " * (64 << 20),
                      headers={"content-type": "application/json"}, timeout=120)
    assert (huge.status_code, huge.json()["detail"]) == (422, bytes_message(64 << 20))
    assert httpx.post(f"{server.url}/run_code", json=PRINT, timeout=60).json()["status"] == "Success"


def test_max_cases_is_the_same_422_on_every_face(live_server_factory):
    """Over ``max_cases``: the server's ``/run_tests`` (422), a batch item (its own 422, the others
    run), the client over HTTP and the embedded sandbox (``SandboxRequestError``), all one wording."""
    server = live_server_factory("--max-cases", "5")
    six, five = {**PRINT, "cases": [{}] * 6}, {**PRINT, "cases": [{}] * 5}
    r = httpx.post(f"{server.url}/run_tests", json=six, timeout=60)
    assert (r.status_code, r.json()["detail"]) == (422, CASES_MESSAGE)
    r = httpx.post(f"{server.url}/run_tests_batch", json={"requests": [six, five]}, timeout=120)
    first, second = r.json()["results"]
    assert (first["status_code"], first["detail"]) == (422, CASES_MESSAGE) and second["status"] == "Success"
    with SandboxClient(server.url) as client:
        with pytest.raises(SandboxRequestError, match="max_cases=5 .raise it with --max-cases / JUDGEBOX_MAX_CASES"):
            client.run_tests(six)
        got = client.run_tests_batch([six, five])
    assert isinstance(got[0], BatchItemError) and (got[0].status_code, got[0].detail) == (422, CASES_MESSAGE)
    embedded = LocalSandbox(max_cases=5, max_request_bytes=4096)
    with pytest.raises(SandboxRequestError) as refused:
        embedded.run_tests(six)
    assert (refused.value.status_code, str(refused.value)) == (422, CASES_MESSAGE)
    item = embedded.run_tests_batch([six, five])[0]
    assert (item.status_code, item.detail) == (422, CASES_MESSAGE)
    with pytest.raises(SandboxRequestError, match="exceeds max_request_bytes=4096 .raise it with --max-request-bytes"):
        embedded.run_code({**PRINT, "code": "print(1)#" + "x" * 5000})
    assert embedded.run_tests(five).status == "Success"
