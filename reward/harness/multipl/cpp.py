"""The MultiPL-E harness for ``cpp`` (see :mod:`judgebox.reward.harness.multipl`)."""

from __future__ import annotations

import re
import secrets

from .markers import FAIL, OK, after_match

#: A preprocessing directive's ``#``: also the digraph ``%:`` and the trigraph ``??=``.
_CPP_DEFINE = re.compile(r"(?:#|%:|\?\?=)\s*define\s+([A-Za-z_]\w*)")


def _cpp_reset(program: str, tests: str, fail: str) -> str:
    """Directives that go between the solution and the tests: every macro the program ``#define``s
    whose name the tests use is ``#undef``'d (``#define assert(x)``, ``#define candidate(...) true``),
    and ``assert`` is defined again, to call ``fail`` (the unit's function of a per-run random name)."""
    spliced = program.replace("\\\n", "").replace("\\\r\n", "")
    undef = sorted(set(_CPP_DEFINE.findall(spliced)) & set(re.findall(r"[A-Za-z_]\w*", tests)) | {"assert"})
    return ("\n" + "".join(f"#undef {name}\n" for name in undef)
            + f"#define assert(...) ((__VA_ARGS__) ? (void)0 : {fail}())\n")


#: The block of angle ``#include`` lines (and blank lines) a C++ program opens with.
_CPP_INCLUDES = re.compile(r"(?:[ \t]*(?:#[ \t]*include[ \t]*<[^<>\n]+>[ \t]*)?\n)*")


def build(program: str, tests: str) -> str:
    # The nonce is read by the first static initializer of the unit (C++ runs a unit's dynamic
    # initializers in definition order), before any initializer of the solution can read stdin,
    # into a variable whose name is random per run, so the solution cannot name it.
    # The same initializer moves descriptor 1 to /dev/null and keeps a copy for the marker.
    # A failed assert prints the failure marker and ends the run by __builtin_trap(), no library
    # function, so a solution's own __assert_fail or abort cannot make it return.
    var = f"judgebox_nonce_{secrets.token_hex(8)}"
    out = f"judgebox_out_{secrets.token_hex(8)}"
    fail = f"judgebox_fail_{secrets.token_hex(8)}"
    reader = (f"static int {out} = -1;\n"
              f"static std::string {var} = [] {{ std::string s; std::getline(std::cin, s); {out} = dup(1); "
              "int null_ = open(\"/dev/null\", O_WRONLY); if (null_ >= 0) { dup2(null_, 1); close(null_); } "
              "return s; }();\n"
              f"[[noreturn]] static void {fail}() {{ std::string line = \"\\n\" + {var} + \" {FAIL}\\n\"; "
              f"if (write({out}, line.data(), line.size()) < 0) {{}} __builtin_trap(); }}\n")
    guard = ("struct JudgeboxDone_ { std::string n; int fd; ~JudgeboxDone_() { std::cout.flush(); "
             "std::string line = \"\\n\" + n + \" " + OK + "\\n\"; "
             f"if (write(fd, line.data(), line.size()) < 0) {{}} }} }} judgebox_done_{{{var}, {out}}};")
    tests = after_match(r"\bint\s+main\s*\([^)]*\)\s*\{", tests, guard, "'int main() {'")
    # the program's own opening #include block goes first: a precompiled header of it (MultiPL-E's
    # ``<assert.h>``, ``<bits/stdc++.h>``) can then be used; it defines nothing of the program's
    includes = _CPP_INCLUDES.match(program).group(0)
    return (includes + "#include <iostream>\n#include <string>\n#include <fcntl.h>\n#include <unistd.h>\n"
            + reader + program[len(includes):] + _cpp_reset(program, tests, fail) + tests)
