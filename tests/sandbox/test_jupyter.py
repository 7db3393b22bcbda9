"""``run_jupyter``: cells in order in one fresh kernel per request, timeouts honoured, always cleaned up.

Every behaviour is pinned on both faces: the embedded ``LocalSandbox.run_jupyter`` and
``POST /run_jupyter`` on a live ``judgebox serve``.
"""

from __future__ import annotations

import asyncio
import base64
import time

import httpx
import pytest

from tests.sandbox.procs import alive_with, load_per_core, unique_sleep, zombies_of


def test_cells_run_in_order_sharing_state_and_errors_do_not_stop_the_notebook(run_jupyter):
    """SandboxFusion's example cells: state carries over, the last expression is displayed, streams
    are split, an exception is recorded in its cell and the next cell still runs."""
    r = run_jupyter({"cells": ["a = 123", "a", "print(a)", "import sys; sys.stderr.write('stderr message')",
                               "raise RuntimeError('error message')", "print(a + 1)"]})
    assert r.status == "Success"
    assert r.driver.status == "Finished" and r.driver.return_code == 0
    assert [c.stdout for c in r.cells] == ["", "", "123\n", "", "", "124\n"]
    assert r.cells[1].display == [{"text/plain": "123"}]
    assert r.cells[3].stderr == "stderr message"
    assert [(e["ename"], e["evalue"]) for e in r.cells[4].error] == [("RuntimeError", "error message")]
    assert all(not c.error for i, c in enumerate(r.cells) if i != 4)


@pytest.mark.slow
def test_cell_timeout_is_honoured_and_finished_cells_are_returned(run_jupyter):
    """cell_timeout=1: the sleeping cell is cut at about 1 s, keeps its partial output and records the
    error; the cells before it are returned; the cell after it never runs; the request is Failed."""
    start = time.monotonic()
    r = run_jupyter({"cells": ["print('step1')", "import time\nprint('partial', flush=True)\ntime.sleep(30)",
                               "print('never')"], "cell_timeout": 1, "total_timeout": 45})
    assert time.monotonic() - start < 20 * load_per_core()
    assert r.status == "Failed"
    assert r.driver.status == "TimeLimitExceeded"
    assert r.driver.return_code is None
    assert len(r.cells) == 2
    assert r.cells[0].stdout == "step1\n" and r.cells[0].error == []
    assert r.cells[1].stdout == "partial\n"
    assert r.cells[1].error == [{"ename": "TimeLimitExceeded", "traceback": [],
                                 "evalue": "cell 1 did not finish within cell_timeout=1.0s"}]
    assert 1.0 <= r.driver.execution_time < 5.0 * load_per_core()


@pytest.mark.slow
def test_total_timeout_bounds_all_cells(run_jupyter):
    """total_timeout=2 with no cell_timeout: the endless cell is cut by the total budget."""
    r = run_jupyter({"cells": ["x = 1", "while True:\n    x += 1", "print('never')"], "total_timeout": 2})
    assert r.status == "Failed"
    assert r.driver.status == "TimeLimitExceeded"
    assert len(r.cells) == 2
    assert r.cells[1].error[0]["evalue"] == "cell 1 did not finish within total_timeout=2.0s"
    assert 2.0 <= r.driver.execution_time < 6.0 * load_per_core()


def test_files_are_written_to_and_fetched_from_the_kernel_working_dir(run_jupyter):
    """files land in the kernel's cwd before the first cell; fetch_files returns what cells wrote;
    a missing file is simply absent."""
    r = run_jupyter({"cells": ["data = open('data/in.txt').read()", "open('out.txt', 'w').write(data.upper())"],
                     "files": {"data/in.txt": base64.b64encode(b"hello").decode()},
                     "fetch_files": ["out.txt", "missing.txt"]})
    assert r.status == "Success"
    assert r.files == {"out.txt": base64.b64encode(b"HELLO").decode()}


