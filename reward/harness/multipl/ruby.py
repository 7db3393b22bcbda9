"""The MultiPL-E harness for ``ruby`` (see :mod:`judgebox.reward.harness.multipl`).

The tests are ``Test::Unit::TestCase`` classes whose autorun would run at exit; the harness turns
autorun off and runs their suites itself after the program, then prints ``fail`` when an assertion
failed (``wrong_answer``), exits 1 without a marker when a test raised (``runtime_error``), and
prints ``ok`` when every test ran and passed. The nonce is read by the program's first line into a
global of a per-run random name; descriptor 1 is moved to ``/dev/null`` (the marker goes to a copy).
"""

from __future__ import annotations

import re
import secrets

from judgebox.reward.spec import TestDataError

from .markers import FAIL, OK


def build(program: str, tests: str) -> str:
    classes = re.findall(r"(?m)^\s*class\s+(\w+)\s*<\s*(?:::)?Test::Unit::TestCase\b", tests)
    if not classes:
        raise TestDataError("harness: the tests have no 'class X < Test::Unit::TestCase'; "
                            "cannot add the completion marker")
    tag = secrets.token_hex(8)
    nonce, out, result = f"$judgebox_nonce_{tag}", f"$judgebox_out_{tag}", f"judgebox_result_{tag}"
    head = (f"{nonce} = $stdin.gets.to_s.strip\n{out} = STDOUT.dup\nSTDOUT.reopen(File::NULL, 'w')\n")
    tail = (
        "\nrequire 'test/unit/testresult'\nTest::Unit::AutoRunner.need_auto_run = false\n"
        f"{result} = Test::Unit::TestResult.new\n"
        f"[{', '.join(classes)}].each {{ |c| c.suite.run({result}) {{ |*| }} }}\n"
        f"{result}.faults.each {{ |f| STDERR.puts f.long_display }}\n"
        f"if {result}.error_count > 0 || {result}.run_count == 0\n  exit!(1)\n"
        f"elsif {result}.failure_count > 0\n  {out}.write(\"\\n#{{{nonce}}} {FAIL}\\n\")\n  {out}.flush\n  exit!(1)\n"
        f"end\n{out}.write(\"\\n#{{{nonce}}} {OK}\\n\")\n{out}.flush\n")
    return head + program + tests + tail
