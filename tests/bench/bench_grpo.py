"""One GRPO-sized reward batch through verl's ``compute_score``: 256 completions x 10 tests (32
problems x a group of 8: half correct, a quarter wrong, a quarter crashing), scored with the thread
pool verl's reward loop uses, or in one ``compute_score_batch`` call (verl's ``BatchRewardManager``).

Run: ``python tests/bench/bench_grpo.py [--completions 256] [--workers 64] [--tests stdio|asserts]
[--batch] [--sandbox-url URL | --compose 2 | --verl-sandboxfusion URL]``.

- ``--tests``: ``stdio`` (default: 10 stdin/stdout cases per problem, verl's ``input_output`` format) or
  ``asserts`` (10 MBPP-style asserts).
- Without a target the embedded sandbox is used; ``--sandbox-url`` scores against a running server (or
  gateway); ``--compose N`` brings up the compose deployment with ``N`` executor replicas behind the
  gateway on a free loopback port (images from ``scripts/docker-setup.sh``), scores against the gateway
  and takes it down.
- ``--verl-sandboxfusion URL``: the anchor: verl's own ``verl.utils.reward_score.sandbox_fusion.compute_score``
  against a SandboxFusion server, ``URL`` its ``/run_code`` endpoint as verl's ``sandbox_fusion_url``
  takes it (``http://127.0.0.1:8080/run_code``; ``../shared/bench/start_sandboxfusion.sh``), same batch,
  same threads (stdio tests only).
- ``--batch``: judgebox's ``compute_score_batch``, the whole batch in one call.

Prints wall time, completions/s, p50/p99 seconds per completion (the batch's wall time with
``--batch``) and the verdict counts; every correct completion must score 1 and every other 0 (a
wrong score fails the run).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from judgebox.integrations.verl.reward import compute_score

N_TESTS = 10


def problem(k: int) -> tuple[str, str, str, str]:
    """(ground truth, correct, wrong, crashing) for an MBPP-style problem with 10 asserts."""
    asserts = [f"assert f{k}({i}, {i + k}) == {i * (i + k) + k + 1}" for i in range(N_TESTS)]
    spec = {"kind": "assert", "asserts": asserts}
    good = f"def f{k}(a, b):\n    return a * b + {k + 1}\n"
    wrong = f"def f{k}(a, b):\n    return a * b\n"
    crash = f"def f{k}(a, b):\n    return a.missing\n"
    return json.dumps(spec), good, wrong, crash


def stdio_problem(k: int) -> tuple[str, str, str, str]:
    """(ground truth, correct, wrong, crashing) for a stdin/stdout problem with 10 cases, the
    ground truth in verl's ``input_output`` format (``{"inputs": [...], "outputs": [...]}``)."""
    cases = {"inputs": [f"{i} {i + k}\n" for i in range(N_TESTS)],
             "outputs": [f"{i * (i + k) + k + 1}\n" for i in range(N_TESTS)]}
    read = "a, b = map(int, input().split())\n"
    good = read + f"print(a * b + {k + 1})\n"
    wrong = read + "print(a * b)\n"
    crash = read + "print(a.missing)\n"
    return json.dumps(cases), good, wrong, crash


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--completions", type=int, default=256)
    ap.add_argument("--group", type=int, default=8, help="completions per problem (GRPO's n)")
    ap.add_argument("--workers", type=int, default=64, help="compute_score calls at once")
    ap.add_argument("--sandbox-url", default=None, help="sandbox base URL (default: embedded)")
    ap.add_argument("--compose", type=int, default=0, metavar="N", help="N compose replicas behind the gateway")
    ap.add_argument("--tests", choices=("stdio", "asserts"), default="stdio", help="the problems' tests")
    ap.add_argument("--batch", action="store_true", help="one compute_score_batch call (BatchRewardManager)")
    ap.add_argument("--verl-sandboxfusion", default=None, metavar="URL",
                    help="score with verl's own sandbox_fusion.compute_score against SandboxFusion (URL: its /run_code)")
    args = ap.parse_args()
    if args.verl_sandboxfusion and args.tests != "stdio":
        ap.error("--verl-sandboxfusion: verl's SandboxFusion reward takes stdio tests only (--tests stdio)")
    if args.compose:
        return with_compose(args)
    return score_batch(args)


