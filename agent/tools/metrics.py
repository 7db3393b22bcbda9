"""Per-tool call counters: calls, errors, timeouts, invalid arguments, abandoned calls, latency.

One :class:`ToolMetrics` may be shared by every trajectory of a step (pass it to each
:class:`judgebox.agent.tools.TrajectoryTools`), so the counts are the step's. Thread-safe (a lock): trajectories
may run on several event loops.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Optional

__all__ = ["ToolMetrics", "ToolStats"]


@dataclass
class ToolStats:
    """Counters of one tool. Latencies are seconds, measured by the caller around the whole call.

    ``errors`` counts calls whose status is ``error`` or ``infra_error``; ``timeouts`` those that
    ran past the per-call timeout; ``abandoned`` the timed-out calls whose work could not be stopped
    (a sync function in a thread; :attr:`judgebox.agent.tools.FunctionTool.abandoned_running` tells how many
    of those still run).
    """

    calls: int = 0
    errors: int = 0
    infra_errors: int = 0
    timeouts: int = 0
    invalid_arguments: int = 0
    abandoned: int = 0
    latency_s_total: float = 0.0
    latency_s_max: float = 0.0

    @property
    def latency_s_mean(self) -> Optional[float]:
        return self.latency_s_total / self.calls if self.calls else None


class ToolMetrics:
    """Counters for every tool by name; :meth:`snapshot` gives plain dicts for logging."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: dict[str, ToolStats] = {}

    def _get(self, name: str) -> ToolStats:
        return self._stats.setdefault(name, ToolStats())

    def record(self, name: str, status: str, latency_s: float) -> None:
        """Count one finished call of ``name`` with its ``ToolCallResult.status`` and latency."""
        with self._lock:
            s = self._get(name)
            s.calls += 1
            s.latency_s_total += latency_s
            s.latency_s_max = max(s.latency_s_max, latency_s)
            if status in ("error", "infra_error"):
                s.errors += 1
            if status == "infra_error":
                s.infra_errors += 1
            elif status == "timeout":
                s.timeouts += 1
            elif status == "invalid_arguments":
                s.invalid_arguments += 1

    def abandon(self, name: str) -> None:
        """A timed-out call of ``name`` keeps running where it cannot be stopped."""
        with self._lock:
            self._get(name).abandoned += 1

    def get(self, name: str) -> ToolStats:
        """A copy of ``name``'s counters (zeros for a tool never called)."""
        with self._lock:
            return ToolStats(**asdict(self._stats.get(name, ToolStats())))

    def snapshot(self) -> dict[str, dict[str, float]]:
        """``{tool: {calls, errors, ..., latency_s_mean}}`` for every tool called so far."""
        with self._lock:
            return {name: {**asdict(s), "latency_s_mean": s.latency_s_mean} for name, s in self._stats.items()}

    def totals(self) -> dict[str, int]:
        """``{"tool_calls", "tool_errors", "tool_timeouts"}`` summed over tools (the loop's names)."""
        with self._lock:
            stats = list(self._stats.values())
        return {"tool_calls": sum(s.calls for s in stats), "tool_errors": sum(s.errors for s in stats),
                "tool_timeouts": sum(s.timeouts for s in stats)}
