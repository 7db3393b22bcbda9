"""The tamper scan's cost: milliseconds per answer of about 2 KB, per language (issue 37's target:
under 1 ms). Run: ``python tests/bench/bench_tamper.py [--repeat N]``; prints one line per language.

The answers are this repository's own text cut to 2,048 characters (Python: the tamper package
itself, which names many of the patterns it looks for; the rest: a C-like, a shell-like and a
Lisp-like program written here), so the figure is a worst case rather than a typical one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from judgebox.reward.tamper import scan  # noqa: E402
from judgebox.reward.tamper.rules import RULES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
C_LIKE = ("#include <vector>\nstd::vector<long> f(std::vector<long> xs) {\n  std::vector<long> out;\n"
          "  for (long x : xs) { if (x % 2 == 0) out.push_back(x * x); else out.push_back(x + 1); }\n"
          "  return out;\n}\n") * 12
SHELL_LIKE = ("f() {\n  local total=0\n  for x in $1; do\n    if (( x % 2 == 0 )); then total=$((total + x)); fi\n"
              "  done\n  echo \"$total\"\n}\n") * 14
LISP_LIKE = ("(define (f xs)\n  (for/list ([x xs])\n    (if (even? x) (* x x) (+ x 1))))\n") * 28


def answer(language: str) -> str:
    if language in ("python", "pytest"):
        text = (ROOT / "reward" / "tamper" / "rules.py").read_text(encoding="utf-8")
    elif language in ("bash", "perl", "ruby", "R", "php", "lua"):
        text = SHELL_LIKE
    elif language == "racket":
        text = LISP_LIKE
    else:
        text = C_LIKE
    return (text * 4)[:2048]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    for language in RULES:
        code = answer(language)
        scan(code, language)  # compiled once per language
        start = time.perf_counter()
        for _ in range(args.repeat):
            scan(code, language)
        ms = (time.perf_counter() - start) * 1000 / args.repeat
        print(f"{language:14s} {len(code):5d} chars  {ms:.3f} ms per scan")


if __name__ == "__main__":
    main()
