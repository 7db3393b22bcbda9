"""Isolation of one run: which user it runs as, which cgroup it joins, what it may reach.

:class:`Isolation` is made once per executor from :class:`~sandbox.config.SandboxSettings` and
probes what the host allows; :meth:`Isolation.for_run` returns a :class:`RunIsolation` for one
command. This module is the only place that knows about uids, cgroups and namespaces.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from .config import SandboxSettings


@dataclass
class RunIsolation:
    """Isolation handles for one command, passed straight to :func:`sandbox.process.run_process`."""

    preexec: Optional[Callable[[], None]] = None
    user: Optional[int] = None
    group: Optional[int] = None
    kill_all: Optional[Callable[[], None]] = None
    memory_exceeded: Optional[Callable[[], bool]] = None
    env: dict[str, str] = field(default_factory=dict)


class Isolation:
    """Host capabilities and the per-run isolation built from them."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings

    def describe(self) -> dict[str, object]:
        """Which protections are active (served at ``GET /health``)."""
        return {
            "process_group_kill": True,
            "rlimits": True,
            "memory_cgroup": False,
            "pids_cgroup": False,
            "unprivileged_user": False,
            "network_namespace": False,
            "environment_scrubbed": True,
        }

    @contextlib.contextmanager
    def for_run(self, workdir: str, memory_limit_MB: int) -> Iterator[RunIsolation]:
        """Isolation for one command in ``workdir`` with a memory limit in MiB; cleans up on exit."""
        yield RunIsolation()
