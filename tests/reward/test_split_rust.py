"""Issue 38, Rust: the tests run in a process that holds no code of the solution (the split harness,
reward/harness/split/rust.py), so each way a wrong answer forged ``accepted`` in the one-program
harness now ends ``wrong_answer`` (or ``runtime_error`` where it ends the tests), and the tests' real
shapes (MultiPL-E's ``candidate`` and ``assert_eq!``, HumanEval-X's ``mod tests``, prompt helpers,
loops, ``&str`` and ``&mut`` arguments, tuples, options, maps, NaN, panics, an answer's own integer
widths) are judged as the one program judged them. Real rustc builds and runs."""

from __future__ import annotations

import pytest

from judgebox.reward import Verdict, judge
from judgebox.reward.harness import build_plan, harness_isolation
from judgebox.reward.spec import TestSpec

pytestmark = pytest.mark.slow

PROMPT = "use std::collections::HashMap;\n\n/// the sum of a and b\nfn add(a: isize, b: isize) -> isize {\n"
TESTS = ("}\n\nfn main() {\n    let candidate = add;\n    assert_eq!(candidate(1, 2), 3);\n"
         "    assert_eq!(candidate(-5, 5), 0);\n}\n")
SPEC = TestSpec(kind="harness", language="rust", prefix=PROMPT, harness="\n" + TESTS)
RIGHT = "    a + b\n"
WRONG = "    a - b\n"


def verdict(spec: TestSpec, code: str) -> Verdict:
    return judge(spec, code).verdict


#: Each a wrong answer that also tries to forge the verdict (issue 38's kinds), aimed only at the run.
#: A completion continues the function; to add items after it, it closes the function and opens one
#: that the tests' leading ``}`` closes.
TAIL = "fn jb_tail() {\n"
FORGERIES = {
    # code before the tests: an .init_array function reads stdin (the nonce) and prints the OK marker
    "init-array": ("    a - b\n}\n#[used]\n#[link_section = \".init_array\"]\nstatic JB_EARLY: extern \"C\" fn() = {\n"
                   "    extern \"C\" fn early() {\n        let mut n = String::new();\n"
                   "        let _ = std::io::stdin().read_line(&mut n);\n"
                   "        println!(\"\\n{} {{\\\"status\\\": \\\"ok\\\"}}\", n.trim());\n    }\n    early\n};\n" + TAIL),
    # a panic hook that prints the marker and exits 0 when the tests' assertion fails
    "panic-hook": ("    std::panic::set_hook(Box::new(|_| { println!(\"ok\"); std::process::exit(0); }));\n    a - b\n"),
    # the comparison redefined: a macro of the tests' name (a second entry point does not compile)
    "comparison": ("    a - b\n}\n#[allow(unused_macros)]\nmacro_rules! assert_eq { ($($t:tt)*) => {} }\n" + TAIL),
    # the tests' process reached through /proc: its memory, its stdout, its stdin
    "proc": ("    let parent = std::os::unix::process::parent_id();\n"
             "    for f in [\"mem\", \"fd/0\", \"fd/1\", \"environ\"] {\n"
             "        if let Ok(mut h) = std::fs::OpenOptions::new().write(true).open(format!(\"/proc/{}/{}\", parent, f)) {\n"
             "            use std::io::Write;\n            let _ = h.write_all(b\"ok\\n\");\n        }\n    }\n    a - b\n"),
    # reading the program's own text, and the tests' program, for the expected values
    "own-text": ("    for path in [\"main.rs\", \"tests/main.rs\", \"tests/main\"] {\n"
                 "        if let Ok(s) = std::fs::read(path) {\n"
                 "            let s = String::from_utf8_lossy(&s).into_owned();\n"
                 "            let key = format!(\"candidate({}, {}), \", a, b);\n"
                 "            if let Some(k) = s.find(&key) {\n"
                 "                let rest = &s[k + key.len()..];\n"
                 "                if let Ok(v) = rest[..rest.find(')').unwrap_or(0)].parse() { return v; }\n"
                 "            }\n        }\n    }\n    a - b\n"),
}


def test_killing_the_tests_or_exiting_early_is_never_a_pass():
    killer = ("    extern \"C\" { fn kill(pid: i32, sig: i32) -> i32; }\n"
              "    unsafe { kill(std::os::unix::process::parent_id() as i32, 9); }\n    a + b\n")
    assert verdict(SPEC, killer) == Verdict.runtime_error
    assert verdict(SPEC, "    std::process::exit(0)\n") == Verdict.runtime_error
    assert verdict(SPEC, "    panic!(\"not an assertion\")\n") == Verdict.runtime_error
    # a second entry point is an answer's own main, renamed: the tests still run
    assert verdict(SPEC, "    a + b\n}\nfn main() {\n    std::process::exit(0);\n}\n" + TAIL) == Verdict.accepted


