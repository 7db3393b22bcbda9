"""Turn a :class:`~judgebox.reward.spec.TestSpec` and a candidate into one sandbox batch (``/run_tests``).

- ``stdio``: the candidate itself, one case per stdin; outputs are compared on the host.
- ``call``/``harness`` in Python: :mod:`judgebox.reward.harness.runner` runs one test per case against the
  candidate module (``solution.py``) and reports a nonce-prefixed JSON line.
- ``assert`` in Python: one runner process runs every assert in order (as MBPP's own harness does)
  and reports a nonce-prefixed line per assert, then a final one; its time limit is
  ``run_timeout`` per assert, and an assert that took longer than ``run_timeout`` is a timeout.
- ``harness`` in other languages: C++, Java, Rust, Go, Node.js and TypeScript function-call tests run apart from the solution
  (:mod:`judgebox.reward.harness.split`: a tests' program and the solution's, the sandbox's
  ``tests_program``); elsewhere :mod:`judgebox.reward.harness.multipl` builds one test program per
  submission that prints the nonce marker after its tests.

Python ``call``/``assert``/entry-point ``harness`` tests that only call the solution run apart from it
(``main.py --process``, :func:`harness_isolation` decides from the tests): the nonce and the tests
live in a process where the solution's code never runs.
"""

from __future__ import annotations

import ast
import base64
import builtins
import functools
import re
import secrets
from dataclasses import dataclass
from typing import NamedTuple, Optional

from judgebox.reward.libraries import prelude_preload
from judgebox.reward.preludes import with_prelude
from judgebox.reward.spec import StdioCase, TestDataError, TestSpec
from judgebox.sandbox.models import RunTestsRequest

from .multipl import build_program
from .names import tests_names
from .python import runner_request
from .runner import count_tests
from .split import cpp as split_cpp
from .split import go as split_go
from .split import java as split_java
from .split import node as split_node
from .split import rust as split_rust

#: Dataset language names -> sandbox language names.
LANGUAGE_ALIASES = {
    "py": "python", "python3": "python", "c++": "cpp", "js": "nodejs", "javascript": "nodejs",
    "rs": "rust", "sh": "bash", "golang": "go", "rb": "ruby", "pl": "perl", "r": "R", "rkt": "racket", "d": "D_ut", "ts": "typescript",
}


def sandbox_language(spec: TestSpec) -> str:
    """The sandbox language that runs ``spec``'s tests (``go_test`` harnesses run as ``go`` programs)."""
    lang = LANGUAGE_ALIASES.get(spec.language.lower(), spec.language)
    return "go" if lang == "go_test" and spec.kind == "harness" else lang


@dataclass(frozen=True)
class Plan:
    """One submission's batch: the request, and the nonce its marker lines carry (``None`` for stdio)."""

    request: RunTestsRequest
    nonce: Optional[str]
    batched: bool = False  #: one runner case reports every test (``assert`` kind)
    isolation: Optional[str] = None  #: :func:`harness_isolation` of the spec


def build_plan(spec: TestSpec, code: str, *, stop_on_first_failure: bool = False,
               compile_timeout: float = 30.0, total_timeout: Optional[float] = None) -> Plan:
    """Build the single ``/run_tests`` request for ``code`` against ``spec`` (already ``check_data``-ed).

    Args:
        spec: the tests; ``spec.prefix`` is prepended to ``code`` for every kind, and a Python
            ``spec.prelude`` before that (:func:`judgebox.reward.preludes.with_prelude`).
        code: the candidate source text.
        stop_on_first_failure: skip the remaining cases after the first failure (binary rewards).
        compile_timeout: seconds for the compile step of compiled languages.
        total_timeout: seconds the cases may take together (the request's ``total_timeout``; past
            it the tests not run are timeouts); ``None``: the server's ``max_request_seconds``.

    Raises:
        TestDataError: the tests cannot be turned into a program (no ``main``, no test methods, ...).
    """
    plan = _build_plan(spec, writable(code), stop_on_first_failure, compile_timeout)
    if total_timeout is not None:
        plan = Plan(plan.request.model_copy(update={"total_timeout": total_timeout}), plan.nonce, plan.batched,
                    plan.isolation)
    return plan


#: A lone UTF-16 surrogate: text no file and no UTF-8 request can hold.
_SURROGATE = re.compile("[\ud800-\udfff]")


