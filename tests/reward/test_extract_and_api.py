"""Code extraction (BUG-023/024/025) and the public scorers: check_correctness, compute_score,
code_reward, score_batch (real runs in the embedded sandbox)."""

import asyncio
import json

import pytest

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import check_correctness, compute_score
from judgebox.integrations.verl.reward import SCORE_KEYS
from judgebox.reward import StdioCase, TestSpec, Verdict, extract_code, score_batch

DOUBLE = TestSpec(kind="stdio", stdio=[StdioCase(stdin="4\n", expected="8\n")])
PLUS1 = TestSpec(kind="stdio", stdio=[StdioCase(stdin="1\n", expected="2\n")])
P = "print(int(input())*2)"


@pytest.mark.parametrize("completion", [f"```py\n{P}\n```", f"```Python\n{P}\n```", f"```python3\n{P}\n```",
                                        f"```python \n{P}\n```", f"```python\r\n{P}\r\n```"])
def test_bug_023_fence_tags_case_insensitive_trailing_space_crlf(completion):
    """BUG-023: every fence spelling yields the program, and it passes."""
    assert compute_score("x", completion, DOUBLE.model_dump_json())["score"] == 1.0


def test_bug_024_bare_code_keeps_its_first_identifier():
    """BUG-024: bare code before a lone closing fence starts with 'def add(a, b):' and passes."""
    completion = "def add(a, b):\n    return a + b\n```\n"
    assert extract_code(completion).startswith("def add(a, b):")
    spec = TestSpec(kind="harness", harness="def check(candidate):\n    assert candidate(2, 3) == 5", entry_point="add")
    assert compute_score("humaneval", completion, spec.model_dump())["acc"] is True


A = "Draft:\n```python\nprint(0)\n```\nFinal:\n```python\nprint(int(input())+1)\n```"


@pytest.mark.parametrize("name,completion,kwargs,score", [
    ("a-last", A, {}, 1.0),
    ("a-first", A, {"extract_policy": "first"}, 0.0),
    ("b-unterminated", "```python\nprint(int(input())+1)\n", {}, 1.0),
    ("c-lone-closing", "print(int(input())+1)\n```", {}, 1.0),
    ("d-special-tokens", "```python\nprint(int(input())+1)\n```<|im_end|>", {}, 1.0),
    ("e-prompt-included", "<|im_start|>user\nlike ```python\nprint('example')\n```<|im_end|>\n<|im_start|>assistant\n" + A,
     {"extract_policy": "first"}, 0.0),
    ("e-prompt-included-last", "<|im_start|>user\n```python\nprint('example')\n```<|im_end|>\n<|im_start|>assistant\n"
     "```python\nprint(int(input())+1)\n```", {"extract_policy": "first"}, 1.0),
])
def test_bug_025_block_selection(name, completion, kwargs, score):
    """BUG-025: last block by default, first for SandboxFusion parity; unterminated; lone fence; tokens;
    only the response segment is searched."""
    assert compute_score("x", completion, PLUS1.model_dump_json(), **kwargs)["score"] == score


@pytest.mark.slow
def test_check_correctness_verl_codes_and_metadata_keys():
    in_outs = {"inputs": ["1 2\n", "10 -4\n", "5 5\n"], "outputs": ["3\n", "6\n", "11\n"]}
    results, meta = check_correctness(None, in_outs, "a, b = map(int, input().split()); print(a + b)")
    assert results == [True, True, False]
    verl_keys = {"case_index", "input", "expected_output", "api_request_error", "api_response", "status", "stdout",
                 "stderr", "exit_code", "duration", "compile_duration", "compile_stderr", "api_status",
                 "compile_status", "run_status"}
    assert all(verl_keys <= set(m) for m in meta)
    assert [m["status"] for m in meta] == ["success", "success", "wrong_answer"]
    assert check_correctness(None, in_outs, "1/0")[0] == [-2, -2, -2]
    assert check_correctness(None, in_outs, "while True: pass", timeout=1)[0] == [-3, -3, -3]
    assert check_correctness(None, in_outs, "int main( {", language="cpp")[0] == [-4, -4, -4]
    assert check_correctness(None, {"inputs": [], "outputs": []}, "print(1)")[0] == [-1]


def test_check_correctness_call_based_raising_function_fails():
    """BUG-016 through the verl API: fn_name tests, a raising function is -2, never True."""
    in_outs = {"inputs": ["1"], "outputs": ['""'], "fn_name": "solve"}
    assert check_correctness(None, in_outs, "def solve(x):\n    raise ValueError('boom')")[0] == [-2]


