"""The MultiPL-E harness for ``D_ut`` (D with its ``unittest`` blocks; see
:mod:`judgebox.reward.harness.multipl`).

MultiPL-E's D tests are a ``unittest`` block and an empty ``void main(){}``; the program is built
with ``-funittest``. The harness puts first in the module (after a ``module`` declaration) static
imports, ``rt_options = ["testmode=run-main"]`` (the D runtime otherwise skips ``main`` after the
unittests pass) and a module constructor that runs before the unittests: it reads the nonce, moves
descriptor 1 to ``/dev/null`` keeping a copy for the marker, and sets ``assertHandler`` so that a
failed ``assert`` prints ``fail`` (``wrong_answer``) and exits 1. The tests' empty ``main`` becomes
one that prints ``ok``: it runs only when every unittest passed. An exception out of a unittest
ends the run without a marker (``runtime_error``).
"""

from __future__ import annotations

import re
import secrets

from .markers import FAIL, OK, required

_MAIN = re.compile(r"\bvoid\s+main\s*\(\s*\)\s*\{\s*\}")
_MODULE = re.compile(r"\A\s*module\s+[\w.]+\s*;[^\n]*\n?")


def build(program: str, tests: str) -> str:
    main = required(_MAIN, tests, "empty 'void main(){}'")
    tag = secrets.token_hex(8)
    nonce, out = f"judgebox_nonce_{tag}", f"judgebox_out_{tag}"

    def say(json: str) -> str:
        return (f"{{ string judgebox_line = \"\\n\" ~ {nonce} ~ \" {json}\\n\"; "
                f"core.sys.posix.unistd.write({out}, judgebox_line.ptr, judgebox_line.length); }}")

    head = ("static import core.exception;\nstatic import core.stdc.stdlib;\nstatic import core.sys.posix.fcntl;\n"
            "static import core.sys.posix.unistd;\nstatic import std.stdio;\nstatic import std.string;\n"
            "extern(C) __gshared string[] rt_options = [\"testmode=run-main\"];\n"
            f"__gshared string {nonce};\n__gshared int {out} = -1;\n"
            "shared static this() {\n"
            f"    {nonce} = std.string.strip(std.stdio.stdin.readln());\n"
            "    std.stdio.stdout.flush();\n"
            f"    {out} = core.sys.posix.unistd.dup(1);\n"
            "    int null_ = core.sys.posix.fcntl.open(\"/dev/null\", core.sys.posix.fcntl.O_WRONLY);\n"
            "    if (null_ >= 0) { core.sys.posix.unistd.dup2(null_, 1); core.sys.posix.unistd.close(null_); }\n"
            "    core.exception.assertHandler = function(string file, size_t line, string msg) nothrow {\n"
            f"        {say(FAIL)}\n        core.stdc.stdlib.exit(1);\n    }};\n}}\n")
    module = _MODULE.match(program)
    at = module.end() if module else 0
    tests = tests[: main.start()] + f"void main() {{ std.stdio.stdout.flush(); {say(OK)} }}" + tests[main.end():]
    return program[:at] + head + program[at:] + tests
