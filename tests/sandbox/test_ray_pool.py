"""The judgebox pool on a real multi-node Ray cluster (``ray_fleet``: a head and 3 workers, 1 CPU
each): one executor per node, every node serving part of a batch, the pool found by name from another
driver process, demand it cannot place shown as pending in Ray's cluster status, and no live
executor answered as an infrastructure error (reward ``None``), never a verdict."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import time

import pytest

from judgebox.cli import main
from judgebox.reward import compute_score
from judgebox.sandbox import SandboxClient

pytestmark = pytest.mark.integration


def test_one_executor_per_node_and_every_node_serves_part_of_a_batch(ray_fleet):
    executors = ray_fleet.executors()
    assert sorted(executors.values()) == sorted(ray_fleet.node_ids())  # one each, on every node
    before = {e["name"]: e["runs"] for e in ray_fleet.pool.stats()["executors"]}
    with SandboxClient("ray://") as client:
        with concurrent.futures.ThreadPoolExecutor(16) as threads:
            answers = list(threads.map(lambda i: client.run_code(
                {"code": f"print({i} * 2)", "language": "python"}), range(64)))
        assert [a.run_result.stdout for a in answers] == [f"{i * 2}\n" for i in range(64)]
        served = {e["name"]: e["served"] for e in client.endpoints}
    after = {e["name"]: e["runs"] for e in ray_fleet.pool.stats()["executors"]}
    assert sum(served.values()) == 64
    assert all(after[name] - before.get(name, 0) >= 1 for name in executors), (before, after)
    assert all(served[name] >= 1 for name in executors), served


def test_the_pool_is_found_by_name_from_a_second_driver(ray_fleet):
    script = ("from judgebox.sandbox import SandboxClient\n"
              "with SandboxClient() as c:\n"
              "    print(c.run_tests({'code': 'print(int(input()) + 1)', 'language': 'python',\n"
              "                       'cases': [{'stdin': '41'}]}).run_results[0].stdout, end='')\n")
    env = {**os.environ, "JUDGEBOX_SANDBOX_URL": f"ray://{ray_fleet.address}"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "42\n"


def test_executors_the_cluster_cannot_place_are_pending_demand_in_rays_cluster_status(ray_fleet):
    import ray
    from ray.autoscaler.v2.sdk import get_cluster_status

    live = len(ray_fleet.executors())
    try:
        assert ray_fleet.pool.scale(live + 2) == live + 2
        gcs = ray.get_runtime_context().gcs_address
        for _ in range(120):  # the raylets report demand with their next resource report
            demand = [(tuple(sorted(b.bundle.items())), b.count)
                      for d in get_cluster_status(gcs).resource_demands.ray_task_actor_demand
                      for b in d.bundles_by_count]
            if demand:
                break
            time.sleep(0.5)
        assert ((("CPU", 1.0),), 2) in demand
        assert ray_fleet.pool.stats()["pending"] == 2
    finally:
        ray_fleet.pool.scale(0)
    assert ray_fleet.pool.stats()["pending"] == 0


def test_no_live_executor_is_an_infrastructure_error_never_a_verdict(ray_fleet, capsys):
    from judgebox.sandbox.errors import SandboxUnavailable
    from judgebox.sandbox.ray import Pool

    assert main(["ray", "down", "--address", ray_fleet.address]) == 0
    try:
        with SandboxClient("ray://", max_attempts=2, backoff_initial=0.1) as client:
            with pytest.raises(SandboxUnavailable, match="judgebox ray up"):
                client.run_code({"code": "print(1)", "language": "python"})
        result = compute_score("demo", "```python\nprint(1)\n```", {"inputs": ["\n"], "outputs": ["1\n"]},
                               sandbox_fusion_url=f"ray://{ray_fleet.address}", infra_score=None)
        assert result["score"] is None and result["infra_error"] is True
        assert result["unscorable_reason"] == "infrastructure"
    finally:
        assert main(["ray", "up", "--address", f"ray://{ray_fleet.address}"]) == 0
        ray_fleet.pool = Pool.find()
        ray_fleet.pool.wait(len(ray_fleet.node_ids()), timeout=300)
    status = capsys.readouterr().out
    assert "judgebox pool stopped: 4 executor(s)" in status
    assert f"sandbox URL: ray://{ray_fleet.address}" in status


def test_ray_status_lists_every_executor_and_its_figures(ray_fleet, capsys):
    assert main(["ray", "status", "--address", ray_fleet.address]) == 0
    out = capsys.readouterr().out
    for name in ray_fleet.executors():
        assert name in out
    assert f"nodes {len(ray_fleet.node_ids())}," in out
    assert main(["ray", "status", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert {e["name"] for e in stats["executors"] if e["live"]} == set(ray_fleet.executors())


def test_ray_up_names_the_node_and_the_fix_when_a_toolchain_is_missing(ray_fleet, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ray", "up", "--languages", "python,klingon"])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    head = ray_fleet.cluster.head_node.node_id
    assert f"node {head[:16]}" in err and "no toolchain for klingon" in err and "judgebox runtime build" in err
