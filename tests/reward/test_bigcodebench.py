"""BigCodeBench, complete and instruct: rows become programs as the official (calibrated) evaluation
builds them, the unittest file runs in the solution's process under the official module environment,
and a library the harness provides but the sandbox lacks is never the solution's fault. Our own rows
(``tests/fixtures/rows_bigcodebench.py``), never the dataset's; judged in the real embedded sandbox
(the ``default`` runtime has the rows' pandas and numpy).
"""

import json

import pytest

from judgebox.reward import TestSpec, Verdict, judge, judge_many
from judgebox.reward.loaders import load_dataset, load_problems
from judgebox.reward.loaders.bigcodebench import STUB, libraries
from judgebox.reward.preludes import PRELUDES
from judgebox.sandbox.runtime import find_runtime
from tests.fixtures import DATA as OWN_ROWS
from tests.fixtures.rows_bigcodebench import CRASHES, MUTANTS, ROWS
from tests.reward.test_eval import judgebox

needs_default = pytest.mark.skipif(find_runtime(None) is None,
                                   reason="the default runtime is not built: judgebox runtime build")


@pytest.fixture(autouse=True)
def own_rows(monkeypatch):
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))


def verdicts(problems, completions):
    pairs = [p.candidate(c) for p, c in zip(problems, completions)]
    return [j.verdict for j in judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)]


def test_rows_become_the_calibrated_programs_of_both_tasks():
    complete, manifest = load_dataset("bigcodebench-complete")
    instruct, _ = load_dataset("bigcodebench-instruct")
    assert [p.task_id for p in complete] == [p.task_id for p in instruct] == [r["task_id"] for r in ROWS]
    row, c, i = ROWS[0], complete[0], instruct[0]
    assert (c.prompt, i.prompt) == (row["complete_prompt"], row["instruct_prompt"])
    assert c.spec.prefix == row["code_prompt"] + "\n    pass\n" + row["complete_prompt"]
    assert i.spec.prefix == row["code_prompt"] + STUB and i.gold == row["code_prompt"] + row["canonical_solution"]
    assert c.gold == row["canonical_solution"]
    assert (c.spec.kind, c.spec.entry_point, c.spec.harness) == ("harness", None, row["test"])
    assert c.spec.prelude == PRELUDES["bigcodebench"]
    assert (c.spec.run_timeout, c.spec.memory_limit_MB) == (240, 8192)
    assert (manifest.runtime, [p.spec.libraries for p in complete]) == ("bigcodebench", [["pandas"], [], [], ["numpy"]])
    assert (c.spec.shared_module, c.spec.unittest_class) == (True, "TestCases")


@pytest.mark.parametrize("libs,expected", [
    ("['pandas', 'random', 'os']", ["pandas"]),
    (["matplotlib.pyplot", "numpy", "collections"], ["matplotlib", "numpy"]),  # parquet rows hold a list
    ("[]", []),
    ("['', ' numpy ']", ["numpy"]),
])
def test_libs_name_the_libraries_outside_the_standard_library(libs, expected):
    assert libraries(libs) == expected


def test_unreadable_libs_make_the_row_test_data_error_not_a_verdict(tmp_path):
    path = tmp_path / "bcb.jsonl"
    path.write_text(json.dumps({**ROWS[0], "libs": "pandas, numpy"}) + "\n")
    [problem] = load_problems(path, "bigcodebench-complete")
    assert problem.spec is None and problem.data_error == \
        "TestDataError: libs: not a list of library names: 'pandas, numpy'"


@pytest.mark.parametrize("fmt", ["bigcodebench-complete", "bigcodebench-instruct"])
@pytest.mark.parametrize("field", ["task_id", "code_prompt", "test", "canonical_solution"])
def test_a_malformed_row_is_an_error_naming_file_row_and_field(tmp_path, fmt, field):
    path = tmp_path / "bcb.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({k: v for k, v in ROWS[1].items() if k != field}) + "\n")
    with pytest.raises(ValueError, match=rf"bcb.jsonl:2: format '{fmt}' needs the field '{field}'"):
        load_problems(path, fmt)


