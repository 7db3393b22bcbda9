"""Toolchain artifacts that make compiles faster, built once per machine and shared by all runs.

A precompiled ``bits/stdc++.h`` (:mod:`judgebox.sandbox.speedups.pch`) and a class-data archive of ``javac``
(:mod:`judgebox.sandbox.speedups.jvm`) are both: expensive to make once, cheap to use, keyed by the exact toolchain
and options they were made for, and only ever a speed-up (a compile without one gives a program
that behaves the same). :class:`Prebuilt` builds each in the background the first time it is asked
for (compiles go without it until it is ready), in a private folder renamed into place, under a
file lock so that two servers on one host build it once. Folders are 0755 and files 0644, owned by
the server: run uids read them, never write them.
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import hashlib
import logging
import os
import shutil
import threading
import uuid
from dataclasses import dataclass
from typing import Callable, Hashable, Optional

log = logging.getLogger("judgebox.prebuilt")


@dataclass(frozen=True)
class Plan:
    """How to make one artifact.

    Attributes:
        ident: everything the artifact depends on (toolchain identity, options, inputs' sizes and
            mtimes); its folder is named after this text's SHA-256.
        product: path, relative to the folder, of the file whose presence means "built".
        build: writes the artifact into the (empty, 0755) folder it is given; raises on failure.
        args: the options that make a command use the artifact in the given folder.
    """

    ident: str
    product: str
    build: Callable[[str], None]
    args: Callable[[str], list[str]]


class Prebuilt:
    """One kind of artifact, any number of variants (thread-safe; builds run one at a time, in the
    background: :func:`~judgebox.sandbox.speedups.builds.run_build`).

    Args:
        root: folder of the artifacts (made 0755).
        planner: ``key -> Plan`` (or ``None`` when the key gets no artifact); runs in the build
            thread, so it may start processes.
        limit: at most this many variants (each may be large); later keys get none.
    """

    def __init__(self, root: str, planner: Callable[[Hashable], Optional[Plan]], limit: int = 4) -> None:
        os.makedirs(root, mode=0o755, exist_ok=True)
        os.chmod(root, 0o755)
        self.root = root
        self.limit = limit
        self._planner = planner
        self._lock = threading.RLock()
        self._ready: dict[Hashable, list[str]] = {}  # key -> args ([] when none could be built)
        self._pending: dict[Hashable, concurrent.futures.Future] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebox-prebuilt")

    def args(self, key: Hashable) -> list[str]:
        """The options for ``key``'s artifact when it is ready, else ``[]`` (and its build starts in
        the background if it has not yet)."""
        with self._lock:
            if key in self._ready:
                return list(self._ready[key])
        self.ensure(key)
        return []

    def ensure(self, key: Hashable) -> concurrent.futures.Future:
        """Start (once) building ``key``'s artifact; the future's result is its options (``[]``: none)."""
        with self._lock:
            if key not in self._ready and key not in self._pending:
                if len(self._pending) + len(self._ready) >= self.limit:
                    self._ready[key] = []
                else:
                    future = self._pending[key] = self._pool.submit(self._make, key)
                    future.add_done_callback(lambda f, k=key: self._finished(k, f))  # may run here: RLock
            if key in self._ready:
                done: concurrent.futures.Future = concurrent.futures.Future()
                done.set_result(list(self._ready[key]))
                return done
            return self._pending[key]

    def _finished(self, key: Hashable, future: concurrent.futures.Future) -> None:
        with self._lock:
            self._pending.pop(key, None)
            self._ready[key] = [] if future.exception() else future.result()

    def _make(self, key: Hashable) -> list[str]:
        plan = self._planner(key)
        if plan is None:
            return []
        folder = os.path.join(self.root, hashlib.sha256(plan.ident.encode()).hexdigest()[:24])
        done = os.path.join(folder, plan.product)
        if not os.path.isfile(done):
            with open(folder + ".lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another server on this host may be building it
                if not os.path.isfile(done):
                    tmp = os.path.join(self.root, f"tmp-{uuid.uuid4().hex}")
                    os.makedirs(tmp, mode=0o755)
                    try:
                        plan.build(tmp)
                        for base, _, names in os.walk(tmp):
                            for name in names:
                                os.chmod(os.path.join(base, name), 0o644)
                        os.rename(tmp, folder)
                    except Exception as exc:  # noqa: BLE001 - a failed speed-up only costs speed
                        log.warning("building %s failed: %s", plan.product, exc)
                        return []
                    finally:
                        shutil.rmtree(tmp, ignore_errors=True)
        return plan.args(folder)
