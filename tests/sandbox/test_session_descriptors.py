"""Sessions and the server's file descriptors (issue 37, finding 9): a live session holds about a dozen
of the server's descriptors, and the server never raised its own soft ``RLIMIT_NOFILE``. Under
``ulimit -n 256`` the 15th session and every other client's ``/run_code`` got HTTP 500; in a second
run the whole server aborted (ZeroMQ: ``Too many open files (src/epoll.cpp:38)``), leaving frozen
kernels, their mounts and cgroups behind.

Real ``judgebox serve`` processes on loopback, started under ``prlimit`` (util-linux) with the
limits each test names."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import start_live_server

pytestmark = [pytest.mark.server, pytest.mark.timeout(600),
              pytest.mark.skipif(not shutil.which("prlimit"), reason="prlimit (util-linux) not installed")]


def under_nofile(tmp_path: Path, soft: int, hard: int) -> str:
    """An interpreter that runs this one under ``RLIMIT_NOFILE`` = ``soft:hard``."""
    wrapper = tmp_path / "python-nofile"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --nofile={soft}:{hard} {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def open_files_limit(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/limits") as f:
        soft, hard = next(line for line in f if line.startswith("Max open files")).split()[3:5]
    return int(soft), int(hard)


def test_the_server_raises_its_soft_open_files_limit(tmp_path):
    """The server starts with a soft limit of 256 under a hard one of 4096 and raises it: 4096,
    shown with the headroom in ``GET /health``."""
    server = start_live_server(python=under_nofile(tmp_path, 256, 4096))
    try:
        assert open_files_limit(server.process.pid) == (4096, 4096)
        health = httpx.get(f"{server.url}/health", timeout=10).json()
        assert health["fd_limit"] == 4096 and 0 < health["fd_headroom"] < 4096
    finally:
        server.stop()


def test_sessions_past_the_descriptors_are_504_and_every_other_call_still_runs(tmp_path):
    """Under a hard limit of 256 the server admits sessions while descriptors remain for them, then
    answers 504 with ``Retry-After`` (never 500, never an abort); another client's ``/run_code``
    and the live sessions still run, and ``/health`` shows what is left."""
    server = start_live_server("--max-concurrency", "2", python=under_nofile(tmp_path, 256, 256))
    opened: list[dict] = []
    try:
        refused = None
        for _ in range(40):  # 256 descriptors cannot hold 40 sessions
            r = httpx.post(f"{server.url}/sessions", json={"idle_timeout": 600}, timeout=120)
            assert r.status_code in (200, 504), (r.status_code, r.text)
            if r.status_code == 504:
                refused = r
                break
            opened.append(r.json())
        assert refused is not None and opened, f"{len(opened)} sessions, none refused"
        assert int(refused.headers["Retry-After"]) >= 1
        assert "no file descriptors left for one more session" in refused.json()["detail"]
        assert "ulimit -n" in refused.json()["detail"]
        run = httpx.post(f"{server.url}/run_code", json={"code": "print(1)", "language": "python"}, timeout=60)
        assert (run.status_code, run.json()["status"]) == (200, "Success")
        for info in opened:
            cell = httpx.post(f"{server.url}/sessions/{info['session_id']}/run", json={"code": "print(2)"},
                              headers={"X-Session-Token": info["session_token"]}, timeout=60)
            assert (cell.status_code, cell.json()["stdout"]) == (200, "2\n")
        assert httpx.get(f"{server.url}/health", timeout=10).json()["fd_headroom"] > 0
        assert server.process.poll() is None
    finally:
        for info in opened:
            httpx.delete(f"{server.url}/sessions/{info['session_id']}", headers={"X-Session-Token": info["session_token"]},
                         timeout=60)
        server.stop()


def leftovers(pid: int, root: Path) -> dict[str, list[str]]:
    """What a server ``pid`` with workdir root ``root`` left: live processes in its run cgroups,
    mounts under ``root``, and its run cgroup folders."""
    tag = f"/run-{pid}-"
    procs = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and tag in Path(f"/proc/{entry}/cgroup").read_text():
                procs.append(entry)
        except OSError:
            continue
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split()[4] for line in f if line.split()[4].startswith(str(root) + "/")]
    folders = [d for base, dirs, _ in os.walk("/sys/fs/cgroup") for d in dirs if d.startswith(f"run-{pid}-")]
    return {"processes": procs, "mounts": mounts, "cgroups": folders}


@pytest.fixture
def workdir_root() -> Path:
    """A workdir root of this test's own that run uids can traverse (pytest's ``tmp_path`` is under
    a 0700 folder)."""
    root = Path(tempfile.mkdtemp(prefix="judgebox-killed-"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_a_killed_server_leaves_nothing_its_next_start_does_not_clean(workdir_root):
    """A server killed outright with two idle sessions (frozen kernels) leaves their processes,
    mounts and cgroups; the next server on the same workdir root removes every one of them."""
    root = workdir_root
    env = {"JUDGEBOX_WORKDIR_ROOT": str(root)}
    first = start_live_server(env=env)
    try:
        for _ in range(2):
            info = httpx.post(f"{first.url}/sessions", json={}, timeout=120).json()
            assert httpx.post(f"{first.url}/sessions/{info['session_id']}/run", json={"code": "x = 1"}, timeout=60,
                              headers={"X-Session-Token": info["session_token"]}).status_code == 200
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait(30)
        left = leftovers(first.process.pid, root)
        assert left["processes"] and left["mounts"] and left["cgroups"], left  # what the next start must clean
    finally:
        first.stop()
    second = start_live_server(env=env)
    try:
        deadline = time.monotonic() + 30
        while any(leftovers(first.process.pid, root).values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(leftovers(first.process.pid, root).values()), leftovers(first.process.pid, root)
        started = httpx.post(f"{second.url}/sessions", json={}, timeout=120)
        assert started.status_code == 200, started.text
        info = started.json()
        cell = httpx.post(f"{second.url}/sessions/{info['session_id']}/run", json={"code": "print(3)"}, timeout=60,
                          headers={"X-Session-Token": info["session_token"]}).json()
        assert cell["stdout"] == "3\n"
    finally:
        second.stop()