def writable(code: str) -> str:
    """``code`` with each lone surrogate (``"\\ud800"`` out of a JSON escape) replaced by U+FFFD, the
    text a file can hold: the candidate is judged as it can be written, never refused as test data
    (a lone surrogate made the request invalid, a masked reward, or crashed the judge)."""
    return _SURROGATE.sub("\ufffd", code)


def _build_plan(spec: TestSpec, code: str, stop_on_first_failure: bool, compile_timeout: float) -> Plan:
    source = with_prelude(spec.prelude, spec.prefix + code)
    language = sandbox_language(spec)
    limits = dict(run_timeout=spec.run_timeout, memory_limit_MB=spec.memory_limit_MB,
                  stop_on_first_failure=stop_on_first_failure)
    preload = prelude_preload(spec.prelude) if language == "python" and spec.prelude else ()
    if spec.kind == "stdio":
        req = RunTestsRequest(code=source, language=language, compile_timeout=compile_timeout,
                              cpp_std=spec.cpp_std, cases=[stdio_case(spec, c) for c in spec.stdio],
                              forkserver_preload=list(preload), **limits)
        return Plan(req, None)
    nonce = secrets.token_hex(16)
    isolation = harness_isolation(spec)
    if language == "python" and spec.kind == "assert":
        task = {"mode": "asserts", "setup": spec.setup_code, "tests": spec.asserts,
                "stop": stop_on_first_failure, "names": _names(spec)}
        limits["run_timeout"] = spec.run_timeout * len(spec.asserts)
        return Plan(runner_request(source, [task], nonce, process=isolation == "process", preload=preload, **limits),
                    nonce, batched=True, isolation=isolation)
    if language == "python":
        return Plan(runner_request(source, python_tasks(spec), nonce, process=isolation == "process",
                                   preload=preload, **limits), nonce, isolation=isolation)
    if spec.kind != "harness":
        raise TestDataError(f"language: {spec.kind} tests run Python only, not {spec.language!r}")
    split = split_programs(spec, code)
    if split is not None:
        req = RunTestsRequest(code=split.code, tests_program=split.tests_program, tests_language=split.tests_language,
                              language=language, compile_timeout=compile_timeout, cpp_std=spec.cpp_std,
                              cases=[{"stdin": nonce + "\n" + split.tests_input}], **limits)
        return Plan(req, nonce, isolation="process")
    program = build_program(language, source, spec.harness or "")
    req = RunTestsRequest(code=program, language=language, compile_timeout=compile_timeout,
                          cpp_std=spec.cpp_std, cases=[{"stdin": nonce + "\n"}], **limits)
    return Plan(req, nonce, isolation="in-process")


class Split(NamedTuple):
    """A function-call harness's two programs (:func:`split_programs`)."""

    code: str  #: the solution's program
    tests_program: str  #: the tests' program (no code of the solution)
    tests_input: str = ""  #: what follows the nonce's line on the tests' stdin (Node.js: the tests)
    tests_language: Optional[str] = None  #: the tests' program's sandbox language (``None``: the code's)


def split_programs(spec: TestSpec, code: str) -> Optional[Split]:
    """The two programs of a function-call harness whose tests run apart from the solution
    (:mod:`judgebox.reward.harness.split`), or ``None``: its language has no split harness yet, or
    the prompt's entry function cannot be read (the one-program harness)."""
    builder = _SPLIT.get(sandbox_language(spec))
    if spec.kind != "harness" or builder is None:
        return None
    built = builder(spec.prefix if spec.prompt is None else spec.prompt, spec.prefix + code, spec.harness or "")
    return None if built is None else Split(*built)


#: The languages whose function-call tests run apart from the solution: their program builders, each
#: ``(prompt, program, tests)`` -> the fields of :class:`Split` in order, or ``None``.
_SPLIT = {"cpp": split_cpp.build, "java": split_java.build, "rust": split_rust.build, "go": split_go.build,
          "nodejs": split_node.build, "typescript": functools.partial(split_node.build, language="typescript")}


def forgeable(spec: TestSpec) -> bool:
    """Whether ``spec``'s tests share the solution's process, so that a deliberate program could forge
    its verdict: Python's in-process harness (unittest files, tests that need the solution's objects,
    BigCodeBench's shared module) and every other language's function-call harness (MultiPL-E,
    HumanEval-X, MBXP: one program). Not ``stdio`` (judged on the host from the output), ``call``
    (a JSON value compared on the host) nor Python's process-isolated harness."""
    if spec.kind == "stdio":
        return False
    return harness_isolation(spec) == "in-process"


