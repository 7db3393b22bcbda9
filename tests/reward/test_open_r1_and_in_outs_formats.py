"""Ground-truth formats beyond judgebox's own spec: open-r1 ``verification_info`` (``stdin_stdout``
cases become a stdio spec, its ``language`` chooses the code block and how it is compiled) and the
``language`` key of ``{"inputs", "outputs"}`` ground truth, through code_reward and compute_score
(real runs in the embedded sandbox)."""

import json

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import compute_score
from tests.reward.test_masked_reward_warnings import warnings_log  # noqa: F401  (fixture)

SUM_VI = json.dumps({"language": "python", "test_cases": [{"type": "stdin_stdout", "input": "1 2\n", "output": "3\n"}]})
SUM_PY = "a, b = map(int, input().split())\nprint(a + b)"
SUM_CPP = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }"


def test_user_finding_2_open_r1_verification_info(warnings_log):  # noqa: F811
    """open-r1 verification_info: stdin_stdout cases become a stdio spec; no warning for good data."""
    rewards = code_reward(["p", "p"], [f"```python\n{SUM_PY}\n```", "```python\nprint(4)\n```"],
                          verification_info=[SUM_VI, SUM_VI])
    assert rewards == [1.0, 0.0]
    assert compute_score("open-r1", f"```python\n{SUM_PY}\n```", json.loads(SUM_VI))["score"] == 1.0
    assert warnings_log.records == []


def test_user_finding_2_verification_info_language_is_honoured():
    """``language: cpp`` in verification_info: the cpp block is extracted and compiled, not the python one."""
    vi = json.dumps({"language": "cpp", "test_cases": [{"type": "stdin_stdout", "input": "1 2\n", "output": "3\n"}]})
    completion = f"```python\nprint(0)\n```\n```cpp\n{SUM_CPP}\n```"
    assert code_reward(["p"], [completion], verification_info=[vi]) == [1.0]
    score = compute_score("open-r1", completion, vi)
    assert (score["score"], score["verdict"]) == (1.0, "accepted")


def test_user_finding_2_in_outs_language_is_honoured():
    """``{"inputs", "outputs", "language": "cpp"}``: the C++ program is judged as C++ (a python
    judge of it would be a compile error); an explicit language argument still wins."""
    gt = {"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"], "language": "cpp"}
    completion = f"```cpp\n{SUM_CPP}\n```"
    score = compute_score("x", completion, json.dumps(gt), score_mode="pass_rate")
    assert (score["verdict"], score["pass_rate"]) == ("accepted", 1.0)
    assert code_reward(["p"], [completion], input_output=[gt]) == [1.0]
    assert compute_score("x", f"```python\n{SUM_PY}\n```", gt, language="python")["score"] == 1.0
