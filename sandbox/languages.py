"""The language recipe table: one declarative row per language.

Each :class:`Recipe` says which file the code is written to, how it is compiled (if at all), how it
is run, and how to ask the toolchain for its version. ``{python}`` in a command is replaced with the
configured interpreter, ``{source}`` with the file name, ``{main}`` with the entry name (the Java
public class) and ``{cpp_std}`` with the C++ standard; the element ``{cpp_libraries}`` becomes
:func:`cpp_libraries`' flags (zero or more arguments, looked up at the first C++ command, not at
import). Adding a language is adding one row.

Compiler flags follow common online judges: ``g++ -O2 -std=gnu++20`` (the newest standard g++ 12
supports well; ICPC/DOMjudge compile with ``-std=gnu++20``, DOMjudge PR #2340), another standard per
request with ``cpp_std`` (e.g. ``c++17``); ``rustc -O -C overflow-checks=on --edition 2021``: integer
overflow is a program error in Rust, and ``rustc``'s default (debug) build, which MultiPL-E and
SandboxFusion judge with, panics on it; an optimised build without the checks would wrap silently
and accept such a program.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable, Optional

#: Comments, then string/char/text-block literals: removed before Java source is scanned for classes.
# (an unclosed comment or text block runs to the end: one pass, never a rescan per opener)
_JAVA_NOISE = re.compile(r'//[^\n]*|/\*.*?(?:\*/|\Z)|"""(?:\\.|[^\\])*?(?:"""|\Z)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                         re.S)
#: A type declaration, with the modifiers in front of it; or a brace.
_JAVA_DECL = re.compile(r"((?:\b(?:public|final|abstract|static|sealed|strictfp)\s+)*)"
                        r"\b(class|interface|enum|record)\s+([A-Za-z_$][\w$]*)|[{}]")
_JAVA_MAIN = re.compile(r"\bvoid\s+main\s*\(")

#: The C++ standard used when a request names none (``g++ -std=...``).
DEFAULT_CPP_STD = "gnu++20"
#: The ``-std=`` values a request may choose (ISO or GNU dialect, C++98 to C++26 spellings).
CPP_STD = re.compile(r"(?:c|gnu)\+\+(?:98|03|0x|11|1y|14|1z|17|2a|20|2b|23|2c|26)\Z")


def php_text(code: str) -> str:
    """PHP source that starts with the ``<?php`` open tag: ``code`` without leading white space,
    the tag added when missing (SandboxFusion's ``ensure_php_tag_in_string``); without it ``php``
    would print the code instead of running it."""
    code = code.lstrip()
    return code if code.startswith("<?php") else "<?php\n" + code


def check_cpp_std(value: Optional[str]) -> Optional[str]:
    """``value`` if it is ``None`` or a ``g++ -std=`` value of :data:`CPP_STD`.

    Raises:
        ValueError: naming the ``cpp_std`` field and examples of accepted values.
    """
    if value is not None and not CPP_STD.match(value):
        raise ValueError(f"cpp_std: {value!r} is not a g++ -std value; use e.g. 'c++17', 'gnu++17', 'c++20' "
                         "or 'gnu++20'")
    return value


#: Java class path: the working directory plus the Debian jars of the runtime profiles
#: (:mod:`judgebox.sandbox.runtime.profiles`): javatuples (``libjavatuples-java``), which MultiPL-E's
#: Java prompts import, JUnit 4 (``junit4``) and Hamcrest (``libhamcrest-java``), as SandboxFusion's
#: image provides them. A missing jar is ignored by javac and java.
JAVA_CLASSPATH = ".:" + ":".join(f"/usr/share/java/{jar}.jar" for jar in ("javatuples", "junit4", "hamcrest"))
#: JUnit 5's console launcher (Debian ``junit5``: JUnit Platform 1.9, Jupiter 5.9, the Vintage engine);
#: SandboxFusion's ``junit`` runs ``junit-platform-console-standalone`` 1.8.2 the same way.
JUNIT_CONSOLE = "/usr/share/java/junit-platform-console-standalone.jar"
#: Go libraries beside the working folder's own ``GOPATH`` entry: where Debian's ``golang-*-dev``
#: packages put their sources (testify, which HumanEval-X's Go tests import, and its dependencies).
GO_LIBRARIES = tuple(d for d in ("/usr/share/gocode",) if os.path.isdir(d))


#: JVM options for programs: no ``hsperfdata`` file in ``/tmp`` (a few ms per start; nothing a
#: program can observe). The JIT stays as it is: C1-only would slow long-running solutions down.
JVM_START = ("-XX:-UsePerfData",)
#: JVM options for javac, a short run where start-up dominates: C1 only, serial GC, no perf-data
#: file (measured here: about 40 % less CPU per small compile; class files are byte-identical).
JAVAC_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData")


#: The ``jest`` language's launcher (``node -e``): Jest from the program runtime's ``node_modules``
#: (``NODE_PATH``), in band, with Babel's ``preset-env`` (the running Node.js) and ``preset-typescript``
#: as SandboxFusion's ``babel.config.js`` sets them; the test files are the working folder's.
JEST_LAUNCHER = (
    "const r = require.resolve;\n"
    "process.argv = [process.argv[0], 'jest', '--ci', '--runInBand', '--watchman=false', '--config', JSON.stringify({"
    "rootDir: process.cwd(), transform: {'\\\\.[jt]sx?$': [r('babel-jest'), {presets: ["
    "[r('@babel/preset-env'), {targets: {node: 'current'}}], r('@babel/preset-typescript')]}]}})];\n"
    "require('jest/bin/jest');\n"
)


#: SandboxFusion's ``find_scala_classname``: the first ``object`` names the class ``scala`` runs.
_SCALA_OBJECT = re.compile(r"object\s+(\w+)")


def scala_object(code: str) -> str:
    """The object ``scala`` runs: the first ``object <name>`` in the source (SandboxFusion's rule),
    else ``Main`` (SandboxFusion answers a compile error ``Object name not found.``; here ``scala``
    says the class is missing)."""
    m = _SCALA_OBJECT.search(code)
    return m.group(1) if m else "Main"


_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)


@functools.lru_cache(maxsize=64)
def _java_top_types(code: str) -> tuple[tuple[str, bool, bool], ...]:
    """Top-level types of Java source as ``(name, is public, declares void main)``.

    Comments and literals are ignored; nested types (e.g. a ``public static class``) do not count.
    """
    text = _JAVA_NOISE.sub(" ", code)
    depth, top = 0, []  # (name, is public, body start)
    for m in _JAVA_DECL.finditer(text):
        if m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            top.append((m.group(3), "public" in m.group(1).split(), m.end()))
    return tuple((name, public, bool(_JAVA_MAIN.search(text, start, top[i + 1][2] if i + 1 < len(top) else len(text))))
                 for i, (name, public, start) in enumerate(top))


def java_main_class(code: str) -> str:
    """The name the Java source file must carry: the top-level ``public`` type; otherwise the first
    top-level type that declares ``void main(``; otherwise ``"Main"``.

    Args:
        code: Java source text.

    Returns:
        a Java identifier (the file is written as ``<name>.java``).
    """
    types = _java_top_types(code)
    return next((n for n, public, _ in types if public), None) or \
        next((n for n, _, has_main in types if has_main), "Main")


def java_entry_class(code: str) -> str:
    """The class ``java`` runs: the public type if it declares ``main``, else the first top-level
    type that does, else the file's type; qualified with the source's ``package`` if it has one
    (javac ``-d .`` writes ``pkg/Name.class``)."""
    types = _java_top_types(code)
    name = next((n for n, public, has_main in types if public and has_main), None) or \
        next((n for n, _, has_main in types if has_main), None) or java_main_class(code)
    package = _JAVA_PACKAGE.search(_JAVA_NOISE.sub(" ", code))
    return f"{package.group(1)}.{name}" if package else name


#: The command-template element that stands for :func:`cpp_libraries`' flags.
CPP_LIBRARIES = "{cpp_libraries}"


@functools.lru_cache(maxsize=1)
def cpp_libraries() -> tuple[str, ...]:
    """``-l`` flags for the libraries C++ programs may use beyond the standard library: OpenSSL's
    ``-lcrypto -lssl`` when ``g++`` can link them (``libssl-dev``), as SandboxFusion's C++ runner and
    MultiPL-E (HumanEval/162 ``string_to_md5`` calls ``MD5``) link them; none otherwise."""
    flags = []
    for lib in ("crypto", "ssl"):
        try:
            found = subprocess.run(["g++", f"-print-file-name=lib{lib}.so"], capture_output=True, text=True,
                                   timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ()
        if os.path.isabs(found):
            flags.append(f"-l{lib}")
    return tuple(flags)


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
        entry: function ``code -> name`` for the ``{entry}`` placeholder (the class Java runs);
            defaults to :attr:`main`.
        module: a Python module the interpreter must be able to import for the language to count
            as installed (``pytest``); ``None`` when finding the program on ``PATH`` is enough.
        node_module: a Node.js module that must resolve from the program runtime's
            ``node_modules`` for the language to count as installed (``tsx/cjs`` for typescript).
        outputs: what the compile step writes, relative to the working folder, kept in the compile
            cache (:mod:`judgebox.sandbox.speedups.compile_cache`): fixed names, or ``"**/*.ext"`` for every file
            with that suffix; empty: the compile is not cached.
        text: function ``code -> the source file's text`` (default: the code as given; PHP adds
            the ``<?php`` open tag a program lacks, as SandboxFusion's PHP runner does).
    """

    name: str
    source: str
    run: tuple[str, ...]
    compile: Optional[tuple[str, ...]] = None
    version: tuple[str, ...] = ()
    main: Callable[[str], str] = lambda code: "main"
    env: tuple[tuple[str, str], ...] = ()
    module: Optional[str] = None
    node_module: Optional[str] = None
    entry: Optional[Callable[[str], str]] = None
    outputs: tuple[str, ...] = ()
    text: Callable[[str], str] = lambda code: code

    def argv(self, template: tuple[str, ...], code: str, python: str, cpp_std: Optional[str] = None) -> list[str]:
        """Expand a command template for ``code`` (see module docstring for placeholders); ``cpp_std``
        defaults to :data:`DEFAULT_CPP_STD`."""
        main = self.main(code)
        source = self.source.format(main=main)
        entry = self.entry(code) if self.entry else main
        out = []
        for t in template:
            if t == CPP_LIBRARIES:
                out += cpp_libraries()
            else:
                out.append(t.format(python=python, source=source, main=main, entry=entry,
                                    cpp_std=cpp_std or DEFAULT_CPP_STD))
        return out

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
               version=("{python}", "-m", "pytest", "--version"), module="pytest"),
        Recipe("cpp", "main.cpp", ("./main",), compile=("g++", "-O2", "-std={cpp_std}", "-pipe", "-o", "main", "main.cpp",
                                                        CPP_LIBRARIES),
               version=("g++", "--version"), outputs=("main",)),
        Recipe("java", "{main}.java", ("java", "-ea", "-Xss256m", *JVM_START, "-cp", JAVA_CLASSPATH, "{entry}"),
               compile=("javac", *(f"-J{o}" for o in JAVAC_JVM), "-encoding", "UTF-8", "-d", ".", "-cp",
                        JAVA_CLASSPATH, "{main}.java"),
               version=("javac", "-version"), main=java_main_class, entry=java_entry_class,
               outputs=("**/*.class",)),
        Recipe("nodejs", "main.js", ("node", "--stack-size=65500", "main.js"), version=("node", "--version")),
        Recipe("go", "main.go", ("./main",), compile=("go", "build", "-o", "main", "main.go"),
               version=("go", "version"), env=(("GO111MODULE", "off"),), outputs=("main",)),
        Recipe("go_test", "main_test.go", ("go", "test", "-count=1", "./main_test.go"),
               version=("go", "version"), env=(("GO111MODULE", "off"),)),
        Recipe("bash", "main.sh", ("bash", "main.sh"), version=("bash", "--version")),
        Recipe("rust", "main.rs", ("./main",), compile=("rustc", "-O", "-C", "overflow-checks=on", "--edition", "2021", "-o", "main", "main.rs"),
               version=("rustc", "--version"), outputs=("main",)),
        Recipe("ruby", "main.rb", ("ruby", "main.rb"), version=("ruby", "--version")),
        Recipe("php", "main.php", ("php", "-f", "main.php"), version=("php", "--version"), text=php_text),
        Recipe("perl", "main.pl", ("perl", "main.pl"), version=("perl", "-e", "print qq(perl $^V\\n)")),
        Recipe("lua", "main.lua", ("lua", "main.lua"), version=("lua", "-v")),
        Recipe("R", "main.R", ("Rscript", "main.R"), version=("Rscript", "--version")),
        Recipe("racket", "main.rkt", ("racket", "main.rkt"), version=("racket", "--version")),
        Recipe("D_ut", "main.d", ("./main",), compile=("gdc", "-funittest", "-O", "-o", "main", "main.d"),
               version=("gdc", "--version"), outputs=("main",)),
        # SandboxFusion runs tsx (esbuild: types are stripped, not checked); ``--require tsx/cjs`` finds it
        # on the runtime's NODE_PATH and keeps CommonJS (MultiPL-E's tests call require)
        Recipe("typescript", "main.ts", ("node", "--stack-size=65500", "--require", "tsx/cjs", "main.ts"),
               version=("node", "--version"), node_module="tsx/cjs"),
        # SandboxFusion's (and VerilogEval's) commands: the testbench module is ``tb``
        Recipe("verilog", "main.sv", ("vvp", "-n", "test.vvp"),
               compile=("iverilog", "-Wall", "-Winfloop", "-Wno-timescale", "-g2012", "-s", "tb", "-o", "test.vvp",
                        "main.sv"),
               version=("iverilog", "-V"), outputs=("test.vvp",)),
        # SandboxFusion: ``<tmp>.test.ts`` beside its runtime's package.json, ``npm run test`` (``jest``)
        Recipe("jest", "main.test.ts", ("node", "-e", JEST_LAUNCHER.replace("{", "{{").replace("}", "}}")),
               version=("node", "--version"), node_module="jest", env=(("FORCE_COLOR", "0"),)),
        # SandboxFusion: ``scalac <file>`` then ``scala <first object>``
        Recipe("scala", "main.scala", ("scala", "-nc", "{entry}"), compile=("scalac", "-d", ".", "main.scala"),
               version=("scalac", "-version"), entry=scala_object, outputs=("**/*.class",)),
        # SandboxFusion runs ``kotlin x.kts``; Debian 12's Kotlin 1.3 runs scripts with ``kotlinc -script``
        # (same semantics: top-level statements in order). JAVA_OPTS: the script's defaults, and no JVM
        # warning about its deprecated -noverify on stderr
        Recipe("kotlin_script", "main.kts", ("kotlinc", "-script", "main.kts"), version=("kotlinc", "-version"),
               env=(("JAVA_OPTS", "-Xmx256M -Xms32M -XX:-PrintWarnings"),)),
        # SandboxFusion: ``javac -cp .:<console> *.java`` then the console launcher scans the class path
        Recipe("junit", "{main}.java", ("java", *JVM_START, "-jar", JUNIT_CONSOLE, "--disable-banner",
                                        "--class-path", ".", "--scan-class-path"),
               compile=("javac", *(f"-J{o}" for o in JAVAC_JVM), "-encoding", "UTF-8", "-d", ".", "-cp",
                        f".:{JUNIT_CONSOLE}", "-sourcepath", ".", "{main}.java"),
               version=("javac", "-version"), main=java_main_class, outputs=("**/*.class",)),
        # GoogleTest: the tests and, unless the code has its own, gtest_main's ``main`` (an archive
        # member is linked only when ``main`` is still undefined)
        Recipe("gtest", "main.cpp", ("./main",),
               compile=("g++", "-O2", "-std={cpp_std}", "-pipe", "-o", "main", "main.cpp", "-lgtest_main", "-lgtest",
                        "-pthread", CPP_LIBRARIES),
               version=("g++", "--version"), outputs=("main",)),
        # SQLite: the code is a script against an in-memory database; ``-bail``: the first error
        # stops it with exit status 1
        Recipe("sql", "main.sql", ("sqlite3", "-bail", "-batch", ":memory:", ".read main.sql"),
               version=("sqlite3", "-version")),
    )
}


#: language -> the Debian 12 packages of its toolchain (what ``scripts/install.sh`` installs).
PACKAGES: dict[str, str] = {
    "python": "python3", "pytest": "python3-pytest, or the program runtime (`judgebox runtime build`)",
    "cpp": "g++ libssl-dev", "java": "default-jdk-headless libjavatuples-java junit4 libhamcrest-java",
    "nodejs": "nodejs", "go": "golang-go", "go_test": "golang-go golang-github-stretchr-testify-dev",
    "bash": "bash", "rust": "rustc", "ruby": "ruby", "php": "php-cli",
    "perl": "perl libtest-deep-perl libdata-compare-perl",
    "lua": "lua5.4 lua-unit", "R": "r-base-core", "racket": "racket", "D_ut": "gdc", "verilog": "iverilog",
    "typescript": "nodejs, and the program runtime with tsx (`judgebox runtime build`)",
    "scala": "scala", "kotlin_script": "kotlin", "junit": "default-jdk-headless junit5", "gtest": "g++ libgtest-dev",
    "sql": "sqlite3", "jest": "nodejs, and the program runtime with Jest (`judgebox runtime build`)",
}
#: language -> the toolchain that builds and runs its programs (``GET /languages?detail=true``).
TOOLCHAINS: dict[str, str] = {
    "python": "CPython", "pytest": "pytest on CPython", "cpp": "g++ (GCC)", "java": "OpenJDK (javac, java)",
    "nodejs": "Node.js", "go": "Go (go build)", "go_test": "Go (go test)", "bash": "GNU Bash", "rust": "rustc",
    "ruby": "Ruby (MRI)", "php": "PHP CLI", "perl": "Perl 5", "lua": "Lua", "R": "R (Rscript)", "racket": "Racket",
    "D_ut": "gdc (GCC's D compiler)", "typescript": "tsx on Node.js", "verilog": "Icarus Verilog (iverilog, vvp)",
    "scala": "Scala (scalac, scala)", "kotlin_script": "Kotlin (kotlinc -script)",
    "junit": "JUnit 5 console launcher on OpenJDK", "gtest": "GoogleTest with g++ (GCC)", "sql": "SQLite 3 shell",
    "jest": "Jest with Babel on Node.js",
}
#: language -> the npm package of the program runtime that is its toolchain (its version is reported).
NODE_TOOLCHAINS: dict[str, str] = {"typescript": "tsx", "jest": "jest"}
#: language -> a file of the library it needs beyond its compiler (its Debian package is reported too).
LIBRARY_FILES: dict[str, str] = {"junit": JUNIT_CONSOLE, "gtest": "/usr/include/gtest/gtest.h"}
#: SandboxFusion languages judgebox has no recipe for -> why.
NO_RECIPE: dict[str, str] = {
    **dict.fromkeys(("swift", "julia", "lean"), "its toolchain has no Debian 12 package"),
    "csharp": "SandboxFusion runs it with dotnet, which Debian 12 does not package; Mono's compiler stops at C# 7",
    "python2": "Debian 12 has no Python 2 package (bookworm dropped python2.7), and SandboxFusion's server "
               "has no runner for it (only its client names it)",
    "react": "SandboxFusion's server has no runner for it (only its client names it): no semantics to match",
    **dict.fromkeys(("cuda", "python_gpu"), "it needs a GPU"),
}
#: Other spellings of language names -> the name (``c++`` -> ``cpp``): suggested for a misspelt one.
SPELLINGS = {"c++": "cpp", "js": "nodejs", "javascript": "nodejs", "node": "nodejs", "py": "python",
             "python3": "python", "rb": "ruby", "golang": "go", "rs": "rust", "sh": "bash", "d": "D_ut",
             "dlang": "D_ut", "r": "R", "rkt": "racket", "pl": "perl", "ts": "typescript", "cs": "csharp",
             "c#": "csharp", "kotlin": "kotlin_script", "jl": "julia"}


def install_hint(language: str) -> str:
    """How to make ``language`` runnable here: its Debian packages (:data:`PACKAGES`), or why
    judgebox has no recipe for it (:data:`NO_RECIPE`)."""
    if language in PACKAGES:
        return f"install its toolchain (Debian 12: apt-get install {PACKAGES[language]}; scripts/install.sh installs all)"
    return f"judgebox has no recipe for it ({NO_RECIPE.get(language, 'not a language judgebox knows')})"


def closest_language(name: str, names: "list[str] | tuple[str, ...]") -> Optional[str]:
    """The language ``name`` most likely means, of ``names``: its other spelling (:data:`SPELLINGS`),
    the same name in another case, else the closest by :func:`difflib.get_close_matches`; ``None``."""
    import difflib

    lower = {n.lower(): n for n in names}
    key = name.strip().lower()
    if SPELLINGS.get(key) in names:
        return SPELLINGS[key]
    if key in lower:
        return lower[key]
    match = difflib.get_close_matches(key, list(lower), n=1, cutoff=0.6)
    return lower[match[0]] if match else None


#: Variables a toolchain needs from the server's environment: (name, default when unset or ``None``).
#: ``rustc`` is usually a rustup proxy that finds its toolchain through ``RUSTUP_HOME`` (default
#: ``~/.rustup`` of the *server's* home, which a program whose ``HOME`` is its working dir lacks).
_TOOLCHAIN_VARS = (
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("JAVA_HOME", None),
    ("GOROOT", None),
    ("RUSTUP_HOME", os.path.join(os.path.expanduser("~"), ".rustup")),
    ("CARGO_HOME", os.path.join(os.path.expanduser("~"), ".cargo")),
    ("RUSTUP_TOOLCHAIN", None),
)


def toolchain_env() -> dict[str, str]:
    """The environment the toolchains need, read from the server's own environment.

    Returns:
        ``{name: value}`` for ``PATH``, ``JAVA_HOME``, ``GOROOT``, ``RUSTUP_HOME``, ``CARGO_HOME``
        and ``RUSTUP_TOOLCHAIN`` where set (rustup's two homes default to the server's ``~/.rustup``
        and ``~/.cargo`` when those folders exist). Nothing else is inherited by programs.
    """
    env = {}
    for name, default in _TOOLCHAIN_VARS:
        value = os.environ.get(name) or default
        if value and (name not in ("RUSTUP_HOME", "CARGO_HOME") or os.path.isdir(value)):
            env[name] = value
    return env


@functools.lru_cache(maxsize=None)
def _which(program: str) -> Optional[str]:
    return shutil.which(program)


@functools.lru_cache(maxsize=None)
def _importable(python: str, module: str) -> bool:
    try:
        # find_spec, not an import: importing pytest took 0.13 s of every start
        code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
        return subprocess.run([python, "-c", code], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=None)
def _resolvable(node_path: Optional[str], modules: tuple[str, ...]) -> frozenset[str]:
    """Which of ``modules`` Node.js resolves from ``node_path``: one ``node`` for all of them (a
    Node.js start is ~40 ms of CPU)."""
    if not node_path or not modules:
        return frozenset()
    script = ("for (const m of JSON.parse(process.argv[1])) "
              "{ try { require.resolve(m); console.log(m) } catch (e) {} }")
    try:
        out = subprocess.run(["node", "-e", script, json.dumps(list(modules))], capture_output=True, text=True,
                             timeout=60, env={**os.environ, "NODE_PATH": node_path})
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(out.stdout.split()) & set(modules) if out.returncode == 0 else frozenset()


def languages_on_path(python: str) -> dict[str, "Recipe"]:
    """The recipes whose first program is on ``PATH`` (or is the configured interpreter), by name,
    before any module probe: :func:`installed_languages` is a subset of these."""
    return {n: r for n, r in RECIPES.items() if _which(r.executable(python))}


def installed_languages(python: str, node_path: Optional[str] = None) -> list[str]:
    """Names of the recipes whose first program is on ``PATH`` (or is the configured interpreter)
    and, for recipes that name a :attr:`Recipe.module`, whose interpreter finds it (``pytest``
    under an interpreter without it would otherwise fail every program as a wrong answer); a recipe
    that names a :attr:`Recipe.node_module` needs it resolvable from ``node_path`` (the program
    runtime's ``node_modules``). The probes (one interpreter per module, one ``node`` for every
    Node.js module) run at once: one after the other they were 0.3 s of every start."""
    on_path = languages_on_path(python)
    node_modules = tuple(sorted({r.node_module for r in on_path.values() if r.node_module}))
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        resolved = pool.submit(_resolvable, node_path, node_modules)
        importable = dict(zip(on_path, pool.map(lambda r: r.module is None or _importable(python, r.module),
                                                on_path.values())))
        resolved = resolved.result()
    return sorted(n for n, r in on_path.items()
                  if importable[n] and (r.node_module is None or r.node_module in resolved))


@functools.lru_cache(maxsize=None)
def toolchain_version(name: str, python: str) -> Optional[str]:
    """First line of the toolchain's version output, or ``None`` if it is not installed."""
    recipe = RECIPES[name]
    if not _which(recipe.executable(python)):
        return None
    try:
        out = subprocess.run(recipe.argv(recipe.version, "", python), capture_output=True, text=True, timeout=30,
                             env={**os.environ, **dict(recipe.env)})
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


@functools.lru_cache(maxsize=None)
def _debian_package(path: str) -> Optional[str]:
    """``"<package> <version>"`` of the Debian package that owns ``path``, or ``None``."""
    try:
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True, timeout=30)
        if owner.returncode != 0:
            return None
        package = owner.stdout.split(":", 1)[0].strip()
        if "," in package:  # a file shared by several packages (diversions): the first
            package = package.split(",")[0].strip()
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{package} {version}".strip()


