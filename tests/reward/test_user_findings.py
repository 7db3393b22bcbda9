"""A new user's findings in the reward layer, each fixed for its whole kind (real runs in the
embedded sandbox): code extraction layouts, open-r1 ``verification_info``, the ``language`` key of
``in_outs``, outputs cut at the sandbox output limit, and warnings for masked rewards."""

import json
import logging

import pytest

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import compute_score
from judgebox.integrations.verl.reward import SCORE_KEYS
from judgebox.reward import StdioCase, TestSpec, Verdict, extract_code, judge
from judgebox.reward.judge import warn_once
from judgebox.sandbox import SandboxClient

PLUS1 = TestSpec(kind="stdio", stdio=[StdioCase(stdin="1\n", expected="2\n")]).model_dump_json()
SUM_VI = json.dumps({"language": "python", "test_cases": [{"type": "stdin_stdout", "input": "1 2\n", "output": "3\n"}]})
SUM_PY = "a, b = map(int, input().split())\nprint(a + b)"
SUM_CPP = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }"


@pytest.fixture
def warnings_log(caplog):
    """Warnings of the ``judgebox.reward`` logger, with the once-per-message memory cleared."""
    warn_once.cache_clear()
    caplog.set_level(logging.WARNING, logger="judgebox.reward")
    yield caplog
    warn_once.cache_clear()


# 1. extraction ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("completion,expected", [
    # the user's three inputs
    ("<think>\n```python\nprint('draft')\n```</think>\n```python\nprint('final')\n```", "print('final')\n"),
    ("Here```python\nprint(1)\n```", "print(1)\n"),
    ("```python\nprint(1)\n``` and done", "print(1)\n"),
    # the same kinds, other shapes
    ("<thinking>\n```python\nprint('draft')\n```\n</thinking>\nFinal:\n```py\nprint('final')\n```", "print('final')\n"),
    ("<think>\nonly reasoning here\n</think>\n```python\nprint(2)\n```\nprint(3)", "print(2)\n"),
    ("<think>\n```python\nprint('kept')\n```</think>\nThat is the answer.", ""),  # BUG-212: a draft is never run
    ("<think>plan: add one</think>\nprint(int(input())+1)", "print(int(input())+1)\n"),
    ("<think>plan</think>\nprint(int(input())+1)\n```", "print(int(input())+1)\n"),
    ("Solution:```py\nprint(4)\n```\nDone.", "print(4)\n"),
    ("```python\nprint(5)\n```</think>", ""),  # BUG-212: before </think> is reasoning (<think> in the prompt)
    ("```python\nx = 6\nprint(x)```\nThat prints 6.", "x = 6\nprint(x)\n"),
    ("def f():\n    return 7```", "def f():\n    return 7\n"),
    ("```python\nprint(1)\n``` first\n```python\nprint(8)\n``` second", "print(8)\n"),
])
def test_user_finding_1_extract_code_layouts(completion, expected):
    """Reasoning blocks are skipped when code follows them; a fence sharing its line with text still
    opens (``Here```python``) or closes (``` ```</think>``, ``` ``` and done``, ``print(x)```) a block."""
    assert extract_code(completion) == expected


def test_user_finding_1_think_draft_is_not_judged():
    """The draft inside <think> would fail; the final block after it passes (real run)."""
    completion = "<think>\n```python\nprint(0)\n```</think>\n```python\nprint(int(input())+1)\n```"
    assert compute_score("x", completion, PLUS1)["score"] == 1.0
    assert code_reward(["p"], [completion], ground_truth=[PLUS1]) == [1.0]


def test_user_finding_1_fence_with_trailing_text_closes_first_policy():
    """With policy first, a block closed by ``` and done`` ends there: the second block is not glued on."""
    completion = "```python\nprint(int(input())+1)\n``` and done\n```python\nprint(0)\n```"
    assert extract_code(completion, policy="first") == "print(int(input())+1)\n"
    assert compute_score("x", completion, PLUS1, extract_policy="first")["score"] == 1.0


# 2. verification_info and the language key ------------------------------------------------------------
def test_user_finding_2_open_r1_verification_info(warnings_log):
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


# 3. output cut at the sandbox output limit --------------------------------------------------------------
BIG = TestSpec(kind="stdio", stdio=[StdioCase(stdin="", expected="x" * 1500000 + "\n")])


def test_user_finding_3_expected_output_over_the_output_limit_is_test_data_error():
    """A correct program printing 1.5 MB past the 1 MiB cap cannot be judged: test_data_error, not
    wrong_answer; the message names the limit and how to raise it."""
    j = judge(BIG, "print('x'*1500000)")
    assert (j.verdict, j.pass_rate, j.n_total) == (Verdict.test_data_error, None, 1)
    assert ("the expected output (1500001 bytes) exceeds the sandbox output limit (stdout was cut at 1048576 bytes)"
            in j.message)
    assert "JUDGEBOX_OUTPUT_LIMIT_BYTES=3000002" in j.message
    score = compute_score("x", "print('x'*1500000)", BIG)
    assert (score["verdict"], score["infra_error"], set(score)) == ("test_data_error", True, set(SCORE_KEYS))


