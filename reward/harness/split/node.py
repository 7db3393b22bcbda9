"""The split harness for Node.js and TypeScript function-call tests (MultiPL-E's ``assert.deepEqual``
tests, HumanEval-X's and MBXP's asserts): two programs.

- The **tests' program** is a fixed runner (``node_tests.js``, run by Node.js for both languages: the
  request's ``tests_language``) that holds no tests: its stdin brings the nonce and the tests' source,
  the prompt's code before the entry function, a *proxy* of it and the tests, which it runs (types
  stripped by esbuild for TypeScript) after starting the solution's program. It prints
  ``<nonce> {"status": "ok"}`` when they ran to their end, the failure marker when an assertion failed
  (``AssertionError``), and no marker when something else was thrown (as the one-program harness).
- The **solution's program** is the prompt and the completion followed by a server of the entry
  function on descriptors 3 and 4 (``node_solution.js``; its stdin and stdout ``/dev/null``).

Values cross in v8's serialization (the structured clone format: numbers with -0 and NaN, BigInt,
strings, arrays with their holes, plain objects, Map, Set, Date, RegExp, typed arrays, errors), so the
tests' ``assert.deepEqual`` sees values equal to the solution's; each object argument takes back what
the call left in it. What the solution's function throws is thrown by the proxy (an error with its
standard class, another class as an ``Error``, with its name, message and own properties); a value that
cannot cross (a function, a promise) is a ``TypeError`` thrown there. A solution's process that ends or answers a malformed frame ends the run
without a marker (``runtime_error``).

:func:`build` returns ``None`` (the one-program harness, ``forgeable``) for a prompt that does not end
with the header of a plain function (``function f(...) {``, ``const f = (...) => {``, ``const f =
function (...) {``; an ``async`` function or a generator's values cannot cross), and for tests that
pass a function to it or where the prompt or the tests declare a class (its instances would cross
without their methods).
"""

from __future__ import annotations

import json
import re
from typing import Optional

from ..multipl.markers import FAIL_JSON, OK_JSON
from .text import blanked, resource

_NAME = r"[A-Za-z_$][\w$]*"
#: The header of the prompt's entry function, read on its structure (comments and literals blanked).
_HEADER = re.compile(rf"(?m)^[ \t]*(?:export\s+)?(?:(?P<fn>(?:async\s+)?function\b\s*\*?\s*(?P<f>{_NAME}))"
                     rf"|(?:const|let|var)\s+(?P<v>{_NAME})\s*(?::[^=;{{}}]*)?=\s*(?P<init>(?:async\b\s*)?(?:function\b\s*\*?)?))")
_LANGUAGE = {"nodejs": False, "typescript": True}


def build(prompt: str, program: str, tests: str, language: str = "nodejs") -> Optional[tuple[str, str, str, str]]:
    """``(the solution's program, the tests' program, the tests' input, the tests' language)`` for
    ``program`` (the prompt and the completion, or a completion that restates the function) judged by
    ``tests``; ``prompt`` is the problem's, read for its entry function; ``language``: ``nodejs`` or
    ``typescript``. The tests' input follows the nonce's line on the tests' stdin (JSON: ``{"source",
    "typescript"}``); the tests' language is ``nodejs`` for both. ``None`` when the one-program
    harness must serve."""
    structure = blanked(prompt, language)
    header = None
    for header in _HEADER.finditer(structure):
        pass
    if header is None or not structure.rstrip().endswith("{"):
        return None
    rest = structure[header.start():]
    if rest.count("{") - rest.count("}") != 1:
        return None
    words = header.group("fn") or header.group("init") or ""
    if "async" in words or "*" in words or (header.group("v") and not words and "=>" not in rest):
        return None
    name = header.group("f") or header.group("v")
    tests_structure = blanked(tests, language)
    if re.search(r"\bclass\b", structure[:header.start()] + tests_structure) or _passes_functions(tests_structure, name):
        return None  # an instance of a class of their own, a function: values that cannot cross
    # tests that open by closing the entry function (the completion is its body only) give that brace
    # to the solution's program, as the one program had it
    closing = re.match(r"\s*\}", tests_structure)
    closes, tests = (tests[:closing.end()], tests[closing.end():]) if closing else ("", tests)
    proxy = f"\nfunction {name}(...judgeboxArgs) {{ return judgeboxCall(judgeboxArgs); }}\n"
    source = prompt[:header.start()] + proxy + tests
    solution = (program.rstrip() + "\n" + closes.strip() + "\n"
                + resource("node_solution.js").replace("JUDGEBOX_ENTRY", name))
    runner = (resource("node_tests.js").replace("JUDGEBOX_FAIL", json.dumps(FAIL_JSON))
              .replace("JUDGEBOX_OK", json.dumps(OK_JSON)))
    return solution, runner, json.dumps({"source": source, "typescript": _LANGUAGE[language]}), "nodejs"


def _passes_functions(tests: str, name: str) -> bool:
    """Whether ``tests`` (their structure) pass a function (``=>``, ``function``) in a call of ``name``
    or of MultiPL-E's ``candidate``."""
    for m in re.finditer(rf"(?<![\w$.])(?:{re.escape(name)}|candidate)\s*\(", tests):
        depth, end = 0, m.end() - 1
        for end in range(m.end() - 1, len(tests)):
            depth += {"(": 1, ")": -1}.get(tests[end], 0)
            if depth == 0:
                break
        if re.search(r"=>|\bfunction\b", tests[m.end():end]):
            return True
    return False
