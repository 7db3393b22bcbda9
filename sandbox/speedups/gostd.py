"""Go's standard library compiled once into the shared build cache, and the cache's trim record.

Go 1.20 and later ship no compiled standard library: each package a program imports is compiled
into ``GOCACHE`` the first time it is used (about 10 s of CPU for ``fmt`` and what it imports, 40 s
for all of ``std``, measured here with Go 1.23). Runs read the shared cache
(:func:`judgebox.sandbox.executor.shared_go_cache`) but never write it, so a cold cache would make
every Go compile build the standard library again in a private folder. :class:`GoStd` runs
``go build std`` once per toolchain as the server's own user, in the background (``SCHED_IDLE``), with the runs' Go environment
(the same ``GOCACHE``, ``GO111MODULE=off``, ``PATH``), and leaves a stamp named after the toolchain's
identity; a cache that is already warm costs one ``stat``. It is only a speed-up: a compile during
or without it gives the same program.

Go 1.21 and later also record their last cache trim in ``<GOCACHE>/trim.txt`` and fail a build whose
trim they cannot record (``go: failed to trim cache: ... read-only file system``); a record less than
a day old makes them skip the trim. :func:`fresh_trim` keeps it younger than that: runs never trim
the shared cache, the server's own builds may.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import logging
import os
import subprocess
import threading
import time
from typing import Mapping, Optional

from .builds import run_build

log = logging.getLogger("judgebox.prebuilt")

#: Rewrite ``trim.txt`` when it is older than this (seconds); Go skips trimming for 24 hours after it.
TRIM_REFRESH_S = 6 * 3600
#: The longest ``go build std`` may take (seconds) before it is given up (a slow speed-up only).
WARM_TIMEOUT_S = 1800.0


def fresh_trim(cache: str, now: Optional[float] = None) -> None:
    """Write the current time (Unix seconds) to ``<cache>/trim.txt`` unless it was written within
    :data:`TRIM_REFRESH_S`; by atomic rename, mode 0644."""
    path = os.path.join(cache, "trim.txt")
    now = time.time() if now is None else now
    try:
        if now - os.stat(path).st_mtime < TRIM_REFRESH_S:
            return
    except FileNotFoundError:
        pass
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
    with open(tmp, "w") as f:
        f.write(f"{int(now)}\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


class GoStd:
    """The standard library of one Go toolchain in one shared build cache.

    Args:
        cache: the shared ``GOCACHE`` (owned by the server).
        go: path of the ``go`` command.
        env: the environment Go compiles of runs get (``GOCACHE`` must be ``cache``); the cache
            keys depend on it, so the warm-up uses it too.
        toolchain: the toolchain's identity (path, version, size, mtime): a new Go warms again.
    """

    def __init__(self, cache: str, go: str, env: Mapping[str, str], toolchain: str) -> None:
        self.cache, self.go, self.env = cache, go, dict(env)
        key = hashlib.sha256(repr((toolchain, sorted(self.env.items()))).encode()).hexdigest()[:16]
        self.stamp = os.path.join(cache, f"judgebox-std-{key}")
        self._future: Optional[concurrent.futures.Future] = None
        self._lock = threading.Lock()

    def warm(self) -> bool:
        """Whether the standard library is in the cache: ``go build std`` when the stamp is missing
        (blocking; in the background, :func:`~judgebox.sandbox.speedups.builds.run_build`). A failed or stopped build is logged and returns ``False`` (compiles still work)."""
        if os.path.isfile(self.stamp):
            return True
        fresh_trim(self.cache)
        try:
            done = run_build([self.go, "build", "std"], WARM_TIMEOUT_S, env=self.env, cwd=self.cache)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("compiling Go's standard library into %s failed: %s", self.cache, exc)
            return False
        if done.returncode != 0:
            log.warning("compiling Go's standard library into %s failed: %s", self.cache, done.stderr[-2000:])
            return False
        with open(self.stamp, "w") as f:
            f.write(f"{self.go}\n")
        os.chmod(self.stamp, 0o644)
        return True

    def ensure(self) -> concurrent.futures.Future:
        """Start :meth:`warm` once in a background thread; the future's result is its return value."""
        with self._lock:
            if self._future is None:
                if os.path.isfile(self.stamp):
                    self._future = concurrent.futures.Future()
                    self._future.set_result(True)
                else:
                    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebox-gostd")
                    self._future = pool.submit(self.warm)
                    pool.shutdown(wait=False)
            return self._future
