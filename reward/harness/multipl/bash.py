"""The MultiPL-E harness for ``bash`` (see :mod:`judgebox.reward.harness.multipl`)."""

from __future__ import annotations

import re
import secrets

from .markers import OK_JSON


def build(program: str, tests: str) -> str:
    # The tests' shell never runs the solution: the solution's text (up to the tests' `candidate()`)
    # is kept in a variable, and each call of the entry function runs it in a subshell, with the
    # solution's own output and the marker's descriptor closed, then calls its function there. A
    # solution's functions and aliases (`set() { :; }`, `alias '[['=...`) stay in that subshell.
    var = f"JUDGEBOX_NONCE_{secrets.token_hex(8)}"  # random per run: the solution cannot name it
    body = program + tests
    m = re.search(r"(?m)^candidate\(\)\s*\{\s*(\w+)", body)
    if m:  # MultiPL-E's layout; without it the solution shares the tests' shell
        code, entry, end = f"JUDGEBOX_SOLUTION_{secrets.token_hex(8)}", m.group(1), f"JUDGEBOX_END_{secrets.token_hex(8)}"
        body = (f"IFS= read -r -d '' {code} <<'{end}'\n{body[:m.start()]}\n{end}\n"
                f"{entry}() {{ ( unset -f {entry}; eval \"${code}\" >/dev/null 9>&-; {entry} \"$@\" 9>&- ); }}\n"
                + body[m.start():])
    return (f"IFS= read -r {var}\nexec 9>&1 1>/dev/null\n" + body
            + f'\nprintf "\\n%s %s\\n" "${var}" \'{OK_JSON}\' >&9\n')
