"""The language recipe table: one declarative row per language.

Each :class:`Recipe` says which file the code is written to, how it is compiled (if at all), how it
is run, and how to ask the toolchain for its version. ``{python}`` in a command is replaced with the
configured interpreter, ``{source}`` with the file name and ``{main}`` with the entry name (the Java
public class). Adding a language is adding one row.

Compiler flags follow common online judges (Codeforces/AtCoder): ``g++ -O2 -std=c++17``,
``rustc -O --edition 2021``.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable, Optional

_JAVA_PUBLIC = re.compile(r"public\s+(?:(?:final|abstract|static)\s+)*class\s+([A-Za-z_$][\w$]*)")
_JAVA_ANY = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)")
_JAVA_MAIN = re.compile(r"public\s+static\s+void\s+main\s*\(")


def java_main_class(code: str) -> str:
    """Find the class to run in Java source.

    The public class wins (javac requires the file to carry its name); otherwise the first class that
    declares ``public static void main``; otherwise ``Main``.
    """
    m = _JAVA_PUBLIC.search(code)
    if m:
        return m.group(1)
    for cls in _JAVA_ANY.finditer(code):
        nxt = _JAVA_ANY.search(code, cls.end())
        body = code[cls.end(): nxt.start() if nxt else len(code)]
        if _JAVA_MAIN.search(body):
            return cls.group(1)
    return "Main"


@dataclass(frozen=True)
class Recipe:
    """How to build and run one language.

    Attributes:
        name: the SandboxFusion language name.
        source: file name the code is written to; ``{main}`` is replaced by :attr:`main`'s result.
        run: argv template of the run step.
        compile: argv template of the compile step, or ``None`` for interpreted languages.
        version: argv that prints the toolchain version.
        main: function ``code -> entry name`` (default ``"main"``).
        env: extra environment variables for compile and run.
    """

    name: str
    source: str
    run: tuple[str, ...]
    compile: Optional[tuple[str, ...]] = None
    version: tuple[str, ...] = ()
    main: Callable[[str], str] = lambda code: "main"
    env: tuple[tuple[str, str], ...] = ()

    def argv(self, template: tuple[str, ...], code: str, python: str) -> list[str]:
        """Expand a command template for ``code`` (see module docstring for placeholders)."""
        main = self.main(code)
        source = self.source.format(main=main)
        return [t.format(python=python, source=source, main=main) for t in template]

    def source_name(self, code: str) -> str:
        """The file name ``code`` is written to."""
        return self.source.format(main=self.main(code))

    def executable(self, python: str) -> str:
        """The first program this recipe needs (compiler, or interpreter when nothing compiles)."""
        return ((self.compile or self.run)[0]).format(python=python)


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe("python", "main.py", ("{python}", "main.py"), version=("{python}", "--version")),
        Recipe("pytest", "test_main.py", ("{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_main.py"),
               version=("{python}", "-m", "pytest", "--version")),
        Recipe("cpp", "main.cpp", ("./main",), compile=("g++", "-O2", "-std=c++17", "-pipe", "-o", "main", "main.cpp"),
               version=("g++", "--version")),
        Recipe("java", "{main}.java", ("java", "-ea", "-Xss256m", "-cp", ".", "{main}"),
               compile=("javac", "-encoding", "UTF-8", "{main}.java"), version=("javac", "-version"),
               main=java_main_class),
        Recipe("nodejs", "main.js", ("node", "--stack-size=65500", "main.js"), version=("node", "--version")),
        Recipe("go", "main.go", ("./main",), compile=("go", "build", "-o", "main", "main.go"),
               version=("go", "version"), env=(("GO111MODULE", "off"),)),
        Recipe("go_test", "main_test.go", ("go", "test", "-count=1", "./main_test.go"),
               version=("go", "version"), env=(("GO111MODULE", "off"),)),
        Recipe("bash", "main.sh", ("bash", "main.sh"), version=("bash", "--version")),
        Recipe("rust", "main.rs", ("./main",), compile=("rustc", "-O", "--edition", "2021", "-o", "main", "main.rs"),
               version=("rustc", "--version")),
    )
}


@functools.lru_cache(maxsize=None)
def _which(program: str) -> Optional[str]:
    return shutil.which(program)


def installed_languages(python: str) -> list[str]:
    """Names of the recipes whose first program is on ``PATH`` (or is the configured interpreter)."""
    return sorted(n for n, r in RECIPES.items() if _which(r.executable(python)))


@functools.lru_cache(maxsize=None)
def toolchain_version(name: str, python: str) -> Optional[str]:
    """First line of the toolchain's version output, or ``None`` if it is not installed."""
    recipe = RECIPES[name]
    if not _which(recipe.executable(python)):
        return None
    try:
        out = subprocess.run(recipe.argv(recipe.version, "", python), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None
