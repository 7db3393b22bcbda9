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
import difflib
import gzip
import json
import math
import statistics
from collections import Counter, defaultdict
from importlib import resources
from pathlib import Path
from typing import Any, Optional

from judgebox.report.records import Records, read_records, read_summary, verl_task_id
from judgebox.reward.report import summarize
from judgebox.reward.verdict import Verdict, unscorable_reason

UNSCORED = (Verdict.infra_error.value, Verdict.test_data_error.value)
#: lines of a failed test's expected/actual diff kept per test
DIFF_LINES = 400


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
    replaced)."""
    raw = json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
        "utf-8", "replace")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _diff(expected: str, actual: str) -> list[list[str]]:
    """``[[op, line], ...]`` with op ``" "`` (both), ``"-"`` (expected only) or ``"+"`` (actual only)."""
    out: list[list[str]] = []
    a, b = expected.splitlines(), actual.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [[" ", line] for line in a[i1:i2]]
        else:
            out += [["-", line] for line in a[i1:i2]] + [["+", line] for line in b[j1:j2]]
        if len(out) >= DIFF_LINES:
            return out[:DIFF_LINES] + [["…", f"(diff cut at {DIFF_LINES} lines)"]]
    return out


def _tests(tests: list[dict]) -> list[dict]:
    out = []
    for t in tests or []:
        entry = dict(t)
        if "expected" in t and t.get("verdict") == Verdict.wrong_answer.value:
            entry["diff"] = _diff(str(t.get("expected", "")), str(t.get("stdout", "")))
        out.append(entry)
    return out


def _tool_rounds(messages: list[dict]) -> list[dict]:
    """Each tool call of a transcript with its arguments and the observation that answered it (by
    ``tool_call_id``, else in order)."""
    calls, answers, loose = [], {}, []
    for m in messages or []:
        if m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                calls.append({"id": c.get("id"), "name": fn.get("name", ""), "arguments": fn.get("arguments", "")})
        elif m.get("role") == "tool":
            content = m.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            if m.get("tool_call_id"):
                answers[m["tool_call_id"]] = text
            else:
                loose.append(text)
    for call in calls:
        call["observation"] = answers.pop(call["id"], None) if call["id"] in answers else (loose.pop(0) if loose else None)
        if not isinstance(call["arguments"], str):
            call["arguments"] = json.dumps(call["arguments"], ensure_ascii=False)
    return calls


def _sample(row: dict, kind: str, index: int) -> dict:
    """One record in the page's sample shape."""
    verdict = row.get("verdict")
    s: dict[str, Any] = {
        "i": index, "verdict": verdict, "unscorable": unscorable_reason(verdict) if verdict else None,
        "passed": row.get("passed"), "n_passed": row.get("n_passed"), "n_total": row.get("n_total"),
        "message": row.get("message", ""), "program": row.get("program"), "language": row.get("language"),
        "elapsed_s": row.get("elapsed_s"), "attempts": row.get("attempts"), "tests": _tests(row.get("tests")),
    }
    if kind == "rollout":
        extra = row.get("extra_fields") or {}
        messages = row.get("messages") or []
        final = next((m.get("content") for m in reversed(messages) if m.get("role") == "assistant"), None)
        s.update(reward=row.get("reward_score"), stop_reason=extra.get("stop_reason"),
                 tool_calls=extra.get("tool_calls", 0), tool_errors=extra.get("tool_errors", 0),
                 tool_timeouts=extra.get("tool_timeouts", 0), parse_errors=extra.get("parse_errors", 0),
                 reward_info=extra.get("reward_info"), logprobs_mode=extra.get("logprobs_mode"),
                 final=final, rounds=_tool_rounds(messages), messages=messages,
                 prompt_ids=row.get("prompt_ids"), response_ids=row.get("response_ids"),
                 response_mask=row.get("response_mask"),
                 logprobs=[round(x, 3) if isinstance(x, (int, float)) and math.isfinite(x) else None
                           for x in row["response_logprobs"]] if row.get("response_logprobs") else None,
                 metrics=row.get("metrics") or {})
    elif kind == "verl":
        s.update(reward=row.get("score"), step=row.get("step"), final=row.get("output"), output=row.get("output"),
                 extra={k: v for k, v in row.items() if k not in ("input", "output", "score", "step")})
    return s


def _problem_key(row: dict, kind: str) -> str:
    return verl_task_id(row) if kind == "verl" else str(row["task_id"])


def _prompt(row: dict, kind: str) -> Optional[str]:
    if kind == "verl":
        return row.get("input")
    if row.get("prompt") is not None:
        return row["prompt"]
    messages = row.get("messages") or []
    users = [m for m in messages if m.get("role") in ("system", "user")]
    return "\n\n".join(f"[{m['role']}] {m.get('content', '')}" for m in users[:2]) if users else None


def _rate(c: int, n: int) -> Optional[float]:
    return c / n if n else None


