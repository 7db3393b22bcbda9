"""The split harness for C++ function-call tests (MultiPL-E, HumanEval-X, MBXP): two programs.

- The **tests' program** holds the prompt's own code (its includes, helpers, types; everything before
  the entry function's header), a *proxy* with the entry function's exact signature, and the tests.
  Its ``main`` (``cpp_tests.hpp``) makes the process undumpable, reads the nonce, starts the solution's
  program and runs the tests; it prints ``<nonce> {"status": "ok"}`` after they returned, or the
  failure marker from the harness's ``assert``. No code of the solution is in it.
- The **solution's program** is the prompt, the completion and the tests' text before their ``main``
  (MultiPL-E's closing brace, HumanEval-X's helpers), then a ``main`` that serves calls: it decodes
  the arguments, calls the entry function, and answers the result and every argument as the call
  left it (``cpp_solution.hpp``). Its stdin and stdout are ``/dev/null``.

Values cross in ``cpp_wire.hpp``'s typed encoding (integers of any width, floats bit for bit with
NaN and infinities, strings, vectors, lists, deques, sets, maps, pairs, tuples, optionals, variants,
``std::any`` of the scalar types and strings, nested): the tests compare with their own ``==`` and
``issame`` on values equal to the solution's. An argument passed by non-const reference comes back.
An exception of the solution's function is rethrown in the tests' process as ``std::runtime_error``;
a solution's process that ends, or answers a malformed value, ends the run without a marker
(``runtime_error``).

:func:`build` returns ``None`` when the prompt does not end with a function header it can read (an
overloaded or templated entry, an unnamed parameter, an array parameter): such a problem keeps the
one-program harness (:mod:`judgebox.reward.harness.multipl.cpp`, ``forgeable``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..multipl.markers import FAIL_JSON, OK_JSON
from .text import blanked, closing_brace, resource, split_top

#: The entry function's header at the end of the prompt: return type on the header's line.
_HEADER = re.compile(r"(?P<ret>[^;{}()#\n]*?)(?<![\w:])(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^{};]*)\)\s*\{\s*$")
_PARAM = re.compile(r"^(?P<type>.*?[\w>&*\s])(?P<name>[A-Za-z_]\w*)$", re.S)
_MAIN = re.compile(r"\bint\s+main\s*\((?P<params>[^()]*)\)\s*\{")
#: The block of angle ``#include`` lines (and blank lines) a C++ program opens with.
_INCLUDES = re.compile(r"(?:[ \t]*(?:#[ \t]*include[ \t]*<[^<>\n]+>[ \t]*)?\n)*")
_DEFINE = re.compile(r"(?:#|%:|\?\?=)\s*define\s+([A-Za-z_]\w*)")
#: The names a crossing type may be made of (cpp_wire.hpp encodes these); any other (a type the prompt
#: or the solution defines, MultiPL-E's ``Union_...`` that only a solution defines) keeps the problem
#: on the one-program harness.
_TYPE_NAMES = {"std", "const", "unsigned", "signed", "long", "short", "int", "char", "bool", "double", "float", "void",
               "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
               "string", "vector", "list", "deque", "set", "multiset", "unordered_set", "map", "unordered_map",
               "pair", "tuple", "optional", "variant", "any"}
_KEYWORDS = {"const", "volatile", "unsigned", "signed", "long", "short", "int", "char", "bool", "double",
             "float", "void", "auto", "struct", "class", "typename", "static", "inline", "return", "if",
             "while", "for", "switch"}


@dataclass(frozen=True)
class Signature:
    """The entry function as the prompt declares it: ``returns`` (type text), ``name``, ``params``
    (``(type text, name)`` each), and where its header starts in the prompt (``start``)."""

    returns: str
    name: str
    params: tuple[tuple[str, str], ...]
    start: int


def signature(prompt: str) -> Optional[Signature]:
    """The entry function's header that ``prompt`` ends with, or ``None`` if it cannot be read."""
    structure = blanked(prompt, "cpp")
    m = _HEADER.search(structure.rstrip() + "\n")
    if m is None:
        return None
    returns = m.group("ret").strip()
    if not returns or returns.split()[-1] in ("return", "else") or "template" in returns or "operator" in m.group("name"):
        return None
    params = []
    text = prompt[m.start("params"):m.end("params")].strip()
    if not set(re.findall(r"[A-Za-z_]\w*", returns + " " + text)) - {n for _, n in _names(text)} <= _TYPE_NAMES:
        return None
    if "*" in returns + text or "&&" in text or "&" in returns:  # pointers, rvalue and returned references
        return None
    for part in split_top(text) if text and text != "void" else ():
        p = _PARAM.match(part)
        if p is None or "[" in part or "=" in part or p.group("name") in _KEYWORDS or not p.group("type").strip():
            return None
        params.append((p.group("type").strip(), p.group("name")))
    return Signature(prompt[m.start("ret"):m.end("ret")].strip(), m.group("name"), tuple(params), m.start("ret"))


