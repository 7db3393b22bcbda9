"""Record SandboxFusion's own verdict on every handed MultiPL-E row's ``gpt_solution``.

Produces ``tests/reward/data/sandboxfusion_multipl_verdicts.json`` (read by
``tests/reward/test_multipl_parity.py``; CI cannot reach SandboxFusion, so its verdicts are data).
Each row of ``$JUDGEBOX_DATA_DIR/sandboxfusion-samples/humaneval-<lang>.jsonl`` is sent to a running
SandboxFusion's ``POST /submit`` exactly as its own ``sandbox/tests/datasets/test_multiple.py`` does:
``dataset="multiple_<lang>"``, ``config.dataset_type="MultiPLEDataset"``, ``config.provided_data=row``,
``config.extra.is_freeform=true``, ``completion=row["gpt_solution"]``; ``accepted`` is its answer.

Set up and start SandboxFusion from its repository (no Docker); for Go its ``runtime/go/go.mod``
needs Go >= 1.22 (Debian 12 has 1.19: ``apt-get install -t bookworm-backports golang-1.22-go``)::

    PATH=/usr/lib/go-1.22/bin:$PATH GOTOOLCHAIN=local GOPROXY=off SHLVL=1 \\
        <SandboxFusion's start script> 8093
    python3 tests/bench/sandboxfusion_multipl_verdicts.py --url http://127.0.0.1:8093 \\
        --sf-dir /tmp/sandboxfusion --details /tmp/sf-multipl-details.jsonl

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
LANGUAGES = ("cpp", "go", "java", "js", "rs", "sh")


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


async def grade(url: str, languages: list[str], concurrency: int, details: Path | None,
                task_ids: set[str]) -> dict[str, dict[str, bool]]:
    verdicts: dict[str, dict[str, bool]] = {}
    gate = asyncio.Semaphore(concurrency)
    sink = details.open("w") if details else None
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:
        for lang in languages:
            rows = [json.loads(line) for line in (SAMPLES / f"humaneval-{lang}.jsonl").open()]

            async def one(row: dict) -> tuple[str, dict]:
                async with gate:
                    return row["task_id"], await submit(client, lang, row)

            answers = await asyncio.gather(*(one(r) for r in rows
                                             if r.get("gpt_solution") and (not task_ids or r["task_id"] in task_ids)))
            verdicts[lang] = {task_id: bool(a["accepted"]) for task_id, a in answers}
            if sink:
                for task_id, a in answers:
                    sink.write(json.dumps({"lang": lang, "task_id": task_id, **a}) + "\n")
            print(lang, sum(verdicts[lang].values()), "/", len(verdicts[lang]), "accepted", flush=True)
    if sink:
        sink.close()
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--sf-dir", default="/tmp/sandboxfusion", help="the SandboxFusion checkout (for its commit)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--languages", default=",".join(LANGUAGES),
                        help="comma-separated; the other languages' recorded verdicts are kept")
    parser.add_argument("--task-ids", default="", help="comma-separated: grade only these rows (merged into the file)")
    parser.add_argument("--details", type=Path)
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", args.sf_dir, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    graded = asyncio.run(grade(args.url, args.languages.split(","), args.concurrency, args.details,
                               set(filter(None, args.task_ids.split(",")))))
    verdicts = json.loads(OUT.read_text())["verdicts"] if OUT.exists() else {}
    for lang, rows in graded.items():
        verdicts.setdefault(lang, {}).update(rows)
    header = {
        "produced_by": "tests/bench/sandboxfusion_multipl_verdicts.py",
        "sandboxfusion_commit": commit,
        "request": "POST /submit {dataset: multiple_<lang>, completion: gpt_solution, config: {dataset_type: "
                   "MultiPLEDataset, provided_data: row, extra: {is_freeform: true}}}",
        "server": "SandboxFusion started locally without Docker (isolation none) with "
                  "Go 1.22 (bookworm-backports) first on PATH, GOTOOLCHAIN=local, GOPROXY=off; g++ 12.2, "
                  "libboost-dev 1.74, OpenJDK 17, node 20, rustc 1.95, bash 5.2 (Debian 12 host)",
        "limits": "SandboxFusion's defaults (20 s compile, 20 s run); a row answered with a time limit is "
                  f"graded again with {RETRY_LIMITS} (seconds): this 2-core machine was shared and loaded",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"header": header, "verdicts": verdicts}, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