def test_compute_score_fixed_keys_binary_and_pass_rate_modes():
    """BUG-021 via compute_score: binary 0, pass_rate 11/12; every result has the same keys."""
    gt = json.dumps({"inputs": [f"{i}\n" for i in range(1, 13)], "outputs": [f"{2 * i}\n" for i in range(1, 13)]})
    code = "```python\nn = int(input()); print(2*n if n != 11 else 0)\n```"
    binary = compute_score("apps", code, gt, None)
    rate = compute_score(data_source="apps", solution_str=code, ground_truth=gt, score_mode="pass_rate")
    assert set(binary) == set(rate) == set(SCORE_KEYS)
    assert binary["score"] == 0.0 and binary["acc"] is False
    assert rate["score"] == pytest.approx(11 / 12) and (rate["n_passed"], rate["n_total"]) == (11, 12)
    bad = compute_score("apps", code, '{"inputs": ["1"]')
    assert set(bad) == set(SCORE_KEYS) and bad["infra_error"] is True and bad["verdict"] == "test_data_error"


def test_code_reward_trl_plain_and_conversational_and_none_on_bad_data():
    gt = PLUS1.model_dump_json()
    rewards = code_reward(
        ["p1", "p2", "p3", "p4"],
        ["```python\nprint(int(input())+1)\n```",
         [{"role": "assistant", "content": "```python\nprint(int(input())+1)\n```"}],
         "```python\nprint(0)\n```", "print(1)"],
        ground_truth=[gt, gt, gt, '{"inputs": []}'])
    assert rewards == [1.0, 1.0, 0.0, None]


def test_score_batch_async_bounded_concurrency():
    specs = [PLUS1] * 4
    codes = ["print(int(input())+1)", "print(2)", "print(3)", "1/0"]
    js = asyncio.run(score_batch(specs, codes, concurrency=2))
    assert [j.verdict for j in js] == [Verdict.accepted, Verdict.accepted, Verdict.wrong_answer, Verdict.runtime_error]
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(score_batch(specs, codes, concurrency=0))


BAD_DATA = ['{"inputs": [], "outputs": []}', '{"inputs": ["1"]', '{"inputs": ["1","2"], "outputs": ["1"]}']


@pytest.mark.parametrize("in_outs", BAD_DATA)
def test_bug_005_bad_test_data_through_every_scorer(in_outs):
    """BUG-005: empty, truncated or mismatched data: -1 / test_data_error / None, never a pass."""
    results, meta = check_correctness(None, json.loads(in_outs) if in_outs.endswith("}") else in_outs, "print(1)")
    assert results and all(r == -1 for r in results) and meta[0]["status"] == "test_data_error"
    score = compute_score("apps", "print(1)", in_outs)
    assert (score["verdict"], score["pass_rate"], score["acc"], score["infra_error"]) == \
        ("test_data_error", None, False, True)
    assert code_reward(["p"], ["print(1)"], input_output=[in_outs]) == [None]


def refused_url():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.slow
def test_bug_007_unreachable_sandbox_through_every_scorer(monkeypatch):
    """BUG-007: a refused connection: check_correctness -1 with api_request_error, compute_score
    infra_error (score masked by the caller), code_reward None."""
    from judgebox.integrations.trl.reward import make_code_reward
    from judgebox.sandbox import SandboxClient

    monkeypatch.setenv("JUDGEBOX_CLIENT_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("JUDGEBOX_CLIENT_BACKOFF_INITIAL", "0")
    monkeypatch.setenv("JUDGEBOX_CLIENT_BACKOFF_JITTER", "0")
    url = refused_url()
    results, meta = check_correctness(url + "/run_code", {"inputs": ["1\n"], "outputs": ["2\n"]}, "print(2)")
    assert results == [-1] and meta[0]["status"] == "api_error" and meta[0]["api_request_error"]
    score = compute_score("x", "print(2)", PLUS1.model_dump_json(), sandbox_fusion_url=url, infra_score=None)
    assert (score["verdict"], score["infra_error"], score["score"], score["pass_rate"]) == ("infra_error", True, None, None)
    assert score["unscorable_reason"] == "infrastructure"
    with SandboxClient(url) as client:
        assert make_code_reward(client=client)(["p"], ["print(2)"], ground_truth=[PLUS1.model_dump_json()]) == [None]


def test_judging_over_real_http_matches_embedded(live_server):
    """The same verdicts through a live judgebox server on loopback (one /run_tests per submission)."""
    from judgebox.reward import judge
    from judgebox.reward.spec import CallCase
    from judgebox.sandbox import SandboxClient

    call = TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[2], expected=4), CallCase(args=[3], expected=6)])
    cpp = TestSpec(kind="stdio", language="cpp", stdio=[StdioCase(stdin="1\n", expected="2\n")])
    with SandboxClient(live_server) as client:
        assert judge(PLUS1, "print(int(input())+1)", client=client).verdict == Verdict.accepted
        assert judge(call, "def f(x): return 2 * x", client=client).verdict == Verdict.accepted
        assert judge(call, "import os\ndef f(x): os._exit(0)", client=client).verdict == Verdict.runtime_error
        assert judge(cpp, "int main( {", client=client).verdict == Verdict.compile_error


