"""The ``code_interpreter`` observation: one plain-text format, its exact status lines, and the budget.

Format (sections in this order; a section appears only when it has text)::

    <status line>                      always, exactly one, first (see the STATUS_* constants)
    <note lines>                       "[state reset] ..." / "[state lost] ..." when they apply
    [stdout]                           or "[stdout: the sandbox kept the first 1024 bytes]"
    <everything the cell printed, in order>
    [stderr]                           or "[stderr: last 2000 of 5321 characters]"
    <the tail of stderr>
    [traceback]                        or "[traceback: last 3 of 7 frames]"
    <the last frames, ANSI colours removed, ending with "ZeroDivisionError: division by zero">
    [value]
    <text/plain of the final expression; "[display: image/png]" for data without text>

A section the sandbox cut at its ``output_limit_bytes`` (its ``*_truncated`` flag) says so in its
header: ``; the sandbox kept the first 1024 bytes`` (stdout, stderr) or ``; cut by the sandbox``
(value, traceback). The whole text is then cut to the budget (characters, or tokens given a
tokenizer; never inside a character): the head and the tail are kept, joined by
``[... 1234 characters cut ...]`` (or ``tokens``), so the status line and the end of the output
(traceback, value) survive. An infrastructure failure is not an
observation of this module: the tool raises :class:`~judgebox.sandbox.errors.SandboxInfraError` and the
caller (:class:`judgebox.agent.tools.TrajectoryTools`) answers ``error: sandbox unavailable
(infrastructure, not your code): <reason>`` with status ``infra_error``.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from judgebox.sandbox.models import RunCodeResponse, SessionRunResult
from judgebox.sandbox.textcap import text_bytes

__all__ = ["STATUS_OK", "STATUS_OK_EMPTY", "STATUS_ERROR", "STATUS_TIMEOUT_KEPT", "STATUS_TIMEOUT_LOST",
           "STATUS_MEMORY_LOST", "STATUS_MEMORY_KEPT", "STATUS_KILLED", "NOTE_RESET", "NOTE_LOST",
           "STATUS_EXIT", "STATUS_COMPILE", "STATUS_PROGRAM_OK_EMPTY", "STATUS_PROGRAM_TIMEOUT", "STATUS_PROGRAM_MEMORY",
           "SANDBOX_KEPT", "SANDBOX_CUT", "cut_marker", "fit_budget", "format_cell", "format_program"]

# ---- the exact strings (tests assert them; change them only together with the README) -----------
STATUS_OK = "[ok]"
STATUS_OK_EMPTY = "[ok] the cell ran; it printed nothing and its last line has no value"
STATUS_ERROR = "[error] the cell raised {ename}; state kept"
STATUS_TIMEOUT_KEPT = "[timeout] the cell did not finish within {timeout:g} s and was interrupted; state kept"
STATUS_TIMEOUT_LOST = ("[timeout] the cell did not finish within {timeout:g} s and did not stop when "
                       "interrupted; the interpreter was restarted; state lost")
STATUS_MEMORY_LOST = ("[memory limit] the cell exceeded the memory limit of {memory_MB} MiB; the interpreter "
                      "was restarted; state lost")
STATUS_MEMORY_KEPT = ("[memory limit] a process of the cell exceeded the memory limit of {memory_MB} MiB and "
                      "was killed; state kept")
STATUS_KILLED = "[killed] the interpreter died during the cell ({detail}); state lost"
NOTE_RESET = "[state reset] this cell ran in a fresh interpreter"
NOTE_LOST = "[state lost] {reason}; this cell ran in a fresh interpreter"
# stateless programs (other languages, through run_code)
STATUS_EXIT = "[error] the program exited with code {code}"
STATUS_COMPILE = "[error] compilation failed"
STATUS_PROGRAM_TIMEOUT = "[timeout] the program did not finish within {timeout:g} s and was killed"
STATUS_PROGRAM_MEMORY = "[memory limit] the program exceeded the memory limit and was killed"
STATUS_PROGRAM_OK_EMPTY = "[ok] the program ran and printed nothing"
# a section's header when the sandbox's output_limit_bytes cut it (its *_truncated flag)
SANDBOX_KEPT = "the sandbox kept the first {size} bytes"
SANDBOX_CUT = "cut by the sandbox"

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def cut_marker(n: int, unit: str) -> str:
    """The marker that replaces ``n`` cut characters/tokens: ``[... 1234 characters cut ...]``."""
    return f"\n[... {n} {unit} cut ...]\n"


def fit_budget(text: str, budget: int, tokenizer: Any = None) -> str:
    """``text`` cut to ``budget`` characters (or tokens with ``tokenizer``), keeping head and tail.

    Args:
        text: the observation.
        budget: the most characters (or tokens) the result may hold, marker included (>= 64).
        tokenizer: a Hugging Face tokenizer (``encode``/``decode``) to count tokens; ``None``: characters.

    The head gets 40% of the room left after the marker and the tail the rest (the end of an
    output, where errors and values are, matters most). Text within the budget is returned as is;
    a cut text is exactly ``budget`` characters long (in tokens: at most ``budget``).
    """
    if tokenizer is None:
        units: Any = text
        size = len
        join = "".join
        unit = "characters"
    else:
        units = tokenizer.encode(text, add_special_tokens=False)
        unit = "tokens"

        def size(piece: Any) -> int:
            return len(tokenizer.encode(piece, add_special_tokens=False)) if isinstance(piece, str) else len(piece)

        def join(parts: list) -> str:
            head, tail = tokenizer.decode(parts[0]), tokenizer.decode(parts[2])
            # a token cut may split a character (byte-level tokens): drop its decoded pieces
            # (U+FFFD not in the text) rather than show them
            while head.endswith("\ufffd") and not text.startswith(head):
                head = head[:-1]
            while tail.startswith("\ufffd") and not text.endswith(tail):
                tail = tail[1:]
            return head + parts[1] + tail
    total = len(units)
    if total <= budget:
        return text
    room = max(0, budget - size(cut_marker(total, unit)))
    head = room * 2 // 5
    tail = room - head
    tail += size(cut_marker(total, unit)) - size(cut_marker(total - head - tail, unit))  # fewer digits
    return join([units[:head], cut_marker(total - head - tail, unit), units[total - tail:] if tail else units[:0]])


def _header(name: str, *notes: str) -> str:
    """``[name]``, or ``[name: note; note]`` for the notes that are not empty."""
    notes = tuple(n for n in notes if n)
    return f"[{name}: {'; '.join(notes)}]" if notes else f"[{name}]"


def _kept(text: str, truncated: bool) -> str:
    """The sandbox-cut note of a stream (its size in bytes), or ``""`` when it was not cut."""
    return SANDBOX_KEPT.format(size=text_bytes(text)) if truncated else ""


def _tail(text: str, keep: int, name: str, cut: str = "") -> str:
    """``[name]`` + text, or ``[name: last K of N characters]`` + its last ``keep`` characters
    (``cut``: the sandbox's note, added to the header)."""
    if len(text) <= keep:
        return f"{_header(name, cut)}\n{text}"
    return f"{_header(name, f'last {keep} of {len(text)} characters', cut)}\n{text[len(text) - keep:]}"


def _traceback(error: dict[str, Any], frames: int, cut: str = "") -> str:
    """The last ``frames`` frames and the final ``Type: message`` line, ANSI colours removed."""
    entries = [_ANSI.sub("", e).rstrip("\n") for e in error.get("traceback") or []]
    last = f"{error.get('ename', '')}: {error.get('evalue', '')}".rstrip(": ")
    if not entries or not entries[-1].startswith(str(error.get("ename", ""))):
        entries.append(last)
    # IPython: [rule, "Type  Traceback (most recent call last)", frame..., "Type: message"]
    body = entries[2:-1] if len(entries) >= 3 and "Traceback" in entries[1] else entries[:-1]
    if len(body) <= frames:
        return _header("traceback", cut) + "\n" + "\n".join(body + entries[-1:])
    return (_header("traceback", f"last {frames} of {len(body)} frames", cut) + "\n"
            + "\n".join(body[len(body) - frames:] + entries[-1:]))


def _value(display: list[dict[str, Any]], cut: str = "") -> str:
    out = []
    for bundle in display:
        text = bundle.get("text/plain")
        out.append(text if text is not None else f"[display: {', '.join(sorted(bundle)) or 'empty'}]")
    return _header("value", cut) + "\n" + "\n".join(out) if out else ""


def _status(r: SessionRunResult, timeout: float, memory_MB: Optional[int]) -> str:
    memory = memory_MB if memory_MB is not None else "the sandbox's default"
    ename = (r.error or {}).get("ename")
    if r.timed_out:
        return (STATUS_TIMEOUT_KEPT if r.state == "kept" else STATUS_TIMEOUT_LOST).format(timeout=timeout)
    if r.memory_exceeded:
        return (STATUS_MEMORY_LOST if ename in ("MemoryLimitExceeded", "KernelDied")
                else STATUS_MEMORY_KEPT).format(memory_MB=memory)
    if ename == "KernelDied":
        evalue = str((r.error or {}).get("evalue", ""))
        code = re.search(r"exit code (-?\d+|None)", evalue)
        return STATUS_KILLED.format(detail=f"exit code {code.group(1)}" if code else evalue or "unknown cause")
    if r.error is not None:
        return STATUS_ERROR.format(ename=ename)
    if not (r.stdout or r.stderr or r.display):
        return STATUS_OK_EMPTY
    return STATUS_OK


def format_cell(r: SessionRunResult, *, timeout: float, memory_MB: Optional[int], notes: list[str],
                stderr_tail: int, traceback_frames: int) -> str:
    """The observation of one cell (before the budget), in the module's format.

    Args:
        r: the cell's result.
        timeout: the cell's time limit in seconds (quoted by the timeout lines).
        memory_MB: the session's memory limit in MiB (quoted by the memory lines; ``None``: default).
        notes: note lines (``NOTE_RESET``, ``NOTE_LOST``) to print under the status line.
        stderr_tail: characters of stderr kept (its end).
        traceback_frames: frames of a traceback kept (the last ones).
    """
    parts = [_status(r, timeout, memory_MB), *notes]
    if r.stdout:
        parts.append(_header("stdout", _kept(r.stdout, r.stdout_truncated)) + "\n" + r.stdout.rstrip("\n"))
    if r.stderr:
        parts.append(_tail(r.stderr.rstrip("\n"), stderr_tail, "stderr", _kept(r.stderr, r.stderr_truncated)))
    if r.error is not None and r.error.get("traceback"):
        parts.append(_traceback(r.error, traceback_frames, SANDBOX_CUT if r.error_truncated else ""))
    value = _value(r.display, SANDBOX_CUT if r.display_truncated else "")
    if value:
        parts.append(value)
    return "\n".join(parts)


def format_program(resp: RunCodeResponse, *, timeout: float, stderr_tail: int) -> str:
    """The observation of one stateless program (another language through ``run_code``).

    Same sections as :func:`format_cell` (``[stdout]``, ``[stderr]``); the compiler's output is the
    stderr of a failed compilation.
    """
    compiled = resp.compile_result
    run = resp.run_result
    shown = run
    if compiled is not None and (compiled.status != "Finished" or compiled.return_code != 0):
        shown = compiled
        stdout, stderr = compiled.stdout or "", compiled.stderr or ""
        status = STATUS_PROGRAM_TIMEOUT.format(timeout=timeout) if compiled.status == "TimeLimitExceeded" \
            else STATUS_COMPILE
    else:
        stdout, stderr = (run.stdout or "", run.stderr or "") if run else ("", resp.message)
        if run is not None and run.status == "TimeLimitExceeded":
            status = STATUS_PROGRAM_TIMEOUT.format(timeout=timeout)
        elif run is not None and run.memory_exceeded:
            status = STATUS_PROGRAM_MEMORY
        elif run is not None and run.return_code not in (0, None):
            status = STATUS_EXIT.format(code=run.return_code)
        else:
            status = STATUS_OK if stdout or stderr else STATUS_PROGRAM_OK_EMPTY
    parts = [status]
    out_cut, err_cut = (shown.stdout_truncated, shown.stderr_truncated) if shown else (False, False)
    if stdout:
        parts.append(_header("stdout", _kept(stdout, out_cut)) + "\n" + stdout.rstrip("\n"))
    if stderr:
        parts.append(_tail(stderr.rstrip("\n"), stderr_tail, "stderr", _kept(stderr, err_cut)))
    return "\n".join(parts)
