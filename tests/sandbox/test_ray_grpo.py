"""A GRPO-style batch scored through ``ray://`` on the shared Ray cluster (``ray_fleet``) while the
cluster changes under it: a worker node removed mid-batch (every completion still scored, verdicts
identical to the embedded sandbox's, no infrastructure error left, the runs that died retried
elsewhere and counted), and a node added mid-run (its new executor serves before the run ends).

Batch size: :data:`GROUPS` problems x 4 completions (right, wrong, crashing, right again) =
256 completions, half MBPP-style assert problems, half stdio problems (a minute or two on a
2-core machine, with the embedded reference scoring)."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from judgebox.reward import compute_score
from judgebox.reward.score import client_for
from judgebox.sandbox import SandboxClient

pytestmark = pytest.mark.integration

#: Problems in the batch; each gets 4 completions.
GROUPS = 64


def fence(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\n"


def batch() -> list[tuple[object, str]]:
    """(ground truth, completion) pairs: GRPO groups of 4 completions per problem."""
    rows = []
    for k in range(GROUPS):
        if k % 2:
            truth = {"kind": "assert", "asserts": [f"assert f(1) == {1 + k}", f"assert f(2) == {2 + k}"]}
            group = [f"def f(x):\n    return x + {k}", f"def f(x):\n    return x - {k}",
                     "def f(x):\n    raise RuntimeError('crash')", f"def f(x):\n    y = x\n    return y + {k}"]
        else:
            truth = {"inputs": ["3\n", "5\n"], "outputs": [f"{3 * k}\n", f"{5 * k}\n"]}
            group = [f"print(int(input()) * {k})", f"print(int(input()) + {k + 1})",
                     "import sys\nsys.exit(3)", f"n = int(input())\nprint(n * {k})"]
        rows += [(truth, fence(code)) for code in group]
    return rows


def score_all(rows, threads: int, **kwargs) -> tuple[list[dict], concurrent.futures.Future]:
    pool = concurrent.futures.ThreadPoolExecutor(threads)
    futures = [pool.submit(compute_score, "grpo", completion, truth, **kwargs) for truth, completion in rows]
    pool.shutdown(wait=False)
    return futures


def test_a_worker_removed_mid_batch_loses_no_completion_and_changes_no_verdict(ray_fleet):
    rows = batch()
    embedded = [compute_score("grpo", completion, truth) for truth, completion in rows]
    assert {r["verdict"] for r in embedded} >= {"accepted", "wrong_answer", "runtime_error"}

    client = client_for("ray://")
    victim_node = sorted(n for n in ray_fleet.node_ids() if n != ray_fleet.cluster.head_node.node_id)[0]
    victim = next(name for name, node in ray_fleet.executors().items() if node == victim_node)
    retries_before = ray_fleet.pool.stats()["retries"]
    try:
        futures = score_all(rows, 16, sandbox_fusion_url="ray://")
        # remove the node once a quarter of the batch is scored and the victim has runs in flight
        while sum(f.done() for f in futures) < len(rows) // 4 or not any(
                e["name"] == victim and e["in_flight"] > 0 for e in client.endpoints):
            assert not all(f.done() for f in futures), "the batch ended before the node could be removed"
            time.sleep(0.01)
        ray_fleet.remove_worker(victim_node)
        over_ray = [f.result() for f in futures]
        assert [r for r in over_ray if r["infra_error"]] == []
        assert [r["verdict"] for r in over_ray] == [r["verdict"] for r in embedded]
        assert [r["score"] for r in over_ray] == [r["score"] for r in embedded]
        for _ in range(100):  # the retries reach the registry as fire-and-forget notes
            retried = ray_fleet.pool.stats()["retries"] - retries_before
            if retried:
                break
            time.sleep(0.1)
        assert retried >= 1
        assert victim not in ray_fleet.executors()
    finally:
        ray_fleet.restore()


def test_a_node_added_mid_run_serves_runs_before_the_run_ends(ray_fleet):
    stop = threading.Event()
    answers: list[str] = []

    def work(client: SandboxClient, i: int) -> None:
        n = i
        while not stop.is_set() and len(answers) < 5000:
            r = client.run_code({"code": f"print({n} + 1)", "language": "python"})
            answers.append(r.run_result.stdout if r.run_result.stdout == f"{n + 1}\n" else f"wrong: {r}")
            n += 8

    with SandboxClient("ray://") as client:
        threads = [threading.Thread(target=work, args=(client, i)) for i in range(8)]
        for t in threads:
            t.start()
        added = None
        try:
            while len(answers) < 20:
                time.sleep(0.05)
            added = ray_fleet.add_worker()
            newcomer = ray_fleet.wait_executor_on(added)
            while not any(e["name"] == newcomer and e["served"] >= 1 for e in client.endpoints) \
                    and len(answers) < 5000:
                time.sleep(0.05)
            running = all(t.is_alive() for t in threads)
        finally:
            stop.set()
            for t in threads:
                t.join()
            if added is not None:
                ray_fleet.remove_worker(added)
        served = {e["name"]: e["served"] for e in client.endpoints}
    assert running, "the run ended before the new node served"
    assert served.get(newcomer, 0) >= 1, served
    assert [a for a in answers if a.startswith("wrong")] == []
