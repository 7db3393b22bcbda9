"""One record in the page's sample shape: verdict and label, the code judged, each test (a failed
stdio test with its expected vs actual line diff, an assert with its source), and per kind the
trajectory (token ids, mask, logprobs, tool calls with their observations, transcript) or verl's text,
ground truth, step and reward extras.

The diff is bounded: at most :data:`DIFF_INPUT_LINES` lines and :data:`DIFF_INPUT_CHARS` characters
of each side are compared (``difflib`` is quadratic: two 30,000-line outputs would take seconds),
and at most :data:`DIFF_LINES` diff lines are kept; the test then carries a ``diff_note`` saying
what was compared.
"""

from __future__ import annotations

import difflib
import json
import math
from typing import Any, Optional

from judgebox.report.overview import verdict_of
from judgebox.reward.verdict import Verdict, unscorable_reason

#: diff lines kept per failed test
DIFF_LINES = 400
#: lines of each side (expected, actual) the diff compares
DIFF_INPUT_LINES = 2000
#: characters of each side the diff compares (a longer single line is cut)
DIFF_INPUT_CHARS = 200_000
#: verl dump keys shown apart from the reward extras
VERL_OWN = ("input", "output", "score", "step", "gts")


def _head(text: str) -> tuple[list[str], bool]:
    """The lines of ``text`` the diff compares, and whether that is less than all of it."""
    lines = text.splitlines()
    kept, size = [], 0
    for line in lines[:DIFF_INPUT_LINES]:
        if size + len(line) > DIFF_INPUT_CHARS:
            kept.append(line[:DIFF_INPUT_CHARS - size])
            return kept, True
        kept.append(line)
        size += len(line) + 1
    return kept, len(lines) > DIFF_INPUT_LINES


def diff(expected: str, actual: str) -> tuple[list[list[str]], Optional[str]]:
    """``([[op, line], ...], note)``: op ``" "`` (both), ``"-"`` (expected only), ``"+"`` (actual only),
    ``"…"`` (a cut); ``note`` says what was compared when a side was longer than the bound (module
    docstring), else ``None``."""
    a, cut_a = _head(expected)
    b, cut_b = _head(actual)
    note = None
    if cut_a or cut_b:
        note = (f"diff of the first {DIFF_INPUT_LINES:,} lines of each side, at most {DIFF_INPUT_CHARS:,} characters "
                f"(expected: {len(expected.splitlines()):,} lines, {len(expected):,} characters; actual: "
                f"{len(actual.splitlines()):,} lines, {len(actual):,} characters); later differences are not shown")
    out: list[list[str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [[" ", line] for line in a[i1:i2]]
        else:
            out += [["-", line] for line in a[i1:i2]] + [["+", line] for line in b[j1:j2]]
        if len(out) >= DIFF_LINES:
            return out[:DIFF_LINES] + [["…", f"(diff cut at {DIFF_LINES} lines)"]], note
    return out, note


def _tests(tests: Optional[list[dict]]) -> list[dict]:
    """Each test as the page shows it: a failed stdio test with its expected vs actual diff; a test run
    in a harness (``harness_isolation`` set: asserts, calls, a harness file) compares inside its program,
    so its stdout is not an answer to diff, and an assert's source (its only text, in ``expected`` or
    ``input``) is its ``code``; a failed test with nothing to show carries a ``note`` saying so."""
    out = []
    for t in tests or []:
        entry = dict(t)
        if t.get("harness_isolation"):
            texts = [str(t[k]) for k in ("input", "expected") if t.get(k)]
            if len(texts) == 1:  # an assert: its source, no input and no expected output
                entry["code"] = texts[0]
                entry.pop("input", None)
                entry.pop("expected", None)
        elif "expected" in t and t.get("verdict") == Verdict.wrong_answer.value:
            entry["diff"], note = diff(str(t.get("expected", "")), str(t.get("stdout", "")))
            if note:
                entry["diff_note"] = note
        shown = ("input", "expected", "diff", "stderr")  # what it gave (its test code, if any, is shown too)
        if t.get("verdict") != Verdict.accepted.value and not any(entry.get(k) for k in shown) \
                and not str(t.get("stdout") or "").strip():
            status = t.get("return_code")
            entry["note"] = "the test program gave no output (nothing on stdout or stderr)" + (
                f"; the verdict comes from its exit status ({status})" if isinstance(status, int) and status else "")
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


def sample(row: dict, kind: str, index: Any) -> dict:
    """One record in the page's sample shape (``index``: its sample id; ``label``: its verdict, or a
    verl line's score label; ``elapsed_s`` in seconds)."""
    verdict = row.get("verdict")
    s: dict[str, Any] = {
        "i": index, "verdict": verdict, "label": verdict_of(row, kind),
        "unscorable": unscorable_reason(verdict) if verdict else None,
        "passed": row.get("passed"), "n_passed": row.get("n_passed"), "n_total": row.get("n_total"),
        "message": row.get("message", ""), "program": row.get("program"), "language": row.get("language"),
        "elapsed_s": row.get("elapsed_s"), "attempts": row.get("attempts"), "tests": _tests(row.get("tests")),
        "tamper_signals": [t for t in row.get("tamper_signals") or [] if isinstance(t, dict)],
        "forgeable": bool(row.get("forgeable")), "tamper_rejected": bool(row.get("tamper_rejected")),
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
        s.update(reward=row.get("score"), step=row.get("step"), output=row.get("output"), gts=row.get("gts"),
                 extra={k: v for k, v in row.items() if k not in VERL_OWN})
    return s


def prompt(row: dict, kind: str) -> Optional[str]:
    """A problem's prompt text: verl's ``input``, the record's ``prompt``, or its first system/user
    messages."""
    if kind == "verl":
        return row.get("input")
    if row.get("prompt") is not None:
        return row["prompt"]
    messages = row.get("messages") or []
    users = [m for m in messages if m.get("role") in ("system", "user")]
    return "\n\n".join(f"[{m['role']}] {m.get('content', '')}" for m in users[:2]) if users else None