def test_compute_score_is_time_boxed_and_thread_safe():
    """total_timeout bounds the call: a program slower than it is a timeout (the sandbox stops the tests
    within the call's budget), a call whose judging never started is infra_error (verdict unknown);
    parallel calls stay independent."""
    import concurrent.futures
    import threading

    slow = TestSpec(kind="stdio", run_timeout=30, stdio=[StdioCase(stdin="", expected="1\n")]).model_dump_json()
    # 12 s for the call: the sandbox stops the tests at tests_budget(12) = 6 s, the other 6 s are slack
    boxed = compute_score("x", "import time\ntime.sleep(25)\nprint(1)", slow, total_timeout=12)
    assert boxed["verdict"] == "time_limit_exceeded" and boxed["infra_error"] is False and boxed["score"] == 0.0
    gate = threading.Semaphore(1)
    gate.acquire()  # the sandbox slot this call waits for never frees: no verdict within its deadline
    try:
        stuck = compute_score("x", "print(1)", slow, total_timeout=0.5, concurrent_semaphore=gate)
    finally:
        gate.release()
    assert stuck["verdict"] == "infra_error" and stuck["infra_error"] is True
    gt = PLUS1.model_dump_json()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        scores = list(pool.map(lambda c: compute_score("x", c, gt)["score"],
                               ["print(int(input())+1)", "print(0)"] * 3))
    assert scores == [1.0, 0.0] * 3


@pytest.mark.parametrize("language,tag", [("cpp", "C++"), ("cpp", "cpp"), ("java", "Java"), ("go", "golang"),
                                          ("nodejs", "JS"), ("nodejs", "javascript"), ("rust", "rs"), ("bash", "sh")])
def test_each_sandbox_language_has_its_fence_tags(language, tag):
    """A block tagged for the language wins over a python block, whatever the case of the tag."""
    completion = f"```python\nprint('not this')\n```\n```{tag}\nTHE CODE\n```\n```text\noutput\n```"
    assert extract_code(completion, language) == "THE CODE\n"
    assert extract_code(completion, "python") == "print('not this')\n"


def test_extract_policy_is_validated():
    with pytest.raises(ValueError, match="policy"):
        extract_code("x", policy="middle")


# ----------------------------------------------------------------------------- BUG-212
REASONING = {  # id: (completion, code extracted, verdict)
    "a-control": ("<think>\n```python\nprint(0)\n```\nno.\n</think>\n```python\nprint(int(input())+1)\n```",
                  "print(int(input())+1)\n", "accepted"),
    "b-think-in-the-prompt": ("draft ```python\nprint(0)\n``` ok\n</think>\n\nprint(int(input())+1)",
                              "print(int(input())+1)\n", "accepted"),
    "c-no-code-in-the-answer": ("<think>\n```python\nprint(int(input())+1)\n```\n</think>\nThe code is above.", "",
                                "wrong_answer"),
    "d-reasoning-never-closed": ("<think>\n```python\nprint(int(input())+1)\n```", "", "wrong_answer"),
}
ADD = {  # assert-mode: the answer region's bare code wins over a draft in the reasoning
    "e-bare-draft": "<think>def add(a, b): return a - b  # draft</think>\ndef add(a, b):\n    return a + b\n",
    "f-fenced-draft": "<think>\n```python\ndef add(a, b):\n    return a - b\n```\n</think>\ndef add(a, b):\n    return a + b\n",
}


@pytest.mark.parametrize("completion, code, verdict", REASONING.values(), ids=REASONING)
def test_bug_212_code_comes_from_the_answer_after_the_reasoning(completion, code, verdict):
    from judgebox.reward import judge

    assert extract_code(completion) == code
    spec = TestSpec(kind="stdio", stdio=[StdioCase(stdin="1\n", expected="2\n")])
    assert judge(spec, code).verdict.value == verdict
    assert compute_score("x", completion, spec.model_dump())["score"] == (1.0 if verdict == "accepted" else 0.0)


@pytest.mark.parametrize("completion", ADD.values(), ids=ADD)
def test_bug_212_a_draft_in_the_reasoning_never_wins_over_the_answer(completion):
    from judgebox.reward import judge

    assert extract_code(completion) == "def add(a, b):\n    return a + b\n"
    spec = TestSpec(kind="assert", asserts=["assert add(2, 3) == 5"])
    assert judge(spec, extract_code(completion)).verdict.value == "accepted"


def test_bug_212_code_in_reasoning_can_be_allowed_and_continuations_keep_their_indentation():
    from judgebox.reward.loaders.problem import Problem

    assert extract_code(REASONING["c-no-code-in-the-answer"][0], code_in_reasoning="use") == "print(int(input())+1)\n"
    assert extract_code("<think>x</think>\n    return a + b\n") == "    return a + b\n"  # a HumanEval body
    with pytest.raises(ValueError, match="code_in_reasoning: 'yes' is not 'ignore' or 'use'"):
        extract_code("x", code_in_reasoning="yes")
    problem = Problem(task_id="t", data_source="humaneval", prompt="def add(a, b):\n", spec=None)
    assert problem.extract("<think>maybe a - b</think>\n    return a + b\n") == "\n    return a + b\n"
