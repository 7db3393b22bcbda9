"""The split harness for Go function-call tests (MultiPL-E's ``TestXxx`` tables, HumanEval-X's testify
asserts): two programs, both ``package main``.

- The **tests' program** is the prompt before the entry function (its package clause, imports and
  helpers), a *proxy* with the entry function's signature, the tests, and a ``main`` that reads the
  nonce, starts the solution's program (``go_tests.go``) and runs the ``Test*`` functions through
  ``testing.Main``, as the one-program harness does; it prints ``<nonce> {"status": "ok"}`` when each
  returned without failing, else the failure marker. No code of the solution is in it; its binary is
  execute-only, so its process is non-dumpable.
- The **solution's program** is the prompt and the completion with a ``main`` that serves calls on
  descriptors 3 and 4 (``go_solution.go``; its stdin and stdout are ``/dev/null``): it reads the
  arguments, calls the function and answers its results, then each slice and map argument as the call
  left it (the tests' slices and maps are written back, as a shared backing array or map would be).

Values cross in ``go_wire.go``'s encoding, read as the declared types (booleans, integers, floats bit
for bit, strings, slices and maps with nil kept apart from empty, arrays, pointers, ``interface{}``
values of the common dynamic types), so the tests' ``fmt.Sprintf("%v")`` comparisons and testify's
``assert.Equal`` see values equal to the solution's. A panic of the solution's function panics the
tests (``runtime_error``, as in one program); a solution's process that ends or answers a malformed
value ends the run without a marker (``runtime_error``).

:func:`build` returns ``None`` (the one-program harness, ``forgeable``) for a method, a generic or
variadic function, a type the wire does not carry (a struct, a func, a channel) or a prompt import the
tests' program would leave unused that no known symbol can name.
"""

from __future__ import annotations

import re
from typing import Optional

from judgebox.reward.tamper.lexer import blank_comments

from ..multipl.markers import FAIL, OK
from .text import blanked, resource, split_top

_HEADER = re.compile(r"(?m)^func\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^(){}]*)\)\s*"
                     r"(?P<ret>\([^(){}]*\)|[^(){}\n]*?)\s*\{\s*\Z")
_TYPE_WORDS = {"int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32",
               "float64", "string", "bool", "byte", "rune", "interface", "map", "any"}
_TESTS = re.compile(r"(?m)^func\s+(Test\w+)\s*\(\s*\w+\s+\*testing\.T\s*\)")
_IMPORT_BLOCK = re.compile(r"(?m)^import\s*(?:\((?P<many>[^()]*)\)|(?P<one>[^\n]*))")
#: A symbol of each package the harnesses may see imported, named once (``var _ = fmt.Sprint``) so
#: that a program that no longer uses an import (the tests' without the solution, the solution's
#: without the tests) still compiles.
_SYMBOLS = {"math": "Abs", "strings": "Contains", "fmt": "Sprint", "strconv": "Itoa", "time": "Now", "bytes": "Equal",
            "regexp": "MustCompile", "sort": "Ints", "math/rand": "Intn", "crypto/md5": "Sum", "testing": "Main",
            "github.com/stretchr/testify/assert": "Equal", "reflect": "TypeOf", "unicode": "IsUpper",
            "errors": "New", "os": "Exit", "math/big": "NewInt", "container/heap": "Init",
            "unicode/utf8": "RuneLen", "math/bits": "OnesCount", "encoding/hex": "EncodeToString",
            "container/list": "New", "slices": "Sort", "maps": "Keys"}
_TESTS_IMPORTS = ('import (\n\tjudgeboxbinary "encoding/binary"\n\tjudgeboxbytes "bytes"\n\tjudgeboxexec "os/exec"\n\tjudgeboxfmt "fmt"\n'
                  '\tjudgeboxio "io"\n\tjudgeboxmath "math"\n\tjudgeboxos "os"\n\tjudgeboxreflect "reflect"\n'
                  '\tjudgeboxtesting "testing"\n)\n')
