"""The MultiPL-E harness for ``java`` (see :mod:`judgebox.reward.harness.multipl`)."""

from __future__ import annotations

import re

from judgebox.reward.spec import TestDataError

from .markers import FAIL, OK


def build(program: str, tests: str) -> str:
    full = program + tests
    m = re.search(r"public\s+static\s+void\s+main\s*\(\s*String\s*\[\]\s*(\w+)\s*\)", full)
    if not m:
        raise TestDataError("harness: the tests have no 'public static void main(String[] args)'")
    owner = re.findall(r"\bclass\s+(\w+)", full[: m.start()])
    if not owner:
        raise TestDataError("harness: the tests' main is not inside a class")
    full = full[: m.start()] + f"public static void judgeboxTestsMain(String[] {m.group(1)})" + full[m.end():]
    return full + (
        "\nclass JudgeboxRunner {\n    public static void main(String[] args) throws Exception {\n"
        "        String nonce = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();\n"
        "        java.io.PrintStream out = System.out;\n"
        "        System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));\n"
        f"        try {{\n            {owner[-1]}.judgeboxTestsMain(args);\n        }} catch (AssertionError e) {{\n"
        f"            out.println(\"\\n\" + nonce + \" {FAIL}\");\n            out.flush();\n            throw e;\n        }}\n"
        f"        out.println(\"\\n\" + nonce + \" {OK}\");\n        out.flush();\n    }}\n}}\n")
