"""Sessions over HTTP: the routes, their errors, limits, the reaper, restarts and client stickiness.

Real ``judgebox serve`` processes on loopback, real kernels, raw ``httpx`` where the wire matters.
"""

from __future__ import annotations

import concurrent.futures
import time

import httpx
import pytest

from judgebox.sandbox import SandboxClient, SandboxRequestError, SessionNotFound
from judgebox.sandbox.errors import SandboxUnavailable
from tests.conftest import HTTP_TIMEOUT, start_live_server
from tests.sandbox.procs import children_within, load_per_core, open_fds, settled_children

pytestmark = pytest.mark.timeout(300)


def create(url: str, **body) -> dict:
    r = httpx.post(f"{url}/sessions", json=body, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def token(*infos: dict) -> dict:
    """The X-Session-Token header of the sessions ``infos`` (as POST /sessions answered them)."""
    return {"X-Session-Token": ",".join(i["session_token"] for i in infos)}


def listed(url: str, *infos: dict) -> list[str]:
    """The ids GET /sessions lists to the holder of ``infos``' tokens."""
    return [s["session_id"] for s in httpx.get(f"{url}/sessions", headers=token(*infos), timeout=HTTP_TIMEOUT).json()["sessions"]]


def test_routes_create_run_list_delete(live_server):
    """POST /sessions -> id + token; POST /sessions/{id}/run with the token -> the cell; GET lists
    it to its token's holder; DELETE closes it."""
    info = create(live_server, memory_limit_MB=512, idle_timeout=60)
    sid = info["session_id"]
    assert (info["memory_limit_MB"], info["idle_timeout"], info["language"]) == (512, 60.0, "python")
    r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "x = 2\nx ** 10"}, headers=token(info),
                   timeout=60).json()
    assert (r["status"], r["display"], r["error"], r["state"]) == ("Success", [{"text/plain": "1024"}], None, "kept")
    answer = httpx.get(f"{live_server}/sessions", headers=token(info), timeout=HTTP_TIMEOUT).json()
    assert answer["max_sessions"] == 64 and answer["live"] >= 1
    assert [(s["session_id"], s["cells"], s["session_token"]) for s in answer["sessions"]] == [(sid, 1, None)]
    assert httpx.delete(f"{live_server}/sessions/{sid}", headers=token(info), timeout=HTTP_TIMEOUT).json() == {"session_id": sid,
                                                                                        "closed": True}
    assert listed(live_server, info) == []


def test_the_id_alone_opens_nothing(live_server):
    """A session is its creator's: without its token a call is 401, with another session's token
    it is 404; GET /sessions lists only the sessions whose tokens the caller sends (others are only
    counted); the session is untouched throughout."""
    mine, theirs = create(live_server), create(live_server)
    sid = mine["session_id"]
    assert httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "secret = 42"}, headers=token(mine),
                      timeout=60).json()["status"] == "Success"
    r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "print(secret)"}, timeout=60)
    assert r.status_code == 401
    assert r.json()["detail"] == (f"session {sid!r}: no session token; send the session_token that POST /sessions "
                                  "answered (HTTP header X-Session-Token)")
    for attempt in (token(theirs), {"X-Session-Token": sid}, {"X-Session-Token": "x" * 43}):
        r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "print(secret)"}, headers=attempt,
                       timeout=60)
        assert r.status_code == 404 and "secret" not in r.text, r.text
        assert httpx.delete(f"{live_server}/sessions/{sid}", headers=attempt, timeout=HTTP_TIMEOUT).status_code == 404
    assert httpx.delete(f"{live_server}/sessions/{sid}", timeout=HTTP_TIMEOUT).status_code == 401
    answer = httpx.get(f"{live_server}/sessions", timeout=HTTP_TIMEOUT).json()
    assert answer["sessions"] == [] and answer["live"] >= 2
    assert listed(live_server, theirs) == [theirs["session_id"]]
    assert sorted(listed(live_server, mine, theirs)) == sorted([sid, theirs["session_id"]])
    r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "print(secret)"}, headers=token(mine),
                   timeout=60).json()
    assert (r["status"], r["stdout"]) == ("Success", "42\n")
    for info in (mine, theirs):
        httpx.delete(f"{live_server}/sessions/{info['session_id']}", headers=token(info), timeout=HTTP_TIMEOUT)


