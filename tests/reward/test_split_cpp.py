"""Issue 38, C++: the tests run in a process that holds no code of the solution (the split harness,
reward/harness/split/cpp.py), so each way a wrong answer forged ``accepted`` in the one-program harness
now ends ``wrong_answer``, and the tests' real shapes (MultiPL-E's ``candidate``, HumanEval-X's
``issame``, prompt helpers, loops, several calls per assert, arguments changed in place, exceptions,
NaN, maps, tuples, optionals, ``std::any``) are judged as the one program judged them."""

from __future__ import annotations

import pytest

from judgebox.reward import Verdict, judge
from judgebox.reward.harness import build_plan, harness_isolation
from judgebox.reward.spec import TestSpec

PROMPT = "#include<assert.h>\n#include<bits/stdc++.h>\n// the sum of a and b\nlong add(long a, long b) {\n"
TESTS = ("}\nint main() {\n    auto candidate = add;\n    assert(candidate((1), (2)) == (3));\n"
         "    assert(candidate((-5), (5)) == (0));\n}\n")
SPEC = TestSpec(kind="harness", language="cpp", prefix=PROMPT, harness="\n" + TESTS)
RIGHT = "    return a + b;\n"
WRONG = "    return a - b;\n"


def verdict(spec: TestSpec, code: str) -> Verdict:
    j = judge(spec, code)
    return j.verdict


#: Each a wrong answer that also tries to forge the verdict (issue 38's kinds), aimed only at the run.
#: A completion continues the prompt's function; to add code after it, it closes the function and
#: opens a namespace that the tests' leading ``}`` closes.
OPEN = "namespace jb_tail {\n"
FORGERIES = {
    # code before the tests: a constructor reads stdin (the nonce) and prints the OK marker
    "constructor": ("    return a - b;\n}\n#include <unistd.h>\n__attribute__((constructor(101))) static void jb_early() {\n"
                    "    char b[256]; ssize_t n = read(0, b, sizeof b - 1); if (n > 0) { b[n] = 0;\n"
                    "    std::string s(b); s = s.substr(0, s.find('\\n')); std::string l = s + \" {\\\"status\\\": \\\"ok\\\"}\\n\";\n"
                    "    if (write(1, l.data(), l.size())) {} } }\n" + OPEN),
    # a handler at exit and for the failed assert's signal
    "exit-handlers": ("    return a - b;\n}\n#include <csignal>\n#include <unistd.h>\nstatic void jb_ok(int) { "
                      "if (write(1, \"ok\\n\", 3)) {} _exit(0); }\n"
                      "static int jb_hooks = (std::atexit([] { if (write(1, \"ok\\n\", 3)) {} }), std::signal(SIGABRT, jb_ok), "
                      "std::signal(SIGILL, jb_ok), std::signal(SIGTRAP, jb_ok), 0);\n" + OPEN),
    # the comparison redefined, and the tests' assert
    "comparison": ("    return a - b;\n}\nstruct JbAny { template <class T> JbAny(T) {} };\n"
                   "bool operator==(JbAny, JbAny) { return true; }\n#define assert(x) ((void)0)\n" + OPEN),
    # the runner's process reached through /proc (its memory, its stdout, its stdin) and killed
    "proc": ("    static bool once = false;\n    if (!once) { once = true;\n"
             "        std::string p = \"/proc/\" + std::to_string(getppid());\n"
             "        for (const char* f : {\"/mem\", \"/fd/0\", \"/fd/1\", \"/environ\"}) {\n"
             "            FILE* h = fopen((p + f).c_str(), \"r+\"); if (h) { fputs(\"ok\\n\", h); fclose(h); } }\n"
             "    }\n    return a - b;\n"),
}


@pytest.mark.parametrize("kind", sorted(FORGERIES))
def test_a_wrong_answer_that_forges_is_a_wrong_answer(kind):
    code = FORGERIES[kind]
    if kind == "proc":  # the declarations it uses must come before the function
        code = FORGERIES[kind]
        spec = SPEC.model_copy(update={"prefix": PROMPT.replace("long add", "#include <unistd.h>\nlong add")})
        assert verdict(spec, code) == Verdict.wrong_answer
        return
    assert verdict(SPEC, code) == Verdict.wrong_answer


