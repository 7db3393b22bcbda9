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


@pytest.mark.parametrize("libs,expected", [
    ("['pandas', 'random', 'os']", ["pandas"]),
    (["matplotlib.pyplot", "numpy", "collections"], ["matplotlib", "numpy"]),  # parquet rows hold a list
    ("[]", []),
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
    with pytest.raises(ValueError, match=rf"bcb.jsonl: row 1 has no field '{field}' required by format '{fmt}'"):
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
        "JUDGEBOX_RUNTIME=bigcodebench or use a sandbox that has them")


@needs_default
@pytest.mark.slow
def test_judgebox_eval_scores_both_tasks_gold(tmp_path):
    for task in ("complete", "instruct"):
        proc = judgebox("eval", f"bigcodebench-{task}", "--samples", "gold", "--summary", str(tmp_path / f"{task}.json"),
                        cwd=tmp_path)
        summary = json.loads((tmp_path / f"{task}.json").read_text())
        assert (summary["pass_at_k"], summary["n_problems"]) == ({"pass@1": 1.0}, len(ROWS)), proc.stdout
