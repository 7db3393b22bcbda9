"""Per-command limits as data: the verdict time limit, the wall cap and the rlimits they become.

Used by the engine (:mod:`judgebox.sandbox.process` enforces the times) and by the isolation (the child
applies :func:`command_rlimits`); it imports nothing of judgebox.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional


@dataclass
class RunLimits:
    """Per-command limits. Times in seconds, sizes in bytes; ``None`` means no limit of that kind.

    ``time_limit`` (T) is the verdict limit. Two rules, chosen by ``wall_clock``:

    * the run step's (``wall_clock=True``; SandboxFusion's and verl's ``run_timeout`` is wall-clock
      time): a command is out of time once its CPU time is over T, **or** its wall time less the
      time it spent waiting for a CPU (:func:`judgebox.sandbox.process.runqueue_wait`) is over T.
      A sleeping or blocked program is stopped at T; a program starved by a loaded host keeps its
      honest verdict (BUG-031), up to the hard cap ``10 * wall_limit``;
    * the compile step's (``wall_clock=False``): a command is within T while its CPU time **or** its
      wall time is within it (a compiler's helper threads, such as javac's JIT, may burn more CPU
      than wall time), and it is killed at the wall cap ``wall_limit``, stretched by its CPU wait
      up to ``10 * wall_limit``.
    """

    time_limit: float
    wall_limit: float
    memory_bytes: Optional[int] = None
    max_processes: Optional[int] = None
    max_file_size: Optional[int] = None
    max_open_files: Optional[int] = None
    stack_bytes: Optional[int] = None
    output_limit: int = 1 << 20
    wall_clock: bool = True

    @classmethod
    def for_timeout(cls, timeout: float, **kw) -> "RunLimits":
        """Limits for a request timeout: wall cap = ``1.25 * timeout + 0.25`` s (1 s -> 1.5 s)."""
        return cls(time_limit=timeout, wall_limit=timeout * 1.25 + 0.25, **kw)



def command_rlimits(limits: RunLimits) -> dict:
    """The rlimits of a command under ``limits`` for :func:`judgebox.sandbox.isolation.childsetup.apply_rlimits`:
    ``RLIMIT_CPU`` at the wall cap rounded up plus 1 s (a backstop: the parent enforces the times).

    The memory limit is *not* applied as ``RLIMIT_AS`` here: an address-space limit stops threaded
    runtimes (OpenBLAS, JVM, Go, Node) from starting. The isolation layer enforces memory with a
    cgroup, or with ``RLIMIT_DATA`` where no cgroup can be made.
    """
    return {"cpu": int(math.ceil(limits.wall_limit)) + 1, "fsize": limits.max_file_size,
            "nofile": limits.max_open_files, "stack": limits.stack_bytes}
