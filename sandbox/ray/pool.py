"""The pool: a named registry actor that keeps one executor per node and tells clients where they are.

Routing design (no router on the call path):

- the **registry** (:class:`Registry`, the detached actor ``judgebox-pool`` in the Ray namespace
  ``judgebox``) only keeps the list of executors. Every ``reconcile_s`` it reads the live nodes from
  the GCS, starts ``per_node`` executors on each node that lacks them (pinned by node affinity,
  ``num_cpus`` = ``cpus_per_executor``), drops those whose node left, and asks each for its figures
  (which also proves it alive);
- a **client** (:class:`~judgebox.sandbox.client.raysandbox.RaySandbox`) reads that list every couple
  of seconds (and at once after a failure) and sends each call straight to an executor: one Ray actor
  call per run, no hop through the registry. It balances on the in-flight counts it keeps itself plus
  the queue each executor reported with its last answer;
- ``min_executors`` beyond the nodes there are asks Ray for more executors, unpinned: they wait as
  pending actor demand that Ray's autoscaler acts on, and start on the nodes it adds.

Executors are restarted by Ray (``max_restarts=-1``) when their process dies; one whose node is gone
is dead for good and is replaced only when a node joins.

After each pass the registry sets the pool's Ray metrics (:mod:`judgebox.sandbox.ray.metrics`):
executors per node, restarts per executor (Ray's actor table, read at most every
:data:`RESTARTS_EVERY_S` seconds), pending executors, retries and drops.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Optional

from judgebox.sandbox.errors import SandboxUnavailable

from .cluster import connect
from .executor import SandboxExecutor, node_report
from .metrics import PoolMetrics
from .names import EXECUTOR_PREFIX, NAMESPACE, POOL_NAME, executor_name

__all__ = ["Pool", "PoolConfig", "Registry"]

log = logging.getLogger("judgebox.ray")

#: Calls of the executor beyond its slots and queue (figures, session closes).
CONTROL_CALLS = 16
#: Seconds between two reads of Ray's actor table for the restart metrics (``stats()`` always reads it).
RESTARTS_EVERY_S = 10.0


@dataclass
class PoolConfig:
    """What ``judgebox ray up`` asks for.

    Attributes:
        cpus_per_executor: CPUs each executor reserves from Ray and runs programs on at once
            (``None``: all of its node's CPUs).
        per_node: executors on each node.
        min_executors: executors wanted in all; those the nodes cannot hold are pending demand.
        settings: :class:`~judgebox.sandbox.config.SandboxSettings` fields for every executor
            (``isolation`` among them; ``max_concurrency`` is set from the CPUs).
        reconcile_s: seconds between two passes of the registry over the nodes.
        resource: a Ray custom resource (``None``: none): executors start only on nodes that
            advertise it (``ray start --resources '{"judgebox_executor": 1}'``, a KubeRay worker
            group's ``rayStartParams.resources``) and each reserves one unit of it, so the pool leaves
            a trainer's own nodes (and their CPUs) to the trainer. Spare executors ask for it too.

    Raises:
        ValueError: a field out of range (its name and the fix in the message).
    """

    cpus_per_executor: Optional[int] = None
    per_node: int = 1
    min_executors: int = 0
    settings: Optional[dict[str, Any]] = None
    reconcile_s: float = 1.0
    resource: Optional[str] = None

    def __post_init__(self) -> None:
        if self.cpus_per_executor is not None and self.cpus_per_executor < 1:
            raise ValueError(f"cpus_per_executor={self.cpus_per_executor}: give at least 1, or None for all of "
                             "a node's CPUs")
        if self.per_node < 1 or self.min_executors < 0 or self.reconcile_s <= 0:
            raise ValueError(f"per_node={self.per_node}, min_executors={self.min_executors}, reconcile_s="
                             f"{self.reconcile_s}: per_node must be >= 1, min_executors >= 0, reconcile_s > 0")
        if self.resource is not None and (not self.resource or self.resource in ("CPU", "GPU", "memory")):
            raise ValueError(f"resource={self.resource!r}: name a custom resource the sandbox nodes advertise "
                             "(e.g. judgebox_executor), or None")


class Registry:
    """The body of the pool's registry actor (see the module docstring). Args: a :class:`PoolConfig`."""

    def __init__(self, config: PoolConfig) -> None:
        import ray

        self.ray, self.config = ray, config
        self.executors: dict[str, dict[str, Any]] = {}  # name -> {handle, node_id, pinned, stats, error}
        self.retries = 0
        self.dropped = 0
        self._task: Optional[asyncio.Task] = None
        self._spare = 0
        self.metrics = PoolMetrics()
        self._restarts_read: tuple[float, dict[str, int]] = (0.0, {})

    def _actor_class(self):
        return self.ray.remote(SandboxExecutor)

    def _start(self, name: str, cpus: int, node_id: Optional[str]) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        settings = {**(self.config.settings or {}), "max_concurrency": cpus}
        queue = int(settings.get("max_queue", 1024))
        strategy = NodeAffinitySchedulingStrategy(node_id, soft=False) if node_id else "SPREAD"
        handle = self._actor_class().options(
            name=name, namespace=NAMESPACE, lifetime="detached", get_if_exists=True, num_cpus=cpus,
            max_restarts=-1, max_task_retries=0, max_concurrency=cpus + queue + CONTROL_CALLS,
            resources={self.config.resource: 1} if self.config.resource else None,
            scheduling_strategy=strategy).remote(name, settings)
        self.executors[name] = {"handle": handle, "node_id": node_id, "pinned": node_id is not None,
                                "stats": None, "error": "", "since": time.time()}

    async def _nodes(self) -> list[dict[str, Any]]:
        nodes = await asyncio.get_running_loop().run_in_executor(None, self.ray.nodes)
        return [n for n in nodes if n.get("Alive")]

    async def reconcile(self) -> None:
        """One pass: start what is missing, drop what left, refresh every executor's figures."""
        nodes = await self._nodes()
        alive = {n["NodeID"]: n for n in nodes}
        for name, ex in list(self.executors.items()):
            if ex["pinned"] and ex["node_id"] not in alive:
                self.ray.kill(ex["handle"], no_restart=True)
                del self.executors[name]
                self.dropped += 1
                self.metrics.dropped.inc()
                log.warning("executor %s dropped: its node %s left the cluster", name, ex["node_id"])
        served = {ex["node_id"] for ex in self.executors.values()}
        for node_id, node in alive.items():
            resources = node.get("Resources", {})
            cpus = self.config.cpus_per_executor or int(resources.get("CPU", 0))
            if cpus < 1 or resources.get("CPU", 0) < cpus:
                continue
            if self.config.resource and resources.get(self.config.resource, 0) < self.config.per_node:
                continue  # not a sandbox node: its CPUs are the trainer's
            if node_id in served and not any(ex["pinned"] and ex["node_id"] == node_id
                                             for ex in self.executors.values()):
                continue  # a spare executor landed there: it serves the node
            for i in range(self.config.per_node):
                name = executor_name(node_id, i)
                if name not in self.executors:
                    self._start(name, cpus, node_id)
        missing = self.config.min_executors - len(self.executors)
        for _ in range(max(0, missing)):
            self._spare += 1
            self._start(f"{EXECUTOR_PREFIX}-spare-{self._spare}", self.config.cpus_per_executor or 1, None)
        await self._refresh()
        self.metrics.publish(await self._figures(fresh=False))

    async def _refresh(self) -> None:
        names = list(self.executors)
        answers = await asyncio.gather(*(self._stats(self.executors[n]) for n in names), return_exceptions=True)
        for name, answer in zip(names, answers):
            ex = self.executors.get(name)
            if ex is None:
                continue
            if isinstance(answer, dict):
                ex["stats"], ex["error"] = answer, ""
                ex["node_id"] = answer["node_id"]
            elif isinstance(answer, asyncio.TimeoutError):
                pass  # still starting, or busy: keep its last figures
            else:
                ex["stats"], ex["error"] = None, f"{type(answer).__name__}: {answer}"

    async def _stats(self, ex: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.wait_for(ex["handle"].stats.remote(), timeout=max(2.0, self.config.reconcile_s))

    async def _loop(self) -> None:
        while True:
            try:
                await self.reconcile()
            except Exception:  # noqa: BLE001 - the registry must outlive one bad pass
                log.exception("pool reconcile pass failed")
            await asyncio.sleep(self.config.reconcile_s)

    async def start(self) -> None:
        """Start the reconcile loop (idempotent; the pool calls it after making the actor)."""
        if self._task is None:
            await self.reconcile()
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def members(self) -> list[dict[str, Any]]:
        """The executors that answered the last pass: ``{name, handle, node_id, slots}`` each."""
        await self.start()
        return [{"name": name, "handle": ex["handle"], "node_id": ex["node_id"], "slots": ex["stats"]["slots"]}
                for name, ex in self.executors.items() if ex["stats"] is not None]

    async def scale(self, min_executors: int) -> int:
        """Want ``min_executors`` executors in all (those beyond the nodes' are pending demand); spare
        executors not yet placed are withdrawn first. Returns how many executors there now are."""
        self.config.min_executors = min_executors
        for name, ex in list(self.executors.items()):
            if not ex["pinned"] and ex["stats"] is None:
                self.ray.kill(ex["handle"], no_restart=True)
                del self.executors[name]
        await self.reconcile()
        return len(self.executors)

    async def note_retry(self, n: int = 1) -> None:
        """Count ``n`` runs a client retried on another executor after theirs died."""
        self.retries += n
        self.metrics.retries.inc(n)

    async def stats(self) -> dict[str, Any]:
        """The pool's figures: ``executors`` (one dict per executor: name, node_id, pinned, live,
        error, restarts, worker_id, and its own figures: slots, running, waiting, sessions, runs, failures,
        rejected, by_status), ``nodes`` (executors per node id), ``retries`` (runs clients retried
        elsewhere), ``dropped`` (executors whose node left), ``pending`` (executors not yet placed),
        and totals ``slots``, ``running``, ``waiting``, ``runs``, ``failures``."""
        await self.start()
        await self._refresh()
        return await self._figures(fresh=True)

    async def _figures(self, fresh: bool) -> dict[str, Any]:
        """:meth:`stats` from the figures the last pass read (the restarts read again when ``fresh``
        or older than :data:`RESTARTS_EVERY_S`)."""
        read_at, restarts = self._restarts_read
        if fresh or time.monotonic() - read_at > RESTARTS_EVERY_S:
            restarts = await asyncio.get_running_loop().run_in_executor(None, self._restarts)
            self._restarts_read = (time.monotonic(), restarts)
        rows = []
        for name, ex in sorted(self.executors.items()):
            s = ex["stats"] or {}
            rows.append({"name": name, "node_id": ex["node_id"], "pinned": ex["pinned"], "live": bool(s),
                         "error": ex["error"], "restarts": restarts.get(name, 0), "worker_id": s.get("worker_id", ""),
                         **{k: s.get(k, 0) for k in ("slots", "running", "waiting", "sessions", "runs",
                                                     "failures", "rejected")},
                         "by_status": s.get("by_status", {})})
        nodes: dict[str, int] = {}
        for row in rows:
            if row["live"]:
                nodes[row["node_id"]] = nodes.get(row["node_id"], 0) + 1
        return {"executors": rows, "nodes": nodes, "retries": self.retries, "dropped": self.dropped,
                "pending": sum(1 for r in rows if not r["live"]),
                **{k: sum(r[k] for r in rows) for k in ("slots", "running", "waiting", "runs", "failures")}}

    def _restarts(self) -> dict[str, int]:
        """Restarts per executor from the GCS actor table (``num_restarts``)."""
        try:
            table = self.ray._private.state.actors()
        except Exception:  # noqa: BLE001 - a private API: no figure rather than no stats
            return {}
        return {a.get("Name"): int(a.get("NumRestarts", 0)) for a in table.values()
                if a.get("Name", "").startswith(EXECUTOR_PREFIX) and a.get("State") != "DEAD"}

    async def shutdown(self) -> int:
        """Close every executor's sessions and kill the executors; returns how many there were."""
        if self._task is not None:
            self._task.cancel()
        n = len(self.executors)
        await asyncio.gather(*(asyncio.wait_for(ex["handle"].shutdown.remote(), 10)
                               for ex in self.executors.values() if ex["stats"] is not None),
                             return_exceptions=True)
        for ex in self.executors.values():
            self.ray.kill(ex["handle"], no_restart=True)
        self.executors.clear()
        return n


class Pool:
    """The driver's handle on the fleet (``judgebox ray up/status/down`` use it).

    Use :meth:`up` to start (or find) the pool, :meth:`find` to reach a running one from any process of
    the cluster.
    """

    def __init__(self, ray: Any, registry: Any) -> None:
        self.ray, self.registry = ray, registry

    @classmethod
    def up(cls, address: Optional[str] = None, config: Optional[PoolConfig] = None) -> "Pool":
        """Start the pool's registry (or find the running one) on the cluster at ``address``.

        Args:
            address: ``HOST:PORT`` of the cluster (``None``: this process's, ``RAY_ADDRESS``, ``auto``).
            config: what to run (default :class:`PoolConfig`); ignored when a pool is already running.

        Raises:
            SandboxRequestError: Ray is not installed (names the extra), or another cluster is connected.
            SandboxUnavailable: no Ray cluster there.
        """
        ray = connect(address)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        registry = ray.remote(Registry).options(
            name=POOL_NAME, namespace=NAMESPACE, lifetime="detached", get_if_exists=True, num_cpus=0,
            max_restarts=-1, max_task_retries=-1, max_concurrency=1000,
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True)).remote(config or PoolConfig())
        ray.get(registry.start.remote())
        return cls(ray, registry)

    @classmethod
    def find(cls, address: Optional[str] = None) -> "Pool":
        """The running pool of the cluster at ``address`` (found by name in the ``judgebox`` namespace).

        Raises:
            SandboxUnavailable: no Ray cluster, or no pool on it (says to run ``judgebox ray up``).
        """
        ray = connect(address)
        try:
            return cls(ray, ray.get_actor(POOL_NAME, namespace=NAMESPACE))
        except ValueError:
            raise SandboxUnavailable(f"no judgebox pool on the Ray cluster at {ray.get_runtime_context().gcs_address} "
                                     f"(no actor {POOL_NAME!r} in namespace {NAMESPACE!r}): start it with "
                                     "`judgebox ray up`") from None

    def stats(self) -> dict[str, Any]:
        """The pool's figures (see :meth:`Registry.stats`)."""
        return self.ray.get(self.registry.stats.remote())

    def members(self) -> list[dict[str, Any]]:
        """The live executors (see :meth:`Registry.members`)."""
        return self.ray.get(self.registry.members.remote())

    def scale(self, min_executors: int) -> int:
        """Want at least ``min_executors`` executors (see :meth:`Registry.scale`); returns how many there are."""
        return self.ray.get(self.registry.scale.remote(min_executors))

    def wait(self, executors: int, timeout: float = 120.0) -> list[dict[str, Any]]:
        """Wait until at least ``executors`` executors are live; returns them.

        Raises:
            TimeoutError: fewer were live after ``timeout`` seconds (the message lists the errors).
        """
        deadline = time.monotonic() + timeout
        while True:
            live = self.members()
            if len(live) >= executors:
                return live
            if time.monotonic() > deadline:
                errors = [f"{e['name']}: {e['error']}" for e in self.stats()["executors"] if e["error"]]
                raise TimeoutError(f"{len(live)} of {executors} executors live after {timeout:g}s"
                                   + (f" ({'; '.join(errors)})" if errors else ""))
            time.sleep(0.5)

    def down(self) -> int:
        """Stop every executor and the registry; returns how many executors there were."""
        n = self.ray.get(self.registry.shutdown.remote())
        self.ray.kill(self.registry, no_restart=True)
        return n

    def check_nodes(self, settings: Optional[dict[str, Any]] = None, languages: Optional[list[str]] = None,
                    resource: Optional[str] = None) -> dict:
        """Run :func:`~judgebox.sandbox.ray.executor.node_report` on every live node (see :func:`check_nodes`)."""
        return check_nodes(self.ray, settings, languages, resource)


def check_nodes(ray: Any, settings: Optional[dict[str, Any]] = None, languages: Optional[list[str]] = None,
                resource: Optional[str] = None) -> dict[str, dict[str, Any]]:
    """What every live node can serve, node id → :func:`~judgebox.sandbox.ray.executor.node_report`;
    with ``resource``, only the nodes that advertise that custom resource (the pool's sandbox nodes).

    Raises:
        RuntimeError: a node cannot apply the isolation asked for, lacks the program runtime, or lacks
            one of ``languages``; the message names the node and the fix (the build command).
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0)(node_report)
    nodes = [n for n in ray.nodes() if n.get("Alive") and (not resource or n.get("Resources", {}).get(resource))]
    refs = {n["NodeID"]: probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
            .remote(settings) for n in nodes}
    reports = dict(zip(refs, ray.get(list(refs.values()), timeout=300)))
    problems = []
    for node_id, report in reports.items():
        where = f"node {node_id[:16]} ({next(n['NodeManagerAddress'] for n in nodes if n['NodeID'] == node_id)})"
        if report.get("isolation_error"):
            problems.append(f"{where}: {report['isolation_error']}")
        if report.get("runtime_error"):
            problems.append(f"{where}: {report['runtime_error']}")
        lacking = sorted(set(languages or ()) - set(report.get("languages") or ()))
        if lacking:
            problems.append(f"{where}: no toolchain for {', '.join(lacking)}: run `bash scripts/install.sh` "
                            "and `judgebox runtime build` on that node")
    if problems:
        raise RuntimeError("; ".join(problems))
    return reports
