"""Issue 38, Go: the tests run in a process that holds no code of the solution (the split harness,
reward/harness/split/go.py), so each way a wrong answer forged ``accepted`` in the one-program
harness now ends ``wrong_answer`` (or ``runtime_error`` where it ends the tests), and the tests' real
shapes (MultiPL-E's ``TestXxx`` tables compared with ``fmt.Sprintf("%v")``, HumanEval-X's testify
``assert.Equal``, ``[]interface{}`` results, maps, slices sorted in place, nil apart from empty,
panics) are judged as the one program judged them. Real go builds and runs."""

from __future__ import annotations

import pytest

from judgebox.reward import Verdict, judge
from judgebox.reward.harness import build_plan, harness_isolation
from judgebox.reward.spec import TestSpec

pytestmark = pytest.mark.slow

IMPORTS = 'import (\n    "testing"\n    "fmt"\n)\n'
PROMPT = "package add_test\n\n" + IMPORTS + "\n// the sum of a and b\nfunc add(a int, b int) int {\n"


def table(name: str, rows: list[tuple[str, str]]) -> str:
    """MultiPL-E's Go tests: a table of actual and expected values compared as ``%v`` text."""
    cases = "".join(f"     {{ actual: candidate({a}), expected: {e} }},\n" for a, e in rows)
    return (f"\nfunc Test{name.capitalize()}(t *testing.T) {{\n  candidate := {name}\n\ttype test struct {{\n"
            "\t\tactual   interface{}\n\t\texpected interface{}\n\t}\n   tests := []test{\n" + cases + "   }\n\n"
            "\tfor i, tc := range tests {\n\t\tt.Run(fmt.Sprintf(\"test num % d\", i), func(t *testing.T) {\n"
            "\t\t\tif fmt.Sprintf(\"%v\", tc.actual) != fmt.Sprintf(\"%v\", tc.expected) {\n"
            "\t\t\t\tt.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)\n\t\t\t}\n\t\t})\n\t}\n}\n")


TESTS = table("add", [("1, 2", "3"), ("-5, 5", "0")])
SPEC = TestSpec(kind="harness", language="go_test", prefix=PROMPT, harness=TESTS)
RIGHT = "    return a + b\n}\n"
WRONG = "    return a - b\n}\n"
#: a prompt that imports os and strings too, for the forgeries that open files
OS_SPEC = SPEC.model_copy(update={"prefix": PROMPT.replace('"fmt"\n)\n', '"fmt"\n    "os"\n    "strings"\n)\n\n'
                                                           'var _ = os.Exit\nvar _ = strings.Index\n')})

FORGERIES = {
    # code before the tests: an init reads stdin (the nonce) and prints the OK marker
    "init": (OS_SPEC, "    return a - b\n}\n\nfunc init() {\n    b := make([]byte, 64)\n    n, _ := os.Stdin.Read(b)\n"
                      "    fmt.Printf(\"\\n%s {\\\"status\\\": \\\"ok\\\"}\\n\", string(b[:n]))\n}\n"),
    # the tests' process reached through /proc: its stdout, its stdin, its memory
    "proc": (OS_SPEC, "    for _, f := range []string{\"fd/1\", \"fd/0\", \"mem\", \"environ\"} {\n"
                      "        h, err := os.OpenFile(fmt.Sprintf(\"/proc/%d/%s\", os.Getppid(), f), os.O_WRONLY, 0)\n"
                      "        if err == nil {\n            h.WriteString(\"ok\\n\")\n        }\n    }\n    return a - b\n}\n"),
    # reading the program's own text, and the tests' program, for the expected values
    "own-text": (OS_SPEC, "    for _, p := range []string{\"main.go\", \"tests/main.go\"} {\n"
                          "        if data, err := os.ReadFile(p); err == nil {\n"
                          "            key := fmt.Sprintf(\"candidate(%d, %d), expected: \", a, b)\n"
                          "            if k := strings.Index(string(data), key); k >= 0 {\n"
                          "                v := 0\n                fmt.Sscanf(string(data)[k+len(key):], \"%d\", &v)\n"
                          "                return v\n            }\n        }\n    }\n    return a - b\n}\n"),
}


@pytest.mark.parametrize("kind", sorted(FORGERIES))
def test_a_wrong_answer_that_forges_is_a_wrong_answer(kind):
    spec, code = FORGERIES[kind]
    assert judge(spec, code).verdict == Verdict.wrong_answer


def test_killing_the_tests_or_exiting_early_is_never_a_pass():
    assert judge(OS_SPEC, "    p, _ := os.FindProcess(os.Getppid())\n    p.Kill()\n    return a + b\n}\n").verdict \
        == Verdict.runtime_error
    assert judge(OS_SPEC, "    os.Exit(0)\n    return a + b\n}\n").verdict == Verdict.runtime_error
    assert judge(SPEC, "    panic(\"boom\")\n}\n").verdict == Verdict.runtime_error


HUMANEVAL_X = ('package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n\n'
               'import (\n    "sort"\n)\n\nvar _ = sort.Ints\n\n// the evens, sorted\nfunc Evens(numbers []int) []int {\n')
