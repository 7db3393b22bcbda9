"""A request's cases share one time budget, ``max_request_seconds`` (issue 37, finding 10): a request's
time was cases x ``run_timeout``, unbounded, so two ``/run_tests`` of 40 sleeping cases held both
slots and another client's ``print(1)`` got 504 after ``queue_timeout``. Past the budget the running
case is stopped and the others are not run (``run_result`` null, ``request_time_exceeded``), and the
judge's verdict is ``time_limit_exceeded``, never ``skipped`` nor accepted.

Budgets of 2 s against cases that would take 20 s or more: no outcome here hangs on the machine's
speed. The budget is set through ``JUDGEBOX_MAX_REQUEST_SECONDS``, which a server or sandbox
without the setting ignores (so these tests fail there for the finding itself)."""

from __future__ import annotations

import concurrent.futures
import time

import httpx
import pytest

from judgebox.reward import StdioCase, TestSpec, judge
from judgebox.sandbox import LocalSandbox, SandboxClient

pytestmark = pytest.mark.timeout(300)

SLEEPY = "import time\ntime.sleep(0.5)\nprint(input())"
BUDGET = {"JUDGEBOX_MAX_REQUEST_SECONDS": "2"}
FORTY = {"code": SLEEPY, "language": "python", "run_timeout": 5, "cases": [{"stdin": f"{i}\n"} for i in range(40)]}


@pytest.fixture
def budget_of_2s(monkeypatch) -> LocalSandbox:
    for name, value in BUDGET.items():
        monkeypatch.setenv(name, value)
    return LocalSandbox()


def test_the_cases_of_a_request_stop_at_max_request_seconds(budget_of_2s):
    """40 cases of 0.5 s at a 2 s budget: the first cases run, the one running at the budget is
    stopped, the rest are not run; the response says so and is ``Failed``."""
    r = budget_of_2s.run_tests(FORTY)
    ran = [x for x in r.run_results if x is not None]
    assert 1 <= len(ran) < 40 and r.run_results[:len(ran)] == ran  # those not run are the last ones
    assert ran[0].stdout == "0\n"
    assert (r.status, getattr(r, "request_time_exceeded", None)) == ("Failed", True)
    assert r.message.startswith("max_request_seconds=2 ran out: ") and \
        "--max-request-seconds / JUDGEBOX_MAX_REQUEST_SECONDS" in r.message
    quick = budget_of_2s.run_tests({**FORTY, "code": "print(input())", "cases": FORTY["cases"][:5]})
    assert (quick.status, quick.request_time_exceeded, quick.message) == ("Success", False, "")


def test_two_long_requests_no_longer_hold_every_slot(live_server_factory):
    """Finding 10 as found: two slots, two ``/run_tests`` of 40 x 1 s cases, then another client's
    ``print(1)``. It waited for a slot past ``queue_timeout`` (504); now the long ones end at their
    budget and it runs."""
    server = live_server_factory("--max-concurrency", "2", "--queue-timeout", "30", env=BUDGET)
    slow = {**FORTY, "code": "import time\ntime.sleep(1)\nprint(input())"}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        longs = [pool.submit(httpx.post, f"{server.url}/run_tests", json=slow, timeout=120) for _ in range(2)]
        deadline = time.monotonic() + 30
        while httpx.get(f"{server.url}/health", timeout=10).json()["running"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        other = httpx.post(f"{server.url}/run_code", json={"code": "print(1)", "language": "python"}, timeout=120)
        answers = [f.result().json() for f in longs]
    assert other.status_code == 200, other.text
    assert (other.json()["status"], other.json()["run_result"]["stdout"]) == ("Success", "1\n")
    assert [a.get("request_time_exceeded") for a in answers] == [True, True]
    assert all(a["run_results"][-1] is None for a in answers)


def test_a_test_not_run_for_want_of_time_is_a_timeout_not_a_skip(budget_of_2s):
    """The judge: tests the budget left unrun are ``time_limit_exceeded`` (``run_result`` null read
    as ``skipped``), and only the tests that ran and passed count."""
    spec = TestSpec(kind="stdio", run_timeout=5, stdio=[StdioCase(stdin=f"{i}\n", expected=f"{i}\n") for i in range(20)])
    client = SandboxClient("", local=budget_of_2s)
    j = judge(spec, SLEEPY, client=client)
    assert j.verdict == "time_limit_exceeded", j
    assert 1 <= j.n_passed < 20 and j.n_total == 20
    assert {t.verdict for t in j.tests[j.n_passed + 1:]} == {"time_limit_exceeded"}
    assert "skipped" not in {t.verdict for t in j.tests}
    fits = TestSpec(kind="stdio", run_timeout=5, stdio=spec.stdio[:2])
    assert judge(fits, SLEEPY, client=client).verdict == "accepted"
