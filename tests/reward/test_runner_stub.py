"""The Python harness's program is a stub that runs the runner precompiled by the host (same bytecode
magic) or compiled from its source (any other interpreter): both give the same verdicts."""

import base64
import secrets
from pathlib import Path

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


def _markers(sandbox, plans, preload):
    out = []
    for plan in plans:
        res = sandbox.run_tests(plan.request.model_copy(update={"forkserver_preload": preload}))
        out.append([(r.return_code, marker(r.stdout, plan.nonce)) if r else None for r in res.run_results])
    return out


@pytest.mark.slow
def test_the_preloaded_runner_reports_exactly_what_the_plain_one_reports(sandbox, monkeypatch):
    """Every harness mode (HumanEval's split process, MBPP's asserts, BigCodeBench's unittest) with the
    gold, a mutant and a crashing answer: forked with the runner's imports preloaded or plain, the
    same markers and exit codes (``forkserver_preload`` is a speed-up only)."""
    from judgebox.reward.harness import build_plan
    from judgebox.reward.loaders import load_dataset
    from tests.reward.mutants import mutants

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "data"
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(fixtures))
    plans, modes = [], set()
    for dataset, n in (("humaneval", 8), ("mbpp", 4), ("bigcodebench-complete", 2)):
        problems, _ = load_dataset(dataset)
        for p in [p for p in problems if p.gold][:n]:
            spec, code = p.candidate(p.gold)
            bad = mutants(code)[:1]
            for answer in [code, *(m for _, m in bad), "raise SystemExit(3)\n"]:
                plan = build_plan(spec, answer)
                modes.update(t["mode"] for t in _tasks(plan))
                plans.append(plan)
    assert {"harness", "asserts", "unittest"} <= modes, modes
    assert all(plan.request.forkserver_preload for plan in plans)
    preloaded = _markers(sandbox, plans, plans[0].request.forkserver_preload)
    assert preloaded == _markers(sandbox, plans, [])
    statuses = [m[0][1]["status"] if m and m[0] and m[0][1] else None for m in preloaded]
    assert statuses.count("ok") >= 14 and statuses.count("fail") + statuses.count("error") >= 14, statuses


def _tasks(plan):
    import json

    return [json.loads(case.stdin.split("\n", 1)[1]) for case in plan.request.cases]