_SOLUTION_IMPORTS = ('import (\n\tjudgeboxbinary "encoding/binary"\n\tjudgeboxbytes "bytes"\n\tjudgeboxfmt "fmt"\n'
                     '\tjudgeboxio "io"\n\tjudgeboxmath "math"\n\tjudgeboxos "os"\n\tjudgeboxreflect "reflect"\n)\n')


def _params(text: str) -> Optional[list[tuple[str, str]]]:
    """``(name, type)`` of each parameter (Go's ``a, b int`` grouping spread), or ``None``."""
    parts = [p for p in split_top(text) if p]
    out: list[tuple[str, str]] = []
    pending: list[str] = []
    for part in parts:
        m = re.fullmatch(r"(?P<name>[A-Za-z_]\w*)(?:\s+(?P<type>.+))?", part, re.S)
        if m is None:
            return None
        if m.group("type") is None:
            pending.append(m.group("name"))
            continue
        for name in (*pending, m.group("name")):
            out.append((name, " ".join(m.group("type").split())))
        pending = []
    return None if pending else out


def _results(text: str) -> Optional[list[str]]:
    """The result types of ``text`` (``int``, ``(int, error)``, ``(a int, b string)``), or ``None``."""
    text = text.strip()
    if not text:
        return []
    if not text.startswith("("):
        return [" ".join(text.split())]
    inner = [p for p in split_top(text[1:-1]) if p]
    named = _params(text[1:-1])
    if named is not None and all(re.fullmatch(r"[A-Za-z_]\w*\s+.+", p) for p in inner):
        return [t for _, t in named]
    return [" ".join(p.split()) for p in inner]


def _carried(type_text: str) -> bool:
    words = set(re.findall(r"[A-Za-z_]\w*", type_text))
    return words <= _TYPE_WORDS and "..." not in type_text and "*" not in type_text and "func" not in words


def _imports(text: str) -> list[tuple[str, str]]:
    """``(name, path)`` of each import of ``text``'s import declarations (its comments blanked)."""
    found = []
    for m in _IMPORT_BLOCK.finditer(text):
        for line in (m.group("many") or m.group("one") or "").splitlines():
            spec = re.fullmatch(r'\s*(?P<alias>[\w.]+\s+)?"(?P<path>[^"]+)"\s*;?\s*', line)
            if spec:
                alias = (spec.group("alias") or "").strip()
                found.append((alias or spec.group("path").rsplit("/", 1)[-1], spec.group("path")))
    return found


def _uses(text: str, only: Optional[str] = None) -> Optional[str]:
    """A ``var _ = name.Symbol`` line per package ``text`` imports (``None``: one no symbol names);
    with ``only``, per package that text (the tests) refers to (``name.``)."""
    lines = []
    for name, path in _imports(text):
        if name in ("_", ".") or (only is not None and not re.search(rf"(?<![\w.]){re.escape(name)}\.", only)):
            continue
        if path not in _SYMBOLS:
            return None
        lines.append(f"var _ = {name}.{_SYMBOLS[path]}\n")
    return "".join(lines)


def _main_package(text: str) -> str:
    return re.sub(r"(?m)^(\s*)package\s+\w+", r"\1package main", text, count=1)


def _after_imports(text: str, insert: str) -> Optional[str]:
    """``text`` with ``insert`` after its package clause (an import declaration may follow any other)."""
    m = re.search(r"(?m)^\s*package\s+main[^\n]*\n", text)
    return None if m is None else text[:m.end()] + insert + text[m.end():]


