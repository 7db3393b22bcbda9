"""Shared fixtures: a real ``judgebox serve`` on loopback, and one runner face per sandbox kind.

- ``live_server`` (session): the URL (``http://127.0.0.1:<port>``) of one ``judgebox serve`` started
  as a subprocess with default settings, shared by every test that asks for it;
  ``live_server_process`` is the same server as a :class:`LiveServer` (pid, log).
- ``live_server_factory`` (function): ``start(*cli_args, env={...}) -> LiveServer`` for a server
  with its own flags or ``JUDGEBOX_*`` environment; each is stopped when the test ends.
- ``local_sandbox`` (session): one embedded :class:`sandbox.LocalSandbox`.
- ``run_code`` (parametrized ``embedded`` / ``http``): a :class:`SandboxFace`, called as
  ``run_code(dict) -> RunCodeResponse``, against the embedded executor and against the live server,
  so one test pins both faces.
- ``data_dir`` (session): ``$JUDGEBOX_DATA_DIR`` (real datasets: MBPP, APPS, SandboxFusion's
  MultiPL-E samples), or the test is skipped saying so.

Tiers (markers, ``--strict-markers``): a test is marked ``server`` when it uses a live server (the
``http`` face of a parametrized fixture, or ``live_server*``) and ``data`` when it uses ``data_dir``,
automatically; ``integration``, ``slow``, ``docker`` and ``gpu`` are set by the tests. Unmarked tests
are the fast tier (``bash scripts/test.sh --fast``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

import httpx
import pytest

from judgebox.sandbox import LocalSandbox, RunCodeResponse

#: seconds a test's HTTP call may wait for an answer: a bound for a hung server, never a speed check
#: (httpx's default, 5 s, failed a fresh server's first GET /languages on a loaded machine: issue 40)
HTTP_TIMEOUT = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    """A running ``judgebox serve`` subprocess: ``url``, ``port``, ``process``, and its ``log()``."""

    url: str
    port: int
    process: subprocess.Popen
    log_path: str
    args: tuple[str, ...] = field(default_factory=tuple)

    def log(self) -> str:
        """Everything the server printed so far (stdout and stderr)."""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self) -> None:
        """SIGTERM the server's process group, SIGKILL after 10 s, and reap it."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.log_path)


def start_live_server(*cli_args: str, env: Optional[dict[str, str]] = None,
                      startup_timeout: float = 60.0, port: Optional[int] = None,
                      python: str = sys.executable) -> LiveServer:
    """Start ``judgebox serve --host 127.0.0.1 --port <free> *cli_args`` and wait for ``/v1/ping``.

    Args:
        cli_args: extra ``judgebox serve`` flags, e.g. ``"--max-concurrency", "2"``.
        env: variables added to this process's environment (e.g. ``JUDGEBOX_OUTPUT_LIMIT_BYTES``).
        startup_timeout: seconds to wait for ``GET /v1/ping`` to answer ``"pong"``.
        port: listen on this port instead of a free one (e.g. to bring back a known endpoint).
        python: the interpreter that runs ``judgebox.cli`` (e.g. one in a venv made by the test).

    Raises:
        RuntimeError: the server exited or did not answer in time (its log is in the message).
    """
    fixed = port
    for _attempt in range(3):
        port = fixed or free_port()
        fd, log_path = tempfile.mkstemp(prefix="judgebox-serve-", suffix=".log")
        argv = [python, "-m", "judgebox.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                *cli_args]
        proc = subprocess.Popen(argv, stdout=fd, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})}, start_new_session=True)
        os.close(fd)
        server = LiveServer(f"http://127.0.0.1:{port}", port, proc, log_path, tuple(cli_args))
        deadline = time.monotonic() + startup_timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"{server.url}/v1/ping", timeout=2).json() == "pong":
                    return server
            except (httpx.HTTPError, ValueError):
                time.sleep(0.1)
        log = server.log()
        server.stop()
        if "address already in use" not in log.lower():
            raise RuntimeError(f"judgebox serve did not start ({' '.join(argv)}):\n{log}")
    raise RuntimeError("judgebox serve: no free port after 3 attempts")