def _names(params: str) -> list[tuple[str, str]]:
    """``(type, name)`` of each parameter as far as :data:`_PARAM` reads it (for the type check)."""
    found = []
    for part in split_top(params) if params and params != "void" else ():
        p = _PARAM.match(part)
        if p is not None:
            found.append((p.group("type"), p.group("name")))
    return found


def _literal(json_text: str) -> str:
    return '"' + json_text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build(prompt: str, program: str, tests: str) -> Optional[tuple[str, str]]:
    """``(the solution's program, the tests' program)`` for ``program`` (the prompt and the completion,
    or a completion that restates the prompt's function) judged by ``tests`` (MultiPL-E's text after
    the prompt and the completion, with its ``main``); ``prompt`` is the problem's, read for the entry
    function and the declarations before it. ``None`` when the one-program harness must serve (see
    the module docstring)."""
    sig = signature(prompt)
    main = _MAIN.search(blanked(tests, "cpp"))
    if sig is None or main is None:
        return None
    end = closing_brace(blanked(tests, "cpp"), main.end() - 1)
    if end is None:
        return None
    wire = resource("cpp_wire.hpp")
    before, body = tests[:main.start()], tests[main.end():end]
    # the solution's program: the prompt, the completion, the tests' text before main, a server
    includes = _INCLUDES.match(program).group(0)
    decayed = [f"typename std::decay<{t}>::type" for t, _ in sig.params]
    args = [f"judgebox_a{i}" for i in range(len(sig.params))]
    server = ("int main() {\n  return judgebox_solution::serve([](judgebox_wire::In& judgebox_in, std::string& judgebox_out) {\n"
              + "".join(f"    {t} {a}{{}};\n    judgebox_wire::get(judgebox_in, {a});\n" for t, a in zip(decayed, args))
              + "    if (judgebox_in.p != judgebox_in.e) throw judgebox_wire::Bad();\n"
              + (f"    {sig.name}({', '.join(args)});\n" if sig.returns == "void" else
                 f"    auto judgebox_r = {sig.name}({', '.join(args)});\n    judgebox_wire::put(judgebox_out, judgebox_r);\n")
              + "".join(f"    judgebox_wire::put_back(judgebox_out, {a});\n" for a in args)
              + "  });\n}\n")
    program = program + before
    spliced = program.replace("\\\n", "").replace("\\\r\n", "")
    undef = sorted(set(_DEFINE.findall(spliced)) & set(re.findall(r"[A-Za-z_]\w*", server)))
    solution = (includes + wire + resource("cpp_solution.hpp") + program[len(includes):] + "\n"
                + "".join(f"#undef {n}\n" for n in undef) + server)
    # the tests' program: the prompt before the header, the proxy, the tests (their main renamed)
    params = ", ".join(f"{t} {n}" for t, n in sig.params)
    proxy = (f"{sig.returns} {sig.name}({params}) {{\n"
             f"  return judgebox_tests::Call<{sig.returns}>::run({', '.join(n for _, n in sig.params)});\n}}\n")
    head = prompt[:sig.start]
    head_includes = _INCLUDES.match(head).group(0)
    opening = re.match(r"\s*\}", blanked(before, "cpp"))  # MultiPL-E closes the entry
    helpers = before[opening.end():] if opening else before
    fail = _literal(FAIL_JSON)
    tests_program = (head_includes + wire + resource("cpp_tests.hpp") + head[len(head_includes):] + "\n" + proxy + helpers
                     + f"\n#undef assert\n#define assert(...) ((__VA_ARGS__) ? (void)0 : "
                     f"judgebox_tests::failed(#__VA_ARGS__, {fail}))\n"
                     + f"int judgebox_tests_main({tests[main.start('params'):main.end('params')]}) {{" + body
                     + "\nreturn 0;\n}\n" + tests[end + 1:] + "\n"
                     + "int main(int argc, char** argv) {\n  judgebox_tests::start(argc, argv);\n"
                     + f"  if (judgebox_tests_main({'argc, argv' if main.group('params').strip() not in ('', 'void') else ''}) != 0)\n"
                     + "    judgebox_tests::lost(\"the tests' main returned a failure\");\n"
                     + f"  judgebox_tests::report({_literal(OK_JSON)}, 0);\n}}\n")
    return solution, tests_program
