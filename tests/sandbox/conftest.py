"""Fixtures of the sandbox tests that pin one behaviour on both faces (embedded and HTTP).

- ``run_jupyter`` (parametrized ``embedded`` / ``http``): ``run_jupyter(body) -> RunJupyterResponse``
  through the shared embedded sandbox, then ``POST /run_jupyter`` on the live server.
- ``embedded`` (module): an embedded sandbox of the module's own, its sessions closed with it.
- ``open_session`` (parametrized ``embedded`` / ``http``): ``open_session(**kwargs) -> Session`` on
  ``embedded``, then through ``SandboxClient`` on the live server; every session opened is closed
  after the test.
- ``ray_fleet`` (session): a real multi-node Ray cluster on this machine (``ray.cluster_utils.Cluster``:
  a head and 3 worker nodes, each its own raylet with 1 CPU) with a judgebox pool up (one executor per
  node), this process connected to it; a :class:`RayFleet`. Skipped when Ray is not installed.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import httpx
import pytest

from judgebox.sandbox import LocalSandbox, RunJupyterResponse, SandboxClient
from tests.conftest import FACES


@pytest.fixture(params=FACES)
def run_jupyter(request):
    if request.param == "embedded":
        return request.getfixturevalue("local_sandbox").run_jupyter
    url = request.getfixturevalue("live_server")

    def over_http(body: dict) -> RunJupyterResponse:
        r = httpx.post(f"{url}/run_jupyter", json=body, timeout=180)
        assert r.status_code == 200, r.text
        return RunJupyterResponse.model_validate(r.json())

    return over_http


@pytest.fixture(scope="module")
def embedded() -> LocalSandbox:
    sandbox = LocalSandbox()
    yield sandbox
    sandbox.sessions.close_all()


@pytest.fixture(params=FACES)
def open_session(request):
    owner = request.getfixturevalue("embedded") if request.param == "embedded" \
        else SandboxClient(request.getfixturevalue("live_server"))
    opened = []

    def open_(**kwargs):
        opened.append(owner.create_session(**kwargs))
        return opened[-1]

    yield open_
    for session in opened:
        session.close()
    if isinstance(owner, SandboxClient):
        owner.close()


#: Worker nodes of the shared Ray cluster (besides the head); 1 CPU each.
RAY_WORKERS = 3


@dataclass
class RayFleet:
    """The shared Ray cluster of the ``test_ray_*`` tests and its judgebox pool.

    ``address`` is the cluster's GCS address (``ray://<address>`` reaches the pool); ``pool`` the
    :class:`~judgebox.sandbox.ray.Pool`. Tests that remove a worker add one back (:meth:`restore`), so
    every test starts with a head and ``RAY_WORKERS`` workers, one executor on each.
    """

    cluster: Any
    pool: Any

    @property
    def address(self) -> str:
        return self.cluster.address

    def node_ids(self) -> set[str]:
        return {n.node_id for n in [self.cluster.head_node, *self.cluster.worker_nodes]}

    def worker(self, node_id: str) -> Any:
        """The worker node object whose id is ``node_id``."""
        return next(n for n in self.cluster.worker_nodes if n.node_id == node_id)

    def executors(self) -> dict[str, str]:
        """Live executor name -> its node id."""
        return {e["name"]: e["node_id"] for e in self.pool.stats()["executors"] if e["live"]}

    def add_worker(self) -> str:
        """Start a worker node (1 CPU); returns its node id (its executor may still be starting)."""
        node = self.cluster.add_node(num_cpus=1)
        self.cluster.wait_for_nodes()
        return node.node_id

    def wait_executor_on(self, node_id: str, timeout: float = 180.0) -> str:
        """The name of the live executor on ``node_id``, once there is one."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            names = [name for name, node in self.executors().items() if node == node_id]
            if names:
                return names[0]
            time.sleep(0.5)
        raise TimeoutError(f"no executor on node {node_id} after {timeout:g}s: {self.pool.stats()}")

    def remove_worker(self, node_id: str) -> None:
        """Remove the worker node ``node_id`` (its raylet and every process on it are killed)."""
        self.cluster.remove_node(self.worker(node_id))

    def restore(self) -> None:
        """Add workers until there are ``RAY_WORKERS`` again, each with a live executor."""
        while len(self.cluster.worker_nodes) < RAY_WORKERS:
            self.wait_executor_on(self.add_worker())
        self.pool.wait(RAY_WORKERS + 1)

    @contextlib.contextmanager
    def pool_with(self, *, executors: Optional[int] = None, resource: Optional[str] = None,
                  **settings: Any) -> Iterator[Any]:
        """The pool stopped and started again for the ``with`` block with executors of these
        :class:`~judgebox.sandbox.config.SandboxSettings` fields, only on nodes advertising
        ``resource`` when it is given; then the default pool again. Waits for ``executors`` live
        executors (default: one per node). Yields the :class:`~judgebox.sandbox.ray.Pool`."""
        from judgebox.sandbox.ray import Pool

        self.pool.down()
        try:
            self.pool = Pool.up(config=pool_config(settings=settings, resource=resource))
            self.pool.wait(len(self.node_ids()) if executors is None else executors, timeout=300)
            yield self.pool
        finally:
            self.pool.down()
            self.pool = Pool.up(config=pool_config())
            self.pool.wait(len(self.node_ids()), timeout=300)


def pool_config(**fields: Any) -> Any:
    """The shared pool's :class:`~judgebox.sandbox.ray.PoolConfig` (a fast reconcile pass), with ``fields``."""
    from judgebox.sandbox.ray import PoolConfig

    return PoolConfig(reconcile_s=0.5, **fields)


@pytest.fixture(scope="session")
def ray_fleet() -> RayFleet:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'judgebox[ray]')")
    from ray.cluster_utils import Cluster

    from judgebox.sandbox.ray import Pool

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        for _ in range(RAY_WORKERS):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        pool = Pool.up(config=pool_config())
        pool.wait(RAY_WORKERS + 1, timeout=300)
        fleet = RayFleet(cluster, pool)
        yield fleet
        fleet.pool.down()
    finally:
        ray.shutdown()
        cluster.shutdown()
