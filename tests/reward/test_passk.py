"""pass@k: the unbiased estimator (Chen et al. 2021) and its edge cases (BUG-001, BUG-002, BUG-004)."""

import math

import pytest

from judgebox.reward.passk import pass_at_k, summarize_pass_at_k


def test_bug001_values_from_the_case():
    """BUG-001: c = 0 is 0.0 for every k; k > n is undefined, never 1.0."""
    assert pass_at_k(n=5, c=0, k=1) == 0.0
    assert pass_at_k(n=5, c=5, k=5) == 1.0
    assert pass_at_k(n=10, c=3, k=5) == pytest.approx(1 - 21 / 252, abs=1e-12)
    assert round(pass_at_k(n=10, c=3, k=5), 7) == 0.9166667
    assert pass_at_k(n=200, c=1, k=1) == pytest.approx(0.005, abs=1e-15)
    with pytest.raises(ValueError, match="undefined"):
        pass_at_k(n=2, c=0, k=5)


def test_bug001_zero_correct_is_zero_for_every_k():
    """BUG-001 kind: no k makes an unsolved problem count."""
    for n in (1, 2, 7, 200):
        for k in range(1, n + 1):
            assert pass_at_k(n, 0, k) == 0.0


def test_matches_the_binomial_definition():
    """The stable product equals 1 - C(n-c, k)/C(n, k) computed with exact integers."""
    for n, c, k in [(20, 3, 1), (20, 3, 10), (200, 17, 100), (13, 12, 2), (1, 1, 1)]:
        exact = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-12, abs=1e-15)


def test_large_n_does_not_overflow():
    """n = 10,000 samples: no huge binomials, a value in [0, 1]."""
    value = pass_at_k(10_000, 3, 5_000)
    assert value == pytest.approx(1 - math.comb(9_997, 5_000) / math.comb(10_000, 5_000), rel=1e-9)


@pytest.mark.parametrize("n,c,k", [(0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 1, 0)])
def test_out_of_range_arguments_raise(n, c, k):
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_bug002_k_larger_than_some_n_is_absent_with_reason():
    """BUG-002: n = [99, 200], c = [0, 10], ks = [1, 100]."""
    summary = summarize_pass_at_k([99, 200], [0, 10], [1, 100])
    assert summary.pass_at_k == {"pass@1": pytest.approx(0.025, abs=1e-15)}
    assert "pass@100" not in summary.pass_at_k
    assert summary.omitted["pass@100"] == "k=100 > n for 1 of 2 problems (min n = 99)"
    assert (summary.min_n, summary.max_n) == (99, 200)


def test_bug004_one_sample_each_reports_only_pass_at_1():
    """BUG-004: 164 problems, 1 sample each, 50 correct: pass@1 = 0.304878, no pass@10/100."""
    ns, cs = [1] * 164, [1] * 50 + [0] * 114
    summary = summarize_pass_at_k(ns, cs, [1, 10, 100])
    assert round(summary.pass_at_k["pass@1"], 6) == 0.304878
    assert set(summary.pass_at_k) == {"pass@1"}
    assert set(summary.omitted) == {"pass@10", "pass@100"}
    buggy = 1 - math.comb(114, 10) / math.comb(164, 10)
    assert round(buggy, 5) == 0.97679
    assert all(abs(v - buggy) > 0.1 for v in summary.pass_at_k.values())


def test_empty_and_misaligned_inputs():
    assert summarize_pass_at_k([], [], [1]).omitted == {"pass@1": "no scored problems"}
    with pytest.raises(ValueError, match="align"):
        summarize_pass_at_k([1, 2], [1], [1])
