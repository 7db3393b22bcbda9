"""The judge's state machine fed with sandbox responses recorded from real runs, and each recording's real-run twin.

``tests/reward/recorded/<name>.json`` holds one case each (spec, code, the nonces of the run, a summary
of each request and the raw ``RunTestsResponse`` JSON, the real verdict), written by
``python tests/reward/record_responses.py`` (see its docstring; the cases are listed there).

- fast tier: ``_Judging(spec, code, stop).start()``, then ``feed`` the recorded responses with the
  recorded nonce text replaced by this run's nonces (``.nonce``; ``.checker_nonce`` for a checker
  program): the verdict, counts and per-test verdicts are the recorded ones and the expected ones.
  No sandbox, no subprocess. The same through the ``run``/``arun`` faces, and a replay whose nonces
  are left as recorded (a forged or stale marker) is never accepted.
- ``slow`` tier: the twin of each recording judges the same spec and code in the real embedded
  sandbox (with the recording's sandbox overrides) and gets the same verdict.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import subprocess
from typing import Any, Optional

import pytest

from judgebox.reward import TestSpec, Verdict, judge
from judgebox.reward.checkers.checker import _JuryChecked
from judgebox.reward.judge import _Judging
from judgebox.reward.verdict import Judgement
from judgebox.sandbox import LocalSandbox, SandboxClient
from judgebox.sandbox.models import RunTestsRequest, RunTestsResponse
from tests.reward.record_responses import CASES, RECORDED, request_summary

#: the module (``judgebox.reward.judge`` the attribute is the function)
JUDGE_MODULE = importlib.import_module("judgebox.reward.judge")
RERECORD = "re-record: python tests/reward/record_responses.py"
NAMES = sorted(p.stem for p in RECORDED.glob("*.json"))


@functools.lru_cache(maxsize=None)
def load(name: str) -> dict[str, Any]:
    return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def fresh_jury_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case is a problem's first submission (the recording's exchanges), whatever ran before."""
    monkeypatch.setattr(JUDGE_MODULE, "JURY_CHECKED", _JuryChecked())


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast tier's replays reach no sandbox and start no process."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a replay called the sandbox or started a process")

    for owner, name in ((LocalSandbox, "run_tests"), (LocalSandbox, "arun_tests"), (SandboxClient, "run_tests"),
                        (SandboxClient, "arun_tests"), (subprocess, "Popen")):
        monkeypatch.setattr(owner, name, refuse)


def outcome(j: Judgement) -> dict[str, Any]:
    return {"verdict": j.verdict.value, "n_passed": j.n_passed, "n_total": j.n_total,
            "tests": [t.verdict.value for t in j.tests]}


class Replay:
    """The recorded sandbox: ``call(request)`` checks the request against the next recorded summary
    and answers the recorded response, its nonces replaced by ``judging``'s (unless ``renonce`` is
    false: the stale markers of another run)."""

    def __init__(self, rec: dict[str, Any], judging: _Judging, renonce: bool = True) -> None:
        self.rec, self.judging, self.renonce = rec, judging, renonce
        self.left = list(rec["exchanges"])

    def __call__(self, req: RunTestsRequest) -> RunTestsResponse:
        name = self.rec["name"]
        assert self.left, f"{name}: the judge asked for more sandbox calls than were recorded; {RERECORD}"
        exchange = self.left.pop(0)
        summary = request_summary(req, self.judging.nonce, self.judging.checker_nonce)
        assert summary == exchange["request"], f"{name}: the request differs from the recorded one; {RERECORD}"
        text = json.dumps(exchange["response"])
        if self.renonce:
            for old, new in ((self.rec["nonce"], self.judging.nonce),
                             (self.rec["checker_nonce"], self.judging.checker_nonce)):
                if old and new:
                    text = text.replace(old, new)
        return RunTestsResponse.model_validate_json(text)

    def done(self) -> None:
        assert not self.left, f"{self.rec['name']}: {len(self.left)} recorded call(s) not asked for; {RERECORD}"


def judging_of(rec: dict[str, Any]) -> _Judging:
    return _Judging(TestSpec.model_validate(rec["spec"]), rec["code"], rec["stop_on_first_failure"])


def replay_feed(rec: dict[str, Any], renonce: bool = True) -> Judgement:
    """``start()``, then ``feed`` each recorded response: the sans-IO face."""
    judging = judging_of(rec)
    replay = Replay(rec, judging, renonce)
    step = judging.start()
    while isinstance(step, RunTestsRequest):
        step = judging.feed(replay(step))
    assert isinstance(step, Judgement)
    replay.done()
    return step


def check_outcome(rec: dict[str, Any], j: Judgement) -> None:
    got, recorded, expected = outcome(j), rec["recorded"], rec["expected"]
    assert got == {k: recorded[k] for k in got}, (rec["name"], j.message)
    assert {k: got[k] for k in expected} == expected, (rec["name"], j.message)


