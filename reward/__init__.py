"""judgebox reward: test specifications, honest verdicts, and pass@k (verl's and TRL's scoring functions: :mod:`judgebox.integrations`).

Public API:

- :func:`judge` / :func:`ajudge`: one submission against a :class:`TestSpec` -> :class:`Judgement`;
- :func:`extract_code`: the program inside a model completion;
- :func:`compute_score`: one completion against its ground truth as a reward dict (verl's
  ``custom_reward_function``: :mod:`judgebox.integrations.verl`);
- :func:`score_batch` (async) / :func:`judge_many` (threads): many submissions, bounded concurrency.
"""

from .batch import judge_many, score_batch
from .extract import extract_code
from .judge import ajudge, judge
from .score import compute_score
from .spec import CallCase, StdioCase, TestDataError, TestSpec
from .verdict import Judgement, TestResult, Verdict

__all__ = [
    "CallCase", "Judgement", "StdioCase", "TestDataError", "TestResult", "TestSpec", "Verdict", "ajudge",
    "compute_score", "extract_code", "judge", "judge_many", "score_batch",
]
