"""Cost of a split harness (issue 38): SandboxFusion's MultiPL-E answers of one language (C++ 161,
Java 158, Rust ``rs`` 156, Go 154, JavaScript ``js`` 161) judged with the tests apart from the solution (two programs) and in one program, wall time
and the sandbox's CPU seconds.

Run: ``JUDGEBOX_DATA_DIR=../shared/data python tests/bench/bench_split.py --lang cpp [--rounds 2]``.
Each round judges the answers both ways, in alternating order, in the embedded sandbox (its compile
cache on: the tests' program of a problem is compiled once, as in a pass@k run or a GRPO group), then
the split harness again with every answer made new (a comment of its own: its program compiles again,
the tests' program comes from the cache, as for the other samples of a GRPO group). The one program
never comes from the cache (its marker names are random per run). Clear the compile cache first for
cold figures. It prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

from judgebox.reward import judge_many
from judgebox.reward.loaders import load_dataset


def run(pairs, split: bool) -> tuple[float, float, dict]:
    """``(wall seconds, sandbox CPU seconds, verdict counts)`` of one pass over ``pairs``."""
    patch = mock.patch("judgebox.reward.harness.split_programs", return_value=None) if not split else None
    if patch:
        patch.start()
    try:
        start = time.perf_counter()
        judgements = judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)
        wall = time.perf_counter() - start
    finally:
        if patch:
            patch.stop()
    cpu = sum(t.cpu_time or 0.0 for j in judgements for t in j.tests)
    counts: dict = {}
    for j in judgements:
        counts[j.verdict.value] = counts.get(j.verdict.value, 0) + 1
    return wall, cpu, counts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lang", choices=["cpp", "java", "rs", "go", "js"], default="cpp")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    problems = load_dataset(f"multipl-e-{args.lang}")[0]
    pairs = [p.candidate(p.columns["gpt_solution"]) for p in problems]
    run(pairs[:4], True)  # warm the compile cache's toolchain and precompiled headers
    for r in range(args.rounds):
        for split in ((True, False) if r % 2 == 0 else (False, True)):
            wall, cpu, counts = run(pairs, split)
            print(f"round {r} {'split' if split else 'one program'}: {len(pairs)} answers in {wall:.1f} s wall, "
                  f"{cpu:.2f} s run CPU; {counts}")
        fresh = [(s, c + f"\n// round {r} sample {i}\n") for i, (s, c) in enumerate(pairs)]
        wall, cpu, counts = run(fresh, True)
        print(f"round {r} split, new answers (tests cached): {wall:.1f} s wall, {cpu:.2f} s run CPU; {counts}")


if __name__ == "__main__":
    main()
