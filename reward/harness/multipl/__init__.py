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
- ``rust``: the tests' ``main`` is renamed and called from a new ``main`` that prints afterwards;
- ``scala``: the tests' ``main`` is renamed and called from a runner ``object`` put first in the
  file (the one ``scala`` runs) that prints afterwards.

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

from typing import Callable

from judgebox.reward.spec import TestDataError

from . import bash, cpp, d, go, java, kotlin, lua, nodejs, perl, php, r, racket, ruby, rust, scala

#: sandbox language -> builder ``(prefix + code, tests) -> program``.
BUILDERS: dict[str, Callable[[str, str], str]] = {
    "cpp": cpp.build, "java": java.build, "go": go.build, "nodejs": nodejs.build, "rust": rust.build,
    "bash": bash.build, "ruby": ruby.build, "php": php.build, "perl": perl.build, "lua": lua.build, "R": r.build,
    "racket": racket.build, "D_ut": d.build, "typescript": nodejs.build, "scala": scala.build,
    "kotlin_script": kotlin.build,
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
