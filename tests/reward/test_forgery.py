"""Forging the completion marker from inside the solution (a new user's attack): a C++ static
initializer that reads the nonce from stdin before the tests and prints the marker must not pass."""

import pytest

from judgebox.reward import TestSpec, judge

PROMPT = "#include <assert.h>\n#include <bits/stdc++.h>\nint add(int x, int y) {\n"
TESTS = "}\nint main() {\n    auto candidate = add;\n    assert(candidate(1, 2) == 3);\n}\n"
SPEC = TestSpec(kind="harness", language="cpp", harness=TESTS, prefix=PROMPT)


@pytest.mark.slow
def test_cpp_static_initializer_cannot_read_the_nonce_first():
    forged = ("    return x - y;\n}\nstatic int f_ = [](){ std::string s; std::getline(std::cin, s); "
              "std::cout << s << \" {\\\"status\\\": \\\"ok\\\"}\" << std::endl; std::_Exit(0); return 0; }();\n"
              "void unused_() {\n")
    j = judge(SPEC, forged)
    assert j.verdict != "accepted" and j.n_passed == 0, j


@pytest.mark.slow
def test_cpp_honest_solution_still_passes_and_wrong_one_fails():
    assert judge(SPEC, "    return x + y;\n").verdict == "accepted"
    assert judge(SPEC, "    return x - y;\n").verdict == "wrong_answer"  # a failed assert, not a crash


def test_nodejs_and_bash_solutions_cannot_name_the_nonce_variable():
    """The nonce was read into a fixed, public name (``judgeboxNonce_``, ``$JUDGEBOX_NONCE``) that a
    solution could print; the name is now random per run, so printing the old name forges nothing."""
    js = TestSpec(kind="harness", language="nodejs", prefix="function add(x, y) {\n",
                  harness="}\nconst assert = require('node:assert');\nassert.deepEqual(add(1, 2), 3);\n")
    forged_js = ("  return x - y;\n}\ntry { process.stdout.write(judgeboxNonce_ + ' {\"status\": \"ok\"}\\n'); "
                 "} catch (e) {}\nprocess.exit(0);\nfunction unused_() {\n")
    assert judge(js, forged_js).verdict != "accepted"
    assert judge(js, "  return x + y;\n").verdict == "accepted"
    sh = TestSpec(kind="harness", language="bash", prefix="add() {\n",
                  harness="}\n[[ $(add 1 2) == 3 ]] || exit 1\n")
    forged_sh = '    echo 0\n}\necho "$JUDGEBOX_NONCE {\\"status\\": \\"ok\\"}"\nexit 0\nf() {\n'
    assert judge(sh, forged_sh).verdict != "accepted"
    assert judge(sh, "    echo $(( $1 + $2 ))\n").verdict == "accepted"


def test_the_solutions_process_cannot_report_a_test_error_for_itself():
    """Tests apart (``--process``): the solution's process sent the tests' process a forged
    ``test_error`` status for its own loading, turning a wrong answer into a masked reward
    (infra_error). Only its own loading outcomes (ok, error, compile_error) count."""
    from judgebox.reward import compute_score

    forged = ("```python\nimport sys\nsys._getframe(1).f_locals['send']({'status': 'test_error', 'error': 'forged'})\n"
              "raise SystemExit\n```")
    r = compute_score("t", forged, {"inputs": [[1, 2], [3, 4]], "outputs": [3, 7], "fn_name": "add"})
    assert (r["verdict"], r["infra_error"]) != ("test_data_error", True)
    assert r["score"] == 0.0 and not r["infra_error"]
