"""Six languages solve the same stdio problem; MultiPL-E harnesses; gold solutions pass, mutants fail.

The MultiPL-E, APPS, MBPP and CodeContests rows are our own (``tests/fixtures/data``, in each
benchmark's format); the ``data`` tests run the same checks on the real datasets of
``$JUDGEBOX_DATA_DIR`` (skipped without it).
"""

import json
from pathlib import Path

import pytest

from judgebox.reward import StdioCase, TestSpec, Verdict, judge, judge_many
from tests.fixtures import DATA as OWN_ROWS

SUM = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "cpp": "#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n",
    "java": "import java.util.*;\npublic class Main{public static void main(String[] x){Scanner s=new Scanner(System.in);"
            "long a=s.nextLong(),b=s.nextLong();System.out.println(a+b);}}\n",
    "go": "package main\nimport \"fmt\"\nfunc main(){var a,b int64\nfmt.Scan(&a,&b)\nfmt.Println(a+b)}\n",
    "nodejs": "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(BigInt);console.log((a+b).toString());\n",
    "rust": "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s).unwrap();"
            "let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();println!(\"{}\",v[0]+v[1]);}\n",
}
CASES = [("1 2\n", "3\n"), ("10 -4\n", "6\n"), ("1000000000000 1\n", "1000000000001\n")]


def sum_spec(language):
    return TestSpec(kind="stdio", language=language, stdio=[StdioCase(stdin=i, expected=o) for i, o in CASES])


def test_same_stdio_problem_in_six_languages_scores_one_and_compile_error_is_isolated():
    """python, cpp, java, go, nodejs, rust all pass; a C++ compile error in the same batch is
    compile_error with score 0 and does not touch the other submissions."""
    langs = list(SUM)
    specs = [sum_spec(lang) for lang in langs] + [sum_spec("cpp")]
    codes = [SUM[lang] for lang in langs] + ["int main( { return 0; }\n"]
    judgements = judge_many(specs, codes, concurrency=2)
    for lang, j in zip(langs, judgements):
        assert (lang, j.verdict, j.pass_rate) == (lang, Verdict.accepted, 1.0), j.message
    broken = judgements[-1]
    assert broken.verdict == Verdict.compile_error and broken.n_passed == 0 and broken.n_total == 3
    assert "error" in broken.message


def multipl(lang):
    row = json.loads((OWN_ROWS / "sandboxfusion-samples" / f"humaneval-{lang}.jsonl").open().readline())
    assert row["task_id"] == "JB_0_has_pair_sum"
    # org.javatuples is not part of the JDK and not needed by this problem
    return TestSpec(kind="harness", language=lang, prefix=row["prompt"].replace("import org.javatuples.*;\n", ""),
                    harness=row["tests"])


PAIR = {  # has_pair_sum bodies: do two different elements add up to target (the prompt ends with the signature)
    "cpp": "    for (size_t i = 0; i < numbers.size(); i++) for (size_t j = i + 1; j < numbers.size(); j++)"
           " if (numbers[i] + numbers[j] == target) return true;\n    return false;\n",
    "java": "        for (int i = 0; i < numbers.size(); i++) for (int j = i + 1; j < numbers.size(); j++)"
            " if (numbers.get(i) + numbers.get(j) == target) return true;\n        return false;\n",
    "go": "    for i := range numbers { for j := i + 1; j < len(numbers); j++ {"
          " if numbers[i] + numbers[j] == target { return true } } }\n    return false\n}\n",
    "js": "  for (let i = 0; i < numbers.length; i++) for (let j = i + 1; j < numbers.length; j++)"
          " if (numbers[i] + numbers[j] == target) return true;\n  return false;\n}\n",
    "rs": "    for i in 0..numbers.len() { for j in i + 1..numbers.len() {"
          " if numbers[i] + numbers[j] == target { return true; } } }\n    false\n",
    "sh": "    python3 -c \"import sys; n=list(map(int,sys.argv[1].split())); t=int(sys.argv[2]);"
          " print('true' if any(a + b == t for i,a in enumerate(n) for b in n[i+1:]) else 'false')\" \"$1\" \"$2\"\n",
    "rb": "  numbers.combination(2).any? { |a, b| a + b == target }\nend\n",
    "php": "    foreach ($numbers as $i => $a) foreach (array_slice($numbers, $i + 1) as $b) if ($a + $b == $target) return true;\n"
           "    return false;\n}\n",
    "pl": "    for my $i (0 .. $#$numbers) { for my $j ($i + 1 .. $#$numbers) {"
          " return 1 if $numbers->[$i] + $numbers->[$j] == $target; } }\n    return \"\";\n}\n",
    "lua": "    for i = 1, #numbers do for j = i + 1, #numbers do"
           " if numbers[i] + numbers[j] == target then return true end end end\n    return false\nend\n",
    "r": "    n <- length(numbers)\n    if (n < 2) return(FALSE)\n"
         "    for (i in 1:(n - 1)) for (j in (i + 1):n) if (numbers[i] + numbers[j] == target) return(TRUE)\n    FALSE\n}\n",
    "rkt": "  (for*/or ([i (in-range (length numbers))] [j (in-range (add1 i) (length numbers))])\n"
           "    (= (+ (list-ref numbers i) (list-ref numbers j)) target)))\n",
    "d": "{\n    foreach (i; 0 .. numbers.length) foreach (j; i + 1 .. numbers.length)"
         " if (numbers[i] + numbers[j] == target) return true;\n    return false;\n}\n",
    "ts": "  for (let i = 0; i < numbers.length; i++) for (let j = i + 1; j < numbers.length; j++)"
          " if (numbers[i] + numbers[j] == target) return true;\n  return false;\n}\n",
    "scala": "        numbers.indices.exists(i => numbers.drop(i + 1).exists(_ + numbers(i) == target))\n",
}
#: a wrong body where replacing ``== t`` does not make one
WRONG = {"rkt": PAIR["rkt"].replace("(= (+", "(= (-"), "php": PAIR["php"].replace("== $t", "!= $t"),
         "pl": PAIR["pl"].replace("== $t", "!= $t")}
