"""Record SandboxFusion's own verdict on every handed MultiPL-E row's ``gpt_solution``.

Produces ``tests/reward/data/sandboxfusion_multipl_verdicts.json`` (read by
``tests/reward/test_multipl_parity.py``; CI cannot reach SandboxFusion, so its verdicts are data).
Each row of ``<samples>/humaneval-<lang>.jsonl`` (and ``mbpp-<lang>.jsonl``) is sent to a running
SandboxFusion's ``POST /submit`` exactly as its own ``sandbox/tests/datasets/test_multiple.py`` does:
``dataset="multiple_<lang>"``, ``config.dataset_type="MultiPLEDataset"``, ``config.provided_data=row``,
``config.extra.is_freeform=true``, ``completion=row["gpt_solution"]``; ``accepted`` is its answer.
``<samples>`` is ``--samples-dir``, by default ``$JUDGEBOX_DATA_DIR/sandboxfusion-samples``: any copy of
SandboxFusion's ``sandbox/tests/datasets/samples/Multi-PLE/`` (its checkout's own folder will do).

The file keeps HumanEval's verdicts under ``verdicts`` and MBPP's under ``mbpp_verdicts``
(``{lang: {task_id: accepted}}``); a run replaces only the (dataset, language) pairs it graded, and
``header.recorded`` says when each was recorded.

Set up and start SandboxFusion from its repository (no Docker); for Go its ``runtime/go/go.mod``
needs Go >= 1.22 (Debian 12 has 1.19: ``apt-get install -t bookworm-backports golang-1.22-go``)::

    PATH=/usr/lib/go-1.22/bin:$PATH GOTOOLCHAIN=local GOPROXY=off SHLVL=1 \\
        <SandboxFusion's start script> 8093
    python3 tests/bench/sandboxfusion_multipl_verdicts.py --url http://127.0.0.1:8093 \\
        --sf-dir /tmp/sandboxfusion --details /tmp/sf-multipl-details.jsonl

The six interpreted languages (``--languages rb,php,pl,lua,r,rkt --datasets humaneval,mbpp``) need
``ruby``, ``php``, ``perl`` with Test::Deep, ``lua`` with luaunit (Debian ``lua-unit``), ``Rscript``
and ``racket`` on PATH (SandboxFusion runs ``ruby F``, ``php -f F``, ``perl F``, ``lua F``,
``Rscript F``, ``racket F``; it accepts exit status 0). TypeScript (``ts``) needs ``tsx`` on PATH
(the default runtime's ``node_modules/.bin/tsx``); D (``d``) needs ``dmd`` (``dmd F -unittest -of=test``),
which has no Debian package: a wrapper that runs ``gdc -funittest -o test F`` stands in.

``--details`` also writes each row's full SandboxFusion answer (compile/run output) for reading
disagreements; it is not checked in.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import subprocess
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(os.environ.get("JUDGEBOX_DATA_DIR", ".")) / "sandboxfusion-samples"
OUT = ROOT / "tests" / "reward" / "data" / "sandboxfusion_multipl_verdicts.json"
LANGUAGES = ("cpp", "go", "java", "js", "rs", "sh", "rb", "php", "pl", "lua", "r", "rkt", "ts", "d", "scala")
#: dataset -> the file's key for its verdicts ({lang: {task_id: accepted}})
DATASETS = {"humaneval": "verdicts", "mbpp": "mbpp_verdicts"}


#: SandboxFusion's own limits (its MultiPL-E default: 20 s compile, 20 s run) are sized for its
#: deployment; on a loaded 2-core machine g++ with Boost can pass 20 s. A row whose answer was a
#: time limit is graded again with these generous limits (seconds), so no verdict is the load's.
RETRY_LIMITS = {"compile_timeout": 300, "run_timeout": 60}


def timed_out(answer: dict) -> bool:
    info = answer["tests"][0]["exec_info"] if answer.get("tests") else {}
    return any((info.get(step) or {}).get("status") == "TimeLimitExceeded" for step in ("compile_result", "run_result"))


async def submit(client: httpx.AsyncClient, lang: str, row: dict) -> dict:
    config = {"dataset_type": "MultiPLEDataset", "provided_data": row, "extra": {"is_freeform": True}}
    request = {"dataset": f"multiple_{lang}", "id": row["task_id"], "completion": row["gpt_solution"], "config": config}
    answer = (await client.post("/submit", json=request)).raise_for_status().json()
    if timed_out(answer):
        request["config"] = {**config, **RETRY_LIMITS}
        answer = {**(await client.post("/submit", json=request)).raise_for_status().json(), "retried": True}
    return answer


async def grade(url: str, samples: Path, dataset: str, languages: list[str], concurrency: int, sink,
                task_ids: set[str]) -> dict[str, dict[str, bool]]:
    verdicts: dict[str, dict[str, bool]] = {}
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:
        for lang in languages:
            rows = [json.loads(line) for line in (samples / f"{dataset}-{lang}.jsonl").open()]

            async def one(row: dict) -> tuple[str, dict]:
                async with gate:
                    return row["task_id"], await submit(client, lang, row)

            answers = await asyncio.gather(*(one(r) for r in rows
                                             if r.get("gpt_solution") and (not task_ids or r["task_id"] in task_ids)))
            verdicts[lang] = {task_id: bool(a["accepted"]) for task_id, a in answers}
            if sink:
                for task_id, a in answers:
                    sink.write(json.dumps({"dataset": dataset, "lang": lang, "task_id": task_id, **a}) + "\n")
                sink.flush()
            print(dataset, lang, sum(verdicts[lang].values()), "/", len(verdicts[lang]), "accepted", flush=True)
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--sf-dir", default="/tmp/sandboxfusion", help="the SandboxFusion checkout (for its commit)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--languages", default=",".join(LANGUAGES),
                        help="comma-separated; the other languages' recorded verdicts are kept")
    parser.add_argument("--datasets", default="humaneval",
                        help=f"comma-separated, of {', '.join(DATASETS)}: the files (<dataset>-<lang>.jsonl) to grade")
    parser.add_argument("--samples-dir", type=Path, default=SAMPLES,
                        help="the folder of SandboxFusion's Multi-PLE sample files "
                             "(default: $JUDGEBOX_DATA_DIR/sandboxfusion-samples)")
    parser.add_argument("--task-ids", default="", help="comma-separated: grade only these rows (merged into the file)")
    parser.add_argument("--details", type=Path)
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", args.sf_dir, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    languages, datasets = args.languages.split(","), args.datasets.split(",")
    unknown = set(datasets) - set(DATASETS)
    if unknown:
        parser.error(f"--datasets: unknown {sorted(unknown)}; use {', '.join(DATASETS)}")
    missing = [f"{d}-{lang}.jsonl" for d in datasets for lang in languages
               if not (args.samples_dir / f"{d}-{lang}.jsonl").is_file()]
    if missing:
        parser.error(f"no {', '.join(missing)} in {args.samples_dir} (see --samples-dir)")
    sink = args.details.open("w") if args.details else None
    graded = {d: asyncio.run(grade(args.url, args.samples_dir, d, languages, args.concurrency, sink,
                                   set(filter(None, args.task_ids.split(",")))))
              for d in datasets}
    if sink:
        sink.close()
    kept = json.loads(OUT.read_text()) if OUT.exists() else {}
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    old = kept.get("header", {})
    # when each (dataset, language) was recorded; files written before this key have one date for all
    recorded = old.get("recorded") or {f"humaneval-{lang}": old["date"] for lang in kept.get("verdicts", {})
                                       if "date" in old}
    record = {key: kept.get(key, {}) for key in DATASETS.values() if key in kept or key == "verdicts"}
    for dataset, by_lang in graded.items():
        table = record.setdefault(DATASETS[dataset], {})
        for lang, rows in by_lang.items():
            table.setdefault(lang, {}).update(rows)
            recorded[f"{dataset}-{lang}"] = date
    header = {
        "produced_by": "tests/bench/sandboxfusion_multipl_verdicts.py",
        "sandboxfusion_commit": commit,
        "request": "POST /submit {dataset: multiple_<lang>, completion: gpt_solution, config: {dataset_type: "
                   "MultiPLEDataset, provided_data: row, extra: {is_freeform: true}}}",
        "server": "SandboxFusion started locally without Docker (isolation none) with "
                  "Go 1.22 (bookworm-backports) first on PATH, GOTOOLCHAIN=local, GOPROXY=off; g++ 12.2, "
                  "libboost-dev 1.74, OpenJDK 17, node 20, rustc 1.95, bash 5.2, ruby 3.1.2, PHP 8.2, "
                  "perl 5.36 with Test::Deep, Lua 5.4.4 with luaunit 3.4 (Debian lua-unit), R 4.2.2, "
                  "Racket 8.7, Scala 2.11.12, tsx 4.7.1 (TypeScript), dmd as a wrapper running gdc 12 with dmd's flags "
                  "(dmd has no Debian package) (Debian 12 host)",
        "limits": "SandboxFusion's defaults (20 s compile, 20 s run); a row answered with a time limit is "
                  f"graded again with {RETRY_LIMITS} (seconds): this 2-core machine was shared and loaded",
        "datasets": {key: f"{d}-<lang>.jsonl of SandboxFusion's sandbox/tests/datasets/samples/Multi-PLE/"
                     for d, key in DATASETS.items() if key in record},
        "recorded": recorded,
        "date": date,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"header": header, **record}, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
