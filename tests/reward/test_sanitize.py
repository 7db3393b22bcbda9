"""The evalplus-style sanitizer: ``extract_code(..., sanitize=True)`` keeps imports and the definitions
the entry point (and the tests, through the prompt's helpers) need, and drops demo prints, loops and
the main guard; through the judge this turns a timeout into a pass; ``judgebox eval --sanitize`` and
the manifest's ``sanitize`` field apply it to function-completion problems only (real runs in the
embedded sandbox and of the CLI)."""

import json

import pytest

from judgebox.reward import TestSpec, Verdict, extract_code, judge
from judgebox.reward.loaders import Problem, load_dataset

SANITIZER = "evalplus (judgebox[sanitize]; the full tier's venv has it)"

DEMO = ("```python\nimport math\n\ndef helper(x):\n    return math.isqrt(x)\n\ndef f(x):\n    return helper(x) * 2\n\n"
        "print(f(16))\nfor i in range(10 ** 9):\n    pass\nif __name__ == '__main__':\n    f(int(input()))\n```")


def test_sanitize_keeps_imports_and_needed_definitions_and_drops_top_level_statements():
    """extract_code(..., sanitize=True): evalplus's sanitizer keeps imports and what the entry point
    needs, drops demo prints, loops and the main guard."""
    pytest.importorskip("evalplus.sanitize", reason=SANITIZER)
    code = extract_code(DEMO, sanitize=True, entry_point="f")
    assert code == "import math\ndef helper(x):\n    return math.isqrt(x)\ndef f(x):\n    return helper(x) * 2\n"
    with pytest.raises(ValueError, match="sanitize"):
        extract_code("```cpp\nint main(){}\n```", "cpp", sanitize=True)


@pytest.mark.slow
def test_sanitize_through_the_judge_turns_a_timeout_into_a_pass():
    """An MBPP-style assert problem: unsanitized, the demo loop times out; sanitized, accepted."""
    pytest.importorskip("evalplus.sanitize", reason=SANITIZER)
    spec = TestSpec(kind="assert", asserts=["assert f(16) == 8", "assert f(9) == 6"], run_timeout=2)
    p = Problem(task_id="t", spec=spec, data_source="x")
    assert judge(*p.candidate(DEMO)).verdict == Verdict.time_limit_exceeded
    assert judge(*p.candidate(DEMO, sanitize=True)).verdict == Verdict.accepted


def test_sanitize_keeps_prompt_helpers_the_tests_name():
    """HumanEval/38: the tests call the prompt's encode_cyclic, which decode_cyclic never calls;
    sanitizing prompt + completion keeps it (gold with a demo print appended is accepted)."""
    pytest.importorskip("evalplus.sanitize", reason=SANITIZER)
    problems, _ = load_dataset("humaneval")
    p = next(p for p in problems if p.task_id == "HumanEval/38")
    spec, code = p.candidate(p.gold + "\nprint(decode_cyclic('abc'))\n", sanitize=True)
    assert spec.prefix == "" and "def encode_cyclic" in code and "print(" not in code
    assert judge(spec, code).verdict == Verdict.accepted


@pytest.mark.slow
def test_eval_sanitize_flag_and_manifest_default(tmp_path):
    """`judgebox eval --sanitize` sanitizes; a stdio dataset is refused (exit 1) before scoring; the
    manifest's ``sanitize`` field is the default."""
    from judgebox.reward.loaders.manifest import Manifest
    from tests.reward.test_eval import judgebox, write_samples

    rows = [{"task_id": 1, "text": "double", "code": "def f(x):\n    return 2 * x\n",
             "test_list": ["assert f(2) == 4"], "test_setup_code": ""}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_samples(tmp_path / "s.jsonl", [("1", "def f(x):\n    return 2 * x\n\nwhile True:\n    pass\n")])
    args = ["eval", "m.jsonl", "--format", "mbpp", "--samples", "s.jsonl", "--k", "1", "--no-progress"]
    judgebox(*args, "--sanitize", "--results", "a.jsonl", "--summary", "a.json", cwd=tmp_path)
    assert json.loads((tmp_path / "a.json").read_text())["pass_at_k"] == {"pass@1": 1.0}
    judgebox(*args, "--results", "b.jsonl", "--summary", "b.json", cwd=tmp_path)  # a summary per run
    assert json.loads((tmp_path / "b.json").read_text())["pass_at_k"] == {"pass@1": 0.0}
    (tmp_path / "a.jsonl").write_text(json.dumps({"problem_id": "0", "question": "q", "solutions": "[\"print(1)\"]",
                                                  "input_output": json.dumps({"inputs": [""], "outputs": ["1\n"]})}) + "\n")
    refused = judgebox("eval", "a.jsonl", "--format", "apps", "--samples", "gold", "--sanitize", cwd=tmp_path,
                       check=False)
    assert refused.returncode == 1 and "function-completion problems only" in refused.stderr
    assert Manifest(name="x", format="mbpp", files=["x"]).sanitize is False
    assert Manifest(name="x", format="mbpp", files=["x"], sanitize=True).sanitize is True