def test_a_client_sees_and_drives_only_its_own_sessions(live_server):
    """Two SandboxClients of one server: each lists only the sessions it created; the other's id
    alone raises (401), its token passed explicitly works (a token can be handed over on purpose)."""
    with SandboxClient(live_server) as mine, SandboxClient(live_server) as other:
        s = mine.create_session()
        s.run("v = 7")
        assert [x.session_id for x in mine.list_sessions().sessions] == [s.session_id]
        assert other.list_sessions().sessions == [] and other.list_sessions().live >= 1
        with pytest.raises(SandboxRequestError) as e:
            other.run_session(s.session_id, {"code": "v"})
        assert e.value.status_code == 401
        assert other.run_session(s.session_id, {"code": "print(v)"}, token=s.token).stdout == "7\n"
        s.close()
        assert mine.list_sessions().sessions == []


def test_unknown_and_malformed_ids_are_404_naming_them(live_server):
    """An id never issued, and an id of this replica unknown to it, are 404s that name the id."""
    r = httpx.post(f"{live_server}/sessions/nope/run", json={"code": "1"}, headers={"X-Session-Token": "t"}, timeout=HTTP_TIMEOUT)
    assert r.status_code == 404
    assert r.json()["detail"] == ("session 'nope' is unknown: not a session id (<replica>-<boot>-<token>); "
                                  "create a session with POST /sessions")
    info = create(live_server)
    sid = info["session_id"]
    replica, boot, _ = sid.rsplit("-", 2)
    other = f"{replica}-{boot}-{'0' * 24}"
    r = httpx.delete(f"{live_server}/sessions/{other}", headers=token(info), timeout=HTTP_TIMEOUT)
    assert r.status_code == 404
    assert r.json()["detail"] == (f"session {other!r} is unknown on this server; its state is lost: "
                                  "create a new session")
    httpx.delete(f"{live_server}/sessions/{sid}", headers=token(info), timeout=HTTP_TIMEOUT)


def test_bad_bodies_are_422_naming_the_field(live_server):
    """language other than python, a negative memory limit, a non-positive timeout, an oversized cell."""
    for body, field in (({"language": "cpp"}, "language"), ({"memory_limit_MB": -5}, "memory_limit_MB"),
                        ({"idle_timeout": 0}, "idle_timeout")):
        r = httpx.post(f"{live_server}/sessions", json=body, timeout=HTTP_TIMEOUT)
        assert r.status_code == 422 and field in r.text, r.text
    info = create(live_server)
    sid = info["session_id"]
    r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "1", "timeout": -1}, headers=token(info), timeout=HTTP_TIMEOUT)
    assert r.status_code == 422 and "timeout" in r.text
    r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "#" * (2 << 20)}, headers=token(info), timeout=HTTP_TIMEOUT)
    assert r.status_code == 422
    assert r.json()["detail"] == ("code: 2097152 bytes exceeds the limit of 1048576 bytes per cell "
                                  "(max_code_bytes); send a shorter cell")
    httpx.delete(f"{live_server}/sessions/{sid}", headers=token(info), timeout=HTTP_TIMEOUT)


def test_max_sessions_is_504_with_retry_after_and_counted(live_server_factory):
    """JUDGEBOX_MAX_SESSIONS=2: the third create is 504 + Retry-After and counted in /metrics;
    closing one frees room."""
    server = live_server_factory(env={"JUDGEBOX_MAX_SESSIONS": "2"})
    a, _ = create(server.url), create(server.url)
    r = httpx.post(f"{server.url}/sessions", json={}, timeout=60)
    assert r.status_code == 504 and int(r.headers["Retry-After"]) >= 1
    assert r.json()["detail"].startswith("2 live sessions (max_sessions=2)")
    metrics = httpx.get(f"{server.url}/metrics", timeout=HTTP_TIMEOUT).text
    assert 'judgebox_rejections_total{reason="max_sessions"} 1.0' in metrics
    assert "judgebox_sessions 2.0" in metrics
    httpx.delete(f"{server.url}/sessions/{a['session_id']}", headers=token(a), timeout=HTTP_TIMEOUT)
    create(server.url)