def with_compose(args: argparse.Namespace) -> int:
    """Run :func:`score_batch` against a compose project of ``args.compose`` replicas."""
    from tests.docker.stack import Stack, free_port, setup_images

    proc = setup_images()
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        return 1
    stack = Stack(project="judgebox-bench-grpo", port=free_port(), env={"JUDGEBOX_REPLICAS": str(args.compose)})
    stack.env["JUDGEBOX_PORT"] = str(stack.port)
    stack.compose("down", "-v", "--remove-orphans", "-t", "1", check=False)
    try:
        stack.compose("up", "-d", "--no-build")
        stack.wait_healthy(replicas=args.compose)
        args.sandbox_url = stack.url
        return score_batch(args)
    finally:
        stack.compose("down", "-v", "--remove-orphans", "-t", "1", check=False)


def score_batch(args: argparse.Namespace) -> int:
    """Score the batch against ``args.sandbox_url`` (or the embedded sandbox); 1 on a wrong score."""

    jobs = []
    make = stdio_problem if args.tests == "stdio" else problem
    for i in range(args.completions):
        gt, good, wrong, crash = make(i // args.group)
        kind = ("good", "good", "good", "good", "wrong", "wrong", "crash", "crash")[i % 8]
        code = {"good": good, "wrong": wrong, "crash": crash}[kind]
        jobs.append((kind, gt, f"Here you go:\n```python\n{code}```"))
    score = verl_sandboxfusion(args) if args.verl_sandboxfusion else judgebox_score(args)
    score(jobs[0])  # warm-up (interpreter, pools)

    def one(job):
        t = time.monotonic()
        result = score(job)
        return job[0], result, time.monotonic() - t

    start = time.monotonic()
    if args.batch:
        from judgebox.reward import compute_score_batch

        scored = compute_score_batch(["codecontests" if args.tests == "stdio" else "mbpp"] * len(jobs),
                                     [j[2] for j in jobs], [j[1] for j in jobs], None, **judgebox_kwargs(args))
        wall = time.monotonic() - start
        results = [(j[0], r, wall) for j, r in zip(jobs, scored)]
    else:
        with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
            results = list(pool.map(one, jobs))
        wall = time.monotonic() - start

    lat = sorted(r[2] for r in results)
    verdicts = collections.Counter(r[1]["verdict"] for r in results)
    wrong_scores = sum(1 for kind, r, _ in results if r["score"] != (1.0 if kind == "good" else 0.0))
    where = (f"verl sandbox_fusion -> {args.verl_sandboxfusion}" if args.verl_sandboxfusion
             else args.sandbox_url or "embedded") + (", compute_score_batch" if args.batch else "")
    print(f"bench_grpo [{where}, {args.tests}]: {len(jobs)} completions x {N_TESTS} tests in {wall:.1f} s = "
          f"{len(jobs) / wall:.1f} completions/s; per completion p50 {lat[len(lat) // 2]:.2f} s, "
          f"p99 {lat[int(len(lat) * 0.99) - 1]:.2f} s; verdicts {dict(verdicts)}; wrong scores {wrong_scores}")
    return 1 if wrong_scores else 0


def judgebox_kwargs(args: argparse.Namespace) -> dict:
    return {"sandbox_fusion_url": args.sandbox_url, "score_mode": "binary", "stop_on_first_failure": False}


def judgebox_score(args: argparse.Namespace):
    """``job -> {"score", "verdict"}`` through judgebox's verl ``compute_score``."""
    source = "codecontests" if args.tests == "stdio" else "mbpp"
    kwargs = judgebox_kwargs(args)
    return lambda job: compute_score(source, job[2], job[1], **kwargs)


def verl_sandboxfusion(args: argparse.Namespace):
    """``job -> {"score", "verdict"}`` through verl's own SandboxFusion reward (verl's defaults: a
    semaphore of 64 requests, 1024 MiB, 10 s per case, binary score)."""
    import threading

    from verl.utils.reward_score import sandbox_fusion

    semaphore = threading.Semaphore(64)

    def score(job):
        value, meta = sandbox_fusion.compute_score(args.verl_sandboxfusion, semaphore, 1024, job[2], job[1],
                                                   continuous=False, timeout=10)
        return {"score": float(value), "verdict": "accepted" if value == 1.0 else "rejected"}
    return score


if __name__ == "__main__":
    sys.exit(main())