def test_each_request_gets_a_fresh_kernel(run_jupyter):
    """State never leaks between requests: a name defined by one request is unknown to the next."""
    run_jupyter({"cells": ["leaked = 1"]})
    r = run_jupyter({"cells": ["leaked"]})
    assert [e["ename"] for e in r.cells[0].error] == ["NameError"]


@pytest.mark.slow
def test_kernel_and_its_children_are_gone_after_a_timeout(run_jupyter, local_sandbox):
    """The kernel is always shut down: a background child of a timed-out cell does not survive."""
    marker = unique_sleep()
    r = run_jupyter({"cells": [f"import subprocess; subprocess.Popen(['sleep', '{marker}'])",
                               "import time; time.sleep(30)"], "cell_timeout": 1})
    assert r.driver.status == "TimeLimitExceeded"
    assert alive_with(f"sleep {marker}") == []


def test_kernel_death_is_a_failed_run_not_a_hang(run_jupyter):
    """A cell that kills its kernel (os._exit(3)) ends the notebook at once: Failed, KernelDied, rc 3."""
    start = time.monotonic()
    r = run_jupyter({"cells": ["print('before')", "import os; os._exit(3)", "print('never')"], "total_timeout": 30})
    assert time.monotonic() - start < 20 * load_per_core()
    assert r.status == "Failed"
    assert r.driver.return_code == 3
    assert len(r.cells) == 2
    assert r.cells[0].stdout == "before\n"
    assert r.cells[1].error[0]["ename"] == "KernelDied"


@pytest.mark.slow
def test_output_flood_is_capped(run_jupyter):
    """A cell printing without end keeps at most the output cap (1 MiB) and times out."""
    r = run_jupyter({"cells": ["while True:\n    print('a' * 1000)"], "total_timeout": 2})
    assert r.driver.status == "TimeLimitExceeded"
    assert 0 < len(r.cells[0].stdout) <= 1 << 20


def test_async_face_and_no_zombies(local_sandbox):
    """``arun_jupyter`` runs two notebooks at once from an event loop; no zombie is left behind."""
    import os

    async def both():
        return await asyncio.gather(local_sandbox.arun_jupyter({"cells": ["print(6 * 7)"]}),
                                    local_sandbox.arun_jupyter({"cells": ["print(6 * 8)"]}))

    a, b = asyncio.run(both())
    assert (a.cells[0].stdout, b.cells[0].stdout) == ("42\n", "48\n")
    assert zombies_of(os.getpid()) == []


def test_malformed_jupyter_requests_are_422(live_server):
    """Bad bodies are HTTP 422 naming the field: negative cell_timeout, an absolute files path."""
    r = httpx.post(f"{live_server}/run_jupyter", json={"cells": ["1"], "cell_timeout": -1}, timeout=30)
    assert r.status_code == 422 and "cell_timeout" in r.text
    r = httpx.post(f"{live_server}/run_jupyter", json={"cells": ["1"], "files": {"/etc/x": ""}}, timeout=30)
    assert r.status_code == 422 and "files" in r.text


@pytest.mark.slow
def test_repeated_notebooks_leak_no_fds_threads_or_children(local_sandbox):
    """Each kernel, its sockets and its client threads are released: after 6 notebooks (one timing
    out) this process's fds, threads and children are back at baseline."""
    import os

    from tests.sandbox.procs import children, open_fds

    pid = os.getpid()
    local_sandbox.run_jupyter({"cells": ["1"]})
    fds, threads, kids = open_fds(pid), len(os.listdir("/proc/self/task")), children(pid)
    for i in range(6):
        cells = ["import time; time.sleep(30)"] if i == 3 else ["print(1)"]
        local_sandbox.run_jupyter({"cells": cells, "cell_timeout": 1})
    assert open_fds(pid) - fds <= 2
    assert len(os.listdir("/proc/self/task")) - threads <= 2
    assert children(pid) - kids <= 0