@needs_default
@pytest.mark.slow
def test_gold_passes_mutants_fail_and_crashes_are_runtime_errors_in_both_tasks():
    complete = load_dataset("bigcodebench-complete")[0]
    instruct = load_dataset("bigcodebench-instruct")[0]
    n = len(ROWS)
    assert verdicts(complete * 3, [p.gold for p in complete] + MUTANTS + CRASHES) == \
        [Verdict.accepted] * n + [Verdict.wrong_answer] * n + [Verdict.runtime_error] * n
    # instruct answers are whole programs, here fenced as a chat model writes them
    fenced = [f"Here it is:\n```python\n{r['code_prompt']}{body}```\n" for r, body in
              zip(ROWS * 2, [r["canonical_solution"] for r in ROWS] + MUTANTS)]
    assert verdicts(instruct * 2, fenced) == [Verdict.accepted] * n + [Verdict.wrong_answer] * n


@needs_default
@pytest.mark.slow
def test_the_official_module_environment_is_there_and_the_prompt_imports_are_calibrated_in():
    """BigCodeBench runs each program in a module that already holds ``os``, ``sys`` and ``environ``,
    with ``TZ=UTC`` and one OpenMP thread; the calibrated program puts ``code_prompt`` (its imports)
    before an answer that forgot them."""
    instruct = load_dataset("bigcodebench-instruct")[0]
    spec = instruct[2].spec.model_copy(update={"harness": (
        "import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_env(self):\n"
        "        self.assertEqual(task_func(0), ('UTC', '1', True, '1970-01-01 00:00'))\n")})
    answer = ("def task_func(ts):\n    return (environ['TZ'], os.environ['OMP_NUM_THREADS'], sys is not None,\n"
              "            datetime.fromtimestamp(ts).strftime('%Y-%m-%d %H:%M'))\n")  # datetime: code_prompt's
    assert judge(spec, answer).verdict == Verdict.accepted