def test_idle_sessions_are_reaped_and_say_so(live_server):
    """idle_timeout=1: the session is gone within a few seconds; its id's 404 says it was reaped."""
    info = create(live_server, idle_timeout=1)
    sid = info["session_id"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if sid not in listed(live_server, info):
            break
        time.sleep(0.2)
    r = httpx.post(f"{live_server}/sessions/{sid}/run", json={"code": "1"}, headers=token(info), timeout=HTTP_TIMEOUT)
    assert r.status_code == 404
    assert r.json()["detail"] == (f"session {sid!r} is closed (reaped after 1s idle (idle_timeout)); its state "
                                  "is lost: create a new session")


def test_a_session_holds_an_execution_slot_only_while_a_cell_runs(live_server_factory):
    """--max-concurrency 1: two idle sessions do not block run_code; a running cell does (the
    run_code waits for it)."""
    server = live_server_factory("--max-concurrency", "1")
    a, b = create(server.url), create(server.url)
    body = {"code": "print(1)", "language": "python"}
    start = time.monotonic()
    r = httpx.post(f"{server.url}/run_code", json=body, timeout=60)
    assert r.json()["run_result"]["stdout"] == "1\n" and time.monotonic() - start < 10 * load_per_core()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        cell = pool.submit(httpx.post, f"{server.url}/sessions/{a['session_id']}/run", headers=token(a),
                           json={"code": "import time; time.sleep(2); print(repr(time.time()))"}, timeout=60)
        deadline = time.monotonic() + 60
        while not any(s["busy"] for s in httpx.get(f"{server.url}/sessions", headers=token(a), timeout=HTTP_TIMEOUT).json()["sessions"]):
            assert time.monotonic() < deadline, "the cell never started"
            time.sleep(0.05)
        waited = httpx.post(f"{server.url}/run_code", timeout=60,
                            json={"code": "import time; print(repr(time.time()))", "language": "python"}).json()
        done = cell.result().json()
        assert done["status"] == "Success"
        # ordered by the clocks inside the two programs, not by the test's wall clock: the run_code
        # started only after the cell that held the one slot had finished
        assert float(waited["run_result"]["stdout"]) >= float(done["stdout"])
    for info in (a, b):
        httpx.delete(f"{server.url}/sessions/{info['session_id']}", headers=token(info), timeout=HTTP_TIMEOUT)


def test_a_restarted_server_says_the_session_was_lost(live_server_factory):
    """The server restarts on the same port: the old id is a 404 saying so and the client raises
    SessionNotFound (the state is lost, never silently replaced)."""
    server = live_server_factory()
    with SandboxClient(server.url) as client:
        session = client.create_session()
        session.run("x = 1")
        server.stop()
        restarted = start_live_server(port=server.port)
        try:
            with pytest.raises(SessionNotFound) as e:
                session.run("print(x)")
            assert str(e.value).endswith(f"HTTP 404: session {session.session_id!r} was created before this "
                                         "server restarted; its state is lost: create a new session")
        finally:
            restarted.stop()


def test_client_keeps_each_session_on_its_endpoint_and_never_reroutes(live_server_factory):
    """Two endpoints: sessions spread over both, each session's calls stay where it was created;
    when its endpoint dies the call is SandboxUnavailable, never replayed on the other."""
    a = live_server_factory(env={"JUDGEBOX_POD_NAME": "replica-a"})
    b = live_server_factory(env={"JUDGEBOX_POD_NAME": "replica-b"})
    with SandboxClient([a.url, b.url], cooldown=60) as client:
        sessions = [client.create_session() for _ in range(4)]
        assert {s.endpoint for s in sessions} == {a.url, b.url}
        for s in sessions:
            pod = "replica-a" if s.endpoint == a.url else "replica-b"
            assert s.session_id.startswith(f"{pod}-")
            for i in range(3):
                r = s.run(f"print({i})")
                assert (r.stdout, r.executor_pod_name) == (f"{i}\n", pod)
        on_a = [s for s in sessions if s.endpoint == a.url]
        a.stop()
        with pytest.raises(SandboxUnavailable) as e:
            on_a[0].run("print('again')")
        assert "never sent to another endpoint" in str(e.value)
        assert "/run" not in b.log() or on_a[0].session_id not in b.log()
        for s in sessions:
            if s.endpoint == b.url:
                s.close()


def test_bug_120_server_children_and_fds_return_to_baseline(live_server_factory):
    """12 sessions created, used (one timing out, one dying) and closed: the server's children and
    fds are back at their baseline; no session is listed."""
    # no background builds of prebuilt artifacts: their compiler would be counted among the children
    server = live_server_factory(env={"JUDGEBOX_PREBUILT_ARTIFACTS": "0"})
    pid = server.process.pid
    with SandboxClient(server.url) as client:
        warm = client.create_session()
        warm.run("1")
        warm.close()
        base_kids = settled_children(pid)  # after the server's start-up work
        base_fds = open_fds(pid)
        for i in range(12):
            with client.create_session() as s:
                code = {3: "while True: pass", 7: "import os; os._exit(1)"}.get(i, "print(1)")
                s.run(code, timeout=1)
    assert httpx.get(f"{server.url}/sessions", timeout=HTTP_TIMEOUT).json()["live"] == 0
    assert children_within(pid, base_kids) <= base_kids  # nothing left behind (a start-up child may have ended)
    assert open_fds(pid) - base_fds <= 4
