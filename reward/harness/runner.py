"""The Python test runner that judgebox runs *inside the sandbox* (stdlib only, Python >= 3.8).

It is sent as ``main.py``; the candidate is ``solution.py`` next to it. One process runs one test.

Protocol (stdin, read in full *before* the solution is compiled or imported, so the solution can
read neither the nonce nor the tests):

- line 1: a random nonce chosen by the host for this run;
- the rest: one JSON object, the task: ``{"mode": "call", "fn_name": str, "args": [...]}``,
  ``{"mode": "assert", "setup": str, "test": str}``,
  ``{"mode": "asserts", "setup": str, "tests": [str, ...], "stop": bool}``, ``{"mode": "harness", "test": str,
  "entry_point": str}``, ``{"mode": "unittest", "test": str[, "shared_module": bool, "classes": [str, ...]]}`` or
  ``{"mode": "checker", "input": str, "output": str, "expected": str}``. Test tasks also carry
  ``"names": {"proxies": [str, ...], "bootstrap": str, "builtins": [str, ...]}``, the tests'
  namespace plan made on the host (:mod:`judgebox.reward.harness.names`).

Mode ``asserts`` runs every test in order in this one process and, after each, prints a line
``<nonce> {"index": i, "status": "ok"|"fail"|"error", "seconds": wall, "cpu": cpu, "wait": wait[, "error": str]}``
(``wait``: seconds the test's processes were runnable but waiting for a CPU)
(``stop`` ends the run after the first test that is not ``ok``); the final line then has ``ran``.

Result: the last stdout line that starts with ``<nonce> `` carries ``{"status": ..., ...}`` (the solution's own
stdout goes to /dev/null, as in HumanEval's and MBPP's harnesses, so its printing cannot crowd it out):
``ok`` (with ``value`` for call/checker; ``ran``/``skipped``/``total`` for unittest), ``skip`` (unittest:
every test was skipped), ``fail`` (an assertion failed or
the value is not JSON), ``error`` (an exception or early exit), ``compile_error`` (the solution does
not compile) or ``test_error`` (the tests do not compile). Exit status 0 only for ``ok``.

Defences: the tests are compiled as their own unit (a solution cannot swallow, comment out or
redefine them); ``SystemExit``/``BaseException`` from the solution is an error; ``os._exit`` or
any early exit leaves no marker; ``assert a == b`` is rewritten so an object whose Python-level
``__eq__`` lies (Python code from outside the stdlib/site-packages) cannot equal a plain builtin
value; what the solution changes in ``unittest``'s modules and classes is undone before the tests are
defined, ``TestCase`` helpers are pinned on the test classes, and every test ``unittest`` loads must
report an outcome; builtins the solution replaced (``__build_class__``, ``map``, ``__import__``, ...)
are put back once it has run, and the tests look builtins up in their own copy, made before the
solution ran (so a solution function that patches one while a test runs does not reach the tests).
a builtin the tests use is the real builtin unless the host's plan says the problem defines that
name (its entry point, a name its prompt declares). Code in the same interpreter can still
introspect this runner's frames (e.g. ``sys._getframe``): that deliberate attack is out of scope
for an in-process harness, and closed by ``main.py --process`` (:func:`split_main`), which runs the
tests and the nonce in a process where the solution's code never runs and whose namespace the
solution never names.
"""

import ast
import json
import os
import sys
import sysconfig
import time
import traceback
import types

#: Where trusted ``__eq__`` code lives (stdlib and installed packages, e.g. ``fractions.Fraction``).
_TRUSTED = tuple(p for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} if p)


def count_tests(source):
    """Statically list the unittest test methods of ``source``: ``[(class name, method name)]``.

    A class counts when it derives from ``TestCase`` (a base named ``TestCase``, e.g.
    ``unittest.TestCase`` or an alias import, or a class of ``source`` that does); its ``test*``
    methods and those of its bases defined in ``source`` (mixins, inherited tests) count. Only used
    to refuse a file with no tests before anything runs; the runner counts what ``unittest`` loads.
    Raises ``SyntaxError``.
    """
    classes = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
            methods = [f.name for f in node.body
                       if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name.startswith("test")]
            classes[node.name] = (bases, methods)

    def lineage(name, seen):
        if name in seen or name not in classes:
            return []
        seen.add(name)
        return [name] + [c for b in classes[name][0] for c in lineage(b, seen)]

    found = []
    for name, (bases, _) in classes.items():
        line = lineage(name, set())
        if "TestCase" in bases or any("TestCase" in classes[c][0] for c in line):
            methods = []
            for c in line:
                methods += [m for m in classes[c][1] if m not in methods]
            found += [(name, m) for m in methods]
    return found


_BUILTIN_EQ = (int, float, complex, str, bytes, bool, type(None), list, tuple, dict, set, frozenset)


def _plain(x, depth=0):
    """True iff ``x`` is built only of exact builtin types (no subclass, no Python ``__eq__``)."""
    if type(x) not in _BUILTIN_EQ or depth > 50:
        return False
    if isinstance(x, (list, tuple, set, frozenset)):
        return all(_plain(v, depth + 1) for v in x)
    if isinstance(x, dict):
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in x.items())
    return True


def _python_eq(x, depth=0):
    """True iff ``x`` (or something inside a builtin container) compares with an ``__eq__``/``__ne__``
    that is not a builtin type's nor one of the stdlib's or an installed package's classes' (so
    ``fractions.Fraction`` is trusted; a class of the solution whose ``__eq__`` is ``id`` or a lambda
    is not)."""
    if depth > 50:
        return True
    if isinstance(x, (list, tuple, set, frozenset)) and type(x) in _BUILTIN_EQ:
        return any(_python_eq(v, depth + 1) for v in x)
    if isinstance(x, dict) and type(x) is dict:
        return any(_python_eq(v, depth + 1) for v in x.values())
    return _untrusted_owner(type(x), "__eq__") or _untrusted_owner(type(x), "__ne__")


