"""judgebox reward: test specifications, honest verdicts, verl/TRL scoring functions and pass@k.

Public API:

- :func:`judge` / :func:`ajudge`: one submission against a :class:`TestSpec` -> :class:`Judgement`;
- :func:`extract_code`: the program inside a model completion;
- :func:`check_correctness`: drop-in for verl's ``sandbox_fusion.utils.check_correctness``;
- :func:`compute_score`: verl ``custom_reward_function``;
- :data:`code_reward` / :func:`make_code_reward`: TRL ``reward_funcs`` callable;
- :func:`score_batch` (async) / :func:`judge_many` (threads): many submissions, bounded concurrency.
"""

from .batch import judge_many, score_batch
from .extract import extract_code
from .judge import ajudge, judge
from .spec import CallCase, StdioCase, TestDataError, TestSpec
from .trl import code_reward, make_code_reward
from .verdict import Judgement, TestResult, Verdict
from .verl import check_correctness, compute_score

__all__ = [
    "CallCase", "Judgement", "StdioCase", "TestDataError", "TestResult", "TestSpec", "Verdict", "ajudge",
    "check_correctness", "code_reward", "compute_score", "extract_code", "judge", "judge_many",
    "make_code_reward", "score_batch",
]