def test_killing_the_tests_or_exiting_early_is_never_a_pass():
    killer = "    kill(getppid(), SIGKILL);\n    return a + b;\n"
    spec = SPEC.model_copy(update={"prefix": PROMPT.replace("long add", "#include <csignal>\n#include <unistd.h>\nlong add")})
    assert verdict(spec, killer) == Verdict.runtime_error
    assert verdict(SPEC, "    std::exit(0);\n") == Verdict.runtime_error
    # a second entry point does not compile (as in the one-program harness: main is defined twice)
    assert verdict(SPEC, "    return a + b;\n}\nint main() { return 0; }\n" + OPEN) == Verdict.compile_error


SHAPES = [  # (prompt, a right body, the tests, g++ -std, a wrong body)
    # HumanEval-X: issame() over vectors, the function called by its name, c++11
    ("#include<stdio.h>\n#include<vector>\nusing namespace std;\nvector<int> twice(vector<int> v){\n",
     "    for (auto& x : v) x *= 2;\n    return v;\n}\n",
     "\n#undef NDEBUG\n#include<assert.h>\nbool issame(vector<int> a, vector<int> b){ return a == b; }\n"
     "int main(){\n    assert (issame(twice({1, 2}), {2, 4}));\n    assert (issame(twice({}), {}));\n}\n", "c++11",
     "    return v;\n}\n"),
    # a prompt helper applied to the result, a loop, several calls per assert
    ("#include<bits/stdc++.h>\nlong sq(long x) { return x * x; }\nlong root(long y) {\n",
     "    long r = 0;\n    while ((r + 1) * (r + 1) <= y) ++r;\n    return r;\n",
     "}\nint main() {\n    for (long i = 0; i < 30; ++i) assert(sq(root(sq(i))) == sq(i));\n"
     "    assert(root(16) + root(9) == root(49));\n}\n", None, "    return y / 2;\n"),
    # an argument changed in place comes back; a tuple, an optional, a map, NaN
    ("#include<bits/stdc++.h>\nstd::tuple<std::optional<std::string>, std::map<std::string, long>, double> "
     "shapes(std::vector<long>& v, std::string s) {\n",
     "    v.push_back(7);\n    std::map<std::string, long> m{{s, (long)v.size()}};\n"
     "    return {s.empty() ? std::nullopt : std::optional<std::string>(s + \"!\"), m, std::nan(\"\")};\n",
     "}\nint main() {\n    std::vector<long> v{1};\n    auto r = shapes(v, \"a\");\n    assert(v == std::vector<long>({1, 7}));\n"
     "    assert(std::get<0>(r) == std::optional<std::string>(\"a!\"));\n    assert((std::get<1>(r) == std::map<std::string, long>{{\"a\", 2}}));\n"
     "    assert(std::isnan(std::get<2>(r)));\n    assert(!std::get<0>(shapes(v, \"\")).has_value());\n}\n", None,
     "    return {s, {}, 0.0};\n"),
    # MultiPL-E's std::any arguments (HumanEval 22)
    ("#include<assert.h>\n#include<bits/stdc++.h>\nstd::vector<long> ints(std::vector<std::any> values) {\n",
     "    std::vector<long> out;\n    for (auto& x : values) if (x.type() == typeid(int)) out.push_back(std::any_cast<int>(x));\n"
     "    if (values.size() == 5 && values[4].type() != typeid(const char*)) return {};\n"
     "    return out;\n",
     "}\nint main() {\n    auto candidate = ints;\n    assert(candidate((std::vector<std::any>({(std::any)4, (std::any)std::map<long,long>(), "
     "(std::any)23.2f, (std::any)9, (std::any)\"adasd\"}))) == (std::vector<long>({(long)4, (long)9})));\n}\n", None,
     "    return {4};\n"),
    # MBXP: main(argc, argv), a compare template, assert(!"...")
    ("#include <bits/stdc++.h>\nusing namespace std;\n\nint digitSum(int n) {\n",
     "    int s = 0;\n    for (; n; n /= 10) s += n % 10;\n    return s;\n}\n",
     "\ntemplate <typename T> bool compare(T a, T b){ \n    return a == b; \n}\n\nint main(int argc, char* argv[]) {\n"
     "    int x0 = digitSum(345);\n    if (!(compare(x0, 12))) {\n        assert(!\"Exception -- test case 0 did not pass.\");\n    }\n"
     "    return 0;\n}", None, "    return n;\n}\n"),
    # an exception of the solution reaches the tests as one
    ("#include<bits/stdc++.h>\nlong safe(long x) {\n", "    if (x < 0) throw std::invalid_argument(\"neg\");\n    return x;\n",
     "}\nint main() {\n    bool thrown = false;\n    try { safe(-1); } catch (const std::exception&) { thrown = true; }\n"
     "    assert(thrown && safe(3) == 3);\n}\n", None, "    return x;\n"),
]


