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

A header included *before* ``bits/stdc++.h`` (MultiPL-E's C++ prompts open with ``#include<assert.h>``)
is C code that GCC sees first, so that precompiled header can no longer be used (1.3 s instead of
0.3 s per compile here). When a program opens with a block of ``#include <...>`` lines of standard
headers (:data:`LEAD_HEADERS`; blank lines and comments between) that reaches ``bits/stdc++.h``, that
block gets its own precompiled header, given with ``-include`` (GCC reads it before the program's
first line). The program's own lines then read those headers a second time, which changes nothing:
each has include guards, or (``assert.h``, ``cassert``) is made to be read again (C11 7.2, C++
[using.headers]); the program's line numbers are its own. Compiler messages about code *inside* the
headers may name the precompiled block instead of the program's ``#include`` line.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import NamedTuple, Optional, Sequence

from .builds import run_build
from .compile_cache import toolchain_id
from .prebuilt import Plan, Prebuilt

#: The header that is precompiled (as written in ``#include <...>``).
HEADER = "bits/stdc++.h"
#: Source suffixes dropped from a compile command to get its flags.
_SOURCES = (".cpp", ".cc", ".cxx", ".c++", ".C")
#: Standard headers that may come before ``bits/stdc++.h`` and still share a precompiled header: each
#: has include guards in glibc/libstdc++, or is made to be read again (``assert.h``, ``cassert``).
LEAD_HEADERS = frozenset((
    "assert.h ctype.h errno.h float.h inttypes.h limits.h locale.h math.h setjmp.h signal.h stdarg.h stdbool.h "
    "stddef.h stdint.h stdio.h stdlib.h string.h time.h wchar.h wctype.h "
    "cassert cctype cerrno cfloat cinttypes climits clocale cmath csetjmp csignal cstdarg cstddef cstdint cstdio "
    "cstdlib cstring ctime cwchar cwctype "
    "algorithm array bitset chrono complex deque fstream functional iomanip ios iostream istream iterator limits "
    "list map memory numeric optional ostream queue random set sstream stack string string_view tuple "
    "type_traits unordered_map unordered_set utility valarray vector").split())
#: One item of a program's leading block: blank space, a ``//`` or ``/* */`` comment, or an angle
#: ``#include`` line (a ``//`` comment after it allowed).
_LEAD_ITEM = re.compile(r"[ \t\r\n]+|//[^\n]*|/\*.*?\*/|#[ \t]*include[ \t]*<([^<>\n]+)>[ \t]*(?://[^\n]*)?(?=\n|$)", re.S)


class PchKey(NamedTuple):
    """What a precompiled header is made for: the compiler, its options, and the standard headers a
    program includes before ``bits/stdc++.h`` (``()``: the header is the program's first C code)."""

    compiler: str
    flags: tuple[str, ...]
    lead: tuple[str, ...] = ()


def lead_headers(code: str) -> tuple[str, ...]:
    """The headers ``code`` includes before ``bits/stdc++.h`` in the block of ``#include <...>`` lines it
    opens with, when that block reaches ``bits/stdc++.h`` and each of them is in :data:`LEAD_HEADERS`;
    else ``()``.

    Refuses (``()``) anything whose meaning a line scan could miss: a backslash or ``??`` (line
    continuations, trigraphs) before ``bits/stdc++.h``, quoted includes, other directives.
    """
    names, pos = [], 0
    while pos < len(code):
        m = _LEAD_ITEM.match(code, pos)
        if m is None or "\\" in m.group(0) or "??" in m.group(0):
            return ()
        pos = m.end()
        if m.group(1) is None:
            continue
        if m.group(1) == HEADER:
            return tuple(names)
        if m.group(1) not in LEAD_HEADERS:
            return ()
        names.append(m.group(1))
    return ()


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


def pch_key(argv: Sequence[str], code: str = "") -> Optional[PchKey]:
    """The precompiled header a g++ compile command of source ``code`` can use, or ``None`` (not g++)."""
    flags = pch_flags(argv)
    return None if flags is None else PchKey(argv[0], flags, lead_headers(code))


def precompiled_headers(root: str) -> Prebuilt:
    """The precompiled headers kept in ``root``; ``args(pch_key(argv, code))`` is ``["-I", folder]``
    (no lead headers), ``["-include", "<folder>/lead.h"]``, or ``[]``."""
    return Prebuilt(root, _plan, limit=6)  # each is about 100 MiB


def _plan(key: PchKey) -> Optional[Plan]:
    compiler, flags, lead = key
    headers = [locate_header(compiler, flags, name) for name in (*lead, HEADER)]
    if None in headers:
        return None
    stats = [f"{h}:{os.stat(h).st_size}:{os.stat(h).st_mtime_ns}" for h in headers]
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60).stdout
    product = "lead.h.gch" if lead else HEADER + ".gch"

    def build(folder: str) -> None:
        source = headers[-1]
        if lead:
            source = os.path.join(folder, "lead.h")
            with open(source, "w") as f:
                f.writelines(f"#include <{name}>\n" for name in (*lead, HEADER))
        else:
            os.makedirs(os.path.join(folder, "bits"), mode=0o755)
        out = run_build([compiler, *flags, "-x", "c++-header", source, "-o", os.path.join(folder, product)], 900)
        if out.returncode != 0:
            raise RuntimeError(f"g++ exited {out.returncode}: {out.stderr[-2000:]}")

    def args(folder: str) -> list[str]:
        return ["-include", os.path.join(folder, "lead.h")] if lead else ["-I", folder]

    return Plan(ident="\0".join((toolchain_id(compiler, version), *flags, *stats)), product=product, build=build,
                args=args)


def locate_header(compiler: str, flags: Sequence[str], name: str = HEADER) -> Optional[str]:
    """Path of the header ``name`` (e.g. ``bits/stdc++.h``) that ``compiler`` with ``flags`` includes, or ``None``.

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
        path = os.path.join(line.strip(), name)
        if os.path.isfile(path):
            return path
    return None
