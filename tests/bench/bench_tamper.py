"""The tamper scan's cost: milliseconds per answer of about 2 KB, per language (issue 37's target:
under 1 ms), and its false positives on reference and model-written answers.

Run: ``python tests/bench/bench_tamper.py [--repeat N] [--rounds R]``: one line per language, the
process's CPU time per scan, the best of R rounds of N scans (what other load on the machine disturbs
least). ``python
tests/bench/bench_tamper.py --false-positives [--data DIR]``: the signals that HumanEval's and
MBPP's reference solutions and the model-written MultiPL-E answers in SandboxFusion's samples raise
(the counts the docs state; ``--data`` holds ``mbpp.jsonl`` and ``sandboxfusion-samples/``).

The answers are cut to 2,048 characters: Python twice, the tamper rules' own text (which names most
of the patterns they look for, and does not parse once cut: the lexer's path) and a program that
parses (the parser's path: comments, strings, classes, imports); the rest a C-like, a shell-like
and a Lisp-like program written here, each with comments and string literals. The figures are
worst cases rather than typical ones.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from judgebox.reward.tamper import scan  # noqa: E402
from judgebox.reward.tamper.rules import RULES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
C_LIKE = ("#include <vector>\n// keep the even squares; \"odd\" ones move up by one\n"
          "std::vector<long> f(std::vector<long> xs) {\n  std::vector<long> out; /* the result */\n"
          "  for (long x : xs) { if (x % 2 == 0) out.push_back(x * x); else out.push_back(x + 1); }\n"
          "  const char* sep = \", \"; char c = '/';\n  return out;\n}\n") * 8
SHELL_LIKE = ("f() {\n  # sum the even numbers of $1\n  local total=0 sep=', '\n  for x in $1; do\n"
              "    if (( x % 2 == 0 )); then total=$((total + x)); fi  # 'even'\n"
              "  done\n  echo \"$total\"\n}\n") * 11
LISP_LIKE = ("; square the even numbers\n(define (f xs)\n  (for/list ([x xs])\n"
             "    (if (even? x) (* x x) (+ x 1)))) ; \"odd\" ones\n") * 22
PY_PARSES = '''import math
from collections import Counter


class Point:
    """A point of the plane."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y  # coordinates

    def dist(self, other: "Point") -> float:
        return math.hypot(self.x - other.x, self.y - other.y)


def closest(points: list, k: int = 2) -> list:
    """The k closest pairs, as 'i-j' labels (a '#' never opens a comment in a string)."""
    pairs = []
    for i, p in enumerate(points):
        for j in range(i + 1, len(points)):
            pairs.append((p.dist(points[j]), f"{i}-{j}"))  # distance first
    pairs.sort()
    counts = Counter(label.split("-")[0] for _, label in pairs[:k])
    return [label for _, label in pairs[:k]] + sorted(counts)


'''


def answer(language: str, parses: bool = False) -> str:
    if language in ("python", "pytest"):
        text = PY_PARSES if parses else (ROOT / "reward" / "tamper" / "rules.py").read_text(encoding="utf-8")
    elif language in ("bash", "perl", "ruby", "R", "php", "lua"):
        text = SHELL_LIKE
    elif language == "racket":
        text = LISP_LIKE
    else:
        text = C_LIKE
    text = (text * 8)[:2048]
    if parses:  # whole lines, so that it still parses
        text = text[:text.rfind("\n\n\n") + 1]
    return text


def per_scan_ms(code: str, language: str, repeat: int, rounds: int) -> float:
    scan(code, language)  # compiled once per language
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(repeat):
            scan(code, language)
        best = min(best, (time.process_time() - start) * 1000 / repeat)
    return best


def false_positives(data: Path) -> None:
    from judgebox.reward.harness import sandbox_language
    from judgebox.reward.loaders import load_dataset, load_problems

    problems, _ = load_dataset("humaneval")
    flagged = {p.task_id: scan(p.gold or "", "python") for p in problems}
    flagged = {k: v for k, v in flagged.items() if v}
    print(f"HumanEval references: {len(flagged)} of {len(problems)} signalled")
    for task, signals in flagged.items():
        print(f"  {task}: {[(s.kind, s.line, s.evidence) for s in signals]}")
    problems, _ = load_dataset(str(data / "mbpp.jsonl"), "mbpp")
    flagged = {p.task_id: scan(p.gold or "", "python") for p in problems}
    flagged = {k: v for k, v in flagged.items() if v}
    print(f"MBPP references: {len(flagged)} of {len(problems)} signalled")
    for task, signals in flagged.items():
        print(f"  {task}: {[(s.kind, s.line, s.evidence) for s in signals]}")
    total, per_file = 0, collections.Counter()
    for path in sorted(glob.glob(str(data / "sandboxfusion-samples" / "*-*.jsonl"))):
        rows = [json.loads(line) for line in open(path, encoding="utf-8")]
        for row, problem in zip(rows, load_problems(path, "multipl-e")):
            spec, code = problem.candidate(row["gpt_solution"])
            total += 1
            signals = [] if spec.kind == "stdio" else scan(code, sandbox_language(spec))
            if signals:
                per_file[Path(path).name] += 1
                print(f"  {Path(path).name} {problem.task_id}: {[(s.kind, s.line, s.evidence) for s in signals]}")
    print(f"SandboxFusion MultiPL-E answers: {sum(per_file.values())} of {total} signalled {dict(per_file)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--false-positives", action="store_true")
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    args = parser.parse_args()
    if args.false_positives:
        false_positives(args.data)
        return
    cases = [(language, False) for language in RULES]
    cases.insert(1, ("python", True))
    for language, parses in cases:
        code = answer(language, parses)
        ms = per_scan_ms(code, language, args.repeat, args.rounds)
        label = language + (" (parses)" if parses else "")
        print(f"{label:16s} {len(code):5d} chars  {ms:.3f} ms per scan")


if __name__ == "__main__":
    main()
