"""The MultiPL-E harness for ``scala`` (see :mod:`judgebox.reward.harness.multipl`).

MultiPL-E's Scala tests close the prompt's method, then declare ``def main(args: Array[String])``
with the assertions inside the prompt's ``object`` and close it. The harness renames that ``main``
and puts a runner ``object`` first in the file, so that it is the object ``scala`` runs (the
``scala`` recipe runs the first ``object``, SandboxFusion's rule). The runner reads the nonce, sends
the solution's and the tests' prints to a null stream (``System.out`` and ``Console.out``), calls
the tests and prints ``ok`` after them; a failed ``assert`` (``java.lang.AssertionError``) prints
``fail`` (``wrong_answer``) and is thrown on (exit status 1). Any other exception ends the run
without a marker (``runtime_error``); ``sys.exit`` before the marker fails.
"""

from __future__ import annotations

import re
import secrets

from judgebox.reward.spec import TestDataError

from .markers import FAIL, OK, required

_MAIN = re.compile(r"\bdef\s+main\s*\(\s*(\w+)\s*:\s*Array\s*\[\s*String\s*\]\s*\)")
#: an ``object`` declaration at the start of a line (not the word in a comment)
_OBJECT = re.compile(r"(?m)^[ \t]*(?:case\s+)?object\s+(\w+)")


def build(program: str, tests: str) -> str:
    full = program + tests
    main = required(_MAIN, full, "'def main(args: Array[String])'")
    owners = _OBJECT.findall(full[: main.start()])
    if not owners:
        raise TestDataError("harness: the tests' main is not inside an object")
    tests_main = f"judgeboxTestsMain_{secrets.token_hex(8)}"
    full = full[: main.start()] + f"def {tests_main}({main.group(1)}: Array[String])" + full[main.end():]
    runner = (
        f"object JudgeboxRunner_{secrets.token_hex(8)} {{\n"
        "  def main(args: Array[String]): Unit = {\n"
        "    val nonce = _root_.scala.io.StdIn.readLine()\n"
        "    val out = _root_.java.lang.System.out\n"
        "    val nul = new _root_.java.io.PrintStream(_root_.java.io.OutputStream.nullOutputStream())\n"
        "    _root_.java.lang.System.setOut(nul)\n"
        f"    try _root_.scala.Console.withOut(nul) {{ {owners[-1]}.{tests_main}(args) }}\n"
        "    catch {\n"
        "      case e: _root_.java.lang.AssertionError =>\n"
        f"        out.println(\"\\n\" + nonce + \" {FAIL}\"); out.flush(); throw e\n"
        "    }\n"
        f"    out.println(\"\\n\" + nonce + \" {OK}\"); out.flush()\n"
        "  }\n}\n")
    return runner + full
