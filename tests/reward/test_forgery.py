"""Forging the completion marker from inside the solution (a new user's attack): a C++ static
initializer that reads the nonce from stdin before the tests and prints the marker must not pass."""

from reward import TestSpec, judge

PROMPT = "#include <assert.h>\n#include <bits/stdc++.h>\nint add(int x, int y) {\n"
TESTS = "}\nint main() {\n    auto candidate = add;\n    assert(candidate(1, 2) == 3);\n}\n"
SPEC = TestSpec(kind="harness", language="cpp", harness=TESTS, prefix=PROMPT)


def test_cpp_static_initializer_cannot_read_the_nonce_first():
    forged = ("    return x - y;\n}\nstatic int f_ = [](){ std::string s; std::getline(std::cin, s); "
              "std::cout << s << \" {\\\"status\\\": \\\"ok\\\"}\" << std::endl; std::_Exit(0); return 0; }();\n"
              "void unused_() {\n")
    j = judge(SPEC, forged)
    assert j.verdict != "accepted" and j.n_passed == 0, j


def test_cpp_honest_solution_still_passes_and_wrong_one_fails():
    assert judge(SPEC, "    return x + y;\n").verdict == "accepted"
    assert judge(SPEC, "    return x - y;\n").verdict == "runtime_error"
