"""Output caps are in bytes and cut only at a character boundary, flagged, on every face.

With ``output_limit_bytes = 1025`` a program writing ``'aé' * 1000`` (3 bytes a pair) gets the
longest UTF-8 prefix of at most 1025 bytes, ``'aé' * 341 + 'a'`` (1024 bytes: byte 1025 would be
half an ``é``), and ``*_truncated`` set: ``/run_code``, ``/run_tests``, ``/run_jupyter`` and sessions,
embedded and over HTTP (a ``judgebox serve`` started with the same limit), and the
``code_interpreter`` observation, which says in its section header what the sandbox cut, in bytes.
"""

from __future__ import annotations

import pytest

from judgebox.agent.tools import CodeInterpreterTool
from judgebox.agent.tools.observation import fit_budget
from judgebox.sandbox import LocalSandbox, SandboxClient
from tests.conftest import FACES, start_live_server

N = 1025
WANT = "aé" * 341 + "a"
CODE = "import sys\nsys.stdout.write('aé' * 1000)\nsys.stdout.flush()\nsys.stderr.write('aé' * 1000)"
#: display and error budgets: N - 64 (one entry) - 10 (the names "text/plain", "ValueError") = 951 bytes
VALUE, EVALUE = "'" + "aé" * 316 + "a", "aé" * 317


@pytest.fixture(scope="module")
def capped_url():
    server = start_live_server(env={"JUDGEBOX_OUTPUT_LIMIT_BYTES": str(N)})
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def embedded():
    sandbox = LocalSandbox(output_limit_bytes=N)
    yield sandbox
    sandbox.sessions.close_all()


@pytest.fixture(params=FACES)
def face(request):
    """The embedded sandbox, or a client of the capped server (same methods)."""
    if request.param == "embedded":
        yield request.getfixturevalue("embedded")
        return
    client = SandboxClient(request.getfixturevalue("capped_url"))
    yield client
    client.close()


def assert_capped(result) -> None:
    assert (result.stdout, result.stdout_truncated) == (WANT, True)
    assert (result.stderr, result.stderr_truncated) == (WANT, True)


def test_run_code(face):
    assert_capped(face.run_code({"code": CODE, "language": "python"}).run_result)


def test_run_tests_every_case(face):
    r = face.run_tests({"code": CODE, "language": "python", "cases": [{"stdin": ""}, {"stdin": "x"}]})
    assert len(r.run_results) == 2
    for result in r.run_results:
        assert_capped(result)


@pytest.mark.slow
def test_run_jupyter_streams_display_and_error(face):
    r = face.run_jupyter({"cells": [CODE, "'aé' * 1000", "raise ValueError('aé' * 1000)"]})
    assert len(r.cells) == 3, r.message
    assert_capped(r.cells[0])
    assert (r.cells[1].display, r.cells[1].display_truncated) == ([{"text/plain": VALUE}], True)
    assert (r.cells[2].error[0]["evalue"], r.cells[2].error_truncated) == (EVALUE, True)


@pytest.mark.slow
def test_session_cell(face):
    session = face.create_session()
    try:
        assert_capped(session.run(CODE))
        r = session.run("'aé' * 1000")
        assert (r.display, r.display_truncated) == ([{"text/plain": VALUE}], True)
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.parametrize("where", FACES)
async def test_code_interpreter_observation_says_what_the_sandbox_cut(where, request, monkeypatch):
    """The observation's own budget is in characters (or tokens); a stream the sandbox cut at
    output_limit_bytes is marked in its header with the bytes kept. Same for a stateless program."""
    if where == "embedded":
        monkeypatch.setenv("JUDGEBOX_OUTPUT_LIMIT_BYTES", str(N))
        tool = CodeInterpreterTool({"languages": ["bash"]})
    else:
        tool = CodeInterpreterTool({"languages": ["bash"], "sandbox_url": request.getfixturevalue("capped_url")})
    iid, _ = await tool.create()
    try:
        cell, _, _ = await tool.execute(iid, {"code": "import sys\n_ = sys.stdout.write('aé' * 1000)"})
        program, _, _ = await tool.execute(iid, {"code": "for i in $(seq 1000); do printf 'aé'; done",
                                                 "language": "bash"})
    finally:
        await tool.release(iid)
        tool.close()
    assert cell.text == program.text == "[ok]\n[stdout: the sandbox kept the first 1024 bytes]\n" + WANT


class ByteTokenizer:
    """One token per UTF-8 byte, decoded with replacement: a byte-level BPE at its worst."""

    def encode(self, text, add_special_tokens=False):
        return list(text.encode())

    def decode(self, ids):
        return bytes(ids).decode("utf-8", "replace")


def test_observation_token_budget_never_splits_a_character():
    """Budget 98 byte tokens cuts inside an é at both ends: the halves are dropped, never shown as U+FFFD."""
    out = fit_budget("[ok]\n[stdout]\n" + "aé" * 200 + "a", 98, ByteTokenizer())
    assert out == "[ok]\n[stdout]\n" + "aé" * 4 + "a\n[... 543 tokens cut ...]\n" + "aé" * 14 + "a"
