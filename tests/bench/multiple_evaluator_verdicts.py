"""Record MultiPL-E's own evaluator's verdict on every handed MultiPL-E row's ``gpt_solution``.

Produces ``tests/reward/data/multiple_evaluator_verdicts.json`` (read by
``tests/reward/test_multipl_parity.py``: CI does not run untrusted programs outside the sandbox, so
the reference's verdicts are data). MultiPL-E's evaluator is its repository's
``evaluation/src/eval_<lang>.py``: each writes ``prompt + completion + "\\n" + tests`` to a file and
runs it with the language's own command, passing when the command succeeds. The rules used here,
read from those files (nuprl/MultiPL-E, read 2026-12-02; its ``eval_cpp.py``, ``eval_ruby.py`` and
``eval_r.py`` as its forks carry them; ``eval_php.py``, ``eval_pl.py``, ``eval_lua.py`` and
``eval_racket.py`` run through its ``safe_subprocess.run``, 15 s)::

    cpp   g++ F.cpp -o F -std=c++17; ./F                  pass: exit 0       (15 s each)
    java  javac -encoding UTF8 -d OUT F.java;
          java -ea -cp OUT:javatuples-1.2.jar Problem     pass: exit 0       (15 s each)
    go    go test F_test.go                                pass: no "[setup failed]", "[build failed]"
                                                           or "FAIL" in stdout (30 s)
    js    node F.js                                        pass: exit 0       (15 s)
    rs    rustc F.rs -o F; ./F                             pass: exit 0       (run 5 s; edition 2015)
    sh    bash F.sh                                        pass: exit 0       (15 s)
    rb    ruby F.rb                                        pass: exit 0       (5 s)
    php   php F.php                                        pass: exit 0 and no "PHP Parse error"
                                                           in stdout          (15 s)
    pl    perl F.pl                                        pass: exit 0 and no "ERROR" in stdout
                                                           or stderr          (15 s)
    lua   lua F.lua                                        pass: exit 0       (15 s)
    r     Rscript F.r                                      pass: exit 0       (5 s)
    rkt   racket F.rkt                                     pass: exit 0 and nothing on stderr
                                                           (rackunit reports a failed check on
                                                           stderr and exits 0) (15 s)
    ts    tsc --target esnext F.ts; node F.js              pass: both exit 0 (a type error fails)
                                                           (15 s each; eval_ts.py)
    d     rdmd -unittest -main F.d                         pass: exit 0       (15 s; eval_dlang.py)

``tsc`` is TypeScript 5.3.3 (the version of SandboxFusion's runtime; ``npm install typescript@5.3.3``,
its ``node_modules/.bin`` first on PATH). rdmd (dmd) has no Debian package: D is built with gdc
12 (``gdc -funittest F.d -o F; ./F``, 15 s each); MultiPL-E's D tests bring their own empty ``main``.

``safe_subprocess.run`` keeps only about the first 2 KB of each stream; the ``"PHP Parse error"``
and ``"ERROR"`` checks here read the first 2048 bytes too. An interpreted language's run that times
out is run once more, one at a time (this machine has 2 shared cores; a verdict should not be the
load's). Lua is Lua 5.4 with Debian's ``lua-unit`` (luaunit 3.4), Perl has Test::Deep, Racket has
rackunit.

Two completions per row, both recorded:

- ``generation``: what MultiPL-E's generation step makes of the answer: the fenced code's text after
  the prompt's function header, cut at the earliest of the row's stop tokens (its
  ``stop_at_stop_token``), then ``prompt + completion + "\\n" + tests``: a completion model continues
  the prompt, so anything the answer wrote before the header, or after the function, is not part of it;
- ``program``: the program judgebox judges for the same answer (its ``Problem.candidate``), run by the
  same rules: whether MultiPL-E's evaluator agrees with judgebox's verdict on the same program.

The rows are SandboxFusion's MultiPL-E sample files, ``<dataset>-<lang>.jsonl`` (``--datasets``:
``humaneval``, ``mbpp``) in ``--samples-dir``, by default ``$JUDGEBOX_DATA_DIR/sandboxfusion-samples``
(any copy of SandboxFusion's ``sandbox/tests/datasets/samples/Multi-PLE/`` will do). HumanEval's
verdicts are recorded under ``generation``/``program``, MBPP's under ``mbpp_generation``/``mbpp_program``
(``{lang: {task_id: passed}}``); a run replaces only the (dataset, language) pairs it evaluated, and
``recorded`` says when each was recorded.

The programs run on this machine outside any sandbox (each in its own temporary folder, killed at
the time limit): run this only on the handed rows.

    JUDGEBOX_DATA_DIR=../shared/data python3 tests/bench/multiple_evaluator_verdicts.py
    python3 tests/bench/multiple_evaluator_verdicts.py --langs rb php pl lua r rkt \\
        --datasets humaneval mbpp --samples-dir /tmp/sandboxfusion/sandbox/tests/datasets/samples/Multi-PLE
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
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "reward" / "data" / "multiple_evaluator_verdicts.json"
LANGUAGES = ("cpp", "go", "java", "js", "rs", "sh", "rb", "php", "pl", "lua", "r", "rkt", "ts", "d")
#: dataset -> the record's keys for its (generation, program) verdicts
DATASETS = {"humaneval": ("generation", "program"), "mbpp": ("mbpp_generation", "mbpp_program")}
#: the first bytes of each stream that MultiPL-E's safe_subprocess.run keeps
KEPT = 2048
JAVATUPLES = "/usr/share/java/javatuples-1.2.jar"


def run(argv: list[str], cwd: str, timeout: float, env: dict, stderr: list | None = None) -> tuple[int | None, str]:
    """(exit status or None on timeout, stdout) of ``argv``; the process group is killed at the end.
    With ``stderr`` (a list), the run's stderr is appended to it."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        if stderr is not None:
            stderr.append(err.decode("utf-8", "ignore"))
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
    """MultiPL-E's pass rule for ``program`` in ``lang``; an interpreted language's run that timed out
    is run once more (see the module docstring)."""
    passed = _evaluate(lang, program)
    if passed is None:
        with RETRY:
            passed = _evaluate(lang, program)
    return bool(passed)


