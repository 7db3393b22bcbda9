"""The drop-in answers verl's own result codes for every outcome.

verl 0.9.1's ``sandbox_fusion.utils.check_correctness`` and judgebox's ``check_correctness`` against
the same ``judgebox serve`` (loopback), one stdio test per row. Found by a new user: a Python syntax
error got -4 (compile error) from judgebox and -2 from verl, because SandboxFusion has no compile
step for Python and verl reads the failed run as a runtime error.
"""

from __future__ import annotations

import pytest

pytest.importorskip("verl")

IN_OUTS = {"inputs": ["2\n"], "outputs": ["4\n"]}

#: (language, program, verl's code): every outcome the codes tell apart
TABLE = [
    ("python", "print(int(input()) * 2)", True),
    ("python", "print(5)", False),
    ("python", "raise ValueError('no')", -2),
    ("python", "def f(:\n    pass", -2),  # SyntaxError: no compile step in SandboxFusion for Python
    ("python", "import sys\nsys.exit(3)", -2),
    ("python", "while True:\n    pass", -3),
    ("python", "x = bytearray(512 * 1024 * 1024)\nprint(len(x))", -2),
    ("nodejs", "const x = ;", -2),  # a parse error of an interpreted language, likewise
    ("cpp", "#include <cstdio>\nint main() { int n; scanf(\"%d\", &n); printf(\"%d\\n\", 2 * n); }", True),
    ("cpp", "int main( {", -4),
    ("go", "package main\nfunc main() { undefined() }", -4),
]


@pytest.mark.slow
@pytest.mark.parametrize("language,code,expected", TABLE, ids=[f"{r[0]}-{i}" for i, r in enumerate(TABLE)])
def test_the_drop_in_gives_verls_code(live_server, language, code, expected):
    from verl.utils.reward_score.sandbox_fusion.utils import check_correctness as verls

    from judgebox.integrations.verl import check_correctness

    url = f"{live_server}/run_code"
    theirs, their_meta = verls(url, IN_OUTS, code, timeout=2, memory_limit_mb=256, language=language)
    ours, our_meta = check_correctness(url, IN_OUTS, code, timeout=2, memory_limit_mb=256, language=language)
    assert theirs == [expected], their_meta
    assert ours == [expected], our_meta
    assert our_meta[0]["status"] == their_meta[0]["status"]
