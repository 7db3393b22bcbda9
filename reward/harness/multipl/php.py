"""The MultiPL-E harness for ``php`` (see :mod:`judgebox.reward.harness.multipl`).

The nonce is read right after the ``<?php`` open tag, before any of the solution's code runs, into
a variable of a per-run random name. Everything the program echoes goes to an output buffer that
discards it; the marker is written to ``php://stdout``, past the buffer. MultiPL-E's tests throw
``Exception("Test failed!")``: an uncaught one of that message prints ``fail`` (``wrong_answer``);
any other uncaught exception or error exits without a marker (``runtime_error``). PHP's own error
messages go to stderr.
"""

from __future__ import annotations

import secrets

from .markers import FAIL_JSON, OK_JSON


def build(program: str, tests: str) -> str:
    tag = secrets.token_hex(8)
    nonce, out = f"$judgebox_nonce_{tag}", f"$judgebox_out_{tag}"
    head = (f"\n{nonce} = trim((string) fgets(STDIN));\n{out} = fopen('php://stdout', 'w');\n"
            "ini_set('display_errors', 'stderr');\n"
            "ob_start(function ($text) { return ''; }, 1);\n"
            f"set_exception_handler(function ($e) use ({nonce}, {out}) {{\n"
            f"    if ($e instanceof Exception && $e->getMessage() === 'Test failed!') {{ "
            f"fwrite({out}, \"\\n\" . {nonce} . ' {FAIL_JSON}' . \"\\n\"); }}\n"
            "    fwrite(STDERR, (string) $e . \"\\n\");\n    exit(1);\n});\n")
    program = program.lstrip()
    if program.startswith("<?php"):
        program = program[len("<?php"):]
    body = program + tests
    reopen = "<?php" if body.rstrip().endswith("?>") else ""
    return ("<?php" + head + body + f"\n{reopen}\nfwrite({out}, \"\\n\" . {nonce} . ' {OK_JSON}' . \"\\n\");\n")
