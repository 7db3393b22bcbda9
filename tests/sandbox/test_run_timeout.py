"""``run_timeout`` is wall-clock time, as SandboxFusion and verl use it, less the time the program
waited for a CPU: a sleeper or a blocked program past its limit is ``TimeLimitExceeded``, a CPU-bound
loop is stopped by its CPU time, a program starved by a loaded host keeps its honest verdict, and
the compile step keeps its own lenient rule. Only our own processes are used: the program and, for
starvation, busy loops this test starts and kills."""

from __future__ import annotations

import os
import sys

import pytest

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.limits import RunLimits
from judgebox.sandbox.process import run_process

from .procs import busy_loops, outcome


def test_a_sleeper_past_run_timeout_is_a_timeout(run_code):
    """SandboxFusion's own case: ``time.sleep(0.2)`` at ``run_timeout=0.1`` is Failed/TimeLimitExceeded
    (it used to finish Success: its CPU time stayed under the limit)."""
    r = run_code({"code": "import time\ntime.sleep(0.2)\nprint('late')", "language": "python", "run_timeout": 0.1})
    assert (r.status, r.run_result.status, r.run_result.stdout) == ("Failed", "TimeLimitExceeded", "")
    assert r.run_result.execution_time >= 0.1


@pytest.mark.parametrize("language, code", [
    ("bash", "sleep 3\necho late"),
    ("python", "import subprocess\nsubprocess.run(['sleep', '3'])\nprint('late')"),
    ("python", "import os\nr, w = os.pipe()\nos.read(r, 1)\nprint('late')"),
], ids=["bash-sleep", "waits-for-a-child", "blocked-on-a-pipe"])
def test_a_blocked_program_is_stopped_at_its_wall_limit(local_sandbox, language, code):
    """Waiting for a child, a sleep or a pipe that never closes uses no CPU: the wall time decides.
    (The sleeps are 15x the limit: time the program waited for a CPU on a loaded host does not count
    against it, so a sleep just past the limit may honestly finish there.)"""
    r = local_sandbox.run_code({"code": code, "language": language, "run_timeout": 0.2})
    assert (r.status, r.run_result.status, r.run_result.stdout) == ("Failed", "TimeLimitExceeded", "")


def test_a_sleep_within_run_timeout_is_success(local_sandbox):
    r = local_sandbox.run_code({"code": "import time\ntime.sleep(0.1)\nprint('ok')", "language": "python",
                                "run_timeout": 5})
    assert (r.status, r.run_result.stdout) == ("Success", "ok\n")


def test_a_cpu_bound_loop_is_stopped_by_its_cpu_time(local_sandbox):
    r = local_sandbox.run_code({"code": "while True:\n    pass", "language": "python", "run_timeout": 0.5})
    assert (r.status, r.run_result.status) == ("Failed", "TimeLimitExceeded")
    assert r.run_result.cpu_time >= 0.5


def test_a_multi_process_program_is_charged_all_its_processes_cpu(local_sandbox):
    """Two workers busy for 0.4 s of CPU each: 0.8 s of CPU is over 0.6 s even where they run side
    by side in 0.4 s of wall time (the run's CPU time is its whole cgroup's)."""
    code = ("import multiprocessing as mp, time\n"
            "def burn():\n    t = time.process_time()\n    while time.process_time() - t < 0.4: pass\n"
            "if __name__ == '__main__':\n    ps = [mp.Process(target=burn) for _ in range(2)]\n"
            "    [p.start() for p in ps]; [p.join() for p in ps]\n    print('done')\n")
    r = local_sandbox.run_code({"code": code, "language": "python", "run_timeout": 0.6})
    assert (r.status, r.run_result.status) == ("Failed", "TimeLimitExceeded")
    assert r.run_result.cpu_time > 0.6


@pytest.mark.slow
def test_a_program_starved_by_the_host_keeps_its_honest_verdict():
    """The program pins itself to CPU 0, where three busy loops of ours also run (each its own
    session, so neither autogroup nor cgroup weights give it more than a quarter of that CPU):
    0.2 s of CPU then takes well over its 0.5 s limit of wall time, most of it waiting for the CPU,
    which is not counted; so does a program whose main process only waits for such a worker. A
    sleeper beside the same load is still stopped at its limit."""
    pin = "import os\nos.sched_setaffinity(0, {0})\n"
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\nprint('done')\n"
    sandbox = LocalSandbox(max_concurrency=1)
    with busy_loops(3, cpu=0):
        r = sandbox.run_code({"code": pin + burn, "language": "python", "run_timeout": 0.5})
        worker = ("import subprocess, sys\nsubprocess.run([sys.executable, '-c', %r], check=True)\n"
                  % (pin + burn))  # the main process only waits: the starved one is its worker
        pool = sandbox.run_code({"code": worker, "language": "python", "run_timeout": 0.5})
        sleeper = sandbox.run_code({"code": pin + "import time\ntime.sleep(5)", "language": "python",
                                    "run_timeout": 0.5})
    assert (r.status, r.run_result.stdout) == ("Success", "done\n"), outcome(r)
    assert r.run_result.execution_time > 0.5, outcome(r)  # past the limit in wall time: only the wait forgave it
    assert (pool.status, pool.run_result.stdout) == ("Success", "done\n"), outcome(pool)
    assert pool.run_result.execution_time > 0.5, outcome(pool)
    assert (sleeper.status, sleeper.run_result.status) == ("Failed", "TimeLimitExceeded")


def test_the_process_rule_for_each_kind_of_program(tmp_path):
    """:func:`run_process` directly, without isolation: the run step's rule versus the compile step's
    (``wall_clock=False``: within while CPU **or** wall time is within the limit)."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(0.4)"]
    run = run_process(sleeper, cwd=str(tmp_path), env=dict(os.environ), limits=RunLimits.for_timeout(0.2))
    assert (run.timed_out, run.return_code) == (True, None)
    assert 0.2 <= run.wall_time
    lenient = RunLimits.for_timeout(0.2, wall_clock=False)  # wall cap 0.5 s: the sleep finishes first
    compile_like = run_process(sleeper, cwd=str(tmp_path), env=dict(os.environ), limits=lenient)
    assert (compile_like.timed_out, compile_like.return_code) == (False, 0)

