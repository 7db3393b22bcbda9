"""Precompiled ``bits/stdc++.h`` for g++, one per set of compile flags, shared by all runs.

Competitive-style C++ starts with ``#include <bits/stdc++.h>``; parsing it is most of the compile
(about 2 s of CPU with ``-O2`` here, 0.3 s with a precompiled header). GCC uses a precompiled header
only when it was built with the same options as the compile (see GCC's manual, "Using Precompiled
Headers"), so each distinct flag set (``-O2 -std=c++17``, ``-O2 -std=gnu++20``, ...) gets its own,
built from the installed header by the server's own user, in the background, the first time those
flags are seen; compiles run without one until it is ready.

Layout: ``<root>/<id>/bits/stdc++.h.gch`` where ``<id>`` hashes the compiler's identity, the flags and
the header's path, size and mtime; the compile gets ``-I <root>/<id>``. GCC looks for
``bits/stdc++.h.gch`` in each include folder before the header itself and checks that it is valid
(same flags, no conflicting macro defined before the ``#include``); when it is not, it silently
goes on to the real header. So the precompiled header changes compile time only, never what a
program means. Folders are 0755 and files 0644, owned by the server (run uids read, never write).
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import threading
import uuid
from typing import Optional, Sequence

from .compile_cache import toolchain_id

log = logging.getLogger("judgebox.pch")

#: The header that is precompiled (as written in ``#include <...>``).
HEADER = "bits/stdc++.h"
#: Source suffixes dropped from a compile command to get its flags.
_SOURCES = (".cpp", ".cc", ".cxx", ".c++", ".C")
#: At most this many flag sets get a precompiled header (each is about 100 MiB).
MAX_FLAG_SETS = 4


def pch_flags(argv: Sequence[str]) -> Optional[tuple[str, ...]]:
    """The options of a ``g++`` compile command that a precompiled header must share.

    Drops the program name, ``-o <file>`` and source files. Returns ``None`` for a compiler other
    than g++ (``clang++`` precompiled headers are a different format).
    """
    if not argv or os.path.basename(argv[0]) not in ("g++", "c++"):
        return None
    flags, skip = [], False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif not arg.startswith("-") and arg.endswith(_SOURCES):
            continue
        else:
            flags.append(arg)
    return tuple(flags)


class PrecompiledHeaders:
    """The precompiled headers of one server (thread-safe; builds run one at a time, niced).

    Args:
        root: folder of the headers (made 0755; a run uid cannot write it).
    """

    def __init__(self, root: str) -> None:
        os.makedirs(root, mode=0o755, exist_ok=True)
        os.chmod(root, 0o755)
        self.root = root
        self._lock = threading.RLock()
        self._ready: dict[tuple[str, ...], Optional[str]] = {}  # argv key -> include folder (None: failed)
        self._pending: dict[tuple[str, ...], concurrent.futures.Future] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebox-pch")

    def include_args(self, argv: Sequence[str]) -> list[str]:
        """``["-I", folder]`` to add to ``argv`` when its precompiled header is ready, else ``[]``
        (and its build is started in the background if it has not been yet)."""
        flags = pch_flags(argv)
        if flags is None:
            return []
        key = (argv[0], *flags)
        with self._lock:
            if key in self._ready:
                folder = self._ready[key]
                return ["-I", folder] if folder else []
        self.ensure(key)
        return []

    def ensure(self, argv: Sequence[str]) -> concurrent.futures.Future:
        """Start (once) building the header for the flags of the g++ command ``argv``; the future's
        result is the include folder, or ``None`` when none can be built (another compiler, a build
        error, too many flag sets)."""
        flags = pch_flags(argv)
        if flags is None:
            done: concurrent.futures.Future = concurrent.futures.Future()
            done.set_result(None)
            return done
        key = (argv[0], *flags)
        with self._lock:
            if key in self._ready:
                done = concurrent.futures.Future()
                done.set_result(self._ready[key])
                return done
            if key not in self._pending:
                if len(self._pending) + len(self._ready) >= MAX_FLAG_SETS:
                    self._ready[key] = None
                    return self.ensure(argv)
                future = self._pending[key] = self._pool.submit(self._build, key[0], key[1:])
                future.add_done_callback(lambda f, k=key: self._finished(k, f))  # may run here: RLock
            return self._pending.get(key) or self.ensure(argv)

    def _finished(self, key: tuple[str, ...], future: concurrent.futures.Future) -> None:
        with self._lock:
            self._pending.pop(key, None)
            self._ready[key] = None if future.exception() else future.result()

    def _build(self, compiler: str, flags: Sequence[str]) -> Optional[str]:
        header = locate_header(compiler, flags)
        if header is None:
            return None
        st = os.stat(header)
        ident = "\0".join((toolchain_id(compiler, _version(compiler)), *flags, header,
                           str(st.st_size), str(st.st_mtime_ns)))
        folder = os.path.join(self.root, hashlib.sha256(ident.encode()).hexdigest()[:24])
        if os.path.isfile(os.path.join(folder, HEADER + ".gch")):
            return folder
        with open(folder + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another server on this host may be building it
            if os.path.isfile(os.path.join(folder, HEADER + ".gch")):
                return folder
            tmp = os.path.join(self.root, f"tmp-{uuid.uuid4().hex}")
            os.makedirs(os.path.join(tmp, "bits"), mode=0o755)
            try:
                out = subprocess.run([compiler, *flags, "-x", "c++-header", header, "-o",
                                      os.path.join(tmp, HEADER + ".gch")],
                                     capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
                                     preexec_fn=lambda: os.nice(10))
                if out.returncode != 0:
                    log.warning("precompiling %s with %s failed: %s", header, " ".join(flags), out.stderr[-2000:])
                    return None
                os.chmod(os.path.join(tmp, HEADER + ".gch"), 0o644)
                os.rename(tmp, folder)
            except (OSError, subprocess.SubprocessError) as exc:
                log.warning("precompiling %s failed: %s", header, exc)
                return None
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return folder


def _version(compiler: str) -> str:
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def locate_header(compiler: str, flags: Sequence[str]) -> Optional[str]:
    """Path of the ``bits/stdc++.h`` that ``compiler`` with ``flags`` includes (``-H`` trace), or ``None``."""
    try:
        out = subprocess.run([compiler, *flags, "-x", "c++", "-fsyntax-only", "-H", "-"],
                             input=f"#include <{HEADER}>\n", capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.stderr.splitlines()[0] if out.returncode == 0 and out.stderr else ""
    path = first.removeprefix(". ").strip()
    return path if path.endswith(HEADER) and os.path.isfile(path) else None