@pytest.mark.parametrize("prompt,body,tests,std,wrong", SHAPES, ids=["issame", "helpers-loops", "in-place-tuple-nan", "any",
                                                                   "mbxp", "exception"])
def test_the_tests_shapes_are_judged_as_one_program_judges_them(prompt, body, tests, std, wrong):
    spec = TestSpec(kind="harness", language="cpp", prefix=prompt, harness=tests, cpp_std=std)
    assert build_plan(spec, body).request.tests_program is not None
    j = judge(spec, body)
    assert j.verdict == Verdict.accepted, j.message
    assert verdict(spec, wrong) == Verdict.wrong_answer


def test_a_type_only_a_solution_can_define_keeps_the_one_program_harness():
    """MultiPL-E's Union_... return types are declared by no prompt: the tests' program cannot name
    them, so the problem stays on the one-program harness (forgeable, with tamper signals)."""
    prompt = "#include<bits/stdc++.h>\nUnion_std_string_long f(std::string s) {\n"
    spec = TestSpec(kind="harness", language="cpp", prefix=prompt, harness="\n}\nint main() {\n    assert(f(\"\") == 0);\n}\n")
    assert build_plan(spec, "").request.tests_program is None
    assert harness_isolation(spec) == "in-process"


def test_the_solution_can_read_neither_the_tests_nor_their_program():
    """Red team H1: the tests' source lay beside the solution, readable (a lookup table of the
    expected values was accepted). Only the tests' binary is left, execute-only."""
    lookup = ("    for (const char* path : {\"tests/main.cpp\", \"tests/main\"}) {\n"
              "        std::ifstream f(path); std::stringstream ss; ss << f.rdbuf(); std::string s = ss.str();\n"
              "        std::string key = \"candidate((\" + std::to_string(a) + \"), (\" + std::to_string(b) + \")) == (\";\n"
              "        size_t k = s.find(key);\n"
              "        if (k != std::string::npos) return std::stol(s.substr(k + key.size()));\n"
              "        if (!s.empty()) return 3 - 2 * (a == -5);\n    }\n    return 42;\n")
    assert verdict(SPEC, lookup) == Verdict.wrong_answer


def test_the_solution_cannot_run_the_tests_program_as_an_oracle():
    """Red team H1 (second round): the tests' binary, execute-only in the tests' folder, could be run by
    the solution with its own answers, and its failures told the expected values. It now runs from a
    memfd that its own exec closes: no path, no descriptor names it."""
    probe = ("    std::string self = \"/proc/\" + std::to_string(getppid()) + \"/exe\";\n"
             "    for (const char* p : {\"tests/main\", \"./tests/main\", self.c_str()})\n"
             "        if (access(p, X_OK) == 0) return a + b;\n"
             "    for (int fd = 3; fd < 64; ++fd) {\n"
             "        std::string path = \"/proc/self/fd/\" + std::to_string(fd);\n"
             "        if (fd > 4 && access(path.c_str(), X_OK) == 0) return a + b;\n    }\n    return a - b;\n")
    spec = SPEC.model_copy(update={"prefix": PROMPT.replace("long add", "#include <unistd.h>\nlong add")})
    assert verdict(spec, probe) == Verdict.wrong_answer


def test_a_failure_the_tests_main_returns_is_never_a_pass():
    """Red team H2: `return 1` from the tests' main was ignored and the marker printed."""
    spec = TestSpec(kind="harness", language="cpp", prefix="#include<bits/stdc++.h>\nlong add(long a, long b) {\n",
                    harness="}\nint main() {\n    if (add(1, 2) != 3) return 1;\n    return 0;\n}\n")
    assert verdict(spec, "    return a - b;\n") == Verdict.runtime_error
    assert verdict(spec, "    return a + b;\n") == Verdict.accepted


