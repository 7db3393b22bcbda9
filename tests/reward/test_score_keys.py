"""Issue 37: one schema for ``compute_score``'s extras. Every key of real results, for every kind of
verdict, is the one list :data:`judgebox.reward.score.SCORE_FIELDS` (with its types), and the rewards
guide's table lists exactly those keys."""

import re
from pathlib import Path

import pytest

from judgebox.reward import compute_score, compute_score_batch
from judgebox.reward.score import SCORE_FIELDS, SCORE_KEYS

TESTS = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]}
CASES = {
    "accepted": ("```python\na, b = map(int, input().split())\nprint(a + b)\n```", TESTS, {}),
    "wrong_answer": ("```python\nprint(3)\n```", TESTS, {"score_mode": "pass_rate"}),
    "runtime_error": ("```python\nraise SystemExit(3)\n```", TESTS, {}),
    "test_data_error": ("```python\nprint(3)\n```", {"inputs": []}, {}),
    "infra_error": ("```python\nprint(3)\n```", TESTS, {"sandbox_url": "http://127.0.0.1:9", "infra_score": None}),
    "tamper": ("```python\ndef add(a, b):\n    import sys\n    sys._getframe()\n    return a + b\n```",
               {"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"}, {}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_result_has_exactly_the_documented_keys_with_their_types(name):
    completion, gt, kwargs = CASES[name]
    result = compute_score("t", completion, gt, **kwargs)
    assert list(result) == list(SCORE_KEYS)
    for key, value in result.items():
        types, _ = SCORE_FIELDS[key]
        assert type(value) in types, (key, value)
    if name in ("accepted", "wrong_answer", "runtime_error", "test_data_error", "infra_error"):
        assert result["verdict"] == name
    else:
        assert (result["verdict"], result["tamper_signals"], result["forgeable"]) == ("accepted", "introspection", False)


def test_a_batch_has_the_same_keys():
    results = compute_score_batch(None, [c for c, _, _ in CASES.values()][:4], [g for _, g, _ in CASES.values()][:4])
    assert all(list(r) == list(SCORE_KEYS) for r in results)


def test_the_rewards_guide_lists_every_key_and_no_other():
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "rewards.md").read_text(encoding="utf-8")
    table = guide.split("### The keys of every score", 1)[1].split("###", 1)[0]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == list(SCORE_KEYS)


def test_a_misspelt_score_mode_is_an_error_before_any_work():
    """A new user's finding: ``score_mode="passrate"`` (verl's ``reward_kwargs``) fell back to the binary
    score without a word (score 0.0 where the pass rate was 0.5); now every entry raises, as TRL's does."""
    from judgebox.integrations.verl import compute_score as verl_compute_score

    completion, gt, _ = CASES["wrong_answer"]
    for fn in (compute_score, verl_compute_score):
        with pytest.raises(ValueError, match=r"score_mode: 'passrate' is not 'pass_rate' or 'binary'"):
            fn("t", completion, gt, None, score_mode="passrate")
    with pytest.raises(ValueError, match="score_mode"):
        compute_score_batch(None, [completion], [gt], score_mode="rate")
    assert compute_score("t", completion, gt, score_mode="pass_rate")["score"] == 0.5  # one of two cases