def _untrusted_owner(cls, name):
    """True iff the class of ``cls``'s MRO that defines ``name`` is neither a builtin type nor a class
    that a stdlib or installed module holds under its own name."""
    import builtins

    owner = next((k for k in type.__getattribute__(cls, "__mro__") if name in type.__getattribute__(k, "__dict__")),
                 object)
    module = type.__getattribute__(owner, "__module__")
    qualname = type.__getattribute__(owner, "__qualname__")
    if module == "builtins":
        return getattr(builtins, qualname, None) is not owner
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None) or ""
    return not (path.startswith(_TRUSTED) and getattr(mod, qualname.split(".")[0], None) is owner)


def judgebox_eq(a, b):
    """``a == b`` for test assertions, false when one side is plain and the other's ``__eq__`` is Python code."""
    if (_plain(a) and _python_eq(b)) or (_plain(b) and _python_eq(a)):
        return False
    return a == b


#: The constant an assert's rewritten ``==`` calls, replaced by :func:`judgebox_eq` in the compiled code.
_EQ_SLOT = "judgebox: the honest == of the tests"


class _HonestEq(ast.NodeTransformer):
    """Rewrites ``assert x == y`` into ``assert <judgebox_eq>(x, y)``, the function being a constant
    of the compiled code (:func:`compile_tests`): no name, so nothing in any namespace reaches it."""

    def visit_Assert(self, node):
        t = node.test
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
            call = ast.Call(func=ast.Constant(_EQ_SLOT), args=[t.left, t.comparators[0]], keywords=[])
            node.test = ast.copy_location(call, t)
        return node


def _bind_constant(code, slot, value):
    """``code`` (and the code objects inside it) with the constant ``slot`` replaced by ``value``."""
    consts = tuple(value if type(c) is str and c == slot else
                   _bind_constant(c, slot, value) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_consts=consts)


def compile_tests(source, name="tests.py"):
    """Compile test source as its own unit, with honest ``==`` in asserts (:func:`judgebox_eq`, bound
    into the code itself, never looked up by name). Raises ``SyntaxError``."""
    import warnings

    tree = ast.fix_missing_locations(_HonestEq().visit(ast.parse(source, name)))
    with warnings.catch_warnings():  # "'str' object is not callable": the slot is replaced below
        warnings.simplefilter("ignore", SyntaxWarning)
        code = compile(tree, name, "exec")
    return _bind_constant(code, _EQ_SLOT, judgebox_eq)


def _quiet_stdout():
    """A private duplicate of fd 1 for the result lines; fd 1 itself (the solution's ``print``) then
    goes to /dev/null, as HumanEval's and MBPP's own harnesses swallow the solution's output: no
    amount of printing can push the result lines past the sandbox's output limit."""
    out = os.dup(1)  # not inherited by the solution's subprocesses
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    return out