#: timed-out runs are run again one at a time
RETRY = threading.Lock()


def _evaluate(lang: str, program: str) -> bool | None:
    """MultiPL-E's pass rule for ``program`` in ``lang``; None: an interpreted language's run timed out."""
    with tempfile.TemporaryDirectory(prefix="multipl-eval-") as d:
        env = {"PATH": os.environ["PATH"], "HOME": d, "GOCACHE": str(GOCACHE), "GO111MODULE": "off",
               "GOPATH": f"{d}/gopath", "LANG": "C.UTF-8",
               # rustup's proxies find their toolchain under the real home
               "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup")),
               "CARGO_HOME": os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))}
        name = {"cpp": "f.cpp", "java": "f.java", "go": "f_test.go", "js": "f.js", "rs": "f.rs", "sh": "f.sh",
                "rb": "f.rb", "php": "f.php", "pl": "f.pl", "lua": "f.lua", "r": "f.r", "rkt": "f.rkt",
                "ts": "f.ts", "d": "f.d"}[lang]
        Path(d, name).write_text(program)
        if lang in INTERPRETED:
            argv, timeout = INTERPRETED[lang]
            err: list[str] = []
            code, out = run([*argv, name], d, timeout, env, err)
            if code is None:
                return None
            out, err_text = (text.encode()[:KEPT].decode("utf-8", "ignore") for text in (out, err[0]))
            if lang == "php":
                return code == 0 and "PHP Parse error" not in out
            if lang == "pl":
                return code == 0 and "ERROR" not in out and "ERROR" not in err_text
            if lang == "rkt":
                return code == 0 and not err[0]
            return code == 0
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
        if lang == "ts":
            code, _ = run(["tsc", "--target", "esnext", name], d, 15, env)
            return code == 0 and run(["node", "f.js"], d, 15, env)[0] == 0
        if lang == "d":
            code, _ = run(["gdc", "-funittest", name, "-o", "f"], d, 15, env)
            return code == 0 and run(["./f"], d, 15, env)[0] == 0
        if lang == "rs":
            code, _ = run(["rustc", name, "-o", "f"], d, 60, env)
            return code == 0 and run(["./f"], d, 5, env)[0] == 0
        return run(["bash", name], d, 15, env)[0] == 0


