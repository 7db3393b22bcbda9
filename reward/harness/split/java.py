"""The split harness for Java function-call tests (MultiPL-E, HumanEval-X, MBXP): two programs.

- The **tests' program** is the prompt (its imports, its class and everything the class declares
  before the entry method) with the entry method's body replaced by a *proxy*, the class closed as
  the completion would close it, and the tests with their ``main`` renamed; ``JudgeboxRunner.main``
  (``java_tests.java``) reads the nonce, starts the solution's program and runs the tests, then prints
  ``<nonce> {"status": "ok"}``, or the failure marker when an ``AssertionError`` ends them (MultiPL-E's
  ``assert``, HumanEval-X's ``throw new AssertionError()``, MBXP's rewritten exception). No code of
  the solution is in it; the sandbox starts its JVM non-dumpable.
- The **solution's program** is the prompt and the completion, the tests' text that closes them with
  the tests' ``main`` taken out (MultiPL-E puts it in the solution's class), the solution's own
  ``main`` methods renamed, and ``JudgeboxServer`` (``java_solution.java``), which serves calls: it
  reads the arguments, calls the method (on one instance of its class when it is not static), and
  answers the result and every argument as the call left it.

Values cross in ``java_wire.java``'s typed encoding (the primitives and their boxes, floats bit for bit,
strings, ``BigInteger``, ``BigDecimal``, lists, sets, maps, ``Optional``, ``org.javatuples`` tuples,
arrays, nested), read back as the declared types; the tests compare them with their own ``==``,
``equals`` and helpers. A list, set, map or array argument the method changed comes back changed. An
exception of the solution's method is raised in the tests' process as a ``RuntimeException``; a
solution's process that ends or answers a malformed value ends the run without a marker
(``runtime_error``).

:func:`build` returns ``None`` (the one-program harness, ``forgeable``) when the prompt does not end
with a method header it can read, the method is generic or has varargs, its types are not all ones
the wire carries (a class of the prompt's own), or the class declares a second method of that name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..multipl.markers import FAIL, OK
from .text import blanked, closing_brace, renamed, resource, split_top

_HEADER = re.compile(r"(?m)^[ \t]*(?P<mods>(?:\b(?:public|private|protected|static|final|synchronized|strictfp)\s+)*)"
                     r"(?P<ret>[\w$.<>\[\], ?]+?)\s+(?P<name>[A-Za-z_$][\w$]*)\s*\((?P<params>[^()]*)\)\s*"
                     r"(?:throws\s+[\w$.,\s]+)?\{\s*\Z")
_CLASS = re.compile(r"\b(?:class|record|enum|interface)\s+(?P<name>[A-Za-z_$][\w$]*)")
_MAIN = re.compile(r"\bstatic\s+void\s+(?P<name>main)\s*\(\s*(?:final\s+)?String\s*(?:\[\s*\]\s*\w+|\w+\s*\[\s*\]|\.\.\.\s*\w+)\s*\)")
#: The names a crossing type may be made of (java_wire.java carries these).
_TYPE_NAMES = {"long", "int", "short", "byte", "char", "boolean", "float", "double", "void", "String", "Long",
               "Integer", "Short", "Byte", "Character", "Boolean", "Float", "Double", "List", "ArrayList", "LinkedList",
               "Map", "HashMap", "TreeMap", "LinkedHashMap", "Set", "HashSet", "TreeSet", "LinkedHashSet", "Optional",
               "BigInteger", "BigDecimal", "Unit", "Pair", "Triplet", "Quartet", "Quintet", "Sextet", "Septet", "Octet",
               "Ennead", "Decade", "Object", "java", "util", "lang", "math", "org", "javatuples", "final"}


@dataclass(frozen=True)
class Signature:
    """The entry method as the prompt declares it: its ``owner`` class, ``name``, ``returns`` (type
    text), ``params`` (names), their ``types`` (erased simple names) and whether it is ``static``."""

    owner: str
    name: str
    returns: str
    params: tuple[str, ...]
    types: tuple[str, ...]
    static: bool


def signature(prompt: str) -> Optional[Signature]:
    """The entry method whose header ``prompt`` ends with, or ``None`` (see :func:`build`)."""
    structure = blanked(prompt, "java")
    m = _HEADER.search(structure.rstrip())
    owners = list(_CLASS.finditer(structure, 0, m.start() if m else 0))
    if m is None or not owners or m.group("ret").strip() in ("new", "return", "else") or "<" in m.group("mods"):
        return None
    returns, params_text = m.group("ret").strip(), m.group("params").strip()
    if returns.startswith("<") or "..." in params_text:
        return None
    names, types = [], []
    for part in filter(None, split_top(params_text)):
        p = re.fullmatch(r"(?:final\s+)?(?P<type>.+?)\s*(?<![\w$])(?P<name>[A-Za-z_$][\w$]*)", part, re.S)
        if p is None or not p.group("type").strip():
            return None
        names.append(p.group("name"))
        types.append(_erased(p.group("type")))
    if re.search(r">\s*\[", returns + params_text):  # an array of a generic type cannot be made
        return None
    if not set(re.findall(r"[A-Za-z_$][\w$]*", returns + " " + params_text)) - set(names) <= _TYPE_NAMES:
        return None
    # the class whose body the header is in: the one the prompt leaves open (a nested type before
    # the header is closed); a class inside another is not one the server can name
    open_ = [o for o in owners if closing_brace(structure, structure.find("{", o.end())) is None]
    if len(open_) != 1:
        return None
    owner = open_[0].group("name")
    declared = rf"(?<![\w$]){re.escape(m.group('name'))}\s*\([^()]*\)\s*(?:throws[^{{;]*)?\{{"
    if len(re.findall(declared, structure[open_[0].end():])) != 1:
        return None  # an overload the proxy could not tell apart
    return Signature(owner, m.group("name"), returns, tuple(names), tuple(types), "static" in m.group("mods").split())


def _erased(type_text: str) -> str:
    """A parameter type as Java's ``Class.getSimpleName`` names its erasure (``ArrayList<Long>`` ->
    ``ArrayList``, ``java.util.List<String>[]`` -> ``List[]``)."""
    text = " ".join(type_text.split())
    while "<" in text:
        text = re.sub(r"<[^<>]*>", "", text)
    text = text.replace(" ", "")
    return text.rsplit(".", 1)[-1] if "." in text.split("[")[0] else text


def build(prompt: str, program: str, tests: str) -> Optional[tuple[str, str]]:
    """``(the solution's program, the tests' program)`` for ``program`` (the prompt and the completion,
    or a completion that restates the prompt's class) judged by ``tests`` (the dataset's text after
    them, with a ``public static void main(String[] args)``); ``prompt`` is the problem's, read for
    the entry method and its class. ``None`` when the one-program harness must serve."""
    sig = signature(prompt)
    structure = blanked(tests, "java")
    main = _MAIN.search(structure)
    if sig is None or main is None:
        return None
    brace = structure.find("{", main.end())
    end = closing_brace(structure, brace) if brace >= 0 else None
    if end is None:
        return None
    # the tests' own class: the last type declared in the tests before their main (HumanEval-X's and
    # MBXP's Main); MultiPL-E's main lies in the prompt's class, which the tests close
    own = list(_CLASS.finditer(structure, 0, main.start()))
    start = structure.rfind("\n", 0, main.start()) + 1
    closes = re.match(r"\s*\}", structure) is not None  # MultiPL-E: the tests close the entry method
    types = "new String[] {" + ", ".join(f'"{t}"' for t in sig.types) + "}"
    # the solution's program: the program, what of the tests closes it (without their main), the server
    kept = (tests[:structure.rfind("\n", 0, own[-1].start()) + 1] if own and not closes
            else tests[:start] + tests[end + 1:])
    solution = program + kept
    solution = renamed(solution, _MAIN, "java", "judgeboxOwnMain")  # the solution's own main is not an entry point
    solution += (resource("java_wire.java")
                 + resource("java_solution.java").replace("JUDGEBOX_OWNER", sig.owner)
                 .replace("JUDGEBOX_NAME", f'"{sig.name}"').replace("JUDGEBOX_TYPES", types))
    # the tests' program: the prompt, the proxy, the tests (their main renamed), the runner
    args = f"new Object[] {{{', '.join(sig.params)}}}"
    target = f"{sig.owner}.class"
    proxy = (f"        JudgeboxTests.call({target}, \"{sig.name}\", {types}, {args});\n" if sig.returns == "void" else
             f"        return ({sig.returns}) JudgeboxTests.call({target}, \"{sig.name}\", {types}, {args});\n")
    tests_main = tests[:main.start("name")] + "judgeboxTestsMain" + tests[main.end("name"):]
    tests_program = prompt + proxy + ("" if closes else "    }\n}\n") + tests_main
    runner_owner = (own[-1].group("name") if own else sig.owner)
    tests_program += (resource("java_wire.java")
                      + resource("java_tests.java").replace("JUDGEBOX_OWNER", runner_owner)
                      .replace("JUDGEBOX_FAIL", f'"{FAIL}"').replace("JUDGEBOX_OK", f'"{OK}"'))
    return solution, tests_program
