"""CPU cost of running the tests apart from the solution (``harness_isolation="process"``) against
the in-process harness, on HumanEval and MBPP gold solutions (issue 12, item 3).

Prints, per dataset and mode: problems, gold passed, sandbox CPU seconds per problem (the runner's
and the solution's processes, as the sandbox measures them) and wall seconds per problem.

    JUDGEBOX_DATA_DIR=<real datasets> python3 tests/bench/bench_isolation.py [--limit N]
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

from judgebox.reward import judge_many
from judgebox.reward.loaders import load_dataset
from judgebox.sandbox import SandboxClient


class Metered(SandboxClient):
    """A client that adds up the CPU seconds of every run it gets back."""

    cpu = 0.0

    def run_tests(self, request):
        resp = super().run_tests(request)
        Metered.cpu += sum(r.cpu_time or 0 for r in resp.run_results if r is not None)
        return resp


def measure(dataset: str, mode: str, limit: int) -> str:
    problems, _ = load_dataset(dataset)
    problems = [p for p in problems if p.gold][:limit]
    candidates = [p.candidate(p.gold) for p in problems]
    patch = (mock.patch("judgebox.reward.harness.harness_isolation", return_value="in-process") if mode == "in-process"
             else mock.patch("judgebox.reward.harness.harness_isolation", wraps=__import__("judgebox.reward.harness").harness.harness_isolation))
    start, Metered.cpu = time.perf_counter(), 0.0
    with patch:
        results = judge_many([s for s, _ in candidates], [c for _, c in candidates], concurrency=2,
                             client=Metered())
    wall, cpu = time.perf_counter() - start, Metered.cpu
    modes = {t.harness_isolation for j in results for t in j.tests}
    return (f"{dataset:10s} {mode:10s} problems {len(problems):4d} passed {sum(j.passed for j in results):4d} "
            f"isolation {sorted(m or '-' for m in modes)} cpu/problem {1000 * cpu / len(problems):6.1f} ms "
            f"wall/problem {1000 * wall / len(problems):6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=10_000)
    args = parser.parse_args()
    for dataset in ("humaneval", "mbpp"):
        for mode in ("in-process", "process"):
            print(measure(dataset, mode, args.limit), flush=True)


if __name__ == "__main__":
    main()
