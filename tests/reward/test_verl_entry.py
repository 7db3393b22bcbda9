"""verl loads ``custom_reward_function.path`` by file path (``importlib.util.spec_from_file_location``),
outside any package: ``integrations/verl/reward.py`` must work when loaded that way, as the README tells users."""

import importlib.util
import json
from pathlib import Path

import judgebox.integrations.verl.reward as verl_reward
from tests.sandbox.procs import load_per_core


def _load_like_verl():
    path = Path(verl_reward.__file__).resolve()
    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_score


def test_compute_score_loaded_by_path_scores_a_real_run():
    compute_score = _load_like_verl()
    truth = json.dumps({"inputs": ["1 2\n", "10 -4\n"], "outputs": ["3\n", "6\n"]})
    good = compute_score(data_source="apps", solution_str="```python\na, b = map(int, input().split())\nprint(a + b)\n```",
                         ground_truth=truth)
    bad = compute_score(data_source="apps", solution_str="```python\nprint(0)\n```", ground_truth=truth)
    assert (good["score"], good["acc"], good["n_passed"], good["n_total"]) == (1.0, True, 2, 2)
    assert (bad["score"], bad["acc"], bad["verdict"], bad["infra_error"]) == (0.0, False, "wrong_answer", False)


def test_a_dead_sandbox_url_is_an_infrastructure_error_in_seconds():
    """verl's two entry points against a URL nobody listens on: an infrastructure error (never a
    wrong answer) whose message names the URL and the cause, returned in seconds (the ping), not
    after the client's retries (~140 s per call before)."""
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/run_code"
    gt = {"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"]}
    start = time.monotonic()
    score = verl_reward.compute_score("apps", "```python\nprint(input())\n```", json.dumps(gt), sandbox_fusion_url=url)
    results, meta = verl_reward.check_correctness(url, gt, "print(input())")
    assert time.monotonic() - start < 30 * load_per_core()
    assert (score["score"], score["infra_error"], score["verdict"]) == (0.0, True, "infra_error")
    assert results == [-1, -1]
    assert meta[0]["api_status"] == "SandboxError"
    assert meta[0]["api_request_error"].startswith(f"no sandbox answers: GET {url[:-len('/run_code')]}/v1/ping: "
                                                   "ConnectError: ")
