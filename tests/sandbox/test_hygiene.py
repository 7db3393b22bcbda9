"""Soak: 1,000 sequential runs, a bomb every 50th (each kind four times), leave the server where it started.

Open file descriptors, child processes, run cgroups and folders of the server's working root are
measured after a warm-up and must be back at that baseline (within 2) after the soak, and the
server must still answer ``print(1)`` correctly.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import httpx
import pytest

from judgebox.sandbox.isolation import cgroups
from tests.conftest import start_live_server
from tests.sandbox.procs import alive_with, children, open_fds, unique_sleep
from tests.sandbox.test_isolation import reachable_python

RUNS = 1000
EVERY = 50
MARKER = unique_sleep()
#: Every EVERY-th run is a bad one: they rotate through these (code, language, run_timeout).
BAD = [
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", "python", 1),
    ("x = bytearray(2 * 1024**3)", "python", 5),
    (f"import subprocess\nsubprocess.Popen(['sleep', '{MARKER}'], start_new_session=True)", "python", 5),
    ("import sys\nsys.stdout.write('x' * 5_000_000)", "python", 5),
    ("import time\ntime.sleep(30)", "python", 1),
]


def footprint(pid: int, root: str, host) -> dict[str, int]:
    """What the server holds now: fds, children, run cgroups, folders under its working root."""
    prefix = f"run-{pid}-"
    return {
        "fds": open_fds(pid),
        "children": children(pid),
        "cgroups": sum(d.startswith(prefix) for folder in (host.dirs.values() if host else ())
                       for d in os.listdir(folder)),
        "dirs": len(os.listdir(root)),
    }


@pytest.mark.slow
def test_1000_sequential_runs_with_bombs_leave_no_trace():
    root = tempfile.mkdtemp(prefix="jb-soak-")
    os.chmod(root, 0o711)
    # no background builds of prebuilt artifacts (precompiled header, javac archive): their compiler
    # processes would be counted in the footprint
    srv = start_live_server("--python", reachable_python(),
                            env={"JUDGEBOX_WORKDIR_ROOT": root, "JUDGEBOX_PREBUILT_ARTIFACTS": "0"})
    host = cgroups.detect()
    pid = srv.process.pid
    try:
        with httpx.Client(base_url=srv.url, timeout=120) as client:
            def run(code: str, language: str = "bash", run_timeout: float = 10) -> dict:
                r = client.post("/run_code", json={"code": code, "language": language,
                                                   "run_timeout": run_timeout})
                assert r.status_code == 200, r.text
                return r.json()

            for _ in range(20):
                run("echo 1")
            baseline = footprint(pid, root, host)
            verdicts: dict[str, int] = {}
            for i in range(RUNS):
                if i % EVERY == EVERY - 1:
                    code, language, timeout = BAD[(i // EVERY) % len(BAD)]
                    run(code, language, timeout)
                    continue
                r = run(f"echo {i}")
                verdicts[r["status"]] = verdicts.get(r["status"], 0) + 1
                assert r["run_result"]["stdout"] == f"{i}\n", r
            after = footprint(pid, root, host)
            last = run("print(1)", "python")
    finally:
        srv.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert verdicts == {"Success": RUNS - RUNS // EVERY}
    for key, value in baseline.items():
        assert abs(after[key] - value) <= 2, (key, baseline, after)
    assert after["cgroups"] == 0
    assert alive_with(MARKER) == []
    assert (last["status"], last["run_result"]["stdout"]) == ("Success", "1\n")
