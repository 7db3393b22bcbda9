"""The Python fork-server's failure handling: a wedged or dead fork-server never fails a run.

A wedged one (stopped with SIGSTOP: it never answers) costs its run the reply timeout, after which
the run is spawned and counted as a fallback (also in ``/metrics``); a dead one is replaced before
the next run. Only the fork-server process this test's own sandbox started is signalled.
"""

from __future__ import annotations

import os
import signal

import pytest

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.server.metrics import Metrics


@pytest.fixture(scope="module")
def sb():
    box = LocalSandbox()
    box.executor.forkserver.reply_timeout_s = 1.0
    yield box
    box.executor.forkserver.close()


def _print(sb, code="import os\nprint(os.getpid(), 6 * 7)"):
    r = sb.run_code({"code": code, "language": "python", "run_timeout": 10})
    assert (r.status.value, r.run_result.return_code) == ("Success", 0), r
    return r.run_result.stdout


@pytest.mark.slow
def test_wedged_forkserver_falls_back_to_spawn_and_is_replaced(sb):
    fs = sb.executor.forkserver
    assert _print(sb) == "2 42\n"
    before = fs.stats()
    assert before["forked"] >= 1
    zygote = fs._zygote.proc
    os.kill(zygote.pid, signal.SIGSTOP)
    try:
        assert _print(sb) == "2 42\n"  # spawned: same answer
        after = fs.stats()
        assert (after["fallbacks"] - before["fallbacks"], after["forked"] - before["forked"]) == (1, 0)
    finally:
        os.kill(zygote.pid, signal.SIGCONT)
    assert _print(sb) == "2 42\n"  # a fresh fork-server forks again
    again = fs.stats()
    assert (again["forked"] - after["forked"], again["started"] - after["started"]) == (1, 1)
    assert zygote.wait(timeout=10) is not None  # the wedged one was killed and reaped

    text = Metrics("pod", lambda: 0, lambda: 0, forkserver=fs.stats).render().decode()
    assert f'judgebox_forkserver_runs_total{{how="fallback"}} {float(again["fallbacks"])}' in text
    assert f'judgebox_forkserver_runs_total{{how="forked"}} {float(again["forked"])}' in text


def test_dead_forkserver_is_replaced_before_the_next_run(sb):
    fs = sb.executor.forkserver
    _print(sb)
    before = fs.stats()
    fs._zygote.proc.kill()
    fs._zygote.proc.wait()
    assert _print(sb) == "2 42\n"
    after = fs.stats()
    assert (after["forked"] - before["forked"], after["fallbacks"] - before["fallbacks"],
            after["started"] - before["started"]) == (1, 0, 1)


def test_rotation_after_max_runs(sb):
    fs = sb.executor.forkserver
    old_max = fs.max_runs
    fs.max_runs = 2
    try:
        _print(sb)
        first = fs._zygote
        _print(sb)
        _print(sb)  # the third run starts a fresh fork-server
        assert fs._zygote is not first and first.runs == 2
    finally:
        fs.max_runs = old_max


def test_switched_off_spawns_every_run():
    box = LocalSandbox(zygote=False)
    assert box.executor.forkserver is None
    assert _print(box) == "2 42\n"


def test_which_commands_are_forked():
    from judgebox.sandbox.speedups.forkserver import is_script_command

    py = "/usr/bin/python3"
    assert is_script_command([py, "main.py"], py)
    assert is_script_command([py, "main.py", "--process"], py)  # the reward harness's runner
    assert not is_script_command([py, "-m", "pytest", "test_main.py"], py)
    assert not is_script_command(["/other/python", "main.py"], py)
    assert not is_script_command([py, "main.rb"], py)


def test_script_with_arguments_is_forked(sb):
    """The reward harness's runner is ``python main.py --process`` in ``/run_tests``: forked too."""
    fs = sb.executor.forkserver
    before = fs.stats()["forked"]
    r = sb.run_tests({"code": "import sys\nprint(sys.argv, input())", "language": "python",
                      "args": ["--process"], "cases": [{"stdin": "a\n"}, {"stdin": "b\n"}]})
    assert [c.stdout for c in r.run_results] == ["['main.py', '--process'] a\n", "['main.py', '--process'] b\n"]
    assert fs.stats()["forked"] - before == 2