def _node_package_version(node_path: Optional[str], package: str) -> Optional[str]:
    if not node_path:
        return None
    try:
        import json

        with open(os.path.join(node_path, package, "package.json"), encoding="utf-8") as f:
            return str(json.load(f)["version"])
    except (OSError, ValueError, KeyError):
        return None


def program_source(program: str) -> str:
    """Where the program ``program`` (a name on ``PATH`` or a path) comes from: ``"Debian package
    <name> <version>"`` (``bookworm-backports`` named when its version says so), ``"rustup"`` for a
    rustup toolchain or proxy, else ``"not from a package manager (<path>)"``; ``"not installed"``."""
    found = _which(program) if os.sep not in program else program
    if not found:
        return "not installed"
    real = os.path.realpath(found)
    if any(part in (".rustup", ".cargo") for part in real.split(os.sep)):
        return "rustup"
    merged = "/" + found.split("/usr/", 1)[1] if found.startswith("/usr/") else None  # /usr/bin/bash: dpkg knows /bin/bash
    package = _debian_package(real) or _debian_package(found) or (_debian_package(merged) if merged else None)
    if package:
        return f"Debian package {package}" + (" (bookworm-backports)" if "bpo12" in package else "")
    return f"not from a package manager ({real})"


def toolchain_info(name: str, python: str, node_path: Optional[str] = None,
                   runtime: Optional[str] = None) -> dict[str, Optional[str]]:
    """What runs language ``name`` here: ``toolchain`` (:data:`TOOLCHAINS`), ``version`` (the first
    line its toolchain prints, or the npm package's version; with the Debian package and version of
    its library, :data:`LIBRARY_FILES`), ``source`` (Debian package, npm, PyPI,
    rustup: :func:`program_source`) and ``packages`` (what installs it, :data:`PACKAGES`).

    Args:
        name: a recipe name.
        python: the interpreter programs run with.
        node_path: the program runtime's ``node_modules`` (npm toolchains are read from it).
        runtime: the program runtime's name, when ``python`` and ``node_path`` are its.
    """
    recipe = RECIPES[name]
    version = toolchain_version(name, python)
    source = program_source(recipe.executable(python))
    package = NODE_TOOLCHAINS.get(name)
    if package:
        npm = _node_package_version(node_path, package)
        version = f"{package} {npm} on Node.js {version}" if npm else None
        source = f"npm {package}@{npm} in the program runtime {runtime or ''}".rstrip() + f"; node: {source}" \
            if npm else "not installed"
    elif recipe.module or name == "python":
        if runtime:
            source = f"the program runtime {runtime}, a virtual environment over {program_source(python)}"
            if recipe.module:
                source = f"PyPI {recipe.module}, in " + source
    if name in LIBRARY_FILES:
        source += f"; {os.path.basename(LIBRARY_FILES[name])}: {program_source(LIBRARY_FILES[name])}"
        library = _debian_package(LIBRARY_FILES[name]) if os.path.exists(LIBRARY_FILES[name]) else None
        version = f"{version}, {library}" if version and library else version
    return {"toolchain": TOOLCHAINS.get(name), "version": version, "source": source, "packages": PACKAGES.get(name)}
