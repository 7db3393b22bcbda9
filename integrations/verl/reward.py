"""verl integration: ``check_correctness`` (drop-in for ``verl.utils.reward_score.sandbox_fusion.utils``)
and ``compute_score`` (a ``custom_reward_function``).

Differences from verl's implementation, on purpose: all tests run as one sandbox batch (one compile);
a compile error is one verdict, not spread case by case; a raising function fails; empty, undecodable
or mismatched test data is ``-1`` (never a vacuous pass); outputs are compared with the ``lines``
checker (CRLF and trailing whitespace tolerant, line counts must match) instead of ``rstrip("\\n")``.
"""

from __future__ import annotations

import threading
from typing import Any, Optional, Union

# Absolute imports: verl loads this file by path (``custom_reward_function.path``), outside the package.
from judgebox.reward.judge import judge
from judgebox.reward.score import (  # noqa: F401  (verl's entry points)
    SCORE_KEYS,
    client_for,
    compute_score,
    compute_score_batch,
)
from judgebox.reward.spec import TestDataError, TestSpec
from judgebox.reward.verdict import Judgement, TestResult, Verdict
from judgebox.sandbox.errors import SandboxUnavailable
from judgebox.sandbox.languages import RECIPES

#: verl's result codes: True pass, False wrong answer, -1 sandbox/API error, -2 runtime error,
#: -3 timeout, -4 compile error.
RESULT_CODES: dict[Verdict, Union[bool, int]] = {
    Verdict.accepted: True, Verdict.wrong_answer: False, Verdict.skipped: False,
    Verdict.runtime_error: -2, Verdict.memory_limit_exceeded: -2, Verdict.time_limit_exceeded: -3,
    Verdict.compile_error: -4, Verdict.infra_error: -1, Verdict.test_data_error: -1,
}
_STATUS = {
    Verdict.accepted: "success", Verdict.wrong_answer: "wrong_answer", Verdict.skipped: "skipped",
    Verdict.runtime_error: "runtime_error", Verdict.memory_limit_exceeded: "runtime_error",
    Verdict.time_limit_exceeded: "timeout", Verdict.compile_error: "compile_error",
    Verdict.infra_error: "api_error", Verdict.test_data_error: "test_data_error",
}


def result_code(verdict: Verdict, language: str) -> Union[bool, int]:
    """verl's code for ``verdict`` in ``language``: as verl reads a SandboxFusion response.

    judgebox tells a program that cannot start (a Python ``SyntaxError``, a Node.js parse error) as
    ``compile_error`` in every language; SandboxFusion compiles only languages with a compile step,
    so for an interpreted language verl sees a failed run and answers ``-2``, and so does this.
    """
    if verdict == Verdict.compile_error and (language not in RECIPES or RECIPES[language].compile is None):
        return -2
    return RESULT_CODES[verdict]