def _problems(records: Records) -> dict[str, dict]:
    """task id -> {prompt, rows} in file order."""
    out: dict[str, dict] = {}
    for row in records.rows:
        key = _problem_key(row, records.kind)
        entry = out.setdefault(key, {"prompt": _prompt(row, records.kind), "rows": []})
        entry["rows"].append(row)
    return out


def _verdict_of(row: dict, kind: str) -> str:
    if kind == "verl" and row.get("verdict") is None:
        return "scored" if row.get("score") is not None else "unscored"
    return str(row.get("verdict"))


def _passed(row: dict, kind: str) -> bool:
    if kind == "verl" and row.get("verdict") is None:
        return (row.get("score") or 0) >= 1
    return row.get("verdict") == Verdict.accepted.value


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return {"mean": statistics.fmean(values), "p50": pick(0.5), "p95": pick(0.95), "max": values[-1]}


def _splits(records: Records, field: str) -> dict[str, dict]:
    """Per value of ``field`` (language, data_source): samples, scored, passed, unscorable."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in records.rows:
        value = row.get(field)
        if value is None:
            continue
        verdict = _verdict_of(row, records.kind)
        c = out[str(value)]
        c["samples"] += 1
        c["unscorable"] += verdict in UNSCORED
        c["scored"] += verdict not in UNSCORED
        c["passed"] += _passed(row, records.kind)
    return {k: dict(v) for k, v in sorted(out.items())} if len(out) > 1 or field == "language" else {}


def compare(mine: Records, other: Records) -> list[dict]:
    """Per problem in either file: pass rate here and in ``other`` (over scored samples), regressions
    (lower here) first, largest drop first, then improvements, then problems in one file only."""
    def rates(records: Records) -> dict[str, tuple[int, int]]:
        acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for row in records.rows:
            if _verdict_of(row, records.kind) in UNSCORED:
                continue
            key = _problem_key(row, records.kind)
            acc[key][0] += _passed(row, records.kind)
            acc[key][1] += 1
        return {k: (c, n) for k, (c, n) in acc.items()}

    a, b = rates(mine), rates(other)
    rows = []
    for key in dict.fromkeys([*a, *b]):
        ra, rb = a.get(key), b.get(key)
        pa = _rate(*ra) if ra else None
        pb = _rate(*rb) if rb else None
        if pa == pb:
            continue
        delta = None if pa is None or pb is None else pa - pb
        change = "only_other" if pa is None else "only_here" if pb is None else ("regression" if delta < 0 else "improvement")
        rows.append({"task_id": key, "here": pa, "other": pb, "here_n": ra[1] if ra else 0,
                     "other_n": rb[1] if rb else 0, "delta": delta, "change": change})
    order = {"regression": 0, "improvement": 1, "only_here": 2, "only_other": 3}
    rows.sort(key=lambda r: (order[r["change"]], r["delta"] if r["change"] == "regression" else -(r["delta"] or 0)))
    return rows


def overview(records: Records, summary: Optional[dict], ks: tuple[int, ...] = (1, 10, 100)) -> dict:
    """The numbers of the overview: the summary's own (every field it carries) when given, else a
    summary computed from the records (:func:`judgebox.reward.report.summarize`: pass@k over the
    problems present), plus what only the records hold (timing, splits, tool and stop counts)."""
    kind = records.kind
    if summary is None and kind != "verl":
        computed = summarize("", list(dict.fromkeys(str(r["task_id"]) for r in records.rows)),
                             [{"task_id": str(r["task_id"]), "verdict": r["verdict"]} for r in records.rows], ks)
        summary_fields = computed.model_dump(mode="json", exclude={"problems", "dataset"})
        summary_fields["duplicates_dropped"] = records.duplicates
        source = "computed from the records (no --summary given)"
    else:
        summary_fields = {k: v for k, v in (summary or {}).items() if k != "problems"}
        source = "the summary file" if summary is not None else "computed from the records"
    verdicts = Counter(_verdict_of(r, kind) for r in records.rows)
    view: dict[str, Any] = {
        "source": source, "summary": summary_fields, "n_records": len(records.rows),
        "verdicts": dict(verdicts.most_common()),
        "unscorable": {v: verdicts[v] for v in UNSCORED if verdicts[v]},
        "duplicates_dropped": records.duplicates, "torn_line": records.torn,
        "elapsed_s": _percentiles([r["elapsed_s"] for r in records.rows if isinstance(r.get("elapsed_s"), (int, float))]),
        "splits": {"language": _splits(records, "language"), "data_source": _splits(records, "data_source")},
    }
    if kind == "rollout":
        extras = [r.get("extra_fields") or {} for r in records.rows]
        view["stop_reasons"] = dict(Counter(e.get("stop_reason") for e in extras).most_common())
        view["tool_calls"] = dict(sorted(Counter(int(e.get("tool_calls", 0)) for e in extras).items()))
        view["parse_errors"] = sum(int(e.get("parse_errors", 0)) for e in extras)
        view["tool_errors"] = sum(int(e.get("tool_errors", 0)) for e in extras)
        view["tool_timeouts"] = sum(int(e.get("tool_timeouts", 0)) for e in extras)
        view["policy_tokens"] = sum(sum(r.get("response_mask") or []) for r in records.rows)
        view["observation_tokens"] = sum(len(r.get("response_mask") or []) - sum(r.get("response_mask") or [])
                                         for r in records.rows)
    if kind == "verl":
        scores = [r["score"] for r in records.rows if isinstance(r.get("score"), (int, float))]
        view["mean_score"] = statistics.fmean(scores) if scores else None
        view["steps"] = dict(sorted(Counter(r.get("step") for r in records.rows).items(), key=lambda kv: str(kv[0])))
    return view


def build_page(records: Records, *, summary: Optional[dict] = None, other: Optional[Records] = None,
               tokenizer: Any = None, tokenizer_name: Optional[str] = None, title: Optional[str] = None) -> str:
    """The report page (HTML text) of ``records``.

    Args:
        records: what :func:`judgebox.report.records.read_records` read.
        summary: the checked summary (:func:`read_summary`), or ``None`` to compute one.
        other: a second run to compare with (per-problem differences, regressions first).
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
        samples = [_sample(row, kind, row.get("sample_id", row.get("sample_index", i)))
                   for i, row in enumerate(entry["rows"])]
        scored = [s for s in samples if s["verdict"] not in UNSCORED]
        passed = sum(_passed(r, kind) for r in entry["rows"] if _verdict_of(r, kind) not in UNSCORED)
        index.append({"task_id": task_id, "n": len(scored), "c": passed, "samples": len(samples),
                      "verdicts": dict(Counter(_verdict_of(r, kind) for r in entry["rows"])),
                      "language": next((s["language"] for s in samples if s.get("language")), None),
                      "reward": statistics.fmean([s["reward"] for s in samples if isinstance(s.get("reward"), (int, float))])
                      if kind != "eval" and any(isinstance(s.get("reward"), (int, float)) for s in samples) else None,
                      "chunk": len(chunks)})
        if tokenizer is not None and kind == "rollout":
            for s in samples:
                used_ids.update(s.get("prompt_ids") or [])
                used_ids.update(s.get("response_ids") or [])
        chunks.append(_pack({"task_id": task_id, "prompt": entry["prompt"], "samples": samples}))
    vocab = None
    if used_ids:
        vocab = _pack({str(i): b.decode("latin-1") for i, b in token_bytes(tokenizer, used_ids).items()})
    head = {
        "kind": kind, "file": records.path.name, "dataset": dataset,
        "model": (summary or {}).get("model"), "tokens": tokenizer_name if vocab else None,
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "overview": overview(records, summary), "problems": index,
        "compare": {"file": other.path.name, "rows": compare(records, other)} if other is not None else None,
    }
    assets = resources.files("judgebox.report") / "assets"
    env = Environment(autoescape=select_autoescape(default=True), keep_trailing_newline=True)
    template = env.from_string((assets / "report.html.j2").read_text(encoding="utf-8"))
    return template.render(
        title=title or f"judgebox report: {dataset or records.path.name}",
        style=(assets / "report.css").read_text(encoding="utf-8"),
        script=(assets / "report.js").read_text(encoding="utf-8"),
        head=_pack(head), vocab=vocab, chunks=chunks)