#: MultiPL-E language -> (command, time limit in seconds) of its eval_<lang>.py
INTERPRETED = {"rb": (["ruby"], 5), "php": (["php"], 15), "pl": (["perl"], 15), "lua": (["lua"], 15),
               "r": (["Rscript"], 5), "rkt": (["racket"], 15)}


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
    parser.add_argument("--samples-dir", type=Path,
                        help="the folder of SandboxFusion's Multi-PLE sample files "
                             "(default: <--data>/sandboxfusion-samples)")
    parser.add_argument("--datasets", nargs="*", default=["humaneval"], choices=list(DATASETS))
    parser.add_argument("--langs", nargs="*", default=list(LANGUAGES))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    samples = args.samples_dir or args.data / "sandboxfusion-samples"
    missing = [f"{d}-{lang}.jsonl" for d in args.datasets for lang in args.langs
               if not (samples / f"{d}-{lang}.jsonl").is_file()]
    if missing:
        parser.error(f"no {', '.join(missing)} in {samples} (see --samples-dir)")
    os.environ["JUDGEBOX_DATA_DIR"] = str(args.data)
    from judgebox.reward.loaders import load_problems

    today = datetime.date.today().isoformat()
    record = {"source": "MultiPL-E evaluation/src/eval_<lang>.py rules (see tests/bench/multiple_evaluator_verdicts.py)",
              "date": today, "toolchains": {}, "recorded": {}, "generation": {}, "program": {}}
    if args.out.exists():  # languages recorded earlier are kept: --langs/--datasets redo only those named
        kept = json.loads(args.out.read_text())
        for kinds in DATASETS.values():
            for kind in kinds:
                if kind in kept:
                    record[kind] = kept[kind]
        record["toolchains"] = kept.get("toolchains", {})
        # files written before ``recorded`` have one date for all
        record["recorded"] = kept.get("recorded") or {f"humaneval-{lang}": kept["date"]
                                                      for lang in kept.get("program", {}) if "date" in kept}
    for cmd in (["g++", "--version"], ["javac", "-version"], ["go", "version"], ["node", "--version"],
                ["rustc", "--version"], ["bash", "--version"], ["ruby", "--version"], ["php", "--version"],
                ["perl", "-e", "print qq{perl $^V, Test::Deep }, eval { require Test::Deep; $Test::Deep::VERSION }"],
                ["lua", "-e", "print(_VERSION .. ', luaunit ' .. require('luaunit')._VERSION)"],
                ["Rscript", "--version"], ["racket", "--version"]):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True)
        except FileNotFoundError:
            continue
        record["toolchains"][cmd[0]] = ((out.stdout or out.stderr).splitlines() or [""])[0]
    with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        for dataset in args.datasets:
            gen_key, prog_key = DATASETS[dataset]
            for lang in args.langs:
                path = samples / f"{dataset}-{lang}.jsonl"
                rows = {r["task_id"]: r for r in map(json.loads, path.open())}
                problems = [p for p in load_problems(path, "multipl-e", data_source=f"multipl-e-{lang}")
                            if p.columns.get("gpt_solution")]
                jobs = {(kind, p.task_id): pool.submit(evaluate, lang, generation_program(rows[p.task_id])
                                                        if kind == "generation" else judgebox_program(p))
                        for p in problems for kind in ("generation", "program")}
                for kind, key in (("generation", gen_key), ("program", prog_key)):
                    record.setdefault(key, {})[lang] = {t: jobs[(k, t)].result() for (k, t) in jobs if k == kind}
                record["recorded"][f"{dataset}-{lang}"] = today
                print(dataset, lang, {k: sum(record[k][lang].values()) for k in (gen_key, prog_key)}, "passed of",
                      len(problems), flush=True)
                args.out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
