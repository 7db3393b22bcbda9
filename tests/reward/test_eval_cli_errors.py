"""``judgebox eval`` / ``judgebox data`` as a new user meets them: each bad argument is one clear line
and exit status 1 (2 means only "infrastructure errors remain"), SIGTERM shuts down like Ctrl-C, and the
resume line says what is kept and what is re-scored. Every test runs the real ``judgebox`` command."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgebox.reward.loaders import load_dataset
from tests.reward.test_eval import JUDGEBOX, ONE_ATTEMPT, broken_sandbox, embedded_env, judgebox, write_samples

FIX_IN = "give a jsonl/json/parquet samples file, 'gold' or 'column:NAME'"
FIX_OUT = "give a file path in an existing folder you can write to"


def only_line(proc) -> str:
    """The error line of a failed command: the last on stderr, with no traceback and nothing on stdout
    (stderr may also hold the embedded sandbox's startup warnings)."""
    assert proc.stdout == "" and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return proc.stderr.splitlines()[-1]


def test_a_missing_samples_file_names_the_flag_the_path_the_reason_and_the_fix(tmp_path):
    proc = judgebox("eval", "humaneval", "--samples", "nope.jsonl", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == f"judgebox eval: --samples nope.jsonl: No such file or directory; {FIX_IN}"


def test_a_directory_as_samples_is_a_clear_error_not_a_traceback(tmp_path):
    proc = judgebox("eval", "humaneval", "--samples", str(tmp_path), cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == f"judgebox eval: --samples {tmp_path}: Is a directory; {FIX_IN}"


def test_an_output_in_a_missing_directory_is_refused_before_any_work(tmp_path):
    out = tmp_path / "nonexistent-dir" / "z.parquet"
    proc = judgebox("data", "convert", "humaneval", "--to", "verl-parquet", "--out", str(out),
                    cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == f"judgebox data convert: --out {out}: No such file or directory; {FIX_OUT}"
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--summary", str(tmp_path), cwd=tmp_path,
                    check=False)
    assert proc.returncode == 1
    assert only_line(proc) == f"judgebox eval: --summary {tmp_path}: Is a directory; {FIX_OUT}"
    assert not (tmp_path / "judgebox-results" / "humaneval-gold.results.jsonl").exists()


@pytest.mark.slow
def test_argparse_usage_errors_exit_1_not_the_infra_status_2(tmp_path):
    proc = judgebox("eval", "humaneval", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == ("judgebox eval: error: the following arguments are required: --samples "
                               "(see judgebox eval --help)")
    proc = judgebox("data", "convert", "humaneval", "--to", "csv", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "invalid choice: 'csv'" in only_line(proc)
    assert judgebox("--help", cwd=tmp_path, check=False).returncode == 0


@pytest.mark.parametrize("ks, says", [("1,,2", "'1,,2': use comma-separated integers"), ("x", "'x': use comma"),
                                      ("0,1", "'0,1': every k must be >= 1")])
def test_a_bad_k_is_one_line_not_the_whole_usage(tmp_path, ks, says):
    """Issue 39, item 10: a bad --k printed the 30-line usage, and --k 1,,2 was accepted."""
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--k", ks, cwd=tmp_path, check=False)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1
    assert only_line(proc).startswith(f"judgebox eval: error: argument --k: {says}")
    assert only_line(proc).endswith("(see judgebox eval --help)")


def test_a_results_path_that_cannot_be_made_says_missing_folders_are_made(tmp_path):
    """Issue 39, item 10: --results makes missing folders, while its error said "an existing directory"."""
    (tmp_path / "file").write_text("")
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--results", "file/r.jsonl", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == ("judgebox eval: --results file/r.jsonl: File exists; give a file path in a folder "
                               "you can write to (missing folders are made)")


def test_a_port_in_use_is_one_line_and_exit_1(tmp_path):
    """Issue 39, item 10: uvicorn logged the bind error and exited 3, an undocumented status."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = judgebox("serve", "--port", str(port), cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == (f"judgebox serve: --port {port}: cannot listen on 127.0.0.1:{port} (Address already in "
                               "use); another server may hold it: give another --port, or stop that server")


def test_an_address_not_of_this_machine_blames_the_host_not_the_port(tmp_path):
    """The third walk: ``serve --host 1.2.3.4`` said "--port 80: ... another server may hold it"."""
    proc = judgebox("serve", "--host", "192.0.2.1", "--port", "8080", cwd=tmp_path, check=False)  # TEST-NET-1
    assert proc.returncode == 1
    assert only_line(proc) == ("judgebox serve: --host 192.0.2.1: cannot listen on 192.0.2.1:8080 (Cannot assign "
                               "requested address); give an address of this machine (127.0.0.1, 0.0.0.0 for every "
                               "interface)")


def test_a_report_page_given_as_the_file_to_report_is_named_as_such(tmp_path):
    """Issue 39, item 10: ``judgebox report page.html`` complained about an --out the user never gave."""
    (tmp_path / "page.html").write_text('<!doctype html>\n<html><head><meta name="generator" content="judgebox report">')
    proc = judgebox("report", "page.html", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == ("judgebox report: FILE page.html: it is a report page; give the results jsonl of "
                               "`judgebox eval`, the trajectories jsonl of `judgebox rollout` or the verl dump it was made from")


@pytest.mark.slow
def test_sigterm_is_a_clean_interrupt_and_the_rerun_completes(tmp_path):
    """SIGTERM mid-run: the 'interrupted' line, status 143, no run-* working directory (nor pids
    cgroup) left behind, results kept; the same command then finishes with 164/164."""
    root = tmp_path / "workdirs"
    root.mkdir()
    env = dict(embedded_env(), JUDGEBOX_WORKDIR_ROOT=str(root))
    args = [*JUDGEBOX, "eval", "humaneval", "--samples", "gold", "--k", "1", "--no-progress",
            "--results", "r.jsonl", "--summary", "s.json"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    results, deadline = tmp_path / "r.jsonl", time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and results.read_bytes().count(b"\n")):
        time.sleep(0.02)  # the first result is in and programs are running: the signal lands mid-run
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, out + err
    # on stderr: `> /dev/null`, as the README's example sends the table, hid it (the third walk)
    assert "interrupted (SIGTERM): results so far are in r.jsonl; run the same command to resume" in err
    assert "Traceback" not in err
    assert list(root.glob("run-*")) == []
    assert run_cgroups(proc.pid) == []
    kept = results.read_text().splitlines()
    assert 0 < len(kept) < 164

    rerun = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert (f"resuming from r.jsonl: keeping {len(kept)} of 164 results; re-scoring 0 infrastructure "
            f"errors; scoring {164 - len(kept)} new samples") in rerun.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 1.0} and summary["n_scored"] == 164
    assert list(root.glob("run-*")) == []


def run_cgroups(pid: int) -> list[str]:
    """The per-run cgroups (``.../judgebox/run-PID-N``) of judgebox process ``pid`` on this machine."""
    return [str(p) for depth in ("", "*/", "*/*/")
            for p in Path("/sys/fs/cgroup").glob(f"{depth}judgebox/run-{pid}-*")]


@pytest.mark.slow
def test_resume_after_infra_errors_says_they_are_rescored(tmp_path):
    problems, _ = load_dataset("humaneval")
    samples = write_samples(tmp_path / "s.jsonl", [(p.task_id, p.gold) for p in problems[:3]])
    args = ["eval", "humaneval", "--samples", str(samples), "--k", "1", "--no-progress", "--results", "r.jsonl",
            "--allow-partial"]
    with broken_sandbox() as url:
        down = judgebox(*args, "--sandbox-url", url, "--retries", "0", cwd=tmp_path, check=False, timeout=300,
                        env=ONE_ATTEMPT)
    assert down.returncode == 2, down.stdout + down.stderr
    rerun = judgebox(*args, cwd=tmp_path)
    assert ("resuming from r.jsonl: keeping 0 of 3 results; re-scoring 3 infrastructure errors; "
            "scoring 0 new samples") in rerun.stdout


@pytest.mark.slow
def test_a_results_file_of_other_completions_is_refused_before_any_resume_line(tmp_path):
    problems, _ = load_dataset("humaneval")
    first = [(p.task_id, p.gold) for p in problems[:2]]
    write_samples(tmp_path / "a.jsonl", first)
    write_samples(tmp_path / "b.jsonl", [(t, "    return None\n") for t, _ in first])
    judgebox("eval", "humaneval", "--samples", "a.jsonl", "--results", "r.jsonl", "--no-progress",
             "--allow-partial", cwd=tmp_path)
    proc = judgebox("eval", "humaneval", "--samples", "b.jsonl", "--results", "r.jsonl", "--allow-partial",
                    cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == (f"judgebox eval: r.jsonl: the result of task {first[0][0]!r} sample 0 is for a "
                               "different completion; use a new --results path")


def test_results_judged_against_other_tests_are_never_kept(tmp_path):
    """The third new-user walk (high): the default results path is named after the data file, and a
    resume checked task ids and completions only: ``v2/rows.jsonl`` (one test changed) kept the verdicts of
    ``rows.jsonl`` ("keeping 4 of 4 results", 2 / 4 passed instead of 1 / 4), and so did fixing the tests
    in place. Each result keeps its problem's tests fingerprint; other tests are refused."""
    row = {"task_id": 1, "text": "add", "code": "def add(a, b):\n    return a + b", "test_list": ["assert add(1, 2) == 3"]}
    (tmp_path / "v2").mkdir()
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "v2" / "rows.jsonl").write_text(json.dumps(row | {"test_list": ["assert add(1, 2) == 4"]}) + "\n")
    first = judgebox("eval", "rows.jsonl", "--format", "mbpp", "--samples", "gold", "--no-progress", cwd=tmp_path)
    assert "│ accepted │       1 │" in first.stdout
    results = tmp_path / "judgebox-results" / "rows-gold.results.jsonl"
    kept = results.read_bytes()
    proc = judgebox("eval", "v2/rows.jsonl", "--format", "mbpp", "--samples", "gold", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and results.read_bytes() == kept
    assert only_line(proc) == ("judgebox eval: judgebox-results/rows-gold.results.jsonl: the result of task '1' "
                               "sample 0 was judged against other tests than the dataset's now (another dataset file "
                               "of the same name, or its tests changed); use a new --results path")
    again = judgebox("eval", "rows.jsonl", "--format", "mbpp", "--samples", "gold", "--no-progress", cwd=tmp_path)
    assert "keeping 1 of 1 results" in again.stdout  # the same tests: a resume


@pytest.mark.parametrize("flag,path", [("--model", "/nonexistent/model"), ("--tokenizer", "./no-such-tokenizer")])
def test_a_missing_model_directory_is_named_not_read_as_a_hub_id(tmp_path, flag, path):
    """``judgebox rollout --model /nonexistent/model``: transformers read it as a hub id ("Repo id must be
    in the form 'repo_name' or 'namespace/repo_name'"); now the flag and the directory are named."""
    args = {"--model": path} if flag == "--model" else {"--model": "Qwen/Qwen3-0.6B", "--tokenizer": path}
    proc = judgebox("rollout", "humaneval", *(x for kv in args.items() for x in kv), "--tools", "none",
                    cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == (f"judgebox rollout: {flag} {path}: no such directory; give a model directory "
                               "(config.json and tokenizer files) or a hub id such as Qwen/Qwen3-0.6B")


@pytest.mark.parametrize("flags, expected", [
    (("--concurrency", "-1"), "--concurrency must be >= 1 (samples judged at once); got -1"),
    (("--concurrency", "0"), "--concurrency must be >= 1 (samples judged at once); got 0"),
    (("--retries", "-1"), "--retries must be >= 0 (attempts after an infrastructure error); got -1")])
def test_a_concurrency_or_retries_out_of_range_is_one_line_naming_the_flag(tmp_path, flags, expected):
    """``--concurrency -1`` was a four-line pydantic error naming the embedded sandbox's ``max_concurrency``;
    then one line naming both flags whichever was wrong."""
    proc = judgebox("eval", "humaneval", "--samples", "gold", *flags, cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == f"judgebox eval: {expected}"


def test_a_second_eval_on_a_results_file_being_written_stops_at_once_naming_it(tmp_path):
    """Two runs on one ``--results`` file both scored every sample (318 lines for 164 samples)."""
    from judgebox.reward.results import JsonlAppender

    results = tmp_path / "same.jsonl"
    with JsonlAppender(results) as first:  # the first run, still writing
        first.write({"task_id": "HumanEval/0", "sample_id": 0, "verdict": "accepted", "passed": True})
        proc = judgebox("eval", "humaneval", "--samples", "gold", "--results", str(results), "--no-progress",
                        cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert only_line(proc) == (f"judgebox eval: {results}: another process is writing these results now (a second "
                               "run on the same file); wait for it to end, or give another output path")
    assert len(results.read_text().splitlines()) == 1


def test_after_an_interrupt_another_ctrl_c_is_a_note_not_a_traceback(capsys):
    """Issue 39, item 10: after the first Ctrl-C nothing said the command waits for the running programs,
    and a second Ctrl-C during that wait printed a threading traceback. Real signals to this process."""
    from judgebox.cli.common import resumable as _resumable

    async def interrupted():
        raise KeyboardInterrupt  # what asyncio.run raises on the first Ctrl-C

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert _resumable(interrupted(), "results", "r.jsonl") == (None, 130)
        assert "run the same command to resume; waiting for the programs still running to end" in capsys.readouterr().err
        for signum in (signal.SIGINT, signal.SIGTERM):
            os.kill(os.getpid(), signum)  # no KeyboardInterrupt, no exit: one line
        err = capsys.readouterr().err
        assert err.count("still waiting for the running programs to end") == 2 and "SIGTERM again" in err
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_the_top_help_is_plain_text_at_80_columns_naming_every_command_and_a_version(monkeypatch):
    """A new user's finding: ``judgebox --help`` printed the module's reST (````serve````), lines of ~140
    columns, left ``report`` and ``runtime`` out of its list, and there was no ``--version``."""
    from importlib.metadata import version

    from judgebox.cli import build_parser

    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps to the terminal's width
    text = build_parser().format_help()
    assert "``" not in text and max(len(line) for line in text.splitlines()) <= 80, text
    for command in ("serve", "eval", "rollout", "report", "datasets", "runtime", "ray", "data"):
        assert f"\n    {command} " in text, command
    proc = subprocess.run([sys.executable, "-m", "judgebox.cli", "--version"], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, f"judgebox {version('judgebox')}\n")


def test_a_resume_says_what_it_leaves_out(tmp_path):
    """The third walk: a resume with fewer samples, or over a file with repeated lines, said nothing of the
    results it left out of the summary (kept in the file) or of the lines it dropped."""
    row = {"task_id": 1, "text": "add", "code": "def add(a, b):\n    return a + b", "test_list": ["assert add(1, 2) == 3"]}
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    write_samples(tmp_path / "two.jsonl", [("1", row["code"]), ("1", "def add(a, b):\n    return a - b")])
    write_samples(tmp_path / "one.jsonl", [("1", row["code"])])
    args = ["--format", "mbpp", "--no-progress", "--results", "r.jsonl"]
    judgebox("eval", "rows.jsonl", "--samples", "two.jsonl", *args, cwd=tmp_path)
    results = tmp_path / "r.jsonl"
    results.write_text(results.read_text() + results.read_text().splitlines()[0] + "\n")  # a repeated line
    again = judgebox("eval", "rows.jsonl", "--samples", "one.jsonl", *args, cwd=tmp_path)
    assert ("resuming from r.jsonl: keeping 1 of 1 results; re-scoring 0 infrastructure errors; scoring 0 new "
            "samples\n  1 results in r.jsonl are for samples not in this run: kept in the file, not in this summary\n"
            "  1 older repeated lines of a sample dropped from r.jsonl (the newest of each is kept)\n") in again.stdout
    assert len(results.read_text().splitlines()) == 2


def test_a_chart_path_that_is_not_png_is_refused_before_scoring(tmp_path):
    """The third walk: ``--chart c.pdf`` wrote PNG bytes into c.pdf."""
    proc = judgebox("eval", "humaneval", "--samples", "gold", "--chart", "c.pdf", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and not (tmp_path / "c.pdf").exists()
    assert only_line(proc) == "judgebox eval: --chart c.pdf: the chart is a PNG image; give a path ending in .png"
    assert not (tmp_path / "judgebox-results").exists() or not any((tmp_path / "judgebox-results").iterdir())


def test_a_misspelt_command_gets_did_you_mean_and_a_subcommand_names_itself(tmp_path):
    """The third walk: ``judgebox evl`` got argparse's list alone; ``data convert`` errors said ``judgebox data:``."""
    proc = judgebox("evl", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "invalid choice: 'evl'" in proc.stderr and "did you mean 'eval'?" in proc.stderr
    proc = judgebox("data", "convert", "nope.jsonl", "--to", "verl-parquet", "--format", "mbpp", "--out", "x.parquet",
                    cwd=tmp_path, check=False)
    assert proc.returncode == 1 and only_line(proc).startswith("judgebox data convert: nope.jsonl: no such file")


def test_a_resume_of_results_written_before_tests_were_recorded_says_so(tmp_path):
    """The fourth walk: a results file an older judgebox wrote (no tests_sha256) is kept as it is, and a
    resume against changed tests gave the old verdicts without a word; now the resume says so."""
    row = {"task_id": 1, "text": "add", "code": "def add(a, b):\n    return a + b", "test_list": ["assert add(1, 2) == 3"]}
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    args = ["eval", "rows.jsonl", "--format", "mbpp", "--samples", "gold", "--no-progress", "--results", "r.jsonl"]
    judgebox(*args, cwd=tmp_path)
    results = tmp_path / "r.jsonl"
    old = [{k: v for k, v in json.loads(line).items() if k != "tests_sha256"} for line in results.read_text().splitlines()]
    results.write_text("".join(json.dumps(r) + "\n" for r in old))
    assert ("  1 results kept from r.jsonl were written before judgebox recorded the tests they were judged against: "
            "if the dataset's tests changed since, give a new path to judge them again\n") in judgebox(*args, cwd=tmp_path).stdout
