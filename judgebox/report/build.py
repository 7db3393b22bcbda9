"""Build the report page: the records normalised into one sample shape, the overview computed (or
taken from the summary), every problem's detail compressed apart, and the page rendered from the
Jinja2 template with our own script and style inlined.

The page is one self-contained file: no server, no network, nothing fetched when it is viewed. Its
data sits in ``<script type="application/octet-stream">`` blocks as base64 of gzip-compressed JSON
(base64 cannot close a script element, so no record text reaches the HTML parser): the overview
and the problem list are decoded at load, one problem's samples and trajectories when it is opened
(the browser's ``DecompressionStream``). The script writes every record text with ``textContent``,
never as markup.
"""

from __future__ import annotations

import base64
import datetime as _dt
import gzip
import json
import logging
import math
import re
import statistics
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any, Optional

from judgebox.report.overview import (
    UNSCORED,
    compare,
    compare_note,
    natural_key,
    overview,
    passed,
    problem_key,
    verdict_of,
)
from judgebox.report.records import Records, read_records
from judgebox.report.samples import prompt, sample
from judgebox.report.summary import read_summary
from judgebox.reward.results import replace_atomically

log = logging.getLogger(__name__)

#: a lone surrogate: valid in JSON text (``"\\ud800"``), not encodable as UTF-8
_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (so the page is valid UTF-8)."""
    return _SURROGATE.sub("\ufffd", text)


def _encode(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate as U+FFFD (the scan only runs when one is there)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _utf8(text).encode("utf-8")


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float as the string ``"NaN"``, ``"Infinity"`` or
    ``"-Infinity"`` (JSON has no such numbers; the browser's JSON parser refuses them)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if obj != obj else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _pack(obj: Any) -> str:
    """base64 of the gzip of ``obj`` as compact JSON (non-finite floats as strings, lone surrogates
    as U+FFFD)."""
    try:  # most records hold no NaN: walk the object only when the strict encoder refuses one
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(gzip.compress(_encode(text), compresslevel=6, mtime=0)).decode("ascii")


def _problems(records: Records) -> dict[str, dict]:
    """task id -> {prompt, rows}: problems in their task ids' natural order (``HumanEval/2`` before
    ``HumanEval/10``), each one's samples by their index, not in the order they finished (a verl
    dump keeps its file order: its lines are steps)."""
    out: dict[str, dict] = {}
    for row in records.rows:
        entry = out.setdefault(problem_key(row, records.kind), {"prompt": prompt(row, records.kind), "rows": []})
        entry["rows"].append(row)
    if records.kind == "verl":
        return out
    for entry in out.values():
        entry["rows"].sort(key=lambda r: natural_key(r.get("sample_id", r.get("sample_index", 0))))
    return dict(sorted(out.items(), key=lambda item: natural_key(item[0])))


def _mean_reward(samples: list[dict]) -> Optional[float]:
    """The mean reward of a problem's scorable samples (``None`` when none has a number)."""
    values = [s["reward"] for s in samples if isinstance(s.get("reward"), (int, float)) and s["label"] not in UNSCORED]
    return statistics.fmean(values) if values else None


