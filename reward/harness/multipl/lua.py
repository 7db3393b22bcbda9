"""The MultiPL-E harness for ``lua`` (see :mod:`judgebox.reward.harness.multipl`).

The program's first lines read the nonce into a local of a per-run random name, keep
``io.stdout`` for the marker and make ``print`` and ``io.write`` discard. The tests' last line,
``os.exit(lu.LuaUnit.run())``, becomes a LuaUnit runner of the harness's own: a failed assertion
prints ``fail`` (``wrong_answer``), a test that raised exits 1 without a marker
(``runtime_error``), and ``ok`` is printed when at least one test ran and every test passed.
"""

from __future__ import annotations

import re
import secrets

from .markers import FAIL_JSON, OK_JSON, required

_RUN = re.compile(r"os\.exit\(\s*(\w+)\.LuaUnit\.run\(\s*\)\s*\)")


def build(program: str, tests: str) -> str:
    m = required(_RUN, tests, "'os.exit(lu.LuaUnit.run())'")
    tag = secrets.token_hex(8)
    nonce, out, runner = f"judgebox_nonce_{tag}", f"judgebox_out_{tag}", f"judgebox_runner_{tag}"
    head = (f"local {nonce} = io.read('l') or ''\nlocal {out} = io.stdout\n"
            "print = function(...) end\nio.write = function(...) return io.stdout end\n")
    run = (f"local {runner} = {m.group(1)}.LuaUnit.new()\n{runner}:setOutputType('nil')\n{runner}:runSuite()\n"
           f"for _, node in ipairs({runner}.result.failedTests) do io.stderr:write(tostring(node.testName), ': ', "
           "tostring(node.msg), '\\n') end\n"
           f"for _, node in ipairs({runner}.result.errorTests) do io.stderr:write(tostring(node.testName), ': ', "
           "tostring(node.msg), '\\n', tostring(node.stackTrace), '\\n') end\n"
           f"if {runner}.result.errorCount > 0 or {runner}.result.runCount == 0 then os.exit(1) end\n"
           f"if {runner}.result.failureCount > 0 then {out}:write('\\n', {nonce}, ' {FAIL_JSON}\\n'); "
           f"{out}:flush(); os.exit(1) end\n"
           f"{out}:write('\\n', {nonce}, ' {OK_JSON}\\n')\n{out}:flush()\n")
    return head + program + tests[: m.start()] + run + tests[m.end():]
