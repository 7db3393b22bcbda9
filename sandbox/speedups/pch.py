"""Precompiled ``bits/stdc++.h`` for g++, one per set of compile flags (see :mod:`judgebox.sandbox.speedups.prebuilt`).

Competitive-style C++ starts with ``#include <bits/stdc++.h>``; parsing it is most of the compile
(about 2 s of CPU with ``-O2`` here, 0.3 s with a precompiled header). GCC uses a precompiled header
only when it was built with the same options as the compile (GCC manual, "Using Precompiled
Headers"), so each distinct flag set (``-O2 -std=c++17``, ``-O2 -std=gnu++20``, ...) gets its own,
made from the installed header by the server's own user the first time those flags are seen.

The compile gets ``-I <folder>`` with ``<folder>/bits/stdc++.h.gch``. GCC looks for that file in each
include folder before the header itself and checks that it is valid (same flags, no conflicting
macro defined before the ``#include``); when it is not, GCC silently reads the real header. So the
precompiled header changes compile time only, never what a program means.
"""

from __future__ import annotations

import os
import subprocess
from typing import Optional, Sequence

from .compile_cache import toolchain_id
from .prebuilt import Plan, Prebuilt

#: The header that is precompiled (as written in ``#include <...>``).
HEADER = "bits/stdc++.h"
#: Source suffixes dropped from a compile command to get its flags.
_SOURCES = (".cpp", ".cc", ".cxx", ".c++", ".C")


def pch_flags(argv: Sequence[str]) -> Optional[tuple[str, ...]]:
    """The options of a ``g++`` compile command that a precompiled header must share.

    Drops the program name, ``-o <file>``, source files and ``-l`` libraries. Returns ``None`` for a compiler other
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
        elif (not arg.startswith("-") and arg.endswith(_SOURCES)) or arg.startswith("-l"):
            continue  # sources and link libraries do not shape the compile
        else:
            flags.append(arg)
    return tuple(flags)


def pch_key(argv: Sequence[str]) -> Optional[tuple[str, ...]]:
    """``(compiler, *flags)`` of a g++ compile command, or ``None`` (no precompiled header)."""
    flags = pch_flags(argv)
    return None if flags is None else (argv[0], *flags)


def precompiled_headers(root: str) -> Prebuilt:
    """The precompiled headers kept in ``root``; ``args(pch_key(argv))`` is ``["-I", folder]`` or ``[]``."""
    return Prebuilt(root, _plan, limit=4)  # each is about 100 MiB


def _plan(key: tuple[str, ...]) -> Optional[Plan]:
    compiler, flags = key[0], key[1:]
    header = locate_header(compiler, flags)
    if header is None:
        return None
    st = os.stat(header)
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60).stdout

    def build(folder: str) -> None:
        os.makedirs(os.path.join(folder, "bits"), mode=0o755)
        out = subprocess.run([compiler, *flags, "-x", "c++-header", header, "-o", os.path.join(folder, HEADER + ".gch")],
                             capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
                             preexec_fn=lambda: os.nice(10))
        if out.returncode != 0:
            raise RuntimeError(f"g++ exited {out.returncode}: {out.stderr[-2000:]}")

    return Plan(ident="\0".join((toolchain_id(compiler, version), *flags, header, str(st.st_size),
                                 str(st.st_mtime_ns))),
                product=HEADER + ".gch", build=build, args=lambda folder: ["-I", folder])


def locate_header(compiler: str, flags: Sequence[str]) -> Optional[str]:
    """Path of the ``bits/stdc++.h`` that ``compiler`` with ``flags`` includes, or ``None``.

    Walks the ``#include <...>`` search list that ``-E -v`` prints (tens of milliseconds; parsing the
    header itself would cost seconds at every server start).
    """
    try:
        out = subprocess.run([compiler, *flags, "-x", "c++", "-E", "-v", "-o", os.devnull, os.devnull],
                             capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stderr.splitlines()
    try:
        start = lines.index("#include <...> search starts here:") + 1
    except ValueError:
        return None
    for line in lines[start:]:
        if not line.startswith(" "):
            break
        path = os.path.join(line.strip(), HEADER)
        if os.path.isfile(path):
            return path
    return None
