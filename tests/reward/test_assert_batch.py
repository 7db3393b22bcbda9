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