EARLY_EXIT = {"cpp": "    exit(0);\n", "java": "        System.exit(0); return false;\n",
              "go": "    judgeboxos.Exit(0)\n    return false\n}\n", "js": "  process.exit(0);\n}\n",
              "rs": "    std::process::exit(0);\n", "sh": "    exit 0\n", "rb": "  exit 0\nend\n",
              "php": "    exit(0);\n}\n", "pl": "    exit 0;\n}\n", "lua": "    os.exit(0)\nend\n",
              "r": "    quit(status = 0)\n}\n", "rkt": "  (exit 0))\n",
              "d": "{\n    import core.stdc.stdlib : exit;\n    exit(0);\n    assert(0);\n}\n",
              "ts": "  process.exit(0);\n}\n", "scala": "        sys.exit(0)\n"}


@pytest.mark.slow
@pytest.mark.parametrize("lang", list(PAIR))
def test_multipl_e_harness_needs_tests_to_complete(lang):
    """A MultiPL-E row (has_pair_sum): a correct body passes; a wrong one fails; exiting 0 early fails (BUG-027)."""
    spec = multipl(lang)
    assert judge(spec, PAIR[lang]).verdict == Verdict.accepted
    wrong = WRONG.get(lang) or PAIR[lang].replace("== t", "!= t")
    assert wrong != PAIR[lang]
    assert judge(spec, wrong).verdict in (Verdict.runtime_error, Verdict.wrong_answer)
    assert not judge(spec, EARLY_EXIT[lang]).passed


FLOOD = {  # 3 MB of the solution's own prints before the right answer (the output limit is 1 MiB)
    "cpp": "    for (int k = 0; k < 3000; k++) std::cout << std::string(1000, 'x') << std::endl;\n",
    "java": "        for (int k = 0; k < 3000; k++) System.out.println(\"x\".repeat(1000));\n",
    "go": "    for k := 0; k < 3000; k++ { fmt.Println(strings.Repeat(\"x\", 1000)) }\n",
    "js": "  for (let k = 0; k < 3000; k++) console.log('x'.repeat(1000));\n",
    "rs": "    for _ in 0..3000 { println!(\"{}\", \"x\".repeat(1000)); }\n",
    "rb": "  3000.times { puts 'x' * 1000 }\n",
    "php": "    for ($k = 0; $k < 3000; $k++) echo str_repeat('x', 1000), \"\\n\";\n",
    "pl": "    print 'x' x 1000, \"\\n\" for 1 .. 3000;\n",
    "lua": "    for k = 1, 3000 do print(string.rep('x', 1000)) end\n",
    "r": "    for (k in 1:3000) cat(strrep('x', 1000), '\\n')\n",
    "rkt": "  (for ([k 3000]) (displayln (make-string 1000 #\\x)))\n",
    "d": "    import std.stdio : writeln; import std.array : replicate;\n"
         "    foreach (k; 0 .. 3000) writeln(replicate(\"x\", 1000));\n",
    "ts": "  for (let k = 0; k < 3000; k++) console.log('x'.repeat(1000));\n",
    "scala": "        for (k <- 0 until 3000) { println(\"x\" * 1000); System.out.println(\"y\" * 1000) }\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", list(FLOOD))
def test_multipl_e_solution_printing_megabytes_still_passes(lang):
    """A right MultiPL-E answer that first prints 3 MB of debug output is accepted, as MultiPL-E's own
    harness accepts it (it ignores stdout): the harness keeps stdout for its marker and sends the
    program's prints to /dev/null (before, the marker fell past the 1 MiB output limit: not accepted).
    (Not bash: there a function's stdout is its return value.)"""
    spec = multipl(lang)
    code = FLOOD[lang] + PAIR[lang] if not PAIR[lang].startswith("{") else PAIR[lang].replace("{\n", "{\n" + FLOOD[lang], 1)
    if lang == "go":
        spec = spec.model_copy(update={"prefix": spec.prefix.replace('"fmt"', '"fmt"\n    "strings"', 1)})
    j = judge(spec, code)
    assert (j.verdict, j.pass_rate) == (Verdict.accepted, 1.0), j.message


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open()]