def check_correctness(sandbox_fusion_url: Optional[str], in_outs: Optional[dict], generation: str,
                      timeout: int = 10, memory_limit_mb: int = 1024, language: str = "python",
                      concurrent_semaphore: Optional[threading.Semaphore] = None
                      ) -> tuple[list[Union[bool, int]], list[dict[str, Any]]]:
    """verl-compatible correctness check of ``generation`` (code, not a raw completion).

    Args:
        sandbox_fusion_url: sandbox URL (``http://host:8080/run_code`` or the base URL; ``None`` =
            embedded sandbox).
        in_outs: ``{"inputs": [...], "outputs": [...]}`` (+ ``fn_name`` for call tests, or
            ``assert_case``), see :meth:`TestSpec.from_in_outs`.
        generation: the program text.
        timeout: seconds per test case (compile and run); memory_limit_mb: MiB per case.
        language: sandbox language name.
        concurrent_semaphore: if given, held while this submission runs in the sandbox.

    Returns:
        ``(results, metadata_list)``, one entry per test: ``True``, ``False``, ``-1`` (sandbox or
        test-data error), ``-2`` (runtime error or memory; a program of an interpreted language that
        cannot start, e.g. a Python ``SyntaxError``, as verl reads SandboxFusion), ``-3`` (timeout),
        ``-4`` (compile error of a compiled language). Metadata has verl's keys (``case_index``, ``input``, ``expected_output``,
        ``api_request_error``, ``api_response``, ``status``, ``stdout``, ``stderr``, ``exit_code``,
        ``duration``, ``compile_duration``, ``compile_stderr``, ``api_status``, ``compile_status``,
        ``run_status``) plus ``verdict``. Bad test data gives ``[-1]`` (one per input if any) with
        ``{"error": ...}`` metadata: never an empty, vacuously passing list.
    """
    try:
        spec = TestSpec.from_in_outs(in_outs, language=language, run_timeout=timeout, memory_limit_MB=memory_limit_mb)
    except TestDataError as exc:
        n = len(in_outs.get("inputs") or []) if isinstance(in_outs, dict) and isinstance(in_outs.get("inputs"), list) else 0
        return [-1] * max(n, 1), [{"error": str(exc), "case_index": i, "status": "test_data_error"} for i in range(max(n, 1))]
    try:
        client = client_for(sandbox_fusion_url)
    except SandboxUnavailable as exc:  # a dead URL: -1 (sandbox error) per test, told in seconds
        return _verl_results(spec, Judgement(verdict=Verdict.infra_error, n_total=spec.n_tests, message=str(exc)),
                             language)
    if concurrent_semaphore is not None:
        with concurrent_semaphore:
            j = judge(spec, generation, client=client)
    else:
        j = judge(spec, generation, client=client)
    return _verl_results(spec, j, language)


def _verl_results(spec: TestSpec, j: Judgement, language: str) -> tuple[list[Union[bool, int]], list[dict[str, Any]]]:
    n = spec.n_tests
    tests = j.tests if len(j.tests) == n else [TestResult(index=i, verdict=j.verdict) for i in range(n)]
    results, meta = [], []
    for t in tests:
        verdict = t.verdict
        code = result_code(verdict, language)
        results.append(code)
        interpreted = verdict == Verdict.compile_error and code == -2
        inp, exp = _case_text(spec, t.index)
        ran = verdict not in (Verdict.skipped, Verdict.compile_error, Verdict.infra_error, Verdict.test_data_error)
        meta.append({
            "case_index": t.index, "input": inp, "expected_output": exp,
            "api_request_error": j.message if verdict == Verdict.infra_error else None,
            "api_response": None, "status": "runtime_error" if interpreted else _STATUS[verdict],
            "stdout": t.stdout if ran else None,
            "stderr": t.stderr if ran else (t.stderr or j.message) if interpreted else None,
            "exit_code": t.return_code, "duration": t.execution_time, "compile_duration": None,
            "compile_stderr": j.message if verdict == Verdict.compile_error and not interpreted else None,
            "api_status": ("SandboxError" if verdict == Verdict.infra_error else
                           "Success" if verdict in (Verdict.accepted, Verdict.wrong_answer) else "Failed"),
            "compile_status": "Finished" if verdict != Verdict.compile_error or interpreted else "Error",
            "run_status": ("TimeLimitExceeded" if verdict == Verdict.time_limit_exceeded else
                           "Finished" if ran or interpreted else None),
            "verdict": verdict.value, "error": j.message if verdict == Verdict.test_data_error else None,
        })
    return results, meta


def _case_text(spec: TestSpec, i: int) -> tuple[Optional[str], Optional[str]]:
    if spec.kind == "stdio" and i < len(spec.stdio):
        return spec.stdio[i].stdin, spec.stdio[i].expected
    if spec.kind == "call" and i < len(spec.calls):
        return repr(spec.calls[i].args), repr(spec.calls[i].expected)
    if spec.kind == "assert" and i < len(spec.asserts):
        return None, spec.asserts[i]
    return None, None
