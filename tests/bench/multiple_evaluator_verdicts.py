"""Record MultiPL-E's own evaluator's verdict on every handed MultiPL-E row's ``gpt_solution``.

Produces ``tests/reward/data/multiple_evaluator_verdicts.json`` (read by
``tests/reward/test_multipl_parity.py``: CI does not run untrusted programs outside the sandbox, so
the reference's verdicts are data). MultiPL-E's evaluator is its repository's
``evaluation/src/eval_<lang>.py``: each writes ``prompt + completion + "\\n" + tests`` to a file and
runs it with the language's own command, passing when the command succeeds. The rules used here,
read from those files (nuprl/MultiPL-E, read 2026-12-02; its ``eval_cpp.py`` as its forks carry it)::

    cpp   g++ F.cpp -o F -std=c++17; ./F                  pass: exit 0       (15 s each)
    java  javac -encoding UTF8 -d OUT F.java;
          java -ea -cp OUT:javatuples-1.2.jar Problem     pass: exit 0       (15 s each)
    go    go test F_test.go                                pass: no "[setup failed]", "[build failed]"
                                                           or "FAIL" in stdout (30 s)
    js    node F.js                                        pass: exit 0       (15 s)
    rs    rustc F.rs -o F; ./F                             pass: exit 0       (run 5 s; edition 2015)
    sh    bash F.sh                                        pass: exit 0       (15 s)

Two completions per row, both recorded:

- ``generation``: what MultiPL-E's generation step makes of the answer: the fenced code's text after
  the prompt's function header, cut at the earliest of the row's stop tokens (its
  ``stop_at_stop_token``), then ``prompt + completion + "\\n" + tests``: a completion model continues
  the prompt, so anything the answer wrote before the header, or after the function, is not part of it;
- ``program``: the program judgebox judges for the same answer (its ``Problem.candidate``), run by the
  same rules: whether MultiPL-E's evaluator agrees with judgebox's verdict on the same program.

The programs run on this machine outside any sandbox (each in its own temporary folder, killed at
the time limit): run this only on the handed rows.

    JUDGEBOX_DATA_DIR=../shared/data python3 tests/bench/multiple_evaluator_verdicts.py
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "reward" / "data" / "multiple_evaluator_verdicts.json"
LANGUAGES = ("cpp", "go", "java", "js", "rs", "sh")
JAVATUPLES = "/usr/share/java/javatuples-1.2.jar"


def run(argv: list[str], cwd: str, timeout: float, env: dict) -> tuple[int | None, str]:
    """(exit status or None on timeout, stdout) of ``argv``; the process group is killed at the end."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode("utf-8", "ignore")
    except subprocess.TimeoutExpired:
        return None, ""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


#: Go's build cache, shared by every run of this script (MultiPL-E's container keeps one too): without
#: it each ``go test`` compiles the ``testing`` package's dependencies again
GOCACHE = Path(tempfile.gettempdir()) / "multipl-eval-gocache"


def evaluate(lang: str, program: str) -> bool:
    """MultiPL-E's pass rule for ``program`` in ``lang`` (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="multipl-eval-") as d:
        env = {"PATH": os.environ["PATH"], "HOME": d, "GOCACHE": str(GOCACHE), "GO111MODULE": "off",
               "GOPATH": f"{d}/gopath", "LANG": "C.UTF-8",
               # rustup's proxies find their toolchain under the real home
               "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup")),
               "CARGO_HOME": os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))}
        name = {"cpp": "f.cpp", "java": "f.java", "go": "f_test.go", "js": "f.js", "rs": "f.rs", "sh": "f.sh"}[lang]
        Path(d, name).write_text(program)
        if lang == "cpp":
            code, _ = run(["g++", name, "-o", "f", "-std=c++17"], d, 15, env)
            return code == 0 and run(["./f"], d, 15, env)[0] == 0
        if lang == "java":
            os.mkdir(f"{d}/out")
            code, _ = run(["javac", "-encoding", "UTF8", "-d", "out", name], d, 15, {**env, "CLASSPATH": JAVATUPLES})
            return code == 0 and run(["java", "-ea", "-cp", f"out:{JAVATUPLES}", "Problem"], d, 15,
                                     {**env, "CLASSPATH": JAVATUPLES})[0] == 0
        if lang == "go":
            code, out = run(["go", "test", name], d, 30, env)
            return code is not None and not any(m in out for m in ("[setup failed]", "[build failed]", "FAIL"))
        if lang == "js":
            return run(["node", name], d, 15, env)[0] == 0
        if lang == "rs":
            code, _ = run(["rustc", name, "-o", "f"], d, 60, env)
            return code == 0 and run(["./f"], d, 5, env)[0] == 0
        return run(["bash", name], d, 15, env)[0] == 0


def generation_program(row: dict) -> str:
    """``prompt + completion + "\\n" + tests`` with the completion as MultiPL-E's generation cuts it."""
    from tests.reward.multipl_reference import continuation

    return row["prompt"] + continuation(row) + "\n" + row["tests"]


def judgebox_program(problem) -> str:
    spec, code = problem.candidate(problem.columns["gpt_solution"])
    return (spec.prefix or "") + code + (spec.harness or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("JUDGEBOX_DATA_DIR", ".")))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--langs", nargs="*", default=list(LANGUAGES))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    os.environ["JUDGEBOX_DATA_DIR"] = str(args.data)
    from judgebox.reward.loaders import load_dataset

    record = {"source": "MultiPL-E evaluation/src/eval_<lang>.py rules (see tests/bench/multiple_evaluator_verdicts.py)",
              "date": datetime.date.today().isoformat(), "toolchains": {}, "generation": {}, "program": {}}
    if args.out.exists():  # languages recorded earlier are kept: --langs redoes only those named
        kept = json.loads(args.out.read_text())
        record["generation"], record["program"] = kept.get("generation", {}), kept.get("program", {})
    for cmd in (["g++", "--version"], ["javac", "-version"], ["go", "version"], ["node", "--version"],
                ["rustc", "--version"], ["bash", "--version"]):
        out = subprocess.run(cmd, capture_output=True, text=True)
        record["toolchains"][cmd[0]] = (out.stdout or out.stderr).splitlines()[0]
    with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        for lang in args.langs:
            rows = {r["task_id"]: r for r in map(json.loads, (args.data / "sandboxfusion-samples" /
                                                                f"humaneval-{lang}.jsonl").open())}
            problems = load_dataset(f"multipl-e-{lang}")[0]
            jobs = {(kind, p.task_id): pool.submit(evaluate, lang, generation_program(rows[p.task_id])
                                                    if kind == "generation" else judgebox_program(p))
                    for p in problems for kind in ("generation", "program")}
            for kind in ("generation", "program"):
                record[kind][lang] = {t: jobs[(k, t)].result() for (k, t) in jobs if k == kind}
            print(lang, {k: sum(record[k][lang].values()) for k in ("generation", "program")}, "passed of",
                  len(problems), flush=True)
            args.out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