@pytest.fixture(scope="session")
def live_server_process() -> Iterator[LiveServer]:
    """The shared default ``judgebox serve`` as a :class:`LiveServer` (for its pid or log)."""
    server = start_live_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def live_server(live_server_process: LiveServer) -> str:
    """URL of one shared ``judgebox serve`` with default settings (stopped after the session)."""
    return live_server_process.url


@pytest.fixture
def live_server_factory() -> Iterator[Callable[..., LiveServer]]:
    """``start(*cli_args, env=None) -> LiveServer``; every server started is stopped after the test."""
    servers: list[LiveServer] = []

    def start(*cli_args: str, env: Optional[dict[str, str]] = None) -> LiveServer:
        server = start_live_server(*cli_args, env=env)
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(scope="session")
def local_sandbox() -> LocalSandbox:
    """One embedded sandbox with default settings, shared by the session."""
    return LocalSandbox()


@dataclass
class SandboxFace:
    """One way to call ``run_code``: ``name`` (``embedded``/``http``), the ``pid`` of the process
    whose children the programs are (this one, or the server), and the call itself."""

    name: str
    pid: int
    call: Callable[[dict], RunCodeResponse]

    def __call__(self, body: dict) -> RunCodeResponse:
        return self.call(body)


#: the parametrization of every two-face fixture: the HTTP face is the ``server`` tier
FACES = ["embedded", pytest.param("http", marks=pytest.mark.server)]
#: fixtures that start or reach a ``judgebox serve`` subprocess
SERVER_FIXTURES = {"live_server", "live_server_process", "live_server_factory"}
#: fixtures that start a model engine (vLLM)
ENGINE_FIXTURES = {"vllm_backend"}
#: test folders whose every test drives a real trainer or engine
INTEGRATION_DIRS = ("tests/integrations/",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tiers that follow from a test's fixtures or folder: ``server``, ``data``, ``integration``."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & SERVER_FIXTURES:
            item.add_marker(pytest.mark.server)
        if "data_dir" in names:
            item.add_marker(pytest.mark.data)
        if names & ENGINE_FIXTURES or any(d in item.nodeid for d in INTEGRATION_DIRS):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder of real datasets (``$JUDGEBOX_DATA_DIR``: ``mbpp.jsonl``, ``apps_sample.jsonl``,
    ``sandboxfusion-samples/``); the test is skipped when it is not set or missing."""
    path = os.environ.get("JUDGEBOX_DATA_DIR")
    if not path or not os.path.isdir(path):
        pytest.skip("real datasets: set JUDGEBOX_DATA_DIR to a folder holding mbpp.jsonl, apps_sample.jsonl "
                    "and sandboxfusion-samples/ (.ci/run points it at ../shared/data when that exists)")
    return Path(path)


def skip_unless_in(data_dir: Path, dataset: str) -> None:
    """Skip the test when none of the manifest ``dataset``'s files is in ``data_dir`` (saying which
    it looked for): real files of a benchmark are not all in every data folder."""
    from judgebox.reward.loaders import get_manifest

    files = [f for f in get_manifest(dataset).files if not f.startswith("pkg:")]
    if not any((data_dir / f).is_file() for f in files):
        pytest.skip(f"{dataset}: none of {', '.join(files)} is in {data_dir}")


@pytest.fixture(params=FACES)
def run_code(request: pytest.FixtureRequest) -> SandboxFace:
    """``run_code(body) -> RunCodeResponse`` through the embedded sandbox, then through HTTP.

    The HTTP face asserts status 200 (every execution outcome is HTTP 200) before parsing.
    """
    if request.param == "embedded":
        sandbox = request.getfixturevalue("local_sandbox")
        return SandboxFace("embedded", os.getpid(), sandbox.run_code)
    server: LiveServer = request.getfixturevalue("live_server_process")

    def over_http(body: dict) -> RunCodeResponse:
        r = httpx.post(f"{server.url}/run_code", json=body, timeout=120)
        assert r.status_code == 200, r.text
        return RunCodeResponse.model_validate(r.json())

    return SandboxFace("http", server.process.pid, over_http)
