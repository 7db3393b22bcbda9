"""Test programs in other languages (MultiPL-E ``prompt`` + completion + ``tests``).

The program is ``prefix + code + tests`` in one compilation unit (that is MultiPL-E's format: the
``tests`` text closes the prompt's function). Each language only declares how the program learns
the nonce (from stdin, first line, read before the tests run) and how it prints
``<nonce> {"status": "ok"}`` *after* the tests completed:

- ``cpp``: the nonce is read by the unit's first static initializer (before any of the solution's)
  into a per-run randomly named variable; a guard object declared first in the tests' ``main``
  prints in its destructor, which runs on a normal return from ``main`` only (not on ``exit``,
  ``abort`` or a failed ``assert``); before the tests, the solution's macros that the tests name
  are ``#undef``'d and ``assert`` is the harness's own (a failed one prints ``{"status": "fail"}``
  and traps);
- ``java``: the tests' ``main`` is renamed and called from a runner class that prints afterwards;
- ``go``: the ``TestXxx`` functions run from a generated ``main`` via ``testing.Main`` (``go test``
  hides a passing binary's output); a last test prints when every test returned unfailed;
- ``nodejs``/``bash``: a statement after the tests prints (Node.js: the tests' ``require`` is the
  module's own, taken before the solution runs, and the ``assert`` module is frozen; bash: the
  solution runs in a subshell per call of its function, never in the tests' shell);
- ``rust``: the tests' ``main`` is renamed and called from a new ``main`` that prints afterwards.

In every language the harness keeps the program's stdout for itself and sends the solution's and
the tests' own prints to ``/dev/null`` (as the Python harness does, and as HumanEval's and
MultiPL-E's harnesses ignore them): ``cpp`` and ``bash`` move descriptor 1 (the marker goes to a
copy of it), ``java`` ``System.setOut``, ``go`` ``os.Stdout``, ``nodejs`` ``process.stdout.write``,
``rust`` descriptor 1 by ``dup``/``dup2``. A solution that prints megabytes of debug output no
longer pushes the marker past the sandbox's output limit.

A failed assertion of the tests prints ``<nonce> {"status": "fail"}`` (``wrong_answer``) in C++
(the harness's ``assert``), Java (``AssertionError`` out of the tests' ``main``), Go (a test marked
failed), Rust (a panic whose message starts with ``assertion``) and Node.js (an uncaught
``AssertionError``); any other failure, and every failure in bash, is a ``runtime_error``.

Passing needs the marker **and** exit status 0. The nonce lives in the same process as the
solution, so deliberate introspection could forge it; every early exit (``exit(0)``,
``System.exit``, ``os.Exit``, ``process.exit``) fails.
"""

from __future__ import annotations

import re
import secrets
from typing import Callable

from judgebox.reward.spec import TestDataError

#: The completion marker's JSON, and the same escaped for a C-like string literal.
_OK_JSON = '{"status": "ok"}'
_OK = _OK_JSON.replace('"', '\\"')
#: The failed-test marker (a test's assertion failed: wrong_answer), and the same escaped.
_FAIL_JSON = '{"status": "fail"}'
_FAIL = _FAIL_JSON.replace('"', '\\"')


def _after_match(pattern: str, text: str, insert: str, what: str) -> str:
    m = re.search(pattern, text)
    if not m:
        raise TestDataError(f"harness: the tests have no {what}; cannot add the completion marker")
    return text[: m.end()] + insert + text[m.end():]


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


def _cpp(program: str, tests: str) -> str:
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
              f"[[noreturn]] static void {fail}() {{ std::string line = \"\\n\" + {var} + \" {_FAIL}\\n\"; "
              f"if (write({out}, line.data(), line.size()) < 0) {{}} __builtin_trap(); }}\n")
    guard = ("struct JudgeboxDone_ { std::string n; int fd; ~JudgeboxDone_() { std::cout.flush(); "
             "std::string line = \"\\n\" + n + \" " + _OK + "\\n\"; "
             f"if (write(fd, line.data(), line.size()) < 0) {{}} }} }} judgebox_done_{{{var}, {out}}};")
    tests = _after_match(r"\bint\s+main\s*\([^)]*\)\s*\{", tests, guard, "'int main() {'")
    # the program's own opening #include block goes first: a precompiled header of it (MultiPL-E's
    # ``<assert.h>``, ``<bits/stdc++.h>``) can then be used; it defines nothing of the program's
    includes = _CPP_INCLUDES.match(program).group(0)
    return (includes + "#include <iostream>\n#include <string>\n#include <fcntl.h>\n#include <unistd.h>\n"
            + reader + program[len(includes):] + _cpp_reset(program, tests, fail) + tests)


