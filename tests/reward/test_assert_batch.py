"""``assert`` problems (MBPP) run all their asserts in one runner process, as MBPP's own harness
does, with one nonce-marked line per assert: per-test verdicts stay honest."""

import pytest

from judgebox.reward import TestSpec, judge

ADD = TestSpec(kind="assert", asserts=["assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(0, 0) == 0"],
               run_timeout=1)


def verdicts(j):
    return [t.verdict.value for t in j.tests]


def test_all_asserts_share_one_process_and_pass():
    spec = TestSpec(kind="assert", setup_code="SEEN = []", asserts=["SEEN.append(1)\nassert len(SEEN) == 1",
                                                                     "SEEN.append(2)\nassert len(SEEN) == 2"])
    j = judge(spec, "def f(): pass\n")
    assert (j.verdict.value, j.n_passed, j.n_total) == ("accepted", 2, 2)


def test_each_assert_has_its_own_verdict():
    j = judge(ADD, "def add(a, b):\n    return 3\n")
    assert (verdicts(j), j.n_passed, j.n_total) == (["accepted", "wrong_answer", "wrong_answer"], 1, 3)


@pytest.mark.slow
def test_an_assert_over_its_cpu_time_is_a_timeout_and_the_others_still_count():
    """1.5 s of CPU in the second assert: over its 1 s, under the 3 s the process has for three. The
    burn is measured in CPU seconds, not iterations, so a slow or loaded host does not push the
    process past its own limit (a loop of fixed length did, on CI)."""
    slow = ("import time\ndef add(a, b):\n    if a == 2:\n        t = time.process_time()\n"
            "        while time.process_time() - t < 1.5: pass\n    return a + b\n")
    j = judge(ADD, slow)
    assert (verdicts(j), j.n_passed) == (["accepted", "time_limit_exceeded", "accepted"], 2)


@pytest.mark.parametrize("setup", ["", "X = 1"], ids=["tests-apart", "in-process"])
def test_an_assert_that_sleeps_past_run_timeout_is_a_timeout(setup):
    """``run_timeout`` is wall-clock time per assert too (less the time the assert waited for a CPU):
    0.5 s of sleep in the second assert is over its 0.3 s though it uses no CPU, and within the 0.9 s
    the process has for three; the third still runs and counts."""
    spec = ADD.model_copy(update={"run_timeout": 0.3, "setup_code": setup})
    j = judge(spec, "import time\ndef add(a, b):\n    if a == 2:\n        time.sleep(0.5)\n    return a + b\n")
    assert (verdicts(j), j.n_passed) == (["accepted", "time_limit_exceeded", "accepted"], 2)
    assert j.tests[0].harness_isolation == ("in-process" if setup else "process")


@pytest.mark.slow
def test_a_hang_is_a_timeout_for_that_assert_and_the_rest_did_not_run():
    j = judge(ADD, "def add(a, b):\n    import time\n    if a == 2:\n        time.sleep(60)\n    return a + b\n")
    assert (verdicts(j), j.n_passed, j.verdict.value) == (["accepted", "time_limit_exceeded", "skipped"], 1,
                                                          "time_limit_exceeded")


def test_early_exits_fail_the_assert_they_happen_in():
    for code in ("import os\ndef add(a, b):\n    os._exit(0)\n", "def add(a, b):\n    raise SystemExit(0)\n"):
        j = judge(ADD, code)
        assert (verdicts(j), j.n_passed) == (["runtime_error", "skipped", "skipped"], 0), code


def test_stop_on_first_failure_skips_the_rest():
    j = judge(ADD, "def add(a, b):\n    return 3\n", stop_on_first_failure=True)
    assert verdicts(j) == ["accepted", "wrong_answer", "skipped"]


def test_an_exit_after_a_passed_assert_is_charged_to_the_assert_it_happens_in():
    """The per-test line of an earlier assert is not the run's final marker: an exit during the
    second assert is that assert's runtime error, not a skip."""
    code = "import os\ndef add(a, b):\n    if a == 2:\n        os._exit(0)\n    return a + b\n"
    assert verdicts(judge(ADD, code)) == ["accepted", "runtime_error", "skipped"]


@pytest.mark.parametrize("line, out", [
    ({"seconds": 0.5, "cpu": 0.01, "wait": 0.0}, True),   # a sleeper: wall time decides
    ({"seconds": 2.0, "cpu": 0.2, "wait": 1.9}, False),   # starved by the host: its wait is forgiven
    ({"seconds": 0.1, "cpu": 0.5, "wait": 0.0}, True),    # threads: CPU time over the limit
    ({"seconds": 0.5, "cpu": 0.1}, True),                 # an older runner's line: no wait
    ({"seconds": 0.5, "cpu": 0.1, "wait": 9.0}, False),   # the wait counts at most the wall time
    ({"seconds": float("nan"), "cpu": None, "wait": "x"}, False),  # not numbers: nothing is over
], ids=["sleeper", "starved", "threads", "no-wait", "wait-capped", "junk"])
def test_the_per_assert_time_rule(line, out):
    from judgebox.reward.harness.protocol import out_of_time

    assert out_of_time(line, 0.3) is out
