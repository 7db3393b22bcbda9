"""The fleet's figures as Ray metrics (``ray.util.metrics``): what ``judgebox ray status`` prints, in
Ray's Prometheus export.

Each node's Ray metrics agent serves its processes' series at ``http://<node>:<MetricsExportPort>/metrics``
(``ray.nodes()`` gives the port; ``ray start --metrics-export-port`` fixes it), and Ray names an
application series ``ray_<name>``, a counter ``ray_<name>_total``. The agent comes with ``ray[default]``
(the ``ray`` extra of judgebox); with a minimal Ray the series are recorded and not exported.

Recorded by every executor actor (so exported by its own node), tags ``executor`` and ``node_id``:

=====================================  =======  =================================================
``judgebox_executor_slots``            gauge    execution slots (the CPUs it reserved)
``judgebox_executor_running``          gauge    runs holding a slot now
``judgebox_executor_queued``           gauge    runs waiting for a slot now
``judgebox_executor_sessions``         gauge    live sessions
``judgebox_executor_runs``             counter  runs served; tag ``status`` (``Success``, ``Failed``,
                                                ``SandboxError``; ``""`` for a session call)
``judgebox_executor_failures``         counter  runs the sandbox could not serve
``judgebox_executor_rejected``         counter  overload answers (queue full or ``queue_timeout``)
=====================================  =======  =================================================

Recorded by the pool's registry after each reconcile pass (exported by the registry's node):

=====================================  =======  =================================================
``judgebox_pool_executors``            gauge    live executors on a node; tag ``node_id``
``judgebox_pool_executor_restarts``    gauge    restarts of an executor (Ray's actor table); tags
                                                ``executor``, ``node_id``
``judgebox_pool_pending``              gauge    executors not yet live (unplaced demand, starting)
``judgebox_pool_retries``              counter  runs clients sent again to another executor
``judgebox_pool_dropped``              counter  executors dropped because their node left
=====================================  =======  =================================================
"""

from __future__ import annotations

from typing import Any

__all__ = ["ExecutorMetrics", "PoolMetrics"]

EXECUTOR_TAGS = ("executor", "node_id")


class ExecutorMetrics:
    """The series of one executor (made inside its actor process).

    Args:
        executor: the executor's actor name; node_id: the Ray node it runs on (hex id).
    """

    def __init__(self, executor: str, node_id: str) -> None:
        from ray.util.metrics import Counter, Gauge

        self.tags = {"executor": executor, "node_id": node_id}
        self.gauges = {name: Gauge(f"judgebox_executor_{name}", description, tag_keys=EXECUTOR_TAGS)
                       for name, description in (("slots", "execution slots (CPUs reserved)"),
                                                 ("running", "runs holding a slot now"),
                                                 ("queued", "runs waiting for a slot now"),
                                                 ("sessions", "live sessions"))}
        self.runs = Counter("judgebox_executor_runs", "runs served, by status", tag_keys=(*EXECUTOR_TAGS, "status"))
        self.failures = Counter("judgebox_executor_failures", "runs the sandbox could not serve",
                                tag_keys=EXECUTOR_TAGS)
        self.rejected = Counter("judgebox_executor_rejected", "overload answers (queue full or queue_timeout)",
                                tag_keys=EXECUTOR_TAGS)

    def load(self, *, slots: int, running: int, queued: int, sessions: int) -> None:
        """Set the gauges (counts)."""
        for name, value in (("slots", slots), ("running", running), ("queued", queued), ("sessions", sessions)):
            self.gauges[name].set(value, self.tags)

    def ran(self, status: str) -> None:
        """Count one run served with ``status`` (``""``: a session call)."""
        self.runs.inc(1, {**self.tags, "status": status})

    def failed(self) -> None:
        """Count one run the sandbox could not serve."""
        self.failures.inc(1, self.tags)

    def refused(self) -> None:
        """Count one overload answer."""
        self.rejected.inc(1, self.tags)


class PoolMetrics:
    """The registry's series (made inside the registry actor); :meth:`publish` sets them from
    :meth:`~judgebox.sandbox.ray.pool.Registry.stats`'s figures."""

    def __init__(self) -> None:
        from ray.util.metrics import Counter, Gauge

        self.executors = Gauge("judgebox_pool_executors", "live executors on a node", tag_keys=("node_id",))
        self.restarts = Gauge("judgebox_pool_executor_restarts", "restarts of an executor (Ray's actor table)",
                              tag_keys=EXECUTOR_TAGS)
        self.pending = Gauge("judgebox_pool_pending", "executors not yet live")
        self.retries = Counter("judgebox_pool_retries", "runs clients sent again to another executor")
        self.dropped = Counter("judgebox_pool_dropped", "executors dropped because their node left")
        self._nodes: set[str] = set()

    def publish(self, stats: dict[str, Any]) -> None:
        """Set the gauges from a ``stats()`` dict (a node that lost its executors reads 0)."""
        nodes = dict(stats["nodes"])
        for node_id in self._nodes - set(nodes):
            nodes[node_id] = 0
        for node_id, count in nodes.items():
            self.executors.set(count, {"node_id": node_id})
        self._nodes = set(nodes)
        for e in stats["executors"]:
            self.restarts.set(e["restarts"], {"executor": e["name"], "node_id": e["node_id"] or ""})
        self.pending.set(stats["pending"])
