"""Fixtures of the sandbox tests that pin one behaviour on both faces (embedded and HTTP).

- ``run_jupyter`` (parametrized ``embedded`` / ``http``): ``run_jupyter(body) -> RunJupyterResponse``
  through the shared embedded sandbox, then ``POST /run_jupyter`` on the live server.
- ``embedded`` (module): an embedded sandbox of the module's own, its sessions closed with it.
- ``open_session`` (parametrized ``embedded`` / ``http``): ``open_session(**kwargs) -> Session`` on
  ``embedded``, then through ``SandboxClient`` on the live server; every session opened is closed
  after the test.
"""

from __future__ import annotations

import httpx
import pytest

from judgebox.sandbox import LocalSandbox, RunJupyterResponse, SandboxClient
from tests.conftest import FACES


@pytest.fixture(params=FACES)
def run_jupyter(request):
    if request.param == "embedded":
        return request.getfixturevalue("local_sandbox").run_jupyter
    url = request.getfixturevalue("live_server")

    def over_http(body: dict) -> RunJupyterResponse:
        r = httpx.post(f"{url}/run_jupyter", json=body, timeout=180)
        assert r.status_code == 200, r.text
        return RunJupyterResponse.model_validate(r.json())

    return over_http


@pytest.fixture(scope="module")
def embedded() -> LocalSandbox:
    sandbox = LocalSandbox()
    yield sandbox
    sandbox.sessions.close_all()


@pytest.fixture(params=FACES)
def open_session(request):
    owner = request.getfixturevalue("embedded") if request.param == "embedded" \
        else SandboxClient(request.getfixturevalue("live_server"))
    opened = []

    def open_(**kwargs):
        opened.append(owner.create_session(**kwargs))
        return opened[-1]

    yield open_
    for session in opened:
        session.close()
    if isinstance(owner, SandboxClient):
        owner.close()
