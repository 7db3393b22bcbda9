"""``checker``: a problem-specific Python checker program, run in the sandbox.

The program defines ``check(input: str, output: str, expected: str) -> bool`` (the test's stdin, the
candidate's stdout, the reference output). All cases of a submission are checked in one
``/run_tests`` call (one fresh process per case). A checker that raises, returns a non-bool or does
not finish is a test-data error (reward ``None``), never a pass.
"""

from __future__ import annotations

import json
import secrets
from typing import Optional

from sandbox.client import SandboxClient
from sandbox.models import RunTestsRequest, RunTestsResponse

from ..harness.python import runner_request


def checker_request(program: str, triples: list[tuple[str, str, str]], nonce: str,
                    timeout: float = 10.0) -> RunTestsRequest:
    """The batch that checks every ``(input, output, expected)`` triple with ``program`` (seconds)."""
    tasks = [{"mode": "checker", "input": i, "output": o, "expected": e} for i, o, e in triples]
    return runner_request(program, tasks, nonce, run_timeout=timeout, memory_limit_MB=1024)


def checker_verdicts(resp: RunTestsResponse, nonce: str) -> list[Optional[bool]]:
    """Each case's ``check`` result, or ``None`` when the checker failed on that case."""
    from ..judge import marker

    out: list[Optional[bool]] = []
    for run in resp.run_results:
        m = marker(run.stdout if run else None, nonce)
        ok = run is not None and run.return_code == 0 and m is not None and m.get("status") == "ok"
        out.append(m["value"] if ok and isinstance(m.get("value"), bool) else None)
    return out


def check(output: str, expected: str, *, program: str, stdin: str = "",
          client: Optional[SandboxClient] = None, timeout: float = 10.0, **options: object) -> bool:
    """Run ``program``'s ``check(stdin, output, expected)`` in the sandbox for one output.

    Raises:
        ValueError: the checker failed (raised, returned a non-bool, or timed out).
        sandbox.errors.SandboxInfraError: the sandbox could not run it.
    """
    nonce = secrets.token_hex(16)
    resp = (client or SandboxClient()).run_tests(checker_request(program, [(stdin, output, expected)], nonce, timeout))
    verdict = checker_verdicts(resp, nonce)[0]
    if verdict is None:
        raise ValueError(f"checker_program failed: {json.dumps(resp.model_dump(), default=str)[:500]}")
    return verdict
