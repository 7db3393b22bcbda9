"""The server's overload semantics and ``run_jupyter`` through ``ray://`` on the shared Ray cluster
(``ray_fleet``: a head and 3 workers, one executor of one slot on each).

Overload is the server's (:class:`~judgebox.sandbox.server.admission.Admission` in every executor):
with every slot held, a run waits in an executor's bounded queue and is answered ``overloaded``
after ``queue_timeout`` seconds, or at once when the queue is full; the client retries it as it
retries HTTP 504, then raises :class:`~judgebox.sandbox.errors.SandboxOverloaded`. The slots are held
by runs that wait for a file the test writes into their working folder (no sleep races): the
outcome does not depend on how loaded the machine is.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from pathlib import Path
from typing import Iterator

import pytest

from judgebox.sandbox import LocalSandbox, SandboxClient, SandboxOverloaded

pytestmark = pytest.mark.integration

#: A run that holds its slot until the file ``release`` appears in its working folder; it first
#: writes ``started`` there so the test knows the slot is taken.
GATE = {"language": "python", "run_timeout": 240,
        "code": "import os, time\nopen('started', 'w').close()\nwhile not os.path.exists('release'):\n"
                "    time.sleep(0.01)\nprint('released')\n"}


@contextlib.contextmanager
def every_slot_held(workdir_root: Path, slots: int) -> Iterator[None]:
    """``slots`` gate runs (one per executor: the client balances them), each holding its executor's
    only slot for the ``with`` block; then released, each answering ``released``."""
    with SandboxClient("ray://") as client, concurrent.futures.ThreadPoolExecutor(slots) as threads:
        gates = [threads.submit(client.run_code, GATE) for _ in range(slots)]
        try:
            while len(list(workdir_root.rglob("started"))) < slots:
                failed = [g.result() for g in gates if g.done()]
                assert failed == [], "a gate run ended before it was released"
                time.sleep(0.05)
            assert {e["in_flight"] for e in client.endpoints} == {1}  # one gate on each executor
            yield
        finally:
            for started in workdir_root.rglob("started"):
                (started.parent / "release").touch()
        assert [g.result(timeout=300).run_result.stdout for g in gates] == ["released\n"] * slots


def rejected(pool) -> int:
    return sum(e["rejected"] for e in pool.stats()["executors"])


def test_no_slot_within_queue_timeout_is_sandbox_overloaded_after_the_retries(ray_fleet, tmp_path):
    with ray_fleet.pool_with(max_queue=4, queue_timeout=0.5, workdir_root=str(tmp_path)) as pool:
        executors = len(pool.members())
        with every_slot_held(tmp_path, executors):
            with SandboxClient("ray://", max_attempts=2, backoff_initial=0.1) as probe:
                with pytest.raises(SandboxOverloaded, match=r"no execution slot within queue_timeout=0\.5s") as over:
                    probe.run_code({"code": "print(1)", "language": "python"})
            assert (over.value.status_code, over.value.attempts) == (504, 2)
            assert "gave up after 2 attempt(s)" in str(over.value)
            assert rejected(pool) == 2  # each attempt waited its queue_timeout and was answered overloaded
        with SandboxClient("ray://") as client:  # the slots freed: the same run is served
            assert client.run_code({"code": "print(1)", "language": "python"}).run_result.stdout == "1\n"


def test_a_full_queue_is_sandbox_overloaded_without_waiting_for_a_slot(ray_fleet, tmp_path):
    with ray_fleet.pool_with(max_queue=0, queue_timeout=600, workdir_root=str(tmp_path)) as pool:
        with every_slot_held(tmp_path, len(pool.members())):
            with SandboxClient("ray://", max_attempts=3, backoff_initial=0.1) as probe:
                with pytest.raises(SandboxOverloaded, match=r"queue full \(0 waiting, max_queue=0\)") as over:
                    probe.run_code({"code": "print(1)", "language": "python"})
            assert (over.value.status_code, over.value.attempts) == (504, 3)
            assert rejected(pool) == 3  # answered at once: a queue_timeout of 600 s never ran out
            assert sum(e["waiting"] for e in pool.stats()["executors"]) == 0


JUPYTER = {"cells": ["a = 123", "a", "print(a)", "import sys; sys.stderr.write('stderr message')",
                     "raise RuntimeError('error message')", "print(a + 1)",
                     "open('out.txt', 'w').write(open('data/in.txt').read().upper())"],
           "files": {"data/in.txt": "aGVsbG8="}, "fetch_files": ["out.txt", "missing.txt"]}


def answer(r) -> dict:
    """What a ``run_jupyter`` answer says, less its timings and where it ran."""
    return {"status": r.status, "message": r.message, "files": r.files,
            "driver": (r.driver.status, r.driver.return_code),
            "cells": [c.model_dump() for c in r.cells]}


def test_run_jupyter_over_ray_answers_as_the_embedded_sandbox(ray_fleet):
    embedded = LocalSandbox().run_jupyter(JUPYTER)
    with SandboxClient("ray://") as client:
        over_ray = [client.run_jupyter(JUPYTER) for _ in range(len(ray_fleet.executors()))]
        served = {e["name"] for e in client.endpoints if e["served"]}
    assert answer(embedded)["cells"][2]["stdout"] == "123\n" and embedded.files == {"out.txt": "SEVMTE8="}
    assert [answer(r) for r in over_ray] == [answer(embedded)] * len(over_ray)
    assert served == set(ray_fleet.executors())  # every executor answered one of them