def test_the_tests_rand_is_not_the_solutions_to_replay():
    """Red team H3: HumanEval-X's decode tests draw with unseeded rand(); the solution's process drew
    the same numbers and rebuilt the expected string without reading its input."""
    prompt = "#include<bits/stdc++.h>\nusing namespace std;\nstring echo(string s){\n"
    tests = ("\n#undef NDEBUG\n#include<assert.h>\nint main(){\n    for (int i=0;i<20;i++){\n"
             "        int l=10+rand()%11; string str=\"\";\n        for (int j=0;j<l;j++) str+=(char)(97+rand()%26);\n"
             "        assert (echo(str) == str);\n    }\n}\n")
    spec = TestSpec(kind="harness", language="cpp", prefix=prompt, harness=tests)
    assert verdict(spec, "    return s;\n}\n") == Verdict.accepted
    replay = ("    int l=10+rand()%11; string str=\"\";\n    for (int j=0;j<l;j++) str+=(char)(97+rand()%26);\n"
              "    return str;\n}\n")
    assert verdict(spec, replay) == Verdict.wrong_answer


def test_exceptions_keep_their_standard_kind_and_a_solutions_globals_keep_their_names():
    """Red team M3: the tests saw every exception as std::runtime_error; M5: <unistd.h> in the
    solution's program made globals named sync or read a compile error."""
    prompt = "#include<bits/stdc++.h>\nlong safe(long x) {\n"
    tests = ("}\nint main() {\n    bool bad = false, other = false;\n"
             "    try { safe(-1); } catch (const std::invalid_argument&) { bad = true; } catch (...) { other = true; }\n"
             "    assert(bad && !other && safe(3) == 3);\n}\n")
    spec = TestSpec(kind="harness", language="cpp", prefix=prompt, harness=tests)
    assert verdict(spec, "    if (x < 0) throw std::invalid_argument(\"neg\");\n    return x;\n") == Verdict.accepted
    assert verdict(spec, "    if (x < 0) throw std::runtime_error(\"neg\");\n    return x;\n") == Verdict.wrong_answer
    # HumanEval-X's prompts include a few headers (not <bits/stdc++.h>, which declares them too)
    few = TestSpec(kind="harness", language="cpp", prefix="#include<stdio.h>\n#include<vector>\nlong twice(long x){\n",
                   harness="\n#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (twice(2) == 4);\n}\n")
    assert verdict(few, "    return 2 * x;\n}\nint sync = 0, read = 1, pipe = 2, sleep = 3;\n") == Verdict.accepted


def test_pointer_parameters_keep_the_one_program_harness():
    """Red team M2: a pointer or rvalue-reference parameter cannot cross; the problem keeps one program."""
    for header in ("long first(long* p) {\n", "long len(std::string&& s) {\n", "const char* name(long x) {\n"):
        spec = TestSpec(kind="harness", language="cpp", prefix="#include<bits/stdc++.h>\n" + header,
                        harness="}\nint main() {\n}\n")
        assert build_plan(spec, "").request.tests_program is None, header


def test_a_compile_that_blocks_on_its_own_output_is_the_programs_doing(local_sandbox):
    """Red team H2: `#include "/dev/stdout"` had g++ read its own output pipe until the compile's time
    limit, and the judge's starved-compile rule made that infra_error (a masked reward). A stopped
    command now says how long it waited for a CPU (cpu_wait): a compile that mostly waited on
    something else is compile_error."""
    from judgebox.reward.judge import _compile_verdict
    from judgebox.sandbox.models import RunCodeRequest

    r = local_sandbox.run_code(RunCodeRequest(code='#include "/dev/stdout"\nint main() {}\n', language="cpp",
                                              compile_timeout=1))
    result = r.compile_result
    assert result.status.value == "TimeLimitExceeded" and result.cpu_wait is not None
    assert result.execution_time - result.cpu_time - result.cpu_wait > 0.5 * result.execution_time
    verdict, message = _compile_verdict(result)
    assert verdict == Verdict.compile_error and "/dev/stdout" in message
