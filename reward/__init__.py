"""judgebox reward: test specifications, honest verdicts, and pass@k (verl's and TRL's scoring functions: :mod:`judgebox.integrations`).

Public API:

- :func:`judge` / :func:`ajudge`: one submission against a :class:`TestSpec` -> :class:`Judgement`;
- :func:`extract_code`: the program inside a model completion;
- :func:`compute_score`: one completion against its ground truth as a reward dict (verl's
  ``custom_reward_function``: :mod:`judgebox.integrations.verl`);
- :func:`score_batch` (async) / :func:`judge_many` (threads): many submissions, bounded concurrency;
- :func:`judge_batch` / :func:`compute_score_batch`: many submissions in one sandbox batch call
  (``POST /run_tests_batch`` per chunk; verl's ``BatchRewardManager`` calls the latter).
"""

from .batch import judge_many, score_batch
from .extract import extract_code
from .judge import ajudge, judge, judge_batch
from .score import compute_score, compute_score_batch
from .spec import CallCase, StdioCase, TestDataError, TestSpec
from .verdict import Judgement, TestResult, Verdict

__all__ = [
    "CallCase", "Judgement", "StdioCase", "TestDataError", "TestResult", "TestSpec", "Verdict", "ajudge",
    "compute_score", "compute_score_batch", "extract_code", "judge", "judge_batch", "judge_many", "score_batch",
]
