"""compute_score's arguments (a new user's findings): a misspelt keyword is a ``TypeError`` naming the
closest known one, never a silently different reward, while every keyword verl passes still works; a
solution or extra_info of the wrong type is a ``TypeError`` naming the argument; a ground truth of none
of the formats' shapes logs its test_data_error even after another bad one did (real runs in the
embedded sandbox)."""

import logging
import threading

import pytest

from judgebox.integrations.verl import compute_score, compute_score_batch
from judgebox.reward.judge import warn_once
from judgebox.reward.score import SCORE_KWARGS, VERL_KWARGS

# The user's example: the program prints 3, right for the first of the two cases.
HALF = "```python\nprint(3)\n```"
SUM = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
TRUTH = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]}


def test_finding_1_a_misspelt_keyword_is_refused_naming_the_closest():
    """``score_mod=`` scored 0.0 (binary) in silence; ``score_mode=`` gives the pass rate 0.5."""
    with pytest.raises(TypeError) as caught:
        compute_score("demo", HALF, TRUTH, score_mod="pass_rate")
    assert str(caught.value) == ("compute_score got an unexpected keyword argument 'score_mod'; "
                                 "did you mean 'score_mode'?")
    with pytest.raises(TypeError) as caught:
        compute_score_batch(["demo"], [HALF], [TRUTH], score_mod="pass_rate")
    assert str(caught.value) == ("compute_score_batch got an unexpected keyword argument 'score_mod'; "
                                 "did you mean 'score_mode'?")
    with pytest.raises(TypeError) as caught:
        compute_score("demo", HALF, TRUTH, extrainfo={"language": "python"})
    assert str(caught.value).endswith("'extrainfo'; did you mean 'extra_info'?")
    with pytest.raises(TypeError) as caught:
        compute_score("demo", HALF, TRUTH, banana=1)
    assert str(caught.value) == ("compute_score got an unexpected keyword argument 'banana'; known keywords: "
                                 + ", ".join(SCORE_KWARGS))
    score = compute_score("demo", HALF, TRUTH, score_mode="pass_rate")
    assert (score["score"], score["pass_rate"], score["n_passed"], score["n_total"], score["verdict"]) == (
        0.5, 0.5, 1, 2, "wrong_answer")


def test_finding_1_the_keywords_verl_passes_and_every_documented_one_still_work():
    """verl's reward loop adds reward_router_address/reward_model_tokenizer (with a reward router);
    each of compute_score's own keywords is accepted, in one call and in a batch."""
    assert set(VERL_KWARGS) == {"reward_router_address", "reward_model_tokenizer"}
    verl = {"reward_router_address": "127.0.0.1:9", "reward_model_tokenizer": None}
    own = {"sandbox_fusion_url": None, "sandbox_url": None, "score_mode": "pass_rate", "language": "python",
           "extract_policy": "last", "stop_on_first_failure": False, "total_timeout": 120, "memory_limit_mb": 512,
           "run_timeout": 10, "concurrent_semaphore": threading.Semaphore(1), "infra_score": 0.0,
           "on_tamper": "report"}
    assert set(own) == set(SCORE_KWARGS)
    score = compute_score(data_source="apps", solution_str=HALF, ground_truth=TRUTH, extra_info={"index": 3},
                          **verl, **own)
    assert (score["score"], score["n_passed"], score["n_total"]) == (0.5, 1, 2)
    batch = compute_score_batch(data_sources=["apps", "apps"], solution_strs=[SUM, HALF], ground_truths=[TRUTH, TRUTH],
                                extra_infos=[{"index": 0}, None], **verl, **own)
    assert [(s["score"], s["verdict"]) for s in batch] == [(1.0, "accepted"), (0.5, "wrong_answer")]


@pytest.mark.parametrize("kwargs,message", [
    ({"solution_str": 5}, "compute_score: solution_str must be a str (the completion) or None, got int"),
    ({"solution_str": SUM.encode()}, "compute_score: solution_str must be a str (the completion) or None, got "
                                     "bytes (decode it first; judgebox does not guess an encoding)"),
    ({"extra_info": "x"}, "compute_score: extra_info must be a dict or None, got str"),
    ({"extra_info": ["python"]}, "compute_score: extra_info must be a dict or None, got list"),
])
def test_finding_2_a_wrong_type_is_a_type_error_naming_the_argument(kwargs, message):
    """Raw errors (``expected string or bytes-like object``, ``'str' object has no attribute 'get'``)
    named no argument; bytes are refused, not decoded (verl passes the tokenizer's text)."""
    with pytest.raises(TypeError) as caught:
        compute_score(**{"data_source": "demo", "solution_str": SUM, "ground_truth": TRUTH, **kwargs})
    assert str(caught.value) == message


def test_finding_2_batch_names_the_entry_and_none_or_empty_stays_a_wrong_answer():
    with pytest.raises(TypeError) as caught:
        compute_score_batch(None, [SUM, 5], [TRUTH, TRUTH])
    assert str(caught.value) == "compute_score_batch: solution_strs[1] must be a str (the completion) or None, got int"
    with pytest.raises(TypeError) as caught:
        compute_score_batch(None, [SUM, SUM], [TRUTH, TRUTH], [None, "x"])
    assert str(caught.value) == "compute_score_batch: extra_infos[1] must be a dict or None, got str"
    for empty in (None, ""):
        score = compute_score("demo", empty, TRUTH, extra_info=None)
        assert (score["score"], score["verdict"], score["n_passed"], score["n_total"]) == (0.0, "wrong_answer", 0, 2)
    batch = compute_score_batch(None, [None, "", SUM], [TRUTH] * 3)
    assert [s["verdict"] for s in batch] == ["wrong_answer", "wrong_answer", "accepted"]


def test_finding_3_a_ground_truth_of_no_format_logs_after_another_bad_one(caplog):
    """``{"inputs": "1 2", "outputs": 3}`` had the same message as ``None`` (expected {...}), and the
    warning is once per message: after a None row it logged nothing. Each now says what it got."""
    warn_once.cache_clear()
    caplog.set_level(logging.WARNING, logger="judgebox.reward")
    try:
        for truth in (None, {"inputs": "1 2", "outputs": 3}, 5, {"test_cases": "1 2"}):
            score = compute_score("demo", SUM, truth)
            assert (score["verdict"], score["infra_error"], score["unscorable_reason"]) == (
                "test_data_error", True, "test_data")
        assert [r.getMessage() for r in caplog.records] == [
            'compute_score: test_data_error, reward masked: input_output: expected {"inputs": [...], '
            '"outputs": [...]}; got None',
            'compute_score: test_data_error, reward masked: input_output: expected {"inputs": [...], '
            '"outputs": [...]}; got {\'inputs\': str, \'outputs\': int}',
            'compute_score: test_data_error, reward masked: input_output: expected {"inputs": [...], '
            '"outputs": [...]}; got int',
            'compute_score: test_data_error, reward masked: verification_info: expected {"language": ..., '
            '"test_cases": [...]}; got {\'test_cases\': str}',
        ]
    finally:
        warn_once.cache_clear()