def _java(program: str, tests: str) -> str:
    full = program + tests
    m = re.search(r"public\s+static\s+void\s+main\s*\(\s*String\s*\[\]\s*(\w+)\s*\)", full)
    if not m:
        raise TestDataError("harness: the tests have no 'public static void main(String[] args)'")
    owner = re.findall(r"\bclass\s+(\w+)", full[: m.start()])
    if not owner:
        raise TestDataError("harness: the tests' main is not inside a class")
    full = full[: m.start()] + f"public static void judgeboxTestsMain(String[] {m.group(1)})" + full[m.end():]
    return full + (
        "\nclass JudgeboxRunner {\n    public static void main(String[] args) throws Exception {\n"
        "        String nonce = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();\n"
        "        java.io.PrintStream out = System.out;\n"
        "        System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));\n"
        f"        try {{\n            {owner[-1]}.judgeboxTestsMain(args);\n        }} catch (AssertionError e) {{\n"
        f"            out.println(\"\\n\" + nonce + \" {_FAIL}\");\n            out.flush();\n            throw e;\n        }}\n"
        f"        out.println(\"\\n\" + nonce + \" {_OK}\");\n        out.flush();\n    }}\n}}\n")


def _go(program: str, tests: str) -> str:
    # ``go test`` hides a passing binary's stdout, so the tests run as a plain program: package
    # main, a main() that runs the Test* functions through testing.Main, each wrapped to count a
    # pass only when it returned without failing, then a last test that prints the marker.
    full = re.sub(r"(?m)^(\s*)package\s+\w+", r"\1package main", program + tests, count=1)
    names = re.findall(r"(?m)^func\s+(Test\w+)\s*\(\s*\w+\s+\*testing\.T\s*\)", full)
    if "package main" not in full or not names:
        raise TestDataError("harness: Go tests need a package clause and func TestXxx(t *testing.T)")
    full = _after_match(r"(?m)^\s*package main[^\n]*\n", full,
                        'import judgeboxos "os"\nimport judgeboxtesting "testing"\n', "package clause")
    wrapped = "".join(f"\t\t{{Name: \"{n}\", F: func(t *judgeboxtesting.T) {{ {n}(t); if !t.Failed() {{ passed++ }} }}}},\n"
                      for n in names)
    return full + (
        "\nfunc main() {\n\tnonce := make([]byte, 0, 64)\n\tone := make([]byte, 1)\n"
        "\tfor {\n\t\tn, err := judgeboxos.Stdin.Read(one)\n\t\tif n == 0 || err != nil || one[0] == '\\n' {\n"
        "\t\t\tbreak\n\t\t}\n\t\tnonce = append(nonce, one[0])\n\t}\n\tpassed := 0\n"
        "\tout := judgeboxos.Stdout\n"
        "\tif null, err := judgeboxos.OpenFile(judgeboxos.DevNull, judgeboxos.O_WRONLY, 0); err == nil {\n"
        "\t\tjudgeboxos.Stdout = null\n\t}\n"
        "\ttests := []judgeboxtesting.InternalTest{\n" + wrapped +
        f"\t\t{{Name: \"TestJudgeboxMarker\", F: func(t *judgeboxtesting.T) {{ if passed == {len(names)} {{ "
        f"out.WriteString(\"\\n\" + string(nonce) + \" {_OK}\\n\") }} else {{ "
        f"out.WriteString(\"\\n\" + string(nonce) + \" {_FAIL}\\n\") }} }}}},\n\t}}\n"
        "\tjudgeboxtesting.Main(func(pat, str string) (bool, error) { return true, nil }, tests, nil, nil)\n}\n")


def _nodejs(program: str, tests: str) -> str:
    # Names random per run: the solution cannot name them. The module's own require is taken before
    # the solution runs and serves the tests' require() calls (a hoisted `function require` of the
    # solution does not reach them; one that shadows `module` makes the first line throw), and the
    # assert module is frozen, so `require('node:assert').deepEqual = () => {}` changes nothing.
    var = f"judgeboxNonce_{secrets.token_hex(8)}"
    out = f"judgeboxWrite_{secrets.token_hex(8)}"
    req = f"judgeboxRequire_{secrets.token_hex(8)}"
    tests = re.sub(r"\brequire\s*\(", f"{req}(", tests)
    return (f"const {req} = module.require.bind(module);\n"
            f"Object.freeze({req}('node:assert')); Object.freeze({req}('node:assert').strict);\n"
            f"const {var} = {req}('fs').readFileSync(0, 'utf8').split('\\n')[0].trim();\n"
            f"const {out} = process.stdout.write.bind(process.stdout);\n"
            "process.stdout.write = function () { return true; };\n"
            f"process.on('uncaughtException', (e) => {{ process.exitCode = 1; console.error(e); "
            f"if (e instanceof {req}('node:assert').AssertionError) {out}(\"\\n\" + {var} + \" {_FAIL}\\n\"); }});\n"
            + program + tests + f"\n{out}(\"\\n\" + {var} + \" {_OK}\\n\");\n")


