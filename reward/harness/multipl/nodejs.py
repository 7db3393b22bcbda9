"""The MultiPL-E harness for ``nodejs`` (see :mod:`judgebox.reward.harness.multipl`)."""

from __future__ import annotations

import re
import secrets

from .markers import FAIL, OK


def build(program: str, tests: str) -> str:
    # Names random per run: the solution cannot name them. The module's own require is taken before
    # the solution runs and serves the tests' require() calls (a hoisted `function require` of the
    # solution does not reach them; one that shadows `module` makes the first line throw), and the
    # assert module is frozen, so `require('node:assert').deepEqual = () => {}` changes nothing.
    var = f"judgeboxNonce_{secrets.token_hex(8)}"
    out = f"judgeboxWrite_{secrets.token_hex(8)}"
    req = f"judgeboxRequire_{secrets.token_hex(8)}"
    tests = re.sub(r"\brequire\s*\(", f"{req}(", tests)
    return (f"const {req} = module.require.bind(module);\n"
            f"Object.freeze({req}('node:assert')); Object.freeze({req}('node:assert').strict);\n"
            f"const {var} = {req}('fs').readFileSync(0, 'utf8').split('\\n')[0].trim();\n"
            f"const {out} = process.stdout.write.bind(process.stdout);\n"
            "process.stdout.write = function () { return true; };\n"
            f"process.on('uncaughtException', (e) => {{ process.exitCode = 1; console.error(e); "
            f"if (e instanceof {req}('node:assert').AssertionError) {out}(\"\\n\" + {var} + \" {FAIL}\\n\"); }});\n"
            + program + tests + f"\n{out}(\"\\n\" + {var} + \" {OK}\\n\");\n")
