"""The two Python programs an evalplus task needs, built from the sources of
:mod:`~judgebox.reward.loaders.evalplus.codec` and :mod:`~judgebox.reward.loaders.evalplus.rules`
(which run as they are inside the sandbox):

- :func:`reference_program`: run once per task (:mod:`~judgebox.reward.loaders.evalplus.reference`):
  executes the canonical solution (``reference.py``) on every input of ``task.json`` and writes its
  outputs, or the input it failed on, to ``result.json``;
- :func:`test_program`: the ``harness`` of the task's :class:`~judgebox.reward.spec.TestSpec`: its
  ``check(candidate)`` calls the candidate on every input and judges each output against the
  reference's by evalplus's rules (:func:`judgebox.reward.loaders.evalplus.rules.run_task`). The
  rules run in a namespace of their own (their source is a string the program executes), so a name
  the solution defines (a helper called ``max``, a variable called ``data``) can neither shadow the
  rules' builtins nor be fetched for them; the solution's function is taken before the program
  defines names of its own. The program names only the solution's function, defines no class or
  lambda, so judgebox runs it apart from the solution
  (:func:`judgebox.reward.harness.harness_isolation`: ``"process"``): outputs reach it as plain data
  (an iterator, a range or a numpy array arrives as a list, a subclass of a builtin type as its
  builtin value).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
#: the in-sandbox modules' sources: the head of the reference program, a string the test program executes
SOURCES = "\n\n".join((_HERE / name).read_text(encoding="utf-8") for name in ("codec.py", "rules.py"))

#: evalplus's ``DEFAULT_GT_TIME_LIMIT_FACTOR``: a candidate may take this many times the reference's time
TIME_FACTOR = 4.0
#: seconds every task's test program gets at least (start-up, a pipe round trip per input)
MIN_RUN_TIMEOUT = 10.0
#: seconds per MiB of test data: each input and output crosses a pipe between the solution's process
#: and the tests' (about 0.5 s of CPU per MiB measured, times four)
SECONDS_PER_MIB = 2.0
#: the embedded sandbox's longest run (``max_run_timeout``, seconds)
MAX_RUN_TIMEOUT = 300.0

_REFERENCE_MAIN = '''

def reference_main():
    """Run reference.py's entry point on task.json's inputs; write result.json."""
    with open("task.json", encoding="utf-8") as f:
        task = json.load(f)
    namespace = {"__name__": "reference"}
    try:
        with open("reference.py", encoding="utf-8") as f:
            exec(compile(f.read(), "reference.py", "exec"), namespace)
        fn = namespace.get(task["entry_point"])
        if not callable(fn):
            raise NameError("it defines no function %r" % task["entry_point"])
        groups = [[name, decode(inputs)] for name, inputs in task["groups"]]
        result = run_reference(fn, groups, task["not_none"], encode)
    except BaseException as exc:
        result = {"error": "%s: %s" % (type(exc).__name__, cut(str(exc), 500)), "where": "its definition"}
    with open("result.json", "w", encoding="utf-8") as f:
        json.dump(result, f, allow_nan=False)


reference_main()
'''

_TEST_PROGRAM = '''# HumanEval+/MBPP+ test program (judgebox.reward.loaders.evalplus): every input's output must
# match the canonical solution's by evalplus's rules.
evalplus_builtins = __import__("builtins")
evalplus_candidate = evalplus_builtins.globals().get({entry!r})  # taken before the names below exist
evalplus_rules = {{"__name__": "evalplus_rules"}}
evalplus_builtins.exec(evalplus_builtins.compile({sources}, "evalplus_rules.py", "exec"), evalplus_rules)
EVALPLUS_TASK = {data}


def check(candidate):
    """Judge the solution's function on every input (``candidate`` is evalplus_candidate, looked up
    before this program's own names were defined)."""
    task = evalplus_rules["json"].loads(EVALPLUS_TASK)
    evalplus_rules["run_task"](evalplus_candidate, task, evalplus_rules["decode"])
'''


def reference_program() -> str:
    """The program that computes a task's reference outputs (files: ``reference.py``, ``task.json``
    with ``entry_point``, ``not_none`` and encoded ``groups`` ``[[name, inputs], ...]``; writes
    ``result.json``: :func:`~judgebox.reward.loaders.evalplus.rules.run_reference`'s dict)."""
    return SOURCES + _REFERENCE_MAIN


def test_program(task: dict[str, Any]) -> str:
    """The test program of one task.

    Args:
        task: ``{"dataset", "entry_point", "atol", "groups": [[name, inputs, outputs], ...]}`` with
            inputs and outputs encoded (:func:`~judgebox.reward.loaders.evalplus.codec.encode`).
    """
    data = json.dumps(task, allow_nan=False, ensure_ascii=False)
    return _TEST_PROGRAM.format(entry=task["entry_point"], sources=repr(SOURCES), data=repr(data))


def run_timeout(reference_seconds: float, program_bytes: int) -> float:
    """Seconds the test program may run: :data:`TIME_FACTOR` times the reference's time on all
    inputs plus :data:`SECONDS_PER_MIB` per MiB of the program (its data), at least
    :data:`MIN_RUN_TIMEOUT`, at most :data:`MAX_RUN_TIMEOUT`, rounded up to 0.1 s.

    evalplus limits each input to ``max(1 s, 4 x the reference's time on it)`` and a whole group to
    61 s; judgebox limits the whole run (the sandbox stops it and the verdict is a time-limit one).
    """
    seconds = max(MIN_RUN_TIMEOUT, TIME_FACTOR * reference_seconds + SECONDS_PER_MIB * program_bytes / 2 ** 20)
    return min(MAX_RUN_TIMEOUT, math.ceil(seconds * 10) / 10)