def test_user_finding_3_wrong_program_with_big_expected_output_is_not_judged_either():
    """A truncated output against an expected output at least as long is unjudgeable while its
    complete tokens agree with the expected ones (here one token, cut in the middle)."""
    assert judge(BIG, "print('y'*1500000)").verdict == Verdict.test_data_error


def test_a_flood_that_already_differs_before_the_cut_is_a_wrong_answer():
    """Second trial: expected "1 2 3 ..." (1.2 MB), the program floods "9 9 9 ...": its first token
    is already wrong, so it is a wrong answer (reward 0), not an unjudgeable test_data_error (None)
    that a policy could reach by flooding."""
    expected = " ".join(str(i % 10) for i in range(600_000)) + "\n"
    spec = TestSpec(kind="stdio", stdio=[StdioCase(stdin="", expected=expected)])
    j = judge(spec, "print('9 ' * 600000)")
    assert (j.verdict, j.pass_rate) == (Verdict.wrong_answer, 0.0)
    assert "differs from the expected one before the cut" in j.tests[0].stderr
    assert judge(spec, f"print({expected[:-1]!r})").verdict == Verdict.test_data_error  # right so far


def test_user_finding_3_shorter_expected_output_stays_wrong_answer():
    """The program printed more than the cap, the expected output is shorter: a wrong answer for sure."""
    spec = TestSpec(kind="stdio", stdio=[StdioCase(stdin="", expected="x" * 10 + "\n")])
    j = judge(spec, "print('x'*1500000)")
    assert (j.verdict, j.pass_rate) == (Verdict.wrong_answer, 0.0)
    assert "[judgebox] output limit exceeded" in j.tests[0].stderr


def test_user_finding_3_raising_the_limit_as_the_message_says_judges_it(monkeypatch):
    """JUDGEBOX_OUTPUT_LIMIT_BYTES=3000002 (the message's advice) for an embedded sandbox: accepted."""
    monkeypatch.setenv("JUDGEBOX_OUTPUT_LIMIT_BYTES", "3000002")
    with SandboxClient("") as client:
        j = judge(BIG, "print('x'*1500000)", client=client)
    assert (j.verdict, j.pass_rate) == (Verdict.accepted, 1.0)


# 4. compute_score's masked verdicts say why --------------------------------------------------------------
def test_user_finding_4_compute_score_logs_the_reason_keeps_its_keys(warnings_log):
    """test_data_error: the dict keeps exactly SCORE_KEYS (no message key) and the reason is a warning."""
    score = compute_score("apps", "print(1)", '{"inputs": ["1"], "outputs": []}')
    assert set(score) == set(SCORE_KEYS) and len(score) == len(SCORE_KEYS)
    assert (score["verdict"], score["infra_error"], score["score"]) == ("test_data_error", True, 0.0)
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


# 5. content parts (second trial) -----------------------------------------------------------------------
def test_code_reward_reads_an_assistant_message_made_of_content_parts():
    """transformers/OpenAI content parts: the text parts joined in order are the completion (it was
    ``str(list)``, so the right code was never run and scored 0.0)."""
    parts = [{"type": "text", "text": "Here:\n```python\nprint(int(input()) "}, {"type": "image", "url": "x.png"},
             {"type": "text", "text": "+ 1)\n```"}]
    assert code_reward(["p"], [[{"role": "assistant", "content": parts}]], ground_truth=[PLUS1]) == [1.0]
    assert code_reward(["p"], [[{"role": "assistant", "content": "```python\nprint(2)\n```"}]],
                       ground_truth=[PLUS1]) == [1.0]



# 6. a correct solution that prints a lot (second trial) -------------------------------------------------
@pytest.mark.parametrize("spec", [
    TestSpec(kind="harness", harness="def check(candidate):\n    assert candidate(2, 3) == 5", entry_point="add"),
    TestSpec(kind="assert", asserts=["assert add(2, 3) == 5", "assert add(0, 0) == 0"]),
    TestSpec(kind="call", fn_name="add", calls=[{"args": [2, 3], "expected": 5}]),
], ids=["harness", "asserts", "call"])
def test_a_correct_solution_that_prints_more_than_the_output_limit_is_accepted(spec):
    """2 MiB of debug prints (past the 1 MiB stdout limit) pushed the result line out: runtime_error.
    The harness swallows the solution's stdout, as HumanEval's and MBPP's own harnesses do."""
    code = "import sys\nprint('debug ' * 350_000)\nsys.stdout.write('x' * 1_000_000)\ndef add(a, b):\n    return a + b\n"
    seen = set()
    for variant in (spec, spec.model_copy(update={"setup_code": "X = 1"})):  # tests apart; a setup keeps them in
        j = judge(variant, code)
        assert (j.verdict.value, j.n_passed) == ("accepted", spec.n_tests), j
        seen.add(j.tests[0].harness_isolation)
    assert seen == ({"process"} if spec.kind == "call" else {"process", "in-process"})