SHAPES = [  # (prompt, a right completion, the tests, a wrong completion)
    # HumanEval-X: tests in a module, a prompt helper applied to the result, &str
    ("use std::collections::HashMap;\n\nfn shout(s: &str) -> String {\n    s.to_uppercase()\n}\n"
     "fn twice(s: &str) -> String{\n\n/*\n twice the text\n*/\n",
     "    format!(\"{}{}\", s, s)\n}\n",
     "\nmod tests {\n    use super::*;\n\n    pub fn test_twice() {\n"
     "        assert_eq!(shout(&twice(\"ab\")), \"ABAB\");\n        assert!(twice(\"\") == \"\");\n"
     "        for i in 0..5 {\n            assert_eq!(twice(&\"x\".repeat(i)).len(), 2 * i);\n        }\n    }\n}\n\n"
     "fn main() {\n    tests::test_twice();\n}\n",
     "    s.to_string()\n}\n"),
    # an argument changed in place comes back; a tuple, an Option, a HashMap, NaN
    ("use std::collections::HashMap;\nfn shapes(v: &mut Vec<isize>, s: String, x: f64) -> (Option<String>, HashMap<String, usize>, bool) {\n",
     "    v.push(7);\n    let mut m = HashMap::new();\n    m.insert(s.clone(), v.len());\n"
     "    (if s.is_empty() { None } else { Some(s + \"!\") }, m, x.is_nan())\n",
     "}\n\nfn main() {\n    let mut v = vec![1];\n    let r = shapes(&mut v, String::from(\"a\"), f64::NAN);\n"
     "    assert_eq!(v, vec![1, 7]);\n    assert_eq!(r.0, Some(String::from(\"a!\")));\n"
     "    assert_eq!(r.1, HashMap::from([(String::from(\"a\"), 2)]));\n    assert!(r.2);\n"
     "    assert_eq!(shapes(&mut v, String::new(), 1.5).0, None);\n}\n",
     "    (Some(s), HashMap::new(), false)\n"),
    # an answer that declares its own widths (usize for the prompt's isize), as the tests' literals allow
    ("fn count(xs: Vec<isize>, n: isize) -> Vec<isize> {\n",
     None,
     "}\n\nfn main() {\n    let candidate = count;\n    assert_eq!(candidate(vec![1, 2, 3], 2), vec![1, 2]);\n}\n",
     "    xs\n"),
]
RESTATED = "fn count(xs: Vec<isize>, n: usize) -> Vec<isize> {\n    xs.into_iter().take(n).collect()\n"


@pytest.mark.parametrize("prompt,body,tests,wrong", SHAPES, ids=["humaneval-x", "in-place-tuple-nan", "own-widths"])
def test_the_tests_shapes_are_judged_as_one_program_judges_them(prompt, body, tests, wrong):
    spec = TestSpec(kind="harness", language="rust", prefix=prompt, harness=tests)
    if body is None:  # the answer restates the function with its own parameter types
        spec = spec.model_copy(update={"prefix": "", "prompt": prompt})
        body, wrong = RESTATED, RESTATED.replace("take(n)", "take(1)")
    assert build_plan(spec, body).request.tests_program is not None
    j = judge(spec, body)
    assert j.verdict == Verdict.accepted, j.message
    assert verdict(spec, wrong) == Verdict.wrong_answer


def test_the_prompts_pub_and_attributes_stay_with_the_function():
    """Red team: `pub fn` and `#[inline]` headers left `pub` or the attribute at the end of the tests'
    program's prompt text (it did not compile: test_data_error for every answer)."""
    for qualified in ("pub fn add(a: isize, b: isize) -> isize {\n", "#[inline]\npub(crate) fn add(a: isize, b: isize) -> isize {\n"):
        spec = SPEC.model_copy(update={"prefix": PROMPT.replace("fn add(a: isize, b: isize) -> isize {\n", qualified)})
        assert build_plan(spec, RIGHT).request.tests_program is not None
        assert judge(spec, RIGHT).verdict == Verdict.accepted, qualified
    unsafe = SPEC.model_copy(update={"prefix": PROMPT.replace("fn add", "unsafe fn add")})
    assert build_plan(unsafe, RIGHT).request.tests_program is None


def test_a_type_of_the_prompts_own_keeps_the_one_program_harness():
    """A struct the prompt declares cannot cross, nor can a generic or a borrowed return: the problem
    stays on the one-program harness (forgeable, with tamper signals)."""
    for header in ("struct P { x: isize }\nfn f(p: P) -> isize {\n", "fn f<T: Ord>(v: Vec<T>) -> usize {\n",
                   "fn f(s: &str) -> &str {\n", "fn f(v: Vec<&str>) -> usize {\n", "fn f(x: u128) -> u128 {\n"):
        spec = TestSpec(kind="harness", language="rust", prefix=header, harness="}\n\nfn main() {\n}\n")
        assert build_plan(spec, "").request.tests_program is None, header
        assert harness_isolation(spec) == "in-process"