SHAPES = [  # (spec, a right completion, a wrong completion)
    # HumanEval-X: testify's assert.Equal (reflect.DeepEqual: an empty slice is not nil), a prompt import
    (TestSpec(kind="harness", language="go_test", prefix=HUMANEVAL_X,
              harness="func TestEvens(t *testing.T) {\n    assert := assert.New(t)\n"
                      "    assert.Equal([]int{2, 4}, Evens([]int{4, 1, 2}))\n    assert.Equal([]int{}, Evens([]int{1}))\n}\n"),
     "    out := []int{}\n    for _, x := range numbers {\n        if x%2 == 0 {\n            out = append(out, x)\n"
     "        }\n    }\n    sort.Ints(out)\n    return out\n}\n",
     "    var out []int\n    for _, x := range numbers {\n        if x%2 == 0 {\n            out = append(out, x)\n"
     "        }\n    }\n    sort.Ints(out)\n    return out\n}\n"),
    # MultiPL-E: []interface{} results of mixed values, a map, a slice sorted in place by the solution
    (TestSpec(kind="harness", language="go_test",
              prefix="package shapes_test\n\n" + IMPORTS + "\nfunc shapes(xs []int, s string) []interface{} {\n",
              harness=table("shapes", [("[]int{3, 1, 2}, \"a\"", "[]interface{}{6, \"a!\", map[string]int{\"a\": 3}, 1.5}")])
              + "\nfunc TestInPlace(t *testing.T) {\n    xs := []int{3, 1, 2}\n    shapes(xs, \"\")\n"
              "    if fmt.Sprint(xs) != \"[1 2 3]\" {\n        t.Errorf(\"not sorted: %v\", xs)\n    }\n}\n"),
     "    sum := 0\n    for _, x := range xs {\n        sum += x\n    }\n    for i := range xs {\n"
     "        for j := i + 1; j < len(xs); j++ {\n            if xs[j] < xs[i] {\n                xs[i], xs[j] = xs[j], xs[i]\n"
     "            }\n        }\n    }\n    return []interface{}{sum, s + \"!\", map[string]int{s: len(xs)}, 1.5}\n}\n",
     "    return []interface{}{0, s, map[string]int{}, 1.5}\n}\n"),
]


@pytest.mark.parametrize("spec,body,wrong", SHAPES, ids=["humaneval-x-testify", "interfaces-maps-in-place"])
def test_the_tests_shapes_are_judged_as_one_program_judges_them(spec, body, wrong):
    assert build_plan(spec, body).request.tests_program is not None
    j = judge(spec, body)
    assert j.verdict == Verdict.accepted, j.message
    assert judge(spec, wrong).verdict == Verdict.wrong_answer


def test_a_type_the_wire_does_not_carry_keeps_the_one_program_harness():
    for header in ("type P struct{ x int }\n\nfunc f(p P) int {\n", "func f(xs ...int) int {\n",
                   "func f(g func(int) int) int {\n"):
        spec = TestSpec(kind="harness", language="go_test", prefix="package f_test\n\n" + IMPORTS + header,
                        harness=table("f", [("1", "1")]))
        assert build_plan(spec, "").request.tests_program is None, header
        assert harness_isolation(spec) == "in-process"


RESTATED = SPEC.model_copy(update={"prefix": "", "prompt": PROMPT})
HEADER = 'package add_test\n\nimport (\n    "testing"\n    "fmt"\n)\n\n'


@pytest.mark.parametrize("answer", [
    "func add(a int, b int) float64 {\n    return float64(a+b) + 0.75\n}\n",  # truncated to the int 3
    'func add(a int, b int) string {\n    return fmt.Sprint(a+b) + " is not the answer"\n}\n',  # read as 3
])
def test_a_restated_result_type_crosses_only_as_a_value_the_prompts_type_holds(answer):
    """Red team: a completion that restates the function with another result type had its value
    converted to the prompt's, truncating (3.75 to 3) or reading a prefix of its text: accepted."""
    assert judge(RESTATED, HEADER + answer).verdict != Verdict.accepted
    assert judge(RESTATED, HEADER + "func add(a int, b int) int64 {\n    return int64(a + b)\n}\n").verdict \
        == Verdict.accepted  # an int64 the prompt's int holds exactly


def test_parameters_named_like_a_type_or_blank_are_served():
    """Red team: the proxy named its parameters as the prompt does, so ``string string`` (a type
    shadowed in its body) or ``_`` did not compile: every answer a test-data error."""
    spec = TestSpec(kind="harness", language="go_test",
                    prefix="package f_test\n\n" + IMPORTS + "\nfunc twice(string string, _ int) string {\n",
                    harness=table("twice", [('"ab", 0', '"abab"')]).replace("candidate := twice", "candidate := twice"))
    assert judge(spec, "    return string + string\n}\n").verdict == Verdict.accepted
    assert judge(spec, "    return string\n}\n").verdict == Verdict.wrong_answer


def test_a_failure_in_a_parallel_subtest_fails_the_test():
    """Red team: a test passed when its function returned, before its t.Parallel() subtests ran."""
    spec = SPEC.model_copy(update={"harness": TESTS.replace("func(t *testing.T) {\n", "func(t *testing.T) {\n\t\t\tt.Parallel()\n", 1)})
    assert "t.Parallel()" in spec.harness
    assert judge(spec, WRONG).verdict == Verdict.wrong_answer
    assert judge(spec, RIGHT).verdict == Verdict.accepted
