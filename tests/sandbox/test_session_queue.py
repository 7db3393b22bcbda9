"""BUG-207: cells sent to one session at once queue in arrival order instead of failing "already
running" (HTTP 409); different sessions still run side by side. Order is enforced, not guessed: each
next cell is sent once the session reports the earlier ones waiting (``queued``), and overlap is read
from times the cells record themselves."""

from __future__ import annotations

import threading
import time

import pytest

from judgebox.sandbox import SandboxClient
from tests.conftest import FACES


@pytest.fixture(params=FACES)
def face(request):
    """The embedded sandbox or a client of ``judgebox serve`` (``create_session``, ``list_sessions``)."""
    if request.param == "embedded":
        yield request.getfixturevalue("embedded")
        return
    with SandboxClient(request.getfixturevalue("live_server")) as client:
        yield client


def queued(face, session) -> int:
    return next(s.queued for s in face.list_sessions().sessions if s.session_id == session.session_id)


def send_in_order(face, session, cells: list[str]) -> list:
    """Send ``cells`` at once, each after the session reports the earlier ones in line; their results."""
    results: list = [None] * len(cells)

    def call(i: int) -> None:
        results[i] = session.run(cells[i], timeout=60)

    threads = []
    for i in range(len(cells)):
        threads.append(threading.Thread(target=call, args=(i,)))
        threads[-1].start()
        if i:  # the first runs; each later one is in line before the next is sent
            deadline = time.monotonic() + 60
            while queued(face, session) < i and time.monotonic() < deadline:
                time.sleep(0.01)
    for t in threads:
        t.join()
    return results


def test_a_cell_sent_while_another_runs_waits_for_it(face):
    s = face.create_session()
    try:
        a, b = send_in_order(face, s, ["import time\ntime.sleep(1.0)\nx = 1\nprint(time.time())",
                                       "import time\nprint(x)\nprint(time.time())"])
        assert (a.status, b.status) == ("Success", "Success"), (a, b)
        assert b.stdout.splitlines()[0] == "1"
        assert float(b.stdout.splitlines()[1]) >= float(a.stdout.splitlines()[0])  # B ran after A
    finally:
        s.close()


def test_queued_cells_run_first_come_first_served(face):
    s = face.create_session()
    try:
        s.run("L = []\nimport time")
        results = send_in_order(face, s, ["time.sleep(0.5)"] + [f"L.append({i})" for i in range(5)])
        assert [r.status for r in results] == ["Success"] * 6
        assert s.run("print(L)").stdout == "[0, 1, 2, 3, 4]\n"
        assert queued(face, s) == 0
    finally:
        s.close()


def test_different_sessions_still_run_side_by_side(face):
    """Each cell records when it started and ended: the two intervals overlap."""
    s1, s2 = face.create_session(), face.create_session()
    try:
        out: dict[int, str] = {}
        cell = "import time\nstart = time.time()\ntime.sleep(1.0)\nprint(start, time.time())"
        threads = [threading.Thread(target=lambda i=i, s=s: out.__setitem__(i, s.run(cell, timeout=60).stdout))
                   for i, s in enumerate((s1, s2))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        (start1, end1), (start2, end2) = ([float(v) for v in out[i].split()] for i in (0, 1))
        assert start1 < end2 and start2 < end1, out
    finally:
        s1.close()
        s2.close()
