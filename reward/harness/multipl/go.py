"""The MultiPL-E harness for ``go`` (see :mod:`judgebox.reward.harness.multipl`)."""

from __future__ import annotations

import re

from judgebox.reward.spec import TestDataError

from .markers import FAIL, OK, after_match


def build(program: str, tests: str) -> str:
    # ``go test`` hides a passing binary's stdout, so the tests run as a plain program: package
    # main, a main() that runs the Test* functions through testing.Main, each wrapped to count a
    # pass only when it returned without failing, then a last test that prints the marker.
    full = re.sub(r"(?m)^(\s*)package\s+\w+", r"\1package main", program + tests, count=1)
    names = re.findall(r"(?m)^func\s+(Test\w+)\s*\(\s*\w+\s+\*testing\.T\s*\)", full)
    if "package main" not in full or not names:
        raise TestDataError("harness: Go tests need a package clause and func TestXxx(t *testing.T)")
    full = after_match(r"(?m)^\s*package main[^\n]*\n", full,
                        'import judgeboxos "os"\nimport judgeboxtesting "testing"\n', "package clause")
    wrapped = "".join(f"\t\t{{Name: \"{n}\", F: func(t *judgeboxtesting.T) {{ t.Cleanup(func() {{ if !t.Failed() {{ passed++ }} }}); {n}(t) }}}},\n"
                      for n in names)
    return full + (
        "\nfunc main() {\n\tnonce := make([]byte, 0, 64)\n\tone := make([]byte, 1)\n"
        "\tfor {\n\t\tn, err := judgeboxos.Stdin.Read(one)\n\t\tif n == 0 || err != nil || one[0] == '\\n' {\n"
        "\t\t\tbreak\n\t\t}\n\t\tnonce = append(nonce, one[0])\n\t}\n\tpassed := 0\n"
        "\tout := judgeboxos.Stdout\n"
        "\tif null, err := judgeboxos.OpenFile(judgeboxos.DevNull, judgeboxos.O_WRONLY, 0); err == nil {\n"
        "\t\tjudgeboxos.Stdout = null\n\t}\n"
        "\ttests := []judgeboxtesting.InternalTest{\n" + wrapped +
        f"\t\t{{Name: \"TestJudgeboxMarker\", F: func(t *judgeboxtesting.T) {{ if passed == {len(names)} {{ "
        f"out.WriteString(\"\\n\" + string(nonce) + \" {OK}\\n\") }} else {{ "
        f"out.WriteString(\"\\n\" + string(nonce) + \" {FAIL}\\n\") }} }}}},\n\t}}\n"
        "\tjudgeboxtesting.Main(func(pat, str string) (bool, error) { return true, nil }, tests, nil, nil)\n}\n")
