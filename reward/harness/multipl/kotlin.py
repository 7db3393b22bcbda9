"""The harness for ``kotlin_script`` (MBXP's Kotlin tests; see :mod:`judgebox.reward.harness.multipl`).

The tests are a ``fun main()`` (mxeval compiles the file with ``kotlinc`` and runs its ``main``); a
script defines it without calling it. The harness renames that ``main`` to a name random per run and
puts first in the script the nonce read from stdin and the real stdout, kept under random names,
and ``System.out`` replaced by a null stream (the solution's and the tests' prints are discarded).
After the program it calls the tests and prints ``ok``; a failed check (``AssertionError``, which
MBXP's "test case N did not pass" throw is rewritten to) prints ``fail`` (``wrong_answer``) and is
thrown on. Any other exception ends the script without a marker (``runtime_error``); an early
``exitProcess(0)`` fails.
"""

from __future__ import annotations

import re
import secrets

from .markers import FAIL, OK, required

_MAIN = re.compile(r"(?m)^[ \t]*fun\s+main\s*\(\s*\)")


def build(program: str, tests: str) -> str:
    main = required(_MAIN, tests, "'fun main()'")
    tag = secrets.token_hex(8)
    tests_main, nonce, out = f"judgeboxTestsMain_{tag}", f"judgeboxNonce_{tag}", f"judgeboxOut_{tag}"
    tests = tests[: main.start()] + f"fun {tests_main}()" + tests[main.end():]
    head = (f"val {nonce} = readLine() ?: \"\"\n"
            f"val {out} = System.out\n"
            "System.setOut(java.io.PrintStream(java.io.OutputStream.nullOutputStream()))\n")
    tail = (f"\ntry {{ {tests_main}() }} catch (e: AssertionError) {{\n"
            f"    {out}.println(\"\\n\" + {nonce} + \" {FAIL}\"); {out}.flush(); throw e\n}}\n"
            f"{out}.println(\"\\n\" + {nonce} + \" {OK}\"); {out}.flush()\n")
    return head + program + tests + tail