def test_the_recordings_are_those_of_the_script():
    """Every case of the script has its recording and every recording its case (same spec and code)."""
    cases = {c["name"]: c for c in CASES}
    assert sorted(cases) == NAMES, RERECORD
    for name in NAMES:
        rec, c = load(name), cases[name]
        assert {k: rec[k] for k in ("spec", "code", "stop_on_first_failure", "sandbox", "expected")} == \
               {k: c[k] for k in ("spec", "code", "stop_on_first_failure", "sandbox", "expected")}, f"{name}: {RERECORD}"
        assert {k: rec["recorded"][k] for k in rec["expected"]} == rec["expected"], name


def test_the_recordings_cover_every_verdict_and_path():
    """Every verdict but ``skipped`` is some recording's verdict; the spec kinds, languages, checkers,
    stop_on_first_failure, truncated output and a SandboxError response all occur."""
    recs = [load(n) for n in NAMES]
    verdicts = {r["expected"]["verdict"] for r in recs}
    assert verdicts == {v.value for v in Verdict} - {"skipped"}
    assert "skipped" in {t for r in recs for t in r["recorded"]["tests"]}
    specs = [TestSpec.model_validate(r["spec"]) for r in recs]
    assert {s.kind for s in specs} == {"stdio", "call", "assert", "harness"}
    assert {"python", "cpp", "nodejs", "go_test", "rust", "bash", "java"} <= {s.language for s in specs}
    assert {"exact", "lines", "tokens", "float", "lcb", "checker"} <= {s.checker for s in specs}
    responses = [e["response"] for r in recs for e in r["exchanges"]]
    assert any(rr and rr["stdout_truncated"] for resp in responses for rr in resp["run_results"])
    assert any(resp["status"] == "SandboxError" for resp in responses)
    assert any(r["stop_on_first_failure"] for r in recs)
    assert len(recs) >= 25


@pytest.mark.usefixtures("no_sandbox")
@pytest.mark.parametrize("name", NAMES)
def test_recorded_responses_give_the_recorded_verdict(name):
    """Fast tier: the sans-IO judge fed the recorded responses (nonces renewed) decides as the real run did."""
    rec = load(name)
    check_outcome(rec, replay_feed(rec))


@pytest.mark.usefixtures("no_sandbox")
@pytest.mark.parametrize("face", ["run", "arun"])
def test_both_faces_give_the_recorded_verdicts(face):
    """``run(call)`` and ``arun(call)`` over the recorded sandbox agree with every recording."""
    for name in NAMES:
        rec = load(name)
        JUDGE_MODULE.JURY_CHECKED.clear()
        judging = judging_of(rec)
        replay = Replay(rec, judging)
        if face == "run":
            j = judging.run(replay)
        else:
            async def call(req: RunTestsRequest) -> RunTestsResponse:
                return replay(req)
            j = asyncio.run(judging.arun(call))
        replay.done()
        check_outcome(rec, j)


def stale_nonce_names() -> list[str]:
    """Recordings whose acceptance rests on a nonce: a harness marker or a checker program's answers."""
    out = []
    for name in NAMES:
        rec = load(name)
        if rec["expected"]["verdict"] == "accepted" and (rec["nonce"] or len(rec["exchanges"]) > 1):
            out.append(name)
    return out


@pytest.mark.usefixtures("no_sandbox")
@pytest.mark.parametrize("name", stale_nonce_names())
def test_responses_with_another_runs_nonce_are_never_accepted(name):
    """The recorded markers carry the recording's nonce, not this run's: fed unchanged, they pass nothing."""
    rec = load(name)
    j = replay_feed(rec, renonce=False)
    assert j.verdict != Verdict.accepted and j.n_passed == 0, (name, j)


# ---------------------------------------------------------------------------------- the real-run twins
@pytest.fixture(scope="module")
def client_for():
    """``client_for(overrides)``: the embedded sandbox with a recording's setting overrides (one
    client per distinct overrides, closed after the module)."""
    clients: dict[str, SandboxClient] = {}

    def get(overrides: Optional[dict[str, Any]]) -> SandboxClient:
        key = json.dumps(overrides or {}, sort_keys=True)
        if key not in clients:
            clients[key] = SandboxClient([], local=LocalSandbox(**(overrides or {})))
        return clients[key]

    yield get
    for client in clients.values():
        client.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_real_run_twin(name, client_for):
    """Slow tier: the same case judged in the real embedded sandbox gives the recorded verdict."""
    rec = load(name)
    j = judge(TestSpec.model_validate(rec["spec"]), rec["code"], client=client_for(rec["sandbox"]),
              stop_on_first_failure=rec["stop_on_first_failure"])
    check_outcome(rec, j)
