"""Masked rewards say why: bad test data (malformed open-r1 ``verification_info``, invalid or empty
``input_output``, a test-data error found while judging) masks the reward (None from code_reward,
``infra_error`` from compute_score, whose dict keeps exactly SCORE_KEYS) and logs one warning on the
``judgebox.reward`` logger naming the field, once per distinct message (real runs in the embedded
sandbox)."""

import logging

import pytest

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import compute_score
from judgebox.integrations.verl.reward import SCORE_KEYS
from judgebox.reward import TestSpec
from judgebox.reward.judge import warn_once

SUM_PY = "a, b = map(int, input().split())\nprint(a + b)"


@pytest.fixture
def warnings_log(caplog):
    """Warnings of the ``judgebox.reward`` logger, with the once-per-message memory cleared."""
    warn_once.cache_clear()
    caplog.set_level(logging.WARNING, logger="judgebox.reward")
    yield caplog
    warn_once.cache_clear()


@pytest.mark.parametrize("info,field", [
    ({"language": "python", "test_cases": [{"type": "function_call", "fn_name": "f", "input": "1", "output": "1"}]},
     "verification_info.test_cases[0].type: 'function_call' is not supported"),
    ({"language": "python", "test_cases": []}, "verification_info.test_cases: no test cases"),
    ({"language": "python", "test_cases": [{"type": "stdin_stdout", "input": 1, "output": "3\n"}]},
     "verification_info.test_cases[0].input: expected text or a list of lines, got int"),
    ('{"language": "python", "test_cases": [', "ground_truth: not valid JSON (Expecting value"),
])
def test_user_finding_2_bad_test_data_is_warned_not_silent(warnings_log, info, field):
    """Bad verification_info: reward None and a warning naming the field, from code_reward and compute_score."""
    assert code_reward(["p"], [SUM_PY], verification_info=[info]) == [None]
    messages = [r.getMessage() for r in warnings_log.records]
    assert len(messages) == 1 and messages[0].startswith("code_reward: test_data_error, reward masked: "
                                                         "column 'verification_info': ") and field in messages[0]
    score = compute_score("open-r1", SUM_PY, info)
    assert (score["verdict"], score["infra_error"], score["pass_rate"]) == ("test_data_error", True, None)
    assert field in warnings_log.records[-1].getMessage()
    assert warnings_log.records[-1].getMessage().startswith("compute_score: test_data_error")


def test_user_finding_2_warning_once_per_distinct_message(warnings_log):
    """A batch of 3 rows with the same bad data logs one warning; a different problem logs another."""
    bad = '{"inputs": ["1"]'
    assert code_reward(["p"] * 3, [SUM_PY] * 3, ground_truth=[bad] * 3) == [None, None, None]
    assert code_reward(["p"], [SUM_PY], ground_truth=['{"inputs": [], "outputs": []}']) == [None]
    messages = [r.getMessage() for r in warnings_log.records]
    assert len(messages) == 2
    assert "ground_truth: not valid JSON" in messages[0] and "input_output: no test cases" in messages[1]


def test_user_finding_4_compute_score_logs_the_reason_keeps_its_keys(warnings_log):
    """test_data_error: the dict keeps exactly SCORE_KEYS (no message key) and the reason is a warning."""
    score = compute_score("apps", "print(1)", '{"inputs": ["1"], "outputs": []}')
    assert set(score) == set(SCORE_KEYS) and len(score) == len(SCORE_KEYS)
    assert (score["verdict"], score["infra_error"], score["score"]) == ("test_data_error", True, 0.0)
    assert score["unscorable_reason"] == "test_data"  # masked like an infra error, but named as bad data
    assert [r.getMessage() for r in warnings_log.records] == [
        "compute_score: test_data_error, reward masked: input_output: 1 inputs but 0 outputs"]
    assert warnings_log.records[0].levelno == logging.WARNING


def test_user_finding_4_judged_test_data_error_is_logged_too(warnings_log):
    """A test-data error found while judging (call tests in C++) is logged with its reason."""
    gt = TestSpec(kind="call", language="cpp", fn_name="f", calls=[{"args": [1], "expected": 1}]).model_dump_json()
    score = compute_score("x", "int f(int x) { return x; }", gt)
    assert set(score) == set(SCORE_KEYS) and score["verdict"] == "test_data_error"
    assert [r.getMessage() for r in warnings_log.records] == [
        "compute_score: test_data_error, reward masked: language: call tests run Python only, not 'cpp'"]
