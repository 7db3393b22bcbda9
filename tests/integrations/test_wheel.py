"""``pip install judgebox`` from a built wheel (not editable) in a fresh venv works end to end: the
dataset manifests, harness runner and configs are package data, and ``judgebox eval humaneval
--samples gold`` run from outside the checkout scores all 164 reference solutions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .verl_config import REPO

#: Not part of the package source.
SKIP = shutil.ignore_patterns(".git", "__pycache__", "build", "dist", "*.egg-info", "judgebox-results", "tests")


def run(*argv, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, argv))} -> {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_wheel_installs_in_a_fresh_venv_and_evaluates_humaneval_gold(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=SKIP)
    run(sys.executable, "-m", "pip", "wheel", src, "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path / "dist",
        cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("judgebox-*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=tmp_path)

    work = tmp_path / "work"  # outside the checkout: nothing can come from the source tree
    work.mkdir()
    where = run(venv / "bin" / "python", "-c", "import judgebox, judgebox.reward as reward, pathlib; "
                "print(pathlib.Path(reward.__file__).parent); print(pathlib.Path(judgebox.__file__).parent)", cwd=work)
    reward_dir, judgebox_dir = map(Path, where.stdout.split())
    assert reward_dir.is_relative_to(venv) and (reward_dir / "harness" / "runner.py").is_file()
    assert (judgebox_dir / "datasets" / "humaneval.yaml").is_file()
    assert (judgebox_dir / "configs" / "verl" / "grpo_code_interpreter.yaml").is_file()
    top = run(venv / "bin" / "python", "-c", "import importlib.util as u; "
              "print([n for n in ('sandbox', 'reward', 'agent', 'integrations') if u.find_spec(n)])", cwd=work)
    assert top.stdout.strip() == "[]"  # one top-level name: judgebox

    run(venv / "bin" / "judgebox", "eval", "humaneval", "--samples", "gold", "--k", "1", "--no-progress",
        "--summary", work / "summary.json", cwd=work)
    summary = json.loads((work / "summary.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 1.0}
    assert len(summary["problems"]) == 164
