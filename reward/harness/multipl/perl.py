"""The MultiPL-E harness for ``perl`` (see :mod:`judgebox.reward.harness.multipl`).

A ``BEGIN`` block at the top reads the nonce into a lexical of a per-run random name, keeps a copy
of STDOUT for the marker and sends STDOUT to ``/dev/null``, before any of the solution's code is
compiled. MultiPL-E's tests ``exit 1`` on a wrong value: ``exit`` is overridden
(``CORE::GLOBAL::exit``) to print ``fail`` (``wrong_answer``) for a non-zero status; a ``die``
exits without a marker (``runtime_error``); ``ok`` is printed after the tests.
"""

from __future__ import annotations

import secrets

from .markers import FAIL_JSON, OK_JSON


def build(program: str, tests: str) -> str:
    tag = secrets.token_hex(8)
    nonce, out = f"$judgebox_nonce_{tag}", f"$judgebox_out_{tag}"
    head = (f"my {nonce}; my {out};\nBEGIN {{\n    {nonce} = <STDIN> // ''; chomp {nonce};\n"
            f"    open({out}, '>&', \\*STDOUT) or die \"judgebox: no stdout: $!\";\n"
            "    open(STDOUT, '>', '/dev/null') or die \"judgebox: no /dev/null: $!\";\n"
            "    *CORE::GLOBAL::exit = sub { my $status = @_ ? $_[0] : 0;\n"
            f"        if ($status) {{ print {{{out}}} \"\\n\" . {nonce} . ' {FAIL_JSON}' . \"\\n\"; close({out}); }}\n"
            "        CORE::exit($status); };\n}\n")
    tail = f"\nprint {{{out}}} \"\\n\" . {nonce} . ' {OK_JSON}' . \"\\n\";\nclose({out});\n"
    return head + program + tests + tail
