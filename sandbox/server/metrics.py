"""Prometheus metrics of one server (served at ``GET /metrics`` in the text exposition format).

Names follow the Prometheus naming guide (``_total`` counters, ``_seconds`` histograms):

* ``judgebox_runs_total{language,status}``: finished requests by language and ``RunStatus``.
* ``judgebox_rejections_total{reason}``: requests answered 504 (``queue_full``, ``queue_timeout``,
  ``max_sessions``, ``fd_headroom``: a session the server's descriptors had no room for;
  ``batch_budget``: a batch item its batch's answer had no room for).
* ``judgebox_sessions``: live sessions (kernels), those starting included.
* ``judgebox_cancelled_total{stage}``: requests whose client disconnected before the answer,
  ``queued`` (never started) or ``running`` (its processes were killed).
* ``judgebox_queue_depth``, ``judgebox_in_flight``: requests waiting for a slot / holding one now.
* ``judgebox_queue_wait_seconds``: time from arrival to getting a slot.
* ``judgebox_run_seconds{language}``: time a request held its slot (compile and every run step).
* ``judgebox_info{pod}``: constant 1, carrying the instance name (``executor_pod_name``).
* ``judgebox_forkserver_runs_total{how}``: Python runs the fork-server forked (``forked``) and those
  it could not start, which were spawned instead (``fallback``); ``judgebox_forkserver_starts_total``:
  fork-servers started (the first, rotations, replacements of failed ones).
"""

from __future__ import annotations

from typing import Callable, Optional

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily

#: Histogram buckets in seconds: from a warm ``print(1)`` to the longest allowed run.
_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    """The metric families of one server, in a registry of their own (so apps never collide).

    Args:
        pod_name: the instance name, exported as ``judgebox_info{pod=...}``.
        waiting, running: callables returning the admission queue depth and in-flight count.
        sessions: callable returning the number of live sessions.
        forkserver: callable returning the fork-server's counts (:meth:`judgebox.sandbox.speedups.forkserver.ForkServer.stats`),
            or ``None`` when it is off.
    """

    def __init__(self, pod_name: str, waiting: Callable[[], int], running: Callable[[], int],
                 sessions: Callable[[], int] = lambda: 0,
                 forkserver: Optional[Callable[[], dict[str, int]]] = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.runs = Counter("judgebox_runs", "Finished requests", ["language", "status"], registry=r)
        self.rejections = Counter("judgebox_rejections", "Requests answered 504", ["reason"], registry=r)
        self.cancelled = Counter("judgebox_cancelled", "Requests whose client disconnected", ["stage"], registry=r)
        Gauge("judgebox_queue_depth", "Requests waiting for a slot", registry=r).set_function(waiting)
        Gauge("judgebox_in_flight", "Requests holding a slot", registry=r).set_function(running)
        Gauge("judgebox_sessions", "Live sessions", registry=r).set_function(sessions)
        self.queue_wait = Histogram("judgebox_queue_wait_seconds", "Wait for a slot (s)",
                                    buckets=_BUCKETS, registry=r)
        self.run_time = Histogram("judgebox_run_seconds", "Time holding a slot (s)", ["language"],
                                  buckets=_BUCKETS, registry=r)
        Gauge("judgebox_info", "Instance name", ["pod"], registry=r).labels(pod=pod_name).set(1)
        if forkserver is not None:
            r.register(_ForkServerCollector(forkserver))

    def render(self) -> bytes:
        """The current values in the Prometheus text format (``CONTENT_TYPE``)."""
        return generate_latest(self.registry)


class _ForkServerCollector:
    """The fork-server's counts, read when ``/metrics`` is scraped."""

    def __init__(self, stats: Callable[[], dict[str, int]]) -> None:
        self._stats = stats

    def collect(self):
        s = self._stats()
        runs = CounterMetricFamily("judgebox_forkserver_runs", "Python runs by how they started", labels=["how"])
        runs.add_metric(["forked"], s["forked"])
        runs.add_metric(["fallback"], s["fallbacks"])
        starts = CounterMetricFamily("judgebox_forkserver_starts", "Fork-servers started")
        starts.add_metric([], s["started"])
        return [runs, starts]