def write_report(path: Path, out: Path, *, summary_path: Optional[Path] = None, compare_path: Optional[Path] = None,
                 summary: Optional[dict] = None, tokenizer: Optional[str] = None, title: Optional[str] = None,
                 token_view: bool = True) -> Path:
    """Read ``path`` (and the summary, the run to compare with), build the page and write it to ``out``.

    ``summary`` is a summary already in memory (``judgebox eval/rollout --html``); ``tokenizer`` a
    model directory or hub id for the token view (``None``: the model the summary names, if any);
    ``token_view=False`` loads no tokenizer.

    Raises:
        ValueError: a file that cannot be read by the rules of :mod:`judgebox.report.records`, a summary
            that does not match, or a tokenizer that cannot be loaded; the message names the file.
    """
    from judgebox.report.tokens import load_tokenizer

    inputs = [Path(p) for p in (path, summary_path, compare_path) if p is not None]
    if Path(out).exists() and any(Path(out).resolve() == p.resolve() for p in inputs if p.exists()):
        raise ValueError(f"--out {out}: that is an input of this report ({Path(out).resolve()}); the report never "
                         "overwrites what it reads: give another --out path")
    records = read_records(path)
    if summary_path is not None:
        summary = read_summary(summary_path, records)
    other = read_records(compare_path) if compare_path is not None else None
    name = (tokenizer or (summary or {}).get("model")) if token_view and records.kind == "rollout" else None
    tok = load_tokenizer(name) if name and records.kind == "rollout" else None
    html = build_page(records, summary=summary, other=other, tokenizer=tok, tokenizer_name=name, title=title)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out
