"""The MultiPL-E harness for ``racket`` (see :mod:`judgebox.reward.harness.multipl`).

Right after the ``#lang`` line the nonce is read into a binding of a per-run random name, the
output port is kept for the marker and the program's output goes nowhere. Between the solution and
the tests, rackunit's ``current-check-handler`` is set: a failed check prints ``fail``
(``wrong_answer``; rackunit itself would only report it and go on), an exception raised inside a
check is raised again (``runtime_error``). ``ok`` is printed after the tests.
"""

from __future__ import annotations

import re
import secrets

from .markers import FAIL_JSON, OK_JSON

_LANG = re.compile(r"\A\s*#lang[^\n]*\n")


def _marker(nonce: str, out: str, json: str) -> str:
    return f'(fprintf {out} "\\n~a {json.replace(chr(34), chr(92) + chr(34))}\\n" {nonce}) (flush-output {out})'


def build(program: str, tests: str) -> str:
    tag = secrets.token_hex(8)
    nonce, out = f"judgebox-nonce-{tag}", f"judgebox-out-{tag}"
    m = _LANG.match(program)
    lang = m.group(0) if m else "#lang racket\n"
    program = program[m.end():] if m else program
    head = (f"(define {nonce} (let ([line (read-line)]) (if (eof-object? line) \"\" line)))\n"
            f"(define {out} (current-output-port))\n(current-output-port (open-output-nowhere))\n")
    reset = ("\n(require (only-in rackunit current-check-handler exn:test:check?))\n"
             "(current-check-handler (lambda (e) (if (exn:test:check? e) (begin "
             f"{_marker(nonce, out, FAIL_JSON)} ((error-display-handler) (exn-message e) e) (exit 1)) (raise e))))\n")
    return lang + head + program + reset + tests + "\n" + _marker(nonce, out, OK_JSON) + "\n"