def stdio_case(spec: TestSpec, case: StdioCase) -> dict:
    """One ``/run_tests`` case of a stdio spec: stdin, the input file and extra files (base64), and
    the output file to fetch."""
    files = {**case.files, **({spec.input_file: case.stdin} if spec.input_file else {})}
    return {"stdin": case.stdin, "files": {p: base64.b64encode(t.encode()).decode() for p, t in files.items()},
            "fetch_files": [spec.output_file] if spec.output_file else []}


def harness_isolation(spec: TestSpec) -> Optional[str]:
    """Where a spec's tests run: ``"process"`` (apart from the solution, which they reach through
    proxies and plain data) or ``"in-process"``; ``None`` for stdio. Other languages than Python:
    ``"process"`` where a split harness builds the tests' program (C++, Java, Rust, Go, Node.js and TypeScript whose prompt
    ends with an entry function whose types can cross), else ``"in-process"`` (the solution and the
    tests are one program).

    Decided from the tests alone, never from the solution: ``call`` problems and tests that only call
    the solution's (or the prompt's) functions with data run in their own process. Tests that need
    the solution's own objects stay in-process: a unittest harness, tests that name a capitalised
    solution name (a class: MBPP's linked-list ``Node``, ``Pair``), that define classes or lambdas,
    or a setup that is more than imports.
    """
    if spec.kind == "stdio":
        return None
    if sandbox_language(spec) != "python":
        return "process" if split_programs(spec, "") is not None else "in-process"
    if spec.kind == "call":
        return "process"
    if spec.kind == "harness" and not spec.entry_point:
        return "in-process"
    return _tests_isolation(spec.harness or "", tuple(spec.asserts), spec.setup_code or "")


@functools.lru_cache(maxsize=256)
def _tests_isolation(harness: str, asserts: tuple[str, ...], setup_code: str) -> str:
    """:func:`harness_isolation` from the tests' text, parsed once per distinct tests (a GRPO group
    or a pass@k run judges each problem's tests n times; the walk was about 1 ms each time)."""
    try:
        trees = [ast.parse(s) for s in (harness, *asserts)]
        setup = ast.parse(setup_code)
    except SyntaxError:
        return "in-process"
    if any(not isinstance(n, (ast.Import, ast.ImportFrom)) for n in setup.body):
        return "in-process"
    bound, used = set(dir(builtins)), set()
    for node in (n for t in (setup, *trees) for n in ast.walk(t)):
        if isinstance(node, (ast.Lambda, ast.ClassDef)):
            return "in-process"
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
            bound.update(a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs))
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    if any(name[:1].isupper() for name in used - bound):
        return "in-process"
    return "process"


def python_tasks(spec: TestSpec) -> list[dict]:
    """The runner tasks (one per case) for a Python ``call``/``assert``/``harness`` spec.

    Raises:
        TestDataError: a unittest harness with no ``test*`` methods in a ``TestCase`` class (in the
            class ``spec.unittest_class`` when it is set).
    """
    if spec.kind == "call":
        return [{"mode": "call", "fn_name": spec.fn_name, "args": c.args} for c in spec.calls]
    if spec.kind == "assert":
        return [{"mode": "assert", "setup": spec.setup_code, "test": a, "names": _names(spec)} for a in spec.asserts]
    if spec.entry_point:
        return [{"mode": "harness", "test": spec.harness, "entry_point": spec.entry_point, "names": _names(spec)}]
    found = [cls for cls, _ in count_tests(spec.harness or "") if spec.unittest_class in (None, cls)]
    if not found and spec.unittest_class:
        raise TestDataError(f"harness: no test methods in a unittest TestCase class named {spec.unittest_class!r}")
    if not found:
        raise TestDataError("harness: no entry_point, and no unittest TestCase test methods found")
    task = {"mode": "unittest", "test": spec.harness, "names": _names(spec)}
    if spec.shared_module:
        task["shared_module"] = True
    if spec.unittest_class:
        task["classes"] = [spec.unittest_class]
    return [task]


def _names(spec: TestSpec) -> dict:
    """The tests' namespace plan of a Python spec (:func:`judgebox.reward.harness.names.tests_names`),
    as the runner's task field ``names``."""
    tests = spec.asserts if spec.kind == "assert" else [spec.harness or ""]
    return tests_names(tests, spec.setup_code, spec.prefix, spec.prelude, spec.entry_point).task_field()


__all__ = ["LANGUAGE_ALIASES", "Plan", "build_plan", "forgeable", "harness_isolation", "python_tasks", "sandbox_language",
           "Split", "split_programs", "stdio_case"]