@needs_default
@pytest.mark.slow
def test_a_library_the_harness_provides_but_the_sandbox_lacks_is_infra_error_and_refused_by_eval(tmp_path):
    """A correct solution cannot pass without the library: the row is masked (``infra_error``, reward
    ``None``), never ``wrong_answer``; ``judgebox eval`` refuses the dataset up front, naming the
    library and the profile to build."""
    spec = TestSpec(kind="harness", harness=ROWS[3]["test"], prelude=PRELUDES["bigcodebench"],
                    libraries=["judgebox_no_such_lib", "numpy"])
    j = judge(spec, ROWS[3]["code_prompt"] + ROWS[3]["canonical_solution"])
    assert (j.verdict, j.n_passed) == (Verdict.infra_error, 0)
    assert j.message.startswith("the sandbox's python programs cannot import judgebox_no_such_lib, which")
    assert "(`judgebox runtime build --profile PROFILE`: `default`, or the profile the dataset's manifest names, " \
           "e.g. `bigcodebench`, run with JUDGEBOX_RUNTIME=PROFILE)" in j.message
    data = tmp_path / "data"
    data.mkdir()
    (data / "BigCodeBench.jsonl").write_text(
        json.dumps({**ROWS[3], "libs": "['numpy', 'judgebox_no_such_lib']"}) + "\n")
    proc = judgebox("eval", "bigcodebench-complete", "--samples", "gold", cwd=tmp_path, check=False,
                    env={"JUDGEBOX_DATA_DIR": str(data)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "judgebox eval: bigcodebench-complete: the sandbox's python programs cannot import judgebox_no_such_lib, "
        "which the dataset's official harness provides; every correct solution using them would score 0. Build the "
        "program runtime (`judgebox runtime build --profile bigcodebench`) and run the sandbox with "
        "JUDGEBOX_RUNTIME=bigcodebench or use a sandbox that has them (1 of the 1 problems to score need them, "
        "e.g. BigCodeBench/3; a samples file without them, with --allow-partial, scores the others)")


@needs_default
@pytest.mark.slow
def test_judgebox_eval_scores_both_tasks_gold(tmp_path):
    for task in ("complete", "instruct"):
        proc = judgebox("eval", f"bigcodebench-{task}", "--samples", "gold", "--summary", str(tmp_path / f"{task}.json"),
                        cwd=tmp_path)
        summary = json.loads((tmp_path / f"{task}.json").read_text())
        assert (summary["pass_at_k"], summary["n_problems"]) == ({"pass@1": 1.0}, len(ROWS)), proc.stdout


def unittest_row(test: str, libs: str = "[]") -> dict:
    return {**ROWS[2], "test": test, "libs": libs}


def judged_row(tmp_path, row: dict, answer: str):
    path = tmp_path / "bcb.jsonl"
    path.write_text(json.dumps(row) + "\n")
    [problem] = load_problems(path, "bigcodebench-instruct")
    if problem.spec is None:
        return problem
    return judge(*problem.candidate(answer))


@needs_default
@pytest.mark.slow
def test_the_tests_run_in_the_solutions_module_and_only_their_TestCases_class(tmp_path):
    """As BigCodeBench runs ``code + test`` as one module: a test patches a name of that module
    (``patch(__name__ + '.randint')``), the solution may use what the test file imports, and only the
    class ``TestCases`` runs (another class of the file is not BigCodeBench's test)."""
    test = ("import unittest\nfrom unittest.mock import patch\nimport json\n\n\nclass Base(unittest.TestCase):\n"
            "    def test_never_run(self):\n        self.fail('not a BigCodeBench test')\n\n\n"
            "class TestCases(unittest.TestCase):\n    @patch(__name__ + '.randint', return_value=4)\n"
            "    def test_patched(self, randint):\n        self.assertEqual(task_func(0), '[4]')\n"
            "        randint.assert_called_once()\n\n    def test_name(self):\n"
            "        self.assertEqual(task_func(1), __name__)\n")
    answer = ("from random import randint\n\ndef task_func(ts):\n"
              "    return json.dumps([randint(1, 6)]) if ts == 0 else __name__\n")  # json: the tests' import
    j = judged_row(tmp_path, unittest_row(test), answer)
    assert (j.verdict, j.n_passed, j.n_total) == (Verdict.accepted, 2, 2), j.message
    no_class = judged_row(tmp_path, unittest_row(test.replace("class TestCases", "class Other")), answer)
    assert no_class.spec is None and no_class.data_error == \
        "TestDataError: harness: no test methods in a unittest TestCase class named 'TestCases'"


@needs_default
@pytest.mark.slow
def test_a_solution_cannot_bring_its_own_TestCases(tmp_path):
    """A class the solution defines is never a test class, whatever its name: the tests' own
    TestCases (defined after it) is what runs."""
    test = ("import unittest\n\n\nclass TestCases(unittest.TestCase):\n    def test_value(self):\n"
            "        self.assertEqual(task_func(0), 'right')\n")
    answer = ("import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_fake(self):\n        pass\n\n"
              "def task_func(ts):\n    return 'wrong'\n")
    j = judged_row(tmp_path, unittest_row(test), answer)
    assert (j.verdict, j.n_passed, j.n_total) == (Verdict.wrong_answer, 0, 1)


@needs_default
@pytest.mark.slow
def test_a_library_only_the_test_file_imports_is_checked_too_and_counts_survive_an_error(tmp_path):
    test = ("import unittest\nimport judgebox_no_such_faker\n\n\nclass TestCases(unittest.TestCase):\n"
            "    def test_a(self):\n        self.assertEqual(task_func(0), 0)\n")
    [problem] = load_problems_from(tmp_path, unittest_row(test))
    assert problem.spec.libraries == ["judgebox_no_such_faker"]
    assert judge(*problem.candidate("def task_func(ts):\n    return 0\n")).verdict == Verdict.infra_error
    # a test that raises (not a failed assertion) still leaves the other tests' counts
    test = ("import unittest\n\n\nclass TestCases(unittest.TestCase):\n" + "".join(
        f"    def test_{x}(self):\n        self.assertEqual(task_func({x}), {x})\n" for x in (1, 2, 3)))
    answer = "def task_func(x):\n    if x == 3:\n        raise ValueError(x)\n    return x\n"
    j = judged_row(tmp_path, unittest_row(test), answer)
    assert (j.verdict, j.n_passed, j.n_total) == (Verdict.runtime_error, 2, 3)


def load_problems_from(tmp_path, row: dict):
    path = tmp_path / "bcb.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return load_problems(path, "bigcodebench-instruct")


@needs_default
@pytest.mark.slow
def test_a_chat_answer_with_an_example_usage_block_after_the_solution_is_judged_by_its_solution():
    """Of several fenced blocks, the last that defines task_func is the code (BigCodeBench's own
    sanitizer keeps the code around the entry point), not a later example-usage block."""
    problem = load_dataset("bigcodebench-instruct")[0][3]
    answer = (f"```python\n{ROWS[3]['code_prompt']}{ROWS[3]['canonical_solution']}```\n\nExample usage:\n"
              "```python\nprint(task_func([1, 2, 2]))\n```\n")
    spec, code = problem.candidate(answer)
    assert "def task_func" in code and "print(task_func" not in code
    assert judge(spec, code).verdict == Verdict.accepted