def _rust(program: str, tests: str) -> str:
    tests = re.sub(r"\bfn\s+main\s*\(\s*\)", "fn judgebox_tests_main()", tests, count=1)
    if "judgebox_tests_main" not in tests:
        raise TestDataError("harness: the tests have no 'fn main()'; cannot add the completion marker")
    return program + tests + (
        "\nfn main() {\n    extern \"C\" { fn dup(fd: i32) -> i32; fn dup2(fd: i32, to: i32) -> i32; }\n"
        "    use std::io::Write;\n    use std::os::unix::io::{FromRawFd, IntoRawFd};\n"
        "    let mut nonce = String::new();\n    let _ = std::io::stdin().read_line(&mut nonce);\n"
        "    let out = unsafe { dup(1) };\n"
        "    if let Ok(null) = std::fs::OpenOptions::new().write(true).open(\"/dev/null\") {\n"
        "        unsafe { dup2(null.into_raw_fd(), 1); }\n    }\n"
        "    let mut out = unsafe { std::fs::File::from_raw_fd(out) };\n"
        "    if let Err(panic) = std::panic::catch_unwind(judgebox_tests_main) {\n"
        "        let text = panic.downcast_ref::<String>().map(|s| s.as_str())\n"
        "            .or_else(|| panic.downcast_ref::<&str>().copied()).unwrap_or(\"\");\n"
        "        if text.starts_with(\"assertion\") {\n"
        "            let _ = write!(out, \"\\n{} {{\\\"status\\\": \\\"fail\\\"}}\\n\", nonce.trim());\n        }\n"
        "        std::process::exit(101);\n    }\n"
        "    let _ = std::io::stdout().flush();\n"
        "    let _ = write!(out, \"\\n{} {{\\\"status\\\": \\\"ok\\\"}}\\n\", nonce.trim());\n}\n")


def _bash(program: str, tests: str) -> str:
    # The tests' shell never runs the solution: the solution's text (up to the tests' `candidate()`)
    # is kept in a variable, and each call of the entry function runs it in a subshell, with the
    # solution's own output and the marker's descriptor closed, then calls its function there. A
    # solution's functions and aliases (`set() { :; }`, `alias '[['=...`) stay in that subshell.
    var = f"JUDGEBOX_NONCE_{secrets.token_hex(8)}"  # random per run: the solution cannot name it
    body = program + tests
    m = re.search(r"(?m)^candidate\(\)\s*\{\s*(\w+)", body)
    if m:  # MultiPL-E's layout; without it the solution shares the tests' shell
        code, entry, end = f"JUDGEBOX_SOLUTION_{secrets.token_hex(8)}", m.group(1), f"JUDGEBOX_END_{secrets.token_hex(8)}"
        body = (f"IFS= read -r -d '' {code} <<'{end}'\n{body[:m.start()]}\n{end}\n"
                f"{entry}() {{ ( unset -f {entry}; eval \"${code}\" >/dev/null 9>&-; {entry} \"$@\" 9>&- ); }}\n"
                + body[m.start():])
    return (f"IFS= read -r {var}\nexec 9>&1 1>/dev/null\n" + body
            + f'\nprintf "\\n%s %s\\n" "${var}" \'{_OK_JSON}\' >&9\n')


#: sandbox language -> builder ``(prefix + code, tests) -> program``.
BUILDERS: dict[str, Callable[[str, str], str]] = {
    "cpp": _cpp, "java": _java, "go": _go, "nodejs": _nodejs, "rust": _rust, "bash": _bash,
}


def build_program(language: str, program: str, tests: str) -> str:
    """The complete test program for ``language`` (a key of :data:`BUILDERS`).

    Raises:
        TestDataError: the language has no harness builder, or the tests lack the expected entry point.
    """
    try:
        builder = BUILDERS[language]
    except KeyError:
        raise TestDataError(f"language: no test-program harness for {language!r}; "
                            f"supported: python, {', '.join(sorted(BUILDERS))}") from None
    return builder(program, tests)
