"""The split harness for Rust function-call tests (MultiPL-E, HumanEval-X): two programs.

- The **tests' program** is the prompt before the entry function (its ``use`` lines and helpers), a
  *proxy* with the entry function's signature, and the tests, whose ``main`` the runtime
  (``rust_tests.rs``) calls after it read the nonce and started the solution's program; it prints
  ``<nonce> {"status": "ok"}`` after they returned, or the failure marker when an ``assert!`` or
  ``assert_eq!`` panicked. No code of the solution is in it; its binary is execute-only, so its
  process is non-dumpable.
- The **solution's program** is the prompt, the completion, the brace of the tests that closes the
  function (MultiPL-E's), then a ``main`` that serves calls (``rust_solution.rs``): it reads the
  arguments, calls the function, and answers the result and every ``&mut`` argument as the call left
  it. Its stdin and stdout are ``/dev/null``.

Values cross in ``rust_wire.rs``'s encoding (integers of every width, floats bit for bit, ``bool``,
``char``, ``String``/``&str``, ``Vec``/slices, ``VecDeque``, ``Option``, ``Box``, the hash and B-tree
maps and sets, tuples), typed by the signature on both sides; the tests compare with their own
``assert_eq!`` and ``==``. A panic of the solution's function panics the tests with its message (as in
one program: a panic that is not the tests' assertion is a ``runtime_error``); a solution's process that
ends or answers a malformed value ends the run without a marker (``runtime_error``).

:func:`build` returns ``None`` (the one-program harness, ``forgeable``) for a generic function, a
lifetime, ``impl``/``dyn`` types, a reference inside a type, a returned reference, a pattern parameter,
or a type the wire does not carry (a struct of the prompt's own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .text import blanked, renamed, resource, split_top

#: A function's header: its parameters may hold tuple types, one level of parentheses.
_FN = (r"\bfn\s+(?P<name>{name})\s*\((?P<params>[^{{}}();]*(?:\([^{{}}();]*\)[^{{}}();]*)*)\)\s*"
       r"(?:->\s*(?P<ret>[^{{}};]+?))?\s*\{{")
_HEADER = re.compile(_FN.format(name=r"[A-Za-z_]\w*") + r"\s*\Z")
_MAIN = re.compile(r"\bfn\s+(?P<name>main)\s*\(\s*\)")
_TYPE_NAMES = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "usize", "f32", "f64",
               "bool", "char", "String", "str", "Vec", "VecDeque", "Option", "Box", "HashMap", "HashSet", "BTreeMap",
               "BTreeSet", "std", "collections", "mut"}


@dataclass(frozen=True)
class Param:
    """One parameter: its ``name``, its ``type`` as written, the owned type the server decodes
    (``owned``) and how the call passes it (``""``, ``"&"`` or ``"&mut "``)."""

    name: str
    type: str
    owned: str
    passed: str


@dataclass(frozen=True)
class Signature:
    """The entry function: ``name``, ``returns`` (type text, ``()`` when none), ``params``, and where
    its header starts in the prompt (``start``)."""

    name: str
    returns: str
    params: tuple[Param, ...]
    start: int


def _param(part: str) -> Optional[Param]:
    m = re.fullmatch(r"(?:mut\s+)?(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<type>.+)", part, re.S)
    if m is None:
        return None
    written = " ".join(m.group("type").split())
    passed, inner = "", written
    if written.startswith("&mut "):
        passed, inner = "&mut ", written[5:].strip()
    elif written.startswith("&"):
        passed, inner = "&", written[1:].strip()
    if "&" in inner or (passed == "&mut " and (inner == "str" or inner.startswith("["))):
        return None
    owned = "String" if inner == "str" else (f"Vec<{inner[1:-1]}>" if inner.startswith("[") and inner.endswith("]")
                                             and ";" not in inner else inner)
    if passed == "" and (inner == "str" or inner.startswith("[")):
        return None
    return Param(m.group("name"), written, owned, passed)


def signature(prompt: str) -> Optional[Signature]:
    """The entry function whose header ``prompt`` ends with (comments after it blanked), or ``None``
    (see the module docstring)."""
    structure = blanked(prompt, "rust")
    m = _HEADER.search(structure.rstrip())
    return None if m is None else _read(prompt, m)


def defined(program: str, name: str) -> Optional[Signature]:
    """The last function ``name`` that ``program`` defines, as :func:`signature` reads it."""
    found = list(re.finditer(_FN.format(name=re.escape(name)), blanked(program, "rust")))
    return _read(program, found[-1]) if found else None


def _read(text: str, m: re.Match[str]) -> Optional[Signature]:
    prompt = text
    params_text, returns = m.group("params").strip(), (m.group("ret") or "()").strip()
    names = set(re.findall(r"[A-Za-z_]\w*", params_text + " " + returns))
    if "'" in params_text + returns or "&" in returns or "<" in prompt[m.start("name"):m.start("params")]:
        return None
    params = []
    for part in filter(None, split_top(params_text)):
        p = _param(part)
        if p is None:
            return None
        params.append(p)
    if not names - {p.name for p in params} <= _TYPE_NAMES:
        return None
    # the item's own qualifiers and attributes belong to it, not to the text before it: a `pub` or an
    # attribute stays out of the tests' program; any other qualifier keeps the one program
    near = max(0, m.start() - 400)
    before = re.search(r"(?:#\[[^\]\n]*\]\s*|\b(?:pub(?:\s*\([^()]*\))?|const|unsafe|async|extern(?:\s*\"[^\"]*\")?)\s+)*\Z",
                       blanked(text, "rust")[near:m.start()])
    if re.search(r"\b(?:const|unsafe|async|extern)\b", before.group(0)):
        return None
    return Signature(m.group("name"), " ".join(returns.split()), tuple(params), near + before.start())


def build(prompt: str, program: str, tests: str) -> Optional[tuple[str, str]]:
    """``(the solution's program, the tests' program)`` for ``program`` (the prompt and the completion,
    or a completion that restates the function) judged by ``tests`` (the text after them, with a
    ``fn main()``); ``prompt`` is the problem's, read for the entry function and what comes before
    it. ``None`` when the one-program harness must serve."""
    sig = signature(prompt)
    structure = blanked(tests, "rust")
    main = _MAIN.search(structure)
    if sig is None or main is None:
        return None
    opening = re.match(r"\s*\}", structure)  # MultiPL-E's tests close the entry function
    closing = tests[:opening.end()] + "\n" if opening else ""
    # the solution's program: the program, the closing brace, the server, which reads the arguments as
    # the answer's own function declares them (an answer may take `usize` where the prompt says `isize`)
    own = defined(program + closing, sig.name)
    served = own if own is not None and len(own.params) == len(sig.params) else sig
    params = served.params
    server = ("fn main() {\n    judgebox_solution::serve(|judgebox_i, judgebox_o| {\n"
              + "".join(f"        let {'mut ' if p.passed == '&mut ' else ''}judgebox_a{k}: {p.owned} = "
                        "judgebox_wire::Get::get(judgebox_i)?;\n" for k, p in enumerate(params))
              + "        if !judgebox_i.is_empty() {\n            return None;\n        }\n"
              + f"        let judgebox_r: {served.returns} = {sig.name}("
              + ", ".join(f"{p.passed}judgebox_a{k}" for k, p in enumerate(params)) + ");\n"
              + "        judgebox_wire::Put::put(&judgebox_r, judgebox_o);\n"
              + "".join(f"        judgebox_wire::Put::put(&judgebox_a{k}, judgebox_o);\n"
                        for k, p in enumerate(params) if p.passed == "&mut ")
              + "        Some(())\n    });\n}\n")
    solution = (renamed(program + closing, _MAIN, "rust", "judgebox_own_main") + "\n" + resource("rust_wire.rs")
                + resource("rust_solution.rs") + server)
    # the tests' program: the prompt before the function, the proxy, the tests (their main renamed)
    params = sig.params
    proxy = (f"fn {sig.name}({', '.join(f'{p.name}: {p.type}' for p in params)}) -> {sig.returns} {{\n"
             "    let mut judgebox_o = Vec::new();\n"
             + "".join(f"    judgebox_wire::Put::put(&{p.name}, &mut judgebox_o);\n" for p in params)
             + "    let judgebox_a = judgebox_tests::call(judgebox_o);\n    let mut judgebox_i = &judgebox_a[..];\n"
             + f"    let judgebox_r: {sig.returns} = judgebox_tests::value(&mut judgebox_i);\n"
             + "".join(f"    *{p.name} = judgebox_tests::value(&mut judgebox_i);\n" for p in params if p.passed == "&mut ")
             + "    judgebox_tests::end(judgebox_i);\n    judgebox_r\n}\n")
    head = renamed(prompt[:sig.start], _MAIN, "rust", "judgebox_prompt_main")
    body = tests[opening.end():] if opening else tests
    tests_program = (head + "\n" + resource("rust_wire.rs") + resource("rust_tests.rs") + proxy
                     + renamed(body, _MAIN, "rust", "judgebox_tests_main"))
    return solution, tests_program


__all__ = ["Param", "Signature", "build", "defined", "signature"]
