"""``compute_score_batch`` (verl's ``BatchRewardManager`` face): one sandbox batch call per chunk, and
the verdicts :func:`compute_score` gives one by one, embedded and over a real ``judgebox serve``."""

from __future__ import annotations

import json

import pytest

from judgebox.integrations.verl import compute_score, compute_score_batch
from tests.conftest import FACES

ADD = json.dumps({"inputs": ["1 2\n", "10 -4\n"], "outputs": ["3\n", "6\n"]})
CALL = json.dumps({"fn_name": "add", "inputs": [[1, 2], [10, -4]], "outputs": [3, 6]})
CPP_ADD = {"kind": "stdio", "language": "cpp", "stdio": [{"stdin": "1 2\n", "expected": "3\n"},
                                                         {"stdin": "10 -4\n", "expected": "6\n"}]}


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}\n```"


#: (solution, ground truth): right, wrong, crashing, not compiling, bad test data, in two languages and two kinds
MIXED = [
    (fenced("python", "a, b = map(int, input().split())\nprint(a + b)"), ADD),
    (fenced("python", "print(0)"), ADD),
    (fenced("python", "raise ValueError('boom')"), ADD),
    (fenced("python", "print("), ADD),
    (fenced("python", "def add(a, b):\n    return a + b"), CALL),
    (fenced("python", "def add(a, b):\n    return a - b"), CALL),
    (fenced("cpp", "#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a+b<<std::endl;}"), CPP_ADD),
    (fenced("cpp", "#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a*b<<std::endl;}"), CPP_ADD),
    (fenced("cpp", "int main( {"), CPP_ADD),
    (fenced("python", "print(1)"), json.dumps({"inputs": [], "outputs": []})),
]


@pytest.fixture(params=FACES)
def sandbox_url(request) -> str:
    """``""`` (the embedded sandbox), then the shared ``judgebox serve``."""
    return "" if request.param == "embedded" else request.getfixturevalue("live_server")


@pytest.mark.parametrize("mode", ["binary", "pass_rate"])
def test_batch_verdicts_equal_one_by_one(sandbox_url, mode):
    solutions, truths = [s for s, _ in MIXED], [g for _, g in MIXED]
    kwargs = {"sandbox_fusion_url": sandbox_url or None, "score_mode": mode}
    singles = [compute_score("apps", s, g, None, **kwargs) for s, g in MIXED]
    batch = compute_score_batch(data_sources=["apps"] * len(MIXED), solution_strs=solutions, ground_truths=truths,
                                extra_infos=[{}] * len(MIXED), **kwargs)
    assert batch == singles
    assert [r["verdict"] for r in batch] == ["accepted", "wrong_answer", "runtime_error", "compile_error", "accepted",
                                             "wrong_answer", "accepted", "wrong_answer", "compile_error",
                                             "test_data_error"]


def test_lengths_must_match():
    with pytest.raises(ValueError, match="one of each per completion"):
        compute_score_batch(solution_strs=["x"], ground_truths=[], extra_infos=None)