def build_page(records: Records, *, summary: Optional[dict] = None, other: Optional[Records] = None,
               tokenizer: Any = None, tokenizer_name: Optional[str] = None, title: Optional[str] = None) -> str:
    """The report page (HTML text) of ``records``.

    Args:
        records: what :func:`judgebox.report.records.read_records` read.
        summary: the checked summary (:func:`read_summary`), or ``None`` to compute one.
        other: a second run to compare with (per-problem differences, regressions first); a run of
            another dataset is compared with a warning, logged and on the Compare tab
            (:func:`judgebox.report.overview.compare_note`).
        tokenizer: a transformers tokenizer for the trajectory token view (rollouts); ``None`` leaves
            the token view out (the transcript and the counts stay).
        tokenizer_name: where the tokenizer came from (shown on the page).
        title: the page title (default: the dataset and the file name).
    """
    from jinja2 import Environment, select_autoescape

    from judgebox.report.tokens import token_bytes

    kind = records.kind
    problems = _problems(records)
    dataset = (summary or {}).get("dataset") or (records.rows[0].get("data_source") if kind == "verl" else None)
    chunks, index = [], []
    used_ids: set[int] = set()
    for task_id, entry in problems.items():
        samples = [sample(row, kind, row.get("sample_id", row.get("sample_index", i)))
                   for i, row in enumerate(entry["rows"])]
        scored = [r for r in entry["rows"] if verdict_of(r, kind) not in UNSCORED]
        index.append({"task_id": task_id, "n": len(scored), "c": sum(passed(r, kind) for r in scored),
                      "samples": len(samples), "verdicts": dict(Counter(s["label"] for s in samples)),
                      "language": next((s["language"] for s in samples if s.get("language")), None),
                      "reward": _mean_reward(samples) if kind != "eval" else None, "chunk": len(chunks)})
        if tokenizer is not None and kind == "rollout":
            for s in samples:
                used_ids.update(s.get("prompt_ids") or [])
                used_ids.update(s["response_ids"])
        chunks.append(_pack({"task_id": task_id, "prompt": entry["prompt"], "samples": samples}))
    note = compare_note(records, other, (summary or {}).get("dataset")) if other is not None else None
    if note:
        log.warning("%s", note)
    vocab = None
    if used_ids:
        vocab = _pack({str(i): b.decode("latin-1") for i, b in token_bytes(tokenizer, used_ids).items()})
    head = {
        "kind": kind, "file": records.path.name, "dataset": dataset,
        "model": (summary or {}).get("model"), "tokens": tokenizer_name if vocab else None,
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "overview": overview(records, summary), "problems": index,
        "compare": {"file": other.path.name, "rows": compare(records, other), "note": note} if other is not None else None,
    }
    assets = resources.files("judgebox.report") / "assets"
    env = Environment(autoescape=select_autoescape(default=True), keep_trailing_newline=True)
    template = env.from_string((assets / "report.html.j2").read_text(encoding="utf-8"))
    return _encode(template.render(
        title=title or f"judgebox report: {dataset or records.path.name}", source=str(records.path.resolve()),
        style=(assets / "report.css").read_text(encoding="utf-8"),
        script=(assets / "report.js").read_text(encoding="utf-8"),
        head=_pack(head), vocab=vocab, chunks=chunks)).decode("utf-8")


def write_report(path: Path, out: Path, *, summary_path: Optional[Path] = None, compare_path: Optional[Path] = None,
                 summary: Optional[dict] = None, tokenizer: Optional[str] = None, title: Optional[str] = None,
                 token_view: bool = True) -> Path:
    """Read ``path`` (and the summary, the run to compare with), build the page and write it to ``out``.

    ``summary`` is a summary already in memory (``judgebox eval/rollout --html``); ``tokenizer`` a
    model directory or cached hub id for the token view (``None``: the model the summary names, if
    any; loaded from local files only, :func:`judgebox.report.tokens.load_tokenizer`);
    ``token_view=False`` loads no tokenizer.

    Raises:
        ValueError: a file that cannot be read by the rules of :mod:`judgebox.report.records`, a summary
            that does not match (:mod:`judgebox.report.summary`), a tokenizer that cannot be loaded
            (blaming ``--tokenizer`` or the summary that names the model), or ``compare_path`` that is
            ``path`` itself; the message names the file.
    """
    from judgebox.report.tokens import load_tokenizer

    if compare_path is not None and Path(compare_path).resolve() == Path(path).resolve():
        raise ValueError(f"--compare {compare_path}: that is the file this report is of ({path}); compare it with "
                         "another run's results or trajectories jsonl")
    inputs = [Path(p) for p in (path, summary_path, compare_path) if p is not None]
    if Path(out).exists() and any(Path(out).resolve() == p.resolve() for p in inputs if p.exists()):
        raise ValueError(f"--out {out}: that is an input of this report ({Path(out).resolve()}); the report never "
                         "overwrites what it reads: give another --out path")
    records = read_records(path)
    if summary_path is not None:
        summary = read_summary(summary_path, records)
    other = read_records(compare_path) if compare_path is not None else None
    name = (tokenizer or (summary or {}).get("model")) if token_view and records.kind == "rollout" else None
    origin = None if tokenizer else (f"--summary {summary_path} names the model {name}" if summary_path is not None
                                     else f"the run's summary names the model {name}")
    tok = load_tokenizer(name, origin) if name else None
    html = build_page(records, summary=summary, other=other, tokenizer=tok, tokenizer_name=name, title=title)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(out, lambda tmp: tmp.write_text(html, encoding="utf-8"))
    return out