def apps_gold_passes_and_mutated_fails(row, not_modules):
    """Every stored solution of an APPS row passes all its tests; a mutated one does not.

    Solutions that are not valid Python modules (a top-level ``return``, which only APPS's own
    function-wrapping harness accepts) are excluded: there must be exactly ``not_modules`` of them.
    """
    spec = TestSpec.from_in_outs(row["input_output"], run_timeout=10)
    sols = [s for s in json.loads(row["solutions"]) if _compiles(s)]
    assert len(json.loads(row["solutions"])) - len(sols) == not_modules
    for sol in sols:
        j = judge(spec, sol)
        assert j.verdict == Verdict.accepted, (row["problem_id"], j.message)
    mutated = json.loads(row["solutions"])[0]
    mutated = (mutated.replace("return False", "return True") if spec.kind == "call"
               else "import sys\nsys.stdout.write('0\\n')\n" + mutated.replace("print(", "print(1, "))
    assert not judge(spec, mutated).passed, row["problem_id"]


@pytest.mark.parametrize("row", read_jsonl(OWN_ROWS / "apps.jsonl"), ids=lambda r: str(r["problem_id"]))
def test_apps_gold_solutions_pass_and_mutated_fail(row):
    """BUG-008 on APPS rows (stdin and call-based): every stored solution passes, a mutated one fails;
    problem 102's third solution, with a top-level ``return``, is not a module and is left out."""
    apps_gold_passes_and_mutated_fails(row, 1 if row["problem_id"] == 102 else 0)


def test_real_apps_gold_solutions_pass_and_mutated_fail(data_dir):
    """The same on the real APPS sample: only one solution, in problem 2287, is not a module."""
    rows = read_jsonl(data_dir / "apps_sample.jsonl")
    assert [r["problem_id"] for r in rows] == [1, 2287, 4184]
    for row in rows:
        apps_gold_passes_and_mutated_fails(row, 1 if row["problem_id"] == 2287 else 0)


def _compiles(source):
    try:
        compile(source, "solution.py", "exec")
        return True
    except SyntaxError:
        return False


def every_nth(rows, n=20):
    return rows[:: max(1, len(rows) // n)][:n]


def test_mbpp_gold_solutions_pass_and_mutated_fail():
    """BUG-008 on MBPP rows (setup code, a Counter compared with a dict): gold passes; 'return None' bodies fail."""
    mbpp_gold_passes_and_broken_fails(read_jsonl(OWN_ROWS / "mbpp.jsonl"))


def test_real_mbpp_gold_solutions_pass_and_mutated_fail(data_dir):
    """The same on real MBPP (every 48th task, 20 tasks)."""
    rows = every_nth(read_jsonl(data_dir / "mbpp.jsonl"))
    assert len(rows) == 20
    mbpp_gold_passes_and_broken_fails(rows)


def mbpp_gold_passes_and_broken_fails(rows):
    specs = [TestSpec(kind="assert", asserts=r["test_list"], setup_code=r["test_setup_code"]) for r in rows]
    gold = judge_many(specs, [r["code"] for r in rows], concurrency=2)
    assert [(r["task_id"], j.verdict) for r, j in zip(rows, gold) if not j.passed] == []
    broken = judge_many(specs, [r["code"] + "\n\ndef _judgebox_noop(): pass\n" + _break(r["code"]) for r in rows],
                        concurrency=2)
    assert [r["task_id"] for r, j in zip(rows, broken) if j.passed] == []


def _break(code):
    """Redefine every top-level function of ``code`` to return None (a wrong solution)."""
    import ast
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # MBPP code has regexes like "\w" in plain strings
        names = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
    return "".join(f"\ndef {n}(*a, **k):\n    return None\n" for n in names)


def test_codecontests_rows_have_no_solutions_but_their_tests_load():
    """CodeContests samples carry tests only: they become stdio specs with every test kept."""
    path = OWN_ROWS / "sandboxfusion-samples" / "code_eval_code_contests.jsonl"
    row = json.loads(path.open().readline())
    tests = row["test"] if isinstance(row["test"], list) else json.loads(row["test"])
    spec = TestSpec.from_in_outs({"inputs": [t["input"]["stdin"] for t in tests],
                                  "outputs": [t["output"]["stdout"] for t in tests]})
    assert spec.kind == "stdio" and spec.n_tests == len(tests) > 0
    assert judge(spec, "print('definitely not the answer')").verdict == Verdict.wrong_answer


@pytest.mark.slow
def test_r_answer_that_overflows_the_c_stack_is_not_accepted():
    """R goes on to the next top-level expression after an error its handler never saw (a C stack
    overflow): the tests and the marker are one expression, so a solution that recurses forever
    (SandboxFusion's humaneval-r HumanEval_34_unique answer calls itself) is not accepted."""
    spec = multipl("r")
    j = judge(spec, "    has_pair_sum(numbers, target)\n}\n")
    assert j.verdict == Verdict.runtime_error, j.message
