"""The fleet's figures in Ray's Prometheus export (``ray_fleet``: a head and 3 workers, one executor
each): every node's metrics agent serves its executor's ``ray_judgebox_executor_*`` series, tagged
with the executor and its node, whose values are those of ``judgebox ray status`` (``pool.stats()``),
and the registry's node serves ``ray_judgebox_pool_*`` (executors per node, restarts, pending).

Ray's agents export what processes record every few seconds: the test reads the pages until they
show the figures ``pool.stats()`` gives (no run is in flight meanwhile, so they settle), with a
deadline only as a backstop. Needs ``ray[default]`` (the metrics agent); skipped without it.
"""

from __future__ import annotations

import time

import httpx
import pytest

from judgebox.sandbox import SandboxClient

pytestmark = pytest.mark.integration


def samples() -> list[tuple[str, str, dict[str, str], float]]:
    """``(node id, series name, labels, value)`` of every ``judgebox`` sample on every node's page."""
    import ray
    from prometheus_client.parser import text_string_to_metric_families

    out = []
    for node in ray.nodes():
        if not node["Alive"]:
            continue
        page = httpx.get(f"http://{node['NodeManagerAddress']}:{node['MetricsExportPort']}/metrics", timeout=30).text
        for family in text_string_to_metric_families(page):
            out += [(node["NodeID"], s.name, s.labels, s.value) for s in family.samples if "judgebox" in s.name]
    return out


def expected(stats: dict) -> tuple[dict[tuple, float], dict[tuple, float]]:
    """The series the export should show for ``pool.stats()``, as ``(executors, pool)``: each executor's
    ``(its node, name, executor, its worker id) -> value`` (its own node's page serves them), and the
    registry's ``(name, executor or node id) -> value``."""
    executors: dict[tuple, float] = {}
    pool: dict[tuple, float] = {("ray_judgebox_pool_pending", ""): stats["pending"]}
    for e in stats["executors"]:
        for name, value in (("slots", e["slots"]), ("running", 0), ("queued", 0), ("sessions", e["sessions"]),
                            ("runs_total", e["runs"])):
            executors[(e["node_id"], f"ray_judgebox_executor_{name}", e["name"], e["worker_id"])] = value
        pool[("ray_judgebox_pool_executor_restarts", e["name"])] = e["restarts"]
    for node_id, count in stats["nodes"].items():
        pool[("ray_judgebox_pool_executors", node_id)] = count
    return executors, pool


def exported(seen: list[tuple[str, str, dict[str, str], float]]) -> tuple[dict[tuple, float], dict[str, dict]]:
    """The export in :func:`expected`'s keys: the executors' series (counters summed over their
    ``status`` tag), and the registry's per Ray worker that recorded them (a registry that was
    restarted leaves its last figures behind under its old ``WorkerId``)."""
    executors: dict[tuple, float] = {}
    pool: dict[str, dict[tuple, float]] = {}
    for node_id, name, labels, value in seen:
        if name.startswith("ray_judgebox_executor_"):
            key = (node_id, name, labels["executor"], labels["WorkerId"])
            executors[key] = executors.get(key, 0) + value
        elif name.startswith("ray_judgebox_pool_"):
            pool.setdefault(labels["WorkerId"], {})[(name, labels.get("executor") or labels.get("node_id") or "")] = value
    return executors, pool


def test_the_pools_figures_are_ray_metrics_on_every_nodes_export(ray_fleet):
    import ray

    if any(n["MetricsExportPort"] <= 0 for n in ray.nodes() if n["Alive"]):
        pytest.skip("Ray's metrics agent is not running: install ray[default] (the judgebox ray extra)")
    # executors of its own, started on nodes whose metrics agents are up: in CI an executor that an
    # earlier test's node churn started on a node as it joined had no series at all in the export
    with ray_fleet.pool_with() as pool:
        check_export(ray_fleet, pool)


def check_export(ray_fleet, pool) -> None:
    with SandboxClient("ray://") as client:
        for i in range(8):
            assert client.run_code({"code": f"print({i})", "language": "python"}).run_result.stdout == f"{i}\n"
        assert client.run_code({"code": "raise SystemExit(3)", "language": "python"}).status == "Failed"
    stats = pool.stats()
    want, want_pool = expected(stats)
    assert sum(v for key, v in want.items() if key[1].endswith("runs_total")) >= 9
    deadline = time.monotonic() + 180  # a backstop: Ray exports every few seconds

    def settled(got, pool) -> bool:
        return all(got.get(k) == v for k, v in want.items()) and any(
            all(registry.get(k) == v for k, v in want_pool.items()) for registry in pool.values())

    while not settled(*exported(seen := samples())) and time.monotonic() < deadline:
        time.sleep(1)
    got, pool = exported(seen)
    assert {key: got.get(key) for key in want} == want  # on the executor's own node, under its own worker
    registry = max(pool.values(), key=lambda r: sum(r.get(k) == v for k, v in want_pool.items()))
    assert {key: registry.get(key) for key in want_pool} == want_pool
    statuses = {labels["status"] for _, name, labels, _ in seen if name == "ray_judgebox_executor_runs_total"}
    assert {"Success", "Failed"} <= statuses
    assert stats["nodes"] == {n: 1 for n in ray_fleet.node_ids()}