def build(prompt: str, program: str, tests: str) -> Optional[tuple[str, str]]:
    """``(the solution's program, the tests' program)`` for ``program`` (the prompt and the completion,
    or a completion that restates the function) judged by ``tests`` (``func TestXxx(t *testing.T)``
    functions); ``prompt`` is the problem's, read for the package, imports and entry function.
    ``None`` when the one-program harness must serve."""
    structure = blanked(prompt, "go").replace("interface{}", "interface__")  # the header's braces only
    m = _HEADER.search(structure.rstrip() + "\n")
    names = _TESTS.findall(blanked(tests, "go"))
    if m is None or not names:
        return None
    params = _params(prompt[m.start("params"):m.end("params")])
    results = _results(prompt[m.start("ret"):m.end("ret")])
    if params is None or results is None or not all(_carried(t) for t in [*(t for _, t in params), *results]):
        return None
    head = _main_package(prompt[:m.start()])
    # the tests' program names each import of the prompt (the solution used some); the solution's,
    # each import the tests used (an answer's own unused import stays the compile error it is)
    head_uses = _uses(blank_comments(head, "go"))
    program_uses = _uses(blank_comments(program, "go"), only=blanked(tests, "go"))
    if head_uses is None:
        return None
    name = m.group("name")
    # the solution's program: the program, the server
    returned = [f"judgebox_r{i}" for i in range(len(results))]
    call = f"{name}({', '.join(f'judgebox_a{k}' for k in range(len(params)))})"
    server = ("\nfunc main() {\n\tjudgeboxServe(func(in *judgeboxIn) []byte {\n"
              + "".join(f"\tvar judgebox_a{k} {t}\n\tin.getValue(judgeboxreflect.ValueOf(&judgebox_a{k}).Elem())\n"
                        for k, (_, t) in enumerate(params))
              + "\tif len(in.rest) != 0 {\n\t\tpanic(judgeboxBad{\"more than the call's arguments\"})\n\t}\n"
              + (f"\t{', '.join(returned)} := {call}\n" if results else f"\t{call}\n")
              + "\tvar out judgeboxbytes.Buffer\n\tout.WriteByte('r')\n"
              + "".join(f"\tjudgeboxPutAs(&out, judgeboxreflect.ValueOf(&{r}).Elem(), "
                        f"judgeboxreflect.TypeOf((*{t})(nil)).Elem())\n" for r, t in zip(returned, results))
              + "".join(f"\tjudgeboxPutValue(&out, judgeboxreflect.ValueOf(&judgebox_a{k}).Elem())\n"
                        for k, (_, t) in enumerate(params) if t.startswith(("[]", "map[")))
              + "\treturn out.Bytes()\n\t})\n}\n")
    solution = _after_imports(_main_package(program), _SOLUTION_IMPORTS)
    if solution is None:
        return None
    solution += "\n" + (program_uses or "") + resource("go_wire.go") + resource("go_solution.go") + server
    # the tests' program: the prompt before the function, the proxy, the tests, the runner
    # the proxy's parameters and results are its own names: a parameter named like a type (``string
    # string``) or ``_`` would not compile in its body
    signature = ", ".join(f"judgebox_p{k} {t}" for k, (_, t) in enumerate(params))
    written = f"({', '.join(f'{r} {t}' for r, t in zip(returned, results))})" if results else ""
    proxy = (f"func {name}({signature}) {written} {{\n"
             + f"\tjudgeboxCall([]interface{{}}{{{', '.join(f'&judgebox_p{k}' for k in range(len(params)))}}}, "
             + f"[]interface{{}}{{{', '.join('&' + r for r in returned)}}})\n"
             + ("\treturn\n" if results else "") + "}\n")
    wrapped = "".join(f"\t\t{{Name: \"{n}\", F: func(t *judgeboxtesting.T) {{ t.Cleanup(func() {{ if !t.Failed() {{ passed++ }} }}); {n}(t) }}}},\n"
                      for n in names)
    runner = ("\nfunc main() {\n\tjudgeboxStart()\n\tpassed := 0\n\ttests := []judgeboxtesting.InternalTest{\n" + wrapped
              + f"\t\t{{Name: \"TestJudgeboxMarker\", F: func(t *judgeboxtesting.T) {{ if passed == {len(names)} {{ "
              + f"judgeboxReport(\"{OK}\", 0) }} else {{ judgeboxReport(\"{FAIL}\", 1) }} }}}},\n\t}}\n"
              + "\tjudgeboxtesting.Main(func(pat, str string) (bool, error) { return true, nil }, tests, nil, nil)\n}\n")
    tests_program = _after_imports(head, _TESTS_IMPORTS)
    if tests_program is None:
        return None
    tests_program += ("\n" + head_uses + proxy + _main_package(tests) + "\n" + resource("go_wire.go")
                      + resource("go_tests.go") + runner)
    return solution, tests_program
