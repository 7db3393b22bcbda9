"""``checker``: a problem-specific Python checker program, run in the sandbox.

The program defines ``check(input: str, output: str, expected: str) -> bool`` (the test's stdin, the
candidate's stdout, the reference output). All cases of a submission are checked in one
``/run_tests`` call (one fresh process per case).

Who is at fault when the checker fails (testlib's convention, BUG-053): a checker that raises,
returns a non-bool or does not finish on the *contestant's* output has rejected that output
(``wrong_answer``: garbage output is never rewarded). Only a checker that fails on the *jury's* own
answer (``check(input, expected, expected)`` raises or is not ``True``) is a test-data error
(reward ``None``); the judge checks that once per problem (:data:`JURY_CHECKED` remembers it).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections import OrderedDict
from typing import Optional

from judgebox.reward.harness.protocol import marker
from judgebox.reward.harness.python import runner_request
from judgebox.sandbox.client.client import SandboxClient
from judgebox.sandbox.models import CommandRunStatus, RunTestsRequest, RunTestsResponse


def checker_request(program: str, triples: list[tuple[str, str, str]], nonce: str,
                    timeout: float = 10.0) -> RunTestsRequest:
    """The batch that checks every ``(input, output, expected)`` triple with ``program`` (seconds)."""
    tasks = [{"mode": "checker", "input": i, "output": o, "expected": e} for i, o, e in triples]
    return runner_request(program, tasks, nonce, run_timeout=timeout, memory_limit_MB=1024)


def checker_verdicts(resp: RunTestsResponse, nonce: str) -> list[Optional[bool]]:
    """Each case's ``check`` result, or ``None`` when the checker failed on that case."""
    return [value for value, _ in checker_outcomes(resp, nonce)]


def checker_outcomes(resp: RunTestsResponse, nonce: str) -> list[tuple[Optional[bool], str]]:
    """Each case's ``(check result or None when the checker failed, why it failed)``."""

    out: list[tuple[Optional[bool], str]] = []
    for run in resp.run_results:
        m = marker(run.stdout if run else None, nonce)
        ok = run is not None and run.return_code == 0 and m is not None and m.get("status") == "ok"
        if ok and isinstance(m.get("value"), bool):
            out.append((m["value"], ""))
            continue
        if run is None:
            why = "did not run"
        elif run.status != CommandRunStatus.Finished:
            why = f"the checker did not finish ({run.status.value})"
        else:
            why = str((m or {}).get("error") or (run.stderr or "")[-500:] or "no result")
        out.append((None, why))
    return out


def problem_key(program: str, pairs: list[tuple[str, str]]) -> str:
    """A digest of a checker program and its ``(input, expected)`` pairs: one problem's identity."""
    h = hashlib.sha256(program.encode())
    for stdin, expected in pairs:
        h.update(b"\0" + stdin.encode() + b"\1" + expected.encode())
    return h.hexdigest()


class _JuryChecked:
    """Problem key -> ``""`` (the checker accepts every jury answer) or why it does not; the last
    4096 problems, thread-safe."""

    def __init__(self) -> None:
        self._seen: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Optional[str]:
        with self._lock:
            return self._seen.get(key)

    def remember(self, key: str, problem: str) -> None:
        with self._lock:
            self._seen[key] = problem
            self._seen.move_to_end(key)
            while len(self._seen) > 4096:
                self._seen.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


#: The problems whose checker was already run on the jury's answers, and the outcome.
JURY_CHECKED = _JuryChecked()


def check(output: str, expected: str, *, program: str, stdin: str = "",
          client: Optional[SandboxClient] = None, timeout: float = 10.0, **options: object) -> bool:
    """Run ``program``'s ``check(stdin, output, expected)`` in the sandbox for one output.

    Raises:
        ValueError: the checker failed (raised, returned a non-bool, or timed out).
        judgebox.sandbox.errors.SandboxInfraError: the sandbox could not run it.
    """
    nonce = secrets.token_hex(16)
    resp = (client or SandboxClient()).run_tests(checker_request(program, [(stdin, output, expected)], nonce, timeout))
    verdict = checker_verdicts(resp, nonce)[0]
    if verdict is None:
        raise ValueError(f"checker_program failed: {json.dumps(resp.model_dump(), default=str)[:500]}")
    return verdict
