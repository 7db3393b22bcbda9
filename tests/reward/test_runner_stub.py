"""The Python harness's program is a stub that runs the runner precompiled by the host (same bytecode
magic) or compiled from its source (any other interpreter): both give the same verdicts."""

import base64
import secrets

import pytest

from judgebox.reward.harness.protocol import marker
from judgebox.reward.harness.python import RUNNER_CODE_FILE, RUNNER_FILE, runner_request
from judgebox.sandbox import LocalSandbox

SOLUTION = "def add(a, b):\n    return a + b\n"
TASK = {"mode": "call", "fn_name": "add", "args": [2, 40]}


@pytest.fixture(scope="module")
def sandbox():
    return LocalSandbox()


def outcome(sandbox, drop=None, break_file=None):
    """Run one ``call`` task; ``drop`` leaves a runner file out, ``break_file`` sends it as junk."""
    nonce = secrets.token_hex(16)
    req = runner_request(SOLUTION, [TASK], nonce, run_timeout=10, memory_limit_MB=512)
    files = dict(req.files)
    if drop:
        del files[drop]
    if break_file:
        files[break_file] = base64.b64encode(b"this is not python ((\n").decode()
    res = sandbox.run_tests(req.model_copy(update={"files": files}))
    run = res.run_results[0]
    return marker(run.stdout, nonce), run


def test_precompiled_runner_is_what_runs_when_the_magic_matches(sandbox):
    # The source is junk: only the host's compiled code can have produced the result.
    found, run = outcome(sandbox, break_file=RUNNER_FILE)
    assert found == {"status": "ok", "value": 42}, (run.stdout, run.stderr)


def test_runner_source_is_compiled_where_no_code_of_this_magic_was_sent(sandbox):
    # Another interpreter (another magic) finds no code file of its own: it compiles the source.
    found, run = outcome(sandbox, drop=RUNNER_CODE_FILE)
    assert found == {"status": "ok", "value": 42}, (run.stdout, run.stderr)
    found, run = outcome(sandbox, drop=RUNNER_CODE_FILE, break_file=RUNNER_FILE)
    assert found is None and "SyntaxError" in run.stderr