def _counters(pid="self"):
    """``() -> (cpu, wait)`` of process ``pid``, made of primitives taken now: the CPU seconds of all
    its threads (``/proc/<pid>/stat`` utime + stime) and the seconds its main thread was runnable but
    waiting for a CPU (``/proc/<pid>/schedstat``'s run_delay); 0.0 for what cannot be read. Kernel
    counters: the measured process cannot forge them."""
    open_, read, close, tck = os.open, os.read, os.close, os.sysconf("SC_CLK_TCK")

    def text(name):
        fd = open_("/proc/%s/%s" % (pid, name), os.O_RDONLY)
        try:
            return read(fd, 4096).decode()
        finally:
            close(fd)

    def counters():
        try:
            stat = text("stat").rsplit(")", 1)[1].split()
            cpu = (int(stat[11]) + int(stat[12])) / tck
        except (OSError, ValueError, IndexError):
            cpu = 0.0
        try:
            wait = int(text("schedstat").split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            wait = 0.0
        return cpu, wait

    return counters


def _run_counters(solution_pid):
    """``() -> (cpu, wait)`` of the rest of the run, for the tests' process to add to its own: in a PID
    namespace of the run's own (the solution's process is its pid 2, as full isolation starts every
    program), the CPU seconds of every other process in it (``utime + stime + cutime + cstime`` of
    each: children and orphans, whoever reaped them), so work handed to a child or a ``setsid``'d
    process still counts against each assert's limit; elsewhere (minimal isolation) the solution's
    process alone (:func:`_counters`). ``wait`` is the solution's process's."""
    solution = _counters(solution_pid)
    if solution_pid != 2:
        return solution
    own, tck = os.getpid(), os.sysconf("SC_CLK_TCK")
    open_, read, close, listdir = os.open, os.read, os.close, os.listdir

    def counters():
        ticks = 0
        for name in listdir("/proc"):
            if not name.isdigit() or int(name) == own:
                continue
            try:
                fd = open_("/proc/%s/stat" % name, os.O_RDONLY)
                try:
                    stat = read(fd, 4096).decode().rsplit(")", 1)[1].split()
                finally:
                    close(fd)
                ticks += int(stat[11]) + int(stat[12]) + int(stat[13]) + int(stat[14])
            except (OSError, ValueError, IndexError):
                pass
        return ticks / tck, solution()[1]

    return counters


def _tools(nonce, out=1):
    """``(report, error_text, write_json, clock, cpu, waited)`` for one run, made of primitives taken now
    (before the solution runs, so it cannot patch them): ``report(status, **fields)`` prints the final
    result line to fd ``out`` and exits (0 only for ``ok``); ``write_json(dict)`` prints one per-test
    line; ``waited()`` is this process's seconds of waiting for a CPU so far."""
    write, dumps, exit_, fmt = os.write, json.dumps, os._exit, traceback.format_exception_only
    clock, cpu, flush, counters = time.monotonic, time.process_time, sys.stdout.flush, _counters()

    def waited():
        return counters()[1]

    def write_line(obj):
        try:
            flush()
        except Exception:
            pass
        write(out, ("\n%s %s\n" % (nonce, obj)).encode("utf-8", "replace"))

    def write_json(obj):
        write_line(dumps(obj))

    def report(status, **fields):
        try:
            text = dumps(dict(status=status, **fields), allow_nan=True)
        except (TypeError, ValueError, RecursionError) as exc:
            status, text = "fail", dumps({"status": "fail", "error": "result is not a JSON value: %s" % exc})
        write_line(text)
        exit_(0 if status == "ok" else 1)

    ended = _Ended

    def error_text(exc):
        if isinstance(exc, ended):  # its text is the solution's own error ("SystemExit: 0"), not ours to name
            return str(exc)[-2000:]
        return "".join(fmt(type(exc), exc)).strip()[-2000:]

    return report, error_text, write_json, clock, cpu, waited


def _compile_task(task, report, error_text):
    """``(tests, batch, setup)`` code objects of a task; a ``test_error`` report when they do not compile."""
    try:
        tests = compile_tests(task["test"]) if "test" in task else None
        batch = [compile_tests(t, "test_%d.py" % i) for i, t in enumerate(task.get("tests") or [])]
        setup = compile(task.get("setup") or "", "setup.py", "exec")
    except (SyntaxError, ValueError) as exc:
        report("test_error", error=error_text(exc))
    return tests, batch, setup


def _assert_loop(batch, ns, stop, tools, failed=(AssertionError,), other=lambda: (0.0, 0.0)):
    """Run ``batch`` (compiled asserts) in ``ns`` in order, one per-test line each (``stop``: after the
    first that is not ``ok``); returns how many ran. ``failed`` exceptions are ``fail``, other
    ``Exception``s ``error``; anything else (``SystemExit``) propagates: the run ends. ``other()``:
    the ``(cpu, wait)`` counters of the solution's process when it is not this one."""
    report, error_text, write_json, clock, cpu, waited = tools

    def counters():
        o_cpu, o_wait = other()
        return cpu() + o_cpu, waited() + o_wait

    ran = 0
    for i, test in enumerate(batch):
        start, (start_cpu, start_wait), failure = clock(), counters(), None
        try:
            exec(test, ns)
            status = "ok"
        except failed as exc:
            status, failure = "fail", error_text(exc)
        except Exception as exc:
            status, failure = "error", error_text(exc)
        end_cpu, end_wait = counters()
        line = dict(index=i, status=status, seconds=round(clock() - start, 6),
                    cpu=round(end_cpu - start_cpu, 6), wait=round(end_wait - start_wait, 6))
        if failure:
            line["error"] = failure
        write_json(line)
        ran = i + 1
        if status != "ok" and stop:
            break
    return ran


def main():
    """Run the one test described on stdin and print the nonce-prefixed result line."""
    nonce = sys.stdin.readline().strip()
    task = json.loads(sys.stdin.read())
    tools = _tools(nonce, _quiet_stdout())  # bound before the solution runs
    report, error_text = tools[0], tools[1]
    mode = task["mode"]
    tests, batch, setup = _compile_task(task, report, error_text)

    import builtins
    import unittest

    test_case = unittest.TestCase
    pristine = dict(vars(test_case))
    saved = _snapshot(unittest)
    saved_builtins = dict(vars(builtins))  # the tests' own builtins: the solution cannot reach this copy
    result_class = _result_class(unittest, error_text, tests)
    guarded = _guarded_asserts(pristine)
    restore, run_unittest, assert_loop, call = _restore, _run_unittest, _assert_loop, _call
    names = task.get("names") or {}
    kept_builtins = names.get("builtins") or ()
    try:  # the prompt's own code, compiled before the solution runs; run in the tests' namespace
        bootstrap = compile(names.get("bootstrap") or "", "prompt.py", "exec")
    except (SyntaxError, ValueError) as exc:
        report("test_error", error=error_text(exc))
    sys.modules["__main__"] = types.ModuleType("__main__")  # `import __main__` no longer reaches this runner

    with open("solution.py", encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        report("compile_error", error=error_text(exc))
    module = types.ModuleType("solution")
    module.__file__ = os.path.abspath("solution.py")
    sys.modules["solution"] = module
    try:
        exec(code, module.__dict__)
        restore(saved, builtins=(builtins, saved_builtins))  # undone before the tests exist
        if task.get("shared_module"):  # the tests run in the solution's own module (BigCodeBench's harness)
            tests_module = module
        else:
            tests_module = types.ModuleType("__judgebox_tests__")
            tests_module.__dict__.update(module.__dict__)
            tests_module.__name__ = "__judgebox_tests__"
            sys.modules["__judgebox_tests__"] = tests_module
        ns = tests_module.__dict__
        ns["__builtins__"] = dict(saved_builtins)
        if not task.get("shared_module"):
            for name in kept_builtins:  # a builtin the tests use is the real one, not the solution's
                ns.pop(name, None)
            try:  # the prompt's helpers and constants are the prompt's, with the tests' builtins
                exec(bootstrap, ns)
            except Exception as exc:  # after the solution ran: its doing, never a test-data error
                report("error", error="the prompt's own code failed after the solution ran: %s" % error_text(exc))
        if mode == "call":
            report("ok", value=call(ns, task["fn_name"], task["args"]))
        if mode == "checker":
            verdict = ns["check"](task["input"], task["output"], task["expected"])
            if type(verdict) is not bool:
                report("error", error="check() must return a bool, got %s" % type(verdict).__name__)
            report("ok", value=verdict)
        exec(setup, ns)
        if mode == "asserts":
            report("ok", ran=assert_loop(batch, ns, task.get("stop"), tools))
        solution_objects = {id(v) for v in ns.values()} if mode == "unittest" else ()  # test classes: the tests' own
        exec(tests, ns)
        if mode == "harness":
            entry = task["entry_point"]
            if entry not in ns:
                report("error", error="NameError: %r is not defined by the solution" % entry)
            ns["check"](ns[entry])
            report("ok")
        if mode == "unittest":
            status, fields = run_unittest(unittest, tests_module, {**pristine, **guarded}, result_class(),
                                          task.get("classes"), solution_objects)
            report(status, **fields)
        report("ok")
    except AssertionError as exc:
        report("fail", error=error_text(exc))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from the solution included
        report("error", error=error_text(exc))


def _call(ns, fn_name, args):
    """Find ``fn_name`` (a ``Solution`` method wins over a top-level function) and call it."""
    target = None
    sol = ns.get("Solution")
    if isinstance(sol, type) and hasattr(sol, fn_name):
        target = getattr(sol(), fn_name)
    elif callable(ns.get(fn_name)):
        target = ns[fn_name]
    if target is None:
        raise NameError("function %r is not defined (neither top-level nor a Solution method)" % fn_name)
    return target(*args)


_MISSING = object()


def _snapshot(unittest):
    """The namespaces of ``unittest``'s modules and classes, copied before the solution runs, and
    their ``sys.modules`` entries (``(None, {name: module})`` first)."""
    case = sys.modules["unittest.case"]
    objects = [case, sys.modules["unittest.suite"], sys.modules["unittest.result"], sys.modules["unittest.loader"],
               unittest.TestCase, unittest.TestSuite, unittest.suite.BaseTestSuite, unittest.TestResult,
               unittest.TestLoader, unittest.FunctionTestCase]
    objects += [getattr(case, n) for n in ("_Outcome", "_SubTest") if isinstance(getattr(case, n, None), type)]
    entries = {n: m for n, m in sys.modules.items() if n == "unittest" or n.startswith("unittest.")}
    return [(None, entries)] + [(obj, dict(vars(obj))) for obj in objects]


def _restore(saved, builtins=None):
    """Undo every change to the namespaces of :func:`_snapshot` (added names removed, others reset),
    and, given ``builtins=(module, its namespace before)``, put back every builtin the solution
    replaced or deleted (names it added are left: the solution's own code may use them)."""
    if builtins is not None:
        module, before = builtins
        for name, value in before.items():
            if vars(module).get(name, _MISSING) is not value:
                setattr(module, name, value)
    for obj, before in saved:
        if obj is None:  # the sys.modules entries of unittest's modules
            for name in [n for n in sys.modules if (n == "unittest" or n.startswith("unittest.")) and n not in before]:
                del sys.modules[name]
            sys.modules.update(before)
            continue
        now = vars(obj)
        for name in [n for n in now if n not in before]:
            try:
                delattr(obj, name)
            except (AttributeError, TypeError):
                pass
        for name, value in before.items():
            if now.get(name, _MISSING) is not value:
                try:
                    setattr(obj, name, value)
                except (AttributeError, TypeError):
                    pass


#: ``TestCase`` assertions that compare their operands with ``==``: guarded so that an operand whose
#: ``==`` is the solution's own code never equals plain builtin data (:func:`_guarded_asserts`).
_EQUALITY_ASSERTS = ("assertEqual", "assertNotEqual", "assertListEqual", "assertTupleEqual", "assertDictEqual",
                     "assertSetEqual", "assertSequenceEqual", "assertCountEqual", "assertMultiLineEqual",
                     "assertIn", "assertNotIn", "assertAlmostEqual", "assertNotAlmostEqual")


def _guarded_asserts(pristine):
    """``{name: method}``: the pristine ``TestCase`` equality assertions of :data:`_EQUALITY_ASSERTS`,
    each failing first when one operand is plain builtin data and the other compares with code that
    is not a builtin's nor a trusted library's (:func:`_python_eq`), as :func:`judgebox_eq` does for
    ``assert a == b``. Made before the solution runs."""
    plain, lying = _plain, _python_eq

    def guard(name, method):
        def guarded(self, first, second, *args, **kwargs):
            if (plain(first) and lying(second)) or (plain(second) and lying(first)):
                self.fail("%s: an operand compares with the solution's own code (%s vs %s)"
                          % (name, type(first).__name__, type(second).__name__))
            return method(self, first, second, *args, **kwargs)
        guarded.__name__ = name
        return guarded

    return {name: guard(name, pristine[name]) for name in _EQUALITY_ASSERTS if name in pristine}


def _code_ids(code):
    """The ids of ``code`` and of every code object inside it (its functions, classes, lambdas)."""
    import types

    found, stack = set(), [code]
    while stack:
        c = stack.pop()
        if id(c) not in found:
            found.add(id(c))
            stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return found


def _result_class(unittest, error_text, tests_code=None):
    """A ``unittest.TestResult`` that records each test's outcome (made before the solution runs).
    A ``SkipTest`` counts as a skip only when every frame it passed through is the tests' own code
    (``tests_code``'s code objects, by identity) or the standard library's (``skipTest``,
    ``skipIf``); raised through any other code (the solution's, whatever file name it claims) it is an
    error."""
    own = _code_ids(tests_code) if tests_code is not None else set()
    trusted = _TRUSTED
    rank = {"skip": 0, "ok": 1, "fail": 2, "error": 3}

    class Result(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.outcome, self.first, self.fixture_error, self.fixture_skips = {}, {}, None, 0

        def note(self, test, status, err=None):
            if not isinstance(test, unittest.TestCase):  # a class/module fixture (_ErrorHolder)
                if status == "skip":
                    self.fixture_skips += 1
                elif self.fixture_error is None:
                    self.fixture_error = "%s: %s" % (test, error_text(err[1]) if err else status)
                return
            if rank[status] >= rank.get(self.outcome.get(test), -1):
                self.outcome[test] = status
            if err is not None and status in ("fail", "error") and status not in self.first:
                self.first[status] = "%s: %s" % (test.id(), error_text(err[1]))

        def addSuccess(self, test):
            self.note(test, "ok")

        def addFailure(self, test, err):
            self.note(test, "fail", err)

        def addError(self, test, err):
            self.note(test, "error", err)

        def addSkip(self, test, reason):
            exc = sys.exc_info()[1]  # set when SkipTest was raised while the test ran (not a decorator)
            tb = getattr(exc, "__traceback__", None)
            while tb is not None:
                code = tb.tb_frame.f_code
                if id(code) not in own and not code.co_filename.startswith(trusted):  # the solution's skip
                    return self.note(test, "error", (None, RuntimeError("the solution raised SkipTest: %s" % reason),
                                                     None))
                tb = tb.tb_next
            self.note(test, "skip")

        def addExpectedFailure(self, test, err):
            self.note(test, "ok")

        def addUnexpectedSuccess(self, test):
            self.note(test, "fail", (None, AssertionError("unexpected success"), None))

        def addSubTest(self, test, subtest, err):
            if err is not None:
                failed = issubclass(err[0], test.failureException)
                self.note(test, "fail" if failed else "error", err)

    return Result


def _run_unittest(unittest, tests_module, pristine, result, classes=None, solution_objects=()):
    """Run the tests module as ``python -m unittest`` does: every ``TestCase`` class it defines (by
    name, like ``dir()``; ``classes``: only the classes of these names, as BigCodeBench runs
    ``TestCases`` alone), inherited and mixed-in ``test*`` methods, class and module fixtures, skips,
    ``subTest`` and expected failures. ``TestCase`` helpers are pinned on each test class. A class
    in ``solution_objects`` (ids of what the solution's module held before the tests ran: in a shared
    module, the solution's own classes) is never a test class.

    Returns ``(status, fields)`` for the result line: ``ok`` with ``ran`` (passed), ``skipped`` and
    ``total``; ``fail``/``error`` naming the first failing test; ``skip`` when no test passed and
    none failed (a skip is neither a pass nor a fail); ``error`` when no test was found at run time
    (the host refuses a file with none before the run, so the solution hid them).
    """
    test_case = unittest.TestCase
    suite, tests = unittest.TestSuite(), []
    for name in sorted(vars(tests_module)):
        cls = vars(tests_module)[name]
        if not (isinstance(cls, type) and issubclass(cls, test_case) and cls.__module__ == tests_module.__name__):
            continue
        if (classes is not None and name not in classes) or id(cls) in solution_objects:
            continue
        for attr, value in pristine.items():
            owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
            if owner is test_case and not attr.startswith("__"):
                setattr(cls, attr, value)
        loaded = unittest.TestLoader().loadTestsFromTestCase(cls)
        suite.addTests(loaded)
        tests += list(loaded)
    if not tests:  # the host counted test methods in the file before the run: the solution hid them
        return "error", {"error": "no TestCase test methods were found at run time, though the file defines some "
                                  "(the solution changed unittest or the tests' classes)"}
    suite.run(result)
    if result.fixture_error:
        return "error", {"error": result.fixture_error}
    statuses = [result.outcome.get(t) for t in tests]
    if None in statuses and not result.fixture_skips:
        return "fail", {"error": "%d of %d tests did not run" % (statuses.count(None), len(tests))}
    statuses = [s or "skip" for s in statuses]
    counts = dict(ran=statuses.count("ok"), skipped=statuses.count("skip"), total=len(tests))
    for bad in ("error", "fail"):
        if bad in statuses:
            return bad, dict(counts, error=result.first.get(bad, "a test failed"))
    if not counts["ran"]:
        return "skip", dict(counts, error="every test was skipped")
    return "ok", counts


# tests and solution in two processes (``main.py --process``) --------------------------------------------------
#
# The runner forks before it reads stdin. The child (made non-dumpable first, so the solution cannot
# read its memory or file descriptors through /proc) reads the nonce and the tests and runs the tests
# with proxies for the solution's names; the runner's own process closes stdin, waits for the child's
# word, then runs the solution and answers calls over a pipe. Values cross in the typed encoding of
# :func:`encode`, so only plain data (never an object of the solution's) reaches the tests' process.

#: Builtin types that may cross by name (MBPP tests pass ``int`` or ``str`` as arguments).
_TYPES = {t.__name__: t for t in (int, float, str, bytes, bool, list, tuple, dict, set, frozenset, complex,
                                  type(None))}


#: The most items an iterator of the solution yields across to the tests' process (:func:`encode`).
MAX_ITER_ITEMS = 1000000


def encode(x, depth=0):
    """``x`` as JSON-able data: ``None``/``bool``/``str``/small ``int``/finite ``float`` and lists as
    themselves, everything else tagged (``{"$tuple": [...]}``, ``$set``, ``$frozenset``, ``$bytes``
    (latin-1 text), ``$int`` (decimal text, beyond 2**53), ``$float`` (``nan``/``inf``/``-inf``),
    ``$dict`` (key/value pairs), ``$complex``, ``$deque``, ``$ordered``, ``$counter``, ``$decimal``,
    ``$fraction``, ``$keys``/``$values``/``$items`` (dict views), ``$type`` (a builtin type by name),
    ``$range`` (start, stop, step), ``$iter`` (an iterator or generator: the items it yields, at most
    :data:`MAX_ITER_ITEMS`; it crosses as an iterator, so ``range(3) == [0, 1, 2]`` stays false as
    in Python), ``$bytearray``; numpy values become lists/numbers. Raises ``TypeError`` for anything else.

    ``decimal`` and ``fractions`` are looked up, not imported (a value of theirs exists only once
    its module was imported; importing them costs ~3 ms per process)."""
    import collections

    decimal, fractions = sys.modules.get("decimal"), sys.modules.get("fractions")

    if depth > 100:
        raise TypeError("value nested deeper than 100 levels")
    t, d = type(x), depth + 1
    if x is None or t in (bool, str):
        return x
    if t is int:
        return x if abs(x) < 2 ** 53 else {"$int": str(x)}
    if t is float:
        return x if x == x and x not in (float("inf"), float("-inf")) else {"$float": repr(x)}
    if t is list:
        return [encode(v, d) for v in x]
    simple = {tuple: "$tuple", set: "$set", frozenset: "$frozenset", collections.deque: "$deque",
              type({}.keys()): "$keys", type({}.values()): "$values"}
    if t in simple:
        return {simple[t]: [encode(v, d) for v in x]}
    pairs = {dict: "$dict", collections.OrderedDict: "$ordered", collections.Counter: "$counter",
             collections.defaultdict: "$dict", type({}.items()): "$items"}
    if t in pairs:
        return {pairs[t]: [[encode(k, d), encode(v, d)] for k, v in (x.items() if t is not type({}.items()) else x)]}
    if t is bytes:
        return {"$bytes": x.decode("latin-1")}
    if t is bytearray:
        return {"$bytearray": x.decode("latin-1")}
    if t is range:
        return {"$range": [x.start, x.stop, x.step]}
    if t is type and _TYPES.get(x.__name__) is x:
        return {"$type": x.__name__}
    if t is complex:
        return {"$complex": [encode(x.real, d), encode(x.imag, d)]}
    if decimal is not None and t is getattr(decimal, "Decimal", None):
        return {"$decimal": str(x)}
    if fractions is not None and t is getattr(fractions, "Fraction", None):
        return {"$fraction": [str(x.numerator), str(x.denominator)]}
    base = next((b for b in (bool, int, float, str, bytes, tuple, list, dict, set, frozenset) if isinstance(x, b)), None)
    if base is not None and t is not base:  # a subclass: only its builtin value crosses (a lying __eq__ stays behind)
        return encode(base(x), d)
    if hasattr(x, "__next__") and hasattr(x, "__iter__"):
        items = []
        for v in x:
            if len(items) >= MAX_ITER_ITEMS:
                raise TypeError("an iterator of more than %d items cannot cross to the tests' process" % MAX_ITER_ITEMS)
            items.append(encode(v, d))
        return {"$iter": items}
    if t.__module__ == "numpy" and hasattr(x, "tolist"):
        return encode(x.tolist(), d)
    raise TypeError("a %s value cannot cross to the tests' process (plain data only)" % t.__name__)


def decode(x, depth=0):
    """The value :func:`encode` encoded; ``ValueError`` for anything it cannot have produced."""
    import collections

    if depth > 101:
        raise ValueError("value nested too deep")
    d = depth + 1
    if x is None or type(x) in (bool, str, int, float):
        return x
    if type(x) is list:
        return [decode(v, d) for v in x]
    if type(x) is not dict or len(x) != 1:
        raise ValueError("not an encoded value")
    (tag, v), = x.items()
    items = lambda: [decode(i, d) for i in v]  # noqa: E731
    pairs = lambda: [(decode(k, d), decode(w, d)) for k, w in v]  # noqa: E731
    makers = {
        "$tuple": lambda: tuple(items()), "$set": lambda: set(items()), "$frozenset": lambda: frozenset(items()),
        "$deque": lambda: collections.deque(items()), "$bytes": lambda: v.encode("latin-1"),
        "$bytearray": lambda: bytearray(v.encode("latin-1")), "$iter": lambda: iter(items()),
        "$range": lambda: range(*[int(i) for i in v]) if len(v) == 3 else None,
        "$int": lambda: int(v), "$float": lambda: float(v), "$dict": lambda: dict(pairs()),
        "$ordered": lambda: collections.OrderedDict(pairs()), "$counter": lambda: collections.Counter(dict(pairs())),
        "$complex": lambda: complex(*items()), "$decimal": lambda: __import__("decimal").Decimal(v),
        "$fraction": lambda: __import__("fractions").Fraction(int(v[0]), int(v[1])),
        "$keys": lambda: dict.fromkeys(items()).keys(), "$values": lambda: dict(enumerate(items())).values(),
        "$items": lambda: dict(pairs()).items(), "$type": lambda: _TYPES[v],
    }
    if tag not in makers:
        raise ValueError("unknown tag %r" % tag)
    try:
        return makers[tag]()
    except (TypeError, ValueError, ArithmeticError, KeyError) as exc:
        raise ValueError("bad %s value: %s" % (tag, exc)) from None


def _undumpable():
    """``prctl(PR_SET_DUMPABLE, 0)``: processes of the same user can no longer read this one's
    memory or file descriptors through /proc or ptrace. Raises ``OSError`` when it cannot be set."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _serve(requests, answers, error_text):
    """The solution's process: load ``solution.py`` when told, then answer calls until EOF."""
    def send(obj):
        try:
            sys.stdout.flush()
        except Exception:
            pass
        answers.write((json.dumps(obj) + "\n").encode())

    first = requests.readline()  # the tests' process has read stdin: now the solution may run
    if not first:
        return
    with open("solution.py", encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        send({"status": "compile_error", "error": error_text(exc)})
        return
    module = types.ModuleType("solution")
    module.__file__ = os.path.abspath("solution.py")
    sys.modules["solution"] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:
        send({"status": "error", "error": error_text(exc)})
        return
    ns = module.__dict__
    asked = json.loads(first).get("names") or []  # the tests' names; this process only says what each is
    send({"status": "ok", "kinds": {n: _kind(ns, n) for n in asked if isinstance(n, str)}})
    while True:
        line = requests.readline()
        if not line:
            return
        req = json.loads(line)
        try:
            if req["op"] == "get":
                value = ns[req["name"]]
            elif req["op"] == "entry":
                value = _call(ns, req["name"], decode(req["args"]))
            else:
                args, kwargs = decode(req["args"]), dict(decode(req["kwargs"]))
                value = ns[req["name"]](*args, **kwargs)
            try:
                out = {"value": encode(value)}
                if req["op"] == "call":
                    out.update(_mutated(req, args, kwargs))
            except (TypeError, ValueError, RecursionError) as exc:
                out = {"notdata": error_text(exc)}
        except BaseException as exc:  # SystemExit from the solution included: the test sees an error
            out = {"raise": type(exc).__name__, "error": error_text(exc)}
        send(out)


def _kind(ns, name):
    """What the solution's module holds under ``name``: ``callable``, ``value`` (data) or ``missing``."""
    if name not in ns:
        return "missing"
    return "callable" if callable(ns[name]) else "value"


def _mutable():
    import collections

    return (list, dict, set, bytearray, collections.deque, collections.OrderedDict, collections.Counter)


def _mutated(req, args, kwargs):
    """The arguments of a call that the solution changed in place (at any depth), encoded:
    ``{"mutated": {"0": ..., "name": ...}}`` (positions and keyword names; empty when none was), so
    the tests' side can apply the change to its own objects (a test may check ``x`` after
    ``candidate(x)``, as it can in-process)."""
    sent = req["args"]
    changed = {str(i): e for i, a in enumerate(args) if i < len(sent) for e in [encode(a)] if e != sent[i]}
    sent_kw = dict(decode(req["kwargs"]))
    changed.update({k: e for k, a in kwargs.items() if k in sent_kw for e in [encode(a)] if e != encode(sent_kw[k])})
    return {"mutated": changed} if changed else {}


def _write_back(target, value, depth=0):
    """Make the tests' own argument ``target`` equal ``value``, its state after the call, in place,
    keeping the identity of the containers inside it (a test may hold an inner list)."""
    kinds = _mutable()
    if depth > 100:
        return
    if isinstance(target, list) and isinstance(value, list) and len(target) == len(value):
        for i, (old, new) in enumerate(zip(target, value)):
            if type(old) is type(new) and type(old) in kinds + (tuple,):
                _write_back(old, new, depth + 1)
            if not (type(old) is type(new) and type(old) in kinds) and old is not new:
                target[i] = new
    elif isinstance(target, tuple) and isinstance(value, tuple) and len(target) == len(value):
        for old, new in zip(target, value):  # a tuple's own items cannot change, its lists can
            if type(old) is type(new) and type(old) in kinds + (tuple,):
                _write_back(old, new, depth + 1)
    elif isinstance(target, dict) and isinstance(value, dict):
        for key in [k for k in target if k not in value]:
            del target[key]
        for key, new in value.items():
            old = target.get(key, _MISSING)
            if type(old) is type(new) and type(old) in kinds + (tuple,):
                _write_back(old, new, depth + 1)
            if not (type(old) is type(new) and type(old) in kinds):
                target[key] = new
    elif isinstance(target, set):
        target.clear()
        target.update(value)
    elif isinstance(target, (list, bytearray)):
        target[:] = value
    elif hasattr(target, "extend") and hasattr(target, "clear"):  # a deque
        target.clear()
        target.extend(value)


class _NotData(Exception):
    """The solution returned something that is not plain data: the test fails (wrong answer)."""


class _Ended(BaseException):
    """The solution's process ended or raised ``SystemExit``: the whole run is an error, as in-process."""


class _Solution:
    """The tests' side of the pipe to the solution's process."""

    def __init__(self, requests, answers):
        self.requests, self.answers = requests, answers

    def answer(self, **req):
        """Send one request; the raw answer (a dict). Raises ``RuntimeError`` when the process ended."""
        self.requests.write((json.dumps(req) + "\n").encode())
        line = self.answers.readline()
        if not line:
            raise _Ended("the solution's process ended (exit or crash) during a call")
        return json.loads(line)

    def ask(self, **req):
        """One call's decoded value, or the solution's exception raised here (builtin types kept)."""
        return self.value(self.answer(**req))

    def value(self, out):
        """The decoded value of the raw answer ``out`` (see :meth:`ask`)."""
        if "notdata" in out:
            raise _NotData(out["notdata"])
        if "raise" in out:
            import builtins

            exc = getattr(builtins, out["raise"], None)
            if isinstance(exc, type) and issubclass(exc, BaseException) and not issubclass(exc, Exception):
                raise _Ended(out.get("error", ""))
            if not (isinstance(exc, type) and issubclass(exc, Exception)):
                exc = RuntimeError
            text = str(out.get("error", ""))
            if exc.__name__ == out["raise"]:  # "ValueError: 3" raised as a ValueError here: say the name once
                text = text[len(out["raise"]):].lstrip(":").lstrip() if text.startswith(out["raise"]) else text
            raise exc("%s (raised in the solution's process)" % text if text else "(raised in the solution's process)")
        if "value" not in out:
            raise RuntimeError("the solution's process answered out of protocol")
        return decode(out["value"])

    def proxy(self, name):
        def call(*args, **kwargs):
            out = self.answer(op="call", name=name, args=encode(list(args)), kwargs=encode(kwargs))
            for key, after in (out.get("mutated") or {}).items():  # changed in place by the solution
                target = args[int(key)] if key.isdigit() and int(key) < len(args) else kwargs.get(key, _MISSING)
                if target is not _MISSING:
                    _write_back(target, decode(after))
            return self.value(out)
        call.__name__ = call.__qualname__ = name
        return call


def split_main():
    """``main.py --process``: run the one test on stdin with the solution in another process.

    The program's own process becomes the solution's (so the sandbox's CPU and run-queue accounting
    follows the solution's work); a forked child, made non-dumpable before it reads stdin, runs the
    tests and prints the result line; the solution's process then exits with the child's status.
    """
    req_r, req_w = os.pipe()
    ans_r, ans_w = os.pipe()
    fmt = traceback.format_exception_only

    def error_text(exc):
        return "".join(fmt(type(exc), exc)).strip()[-2000:]

    pid = os.fork()
    if pid != 0:  # the solution's process: no stdin, and the solution runs only once the tests have it
        os.close(req_w)
        os.close(ans_r)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)  # the solution's output is swallowed: only the tests' process writes results
        os.close(null)
        _serve(os.fdopen(req_r, "rb"), os.fdopen(ans_w, "wb", buffering=0), error_text)
        try:
            sys.stdout.flush()
        except Exception:
            pass
        _, status = os.waitpid(pid, 0)  # the tests' process is done: its CPU time counts with ours
        os._exit(os.waitstatus_to_exitcode(status) if status else 0)
    _undumpable()
    os.close(req_r)
    os.close(ans_w)
    _run_tests_process(os.fdopen(req_w, "wb", buffering=0), os.fdopen(ans_r, "rb"), _run_counters(os.getppid()))


def _run_tests_process(requests, answers, solution_counters):
    """The tests' process: read the nonce and the task, run the tests against proxies, report.
    ``solution_counters()``: the ``(cpu, wait)`` of the solution's process, read from the kernel.

    The tests' namespace is the task's ``names`` plan (made on the host from the tests, the prompt
    and the entry point: :mod:`judgebox.reward.harness.names`): its ``bootstrap`` (imports and the
    prompt's helpers) runs here, and each of its ``proxies`` is the solution's function (a proxy)
    or value (data). The solution's process never names anything here, no module is imported by a
    name it reports, and the working folder (which the solution writes) is not on the import path.
    """
    import builtins

    here = os.path.abspath(os.getcwd())
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]
    if hasattr(sys, "set_int_max_str_digits"):  # a result of any size crosses and is reported (3.11+)
        sys.set_int_max_str_digits(0)
    nonce = sys.stdin.readline().strip()
    task = json.loads(sys.stdin.read())
    tools = _tools(nonce)
    report, error_text = tools[0], tools[1]
    solution = _Solution(requests, answers)
    mode = task["mode"]
    names = task.get("names") or {}
    proxies = [n for n in names.get("proxies") or () if n != task.get("fn_name")]
    tests, batch, setup = _compile_task(task, report, error_text)
    try:
        bootstrap = compile(names.get("bootstrap") or "", "prompt.py", "exec")
    except (SyntaxError, ValueError) as exc:
        report("test_error", error=error_text(exc))
    ns = {"__builtins__": builtins, "__name__": "__judgebox_tests__"}
    try:
        exec(bootstrap, ns)  # before the solution runs: nothing of it can be reached from here
    except Exception as exc:
        report("test_error", error="the tests' imports or the prompt's helpers failed: %s" % error_text(exc))
    try:
        loaded = solution.answer(op="load", names=proxies)
    except (_Ended, ValueError):
        loaded = {"status": "error", "error": "the solution's process ended before it was loaded"}
    try:
        if loaded.get("status") != "ok":
            # the solution's process answers this: only the outcomes of its own loading count (a
            # forged "test_error" would turn its wrong answer into a masked reward)
            status = loaded.get("status")
            report(status if status in ("compile_error", "error") else "error", error=str(loaded.get("error", "")))
        kinds = loaded.get("kinds")
        kinds = kinds if isinstance(kinds, dict) else {}
        for name in proxies:
            if kinds.get(name) == "callable":
                ns[name] = solution.proxy(name)
            elif kinds.get(name) == "value":
                try:
                    ns[name] = solution.ask(op="get", name=name)
                except _NotData:
                    pass  # not data: the name stays unbound here (a NameError if a test uses it)
        if mode == "call":
            report("ok", value=solution.ask(op="entry", name=task["fn_name"], args=encode(task["args"])))
        exec(setup, ns)
        if mode == "asserts":
            report("ok", ran=_assert_loop(batch, ns, task.get("stop"), tools, (AssertionError, _NotData),
                                          solution_counters))
        exec(tests, ns)
        entry = task["entry_point"]
        if entry not in ns:
            report("error", error="NameError: %r is not defined by the solution" % entry)
        ns["check"](ns[entry])
        report("ok")
    except (AssertionError, _NotData) as exc:
        report("fail", error=error_text(exc))
    except BaseException as exc:
        report("error", error=error_text(exc))


if __name__ == "__main__":
    split_main() if "--process" in sys.argv[1:] else main()
