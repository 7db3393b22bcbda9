"""The MultiPL-E harness for ``R`` (see :mod:`judgebox.reward.harness.multipl`).

The program's first lines read the nonce into a variable of a per-run random name, send the
program's output to the null device (``sink``) and set the ``error`` option: MultiPL-E's tests
``stopifnot`` each value, so an error whose message (less R's ``Calls:`` line) ends in ``is not TRUE``/``are not all TRUE``
prints ``fail`` (``wrong_answer``); any other error exits 1 without a marker (``runtime_error``).
After the tests the sinks are closed and ``ok`` is printed, in the same braced top-level expression
as the tests: an error the handler never sees (a C stack overflow) ends that expression, and R would
otherwise go on to the next one.
"""

from __future__ import annotations

import secrets

from .markers import FAIL_JSON, OK_JSON


def _marker(nonce: str, json: str) -> str:
    return f"while (sink.number() > 0) sink(); cat('\\n', {nonce}, ' {json}\\n', sep = '')"


def build(program: str, tests: str) -> str:
    nonce = f"judgebox_nonce_{secrets.token_hex(8)}"
    head = (f"{nonce} <- readLines(file('stdin'), n = 1, warn = FALSE)\n"
            f"if (length({nonce}) == 0) {nonce} <- ''\n"
            "sink(nullfile())\n"
            "options(error = function() {\n"
            "    text <- sub('\\nCalls:[^\\n]*\\n?$', '', geterrmessage())\n"
            "    if (grepl('(is not TRUE|are not all TRUE)\\\\s*$', text)) {\n"
            f"        {_marker(nonce, FAIL_JSON)}\n    }}\n    quit(status = 1)\n}})\n")
    # the tests and the marker are one top-level expression: R goes on to the next top-level
    # expression after an error its handler never saw (a C stack overflow), never past the marker's
    return head + program + "\n{\n" + tests + f"\n{_marker(nonce, OK_JSON)}\n}}\n"
