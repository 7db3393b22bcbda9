"""The judge: one submission against one :class:`~judgebox.reward.spec.TestSpec`, one sandbox call, an honest verdict.

Rules (each pinned by a test in ``tests/reward``):

- every test counts (none dropped or sampled, BUG-021); a test that did not run did not pass;
- no tests, undecodable or inconsistent data -> ``test_data_error`` (reward ``None``, BUG-005/016);
- the sandbox could not answer (after the client's retries) -> ``infra_error`` (reward ``None``,
  BUG-007), never a wrong answer; so is a sandbox that lacks a library the spec's ``prelude``
  (the official harness's imports) needs (:mod:`judgebox.reward.libraries`, the solution not run);
- exit status 0 alone never passes a harness test: the run must also print the per-run nonce
  marker after its test (BUG-027); call results are compared on the host as JSON values (a lying
  ``__eq__`` cannot pass, tuple -> list, BUG-017/010); a raising function is a runtime error
  (BUG-016);
- stdio outputs are compared with the spec's checker (:mod:`judgebox.reward.checkers`, default ``lines``);
  a stdout cut at the sandbox output limit is a wrong answer when the expected output is shorter
  than what came back, else ``test_data_error`` (the limit, ``JUDGEBOX_OUTPUT_LIMIT_BYTES``, is too
  small for the problem).

``judge`` and ``ajudge`` share one implementation (:class:`_Judging`); only the sandbox call differs.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
import re
import secrets
import threading
from typing import Any, Awaitable, Callable, Optional, Sequence

from pydantic import ValidationError

from judgebox.sandbox.batch import error_of
from judgebox.sandbox.client.client import SandboxClient
from judgebox.sandbox.errors import SandboxInfraError, SandboxRequestError
from judgebox.sandbox.models import (
    BatchItemError,
    CommandRunResult,
    CommandRunStatus,
    RunStatus,
    RunTestsRequest,
    RunTestsResponse,
)

from .checkers import get_checker
from .checkers.checker import JURY_CHECKED, checker_outcomes, checker_request, problem_key
from .checkers.float import EPS, values_close
from .harness import build_plan, forgeable, sandbox_language
from .harness.protocol import marker, out_of_time, test_lines, without_protocol
from .libraries import missing_message, spec_missing_libraries
from .spec import TestDataError, TestSpec
from .tamper import TamperSignal, scan, signal_kinds
from .verdict import Judgement, TestResult, Verdict

_SYNTAX = re.compile(r"^(SyntaxError|IndentationError|TabError)\b", re.M)
_HEAD = 2000

logger = logging.getLogger("judgebox.reward")

_default_client: Optional[SandboxClient] = None
_client_lock = threading.Lock()


def default_client() -> SandboxClient:
    """The process-wide :class:`~judgebox.sandbox.client.client.SandboxClient` (from the environment; embedded if none)."""
    global _default_client
    with _client_lock:
        if _default_client is None:
            _default_client = SandboxClient()
        return _default_client


@functools.lru_cache(maxsize=4096)
def warn_once(message: str) -> None:
    """Log ``message`` as a warning on the ``judgebox.reward`` logger, once per distinct message
    (the last 4096 distinct messages are remembered)."""
    logger.warning(message)


def warn_unknown(where: str, j: Judgement) -> None:
    """Warn (:func:`warn_once`) why a verdict carries no reward: ``where`` names the scorer;
    nothing is logged unless ``j.verdict`` is ``test_data_error`` or ``infra_error``."""
    if j.verdict in (Verdict.test_data_error, Verdict.infra_error):
        warn_once(f"{where}: {j.verdict.value}, reward masked: {j.message or 'no detail'}")


def judge(spec: TestSpec, code: str, *, client: Optional[SandboxClient] = None,
          stop_on_first_failure: bool = False, on_tamper: Optional[str] = None,
          total_timeout: Optional[float] = None) -> Judgement:
    """Judge ``code`` against ``spec`` with one ``client.run_tests`` call (two with a checker program).

    Args:
        spec: the problem's tests; ``spec.prefix`` is prepended to ``code``.
        code: the candidate source (already extracted from the completion, see
            :func:`judgebox.reward.extract.extract_code`).
        client: the sandbox client (default: :func:`default_client`).
        stop_on_first_failure: skip the remaining tests after the first failure; skipped tests count
            as not passed (use for binary rewards; the pass rate is then a lower bound).
        on_tamper: ``"report"`` (tamper signals beside the verdict) or ``"reject"`` (a sample with
            any signal is ``wrong_answer``, not run); ``None``: ``spec.on_tamper``
            (:mod:`judgebox.reward.tamper`).
        total_timeout: seconds the sandbox may spend running the tests, all together (the request's
            ``total_timeout``): past it the tests not run are ``time_limit_exceeded``, so a slow
            program is a timeout, never a call that outlived its caller's deadline (``None``: the
            server's ``max_request_seconds``).

    Returns:
        a :class:`~judgebox.reward.verdict.Judgement` with its ``tamper_signals`` and ``forgeable``; never
        raises for bad test data (``test_data_error``) or an unreachable sandbox (``infra_error``).

    Raises:
        ValueError: ``on_tamper`` is not ``"report"``, ``"reject"`` or ``None``.
    """
    client = client or default_client()
    job = _Judging(spec, code, stop_on_first_failure, on_tamper, total_timeout)
    missing = spec_missing_libraries(client, sandbox_language(spec), spec.prelude, spec.libraries)
    if missing:
        return job.missing(missing)
    return job.run(client.run_tests)


def judge_batch(specs: Sequence[TestSpec], codes: Sequence[str], *, client: Optional[SandboxClient] = None,
                stop_on_first_failure: bool = False, on_tamper: Optional[str] = None,
                total_timeout: Optional[float] = None) -> list[Judgement]:
    """Judge ``codes[i]`` against ``specs[i]`` for every ``i`` with one
    :meth:`~judgebox.sandbox.client.client.SandboxClient.run_tests_batch` call per round (a second
    round only for the submissions whose checker program must run): over HTTP that is one
    ``POST /run_tests_batch`` per chunk of ``batch_max_items``; embedded, the engine runs them at once.

    Args:
        specs, codes: equal-length sequences; the arguments of :func:`judge` for each submission.
        client: the sandbox client (default: :func:`default_client`).
        stop_on_first_failure, on_tamper, total_timeout: as for :func:`judge` (``total_timeout``
            for each submission's tests).

    Returns:
        one :class:`~judgebox.reward.verdict.Judgement` per code, in order: the verdict :func:`judge`
        gives it. An item the sandbox could not answer (its ``BatchItemError``) is ``infra_error``,
        one it rejected is ``test_data_error``, as when :func:`judge`'s call raises.

    Raises:
        ValueError: ``specs`` and ``codes`` differ in length, or ``on_tamper`` is not a known value.
    """
    if len(specs) != len(codes):
        raise ValueError(f"specs/codes: {len(specs)} specs for {len(codes)} codes; pass one spec per code")
    client = client or default_client()
    jobs = [_Judging(spec, code, stop_on_first_failure, on_tamper, total_timeout) for spec, code in zip(specs, codes)]
    steps: list[Any] = []
    for spec, job in zip(specs, jobs):
        missing = spec_missing_libraries(client, sandbox_language(spec), spec.prelude, spec.libraries)
        steps.append(job.missing(missing) if missing else job.start())
    while True:
        pending = [i for i, step in enumerate(steps) if isinstance(step, RunTestsRequest)]
        if not pending:
            return steps
        try:
            answers: list[Any] = client.run_tests_batch([steps[i] for i in pending])
        except (SandboxInfraError, SandboxRequestError) as exc:  # e.g. a closed client: as judge's call raising
            answers = [exc] * len(pending)
        for i, answer in zip(pending, answers):
            failure = error_of(answer) if isinstance(answer, BatchItemError) else answer
            if isinstance(failure, (SandboxInfraError, SandboxRequestError)):
                steps[i] = jobs[i].failed(failure)
            else:
                steps[i] = jobs[i].feed(answer)


async def ajudge(spec: TestSpec, code: str, *, client: Optional[SandboxClient] = None,
                 stop_on_first_failure: bool = False, on_tamper: Optional[str] = None,
                 total_timeout: Optional[float] = None) -> Judgement:
    """Async :func:`judge` (same arguments, result and errors); the sandbox call is awaited."""
    client = client or default_client()
    job = _Judging(spec, code, stop_on_first_failure, on_tamper, total_timeout)
    missing = (await asyncio.to_thread(spec_missing_libraries, client, sandbox_language(spec), spec.prelude,
                                       spec.libraries)
               if spec.prelude or spec.libraries else [])  # no thread hop for the common plain spec
    if missing:
        return job.missing(missing)
    return await job.arun(client.arun_tests)


ON_TAMPER = ("report", "reject")


def tamper_signals(spec: TestSpec, code: str) -> list[TamperSignal]:
    """The tamper signals of ``code`` against ``spec``: its scan (:func:`judgebox.reward.tamper.scan`) in
    the spec's sandbox language; none for ``stdio`` problems, whose output is judged on the host."""
    return [] if spec.kind == "stdio" else scan(code, sandbox_language(spec))


class _Judging:
    """The state of judging one submission: plan, sandbox responses, per-test results."""

    def __init__(self, spec: TestSpec, code: str, stop: bool, on_tamper: Optional[str] = None,
                 total_timeout: Optional[float] = None) -> None:
        if on_tamper not in (None, *ON_TAMPER):
            raise ValueError(f"on_tamper: {on_tamper!r} is not one of {', '.join(ON_TAMPER)} (or None: the spec's)")
        self.spec, self.code, self.stop, self.total_timeout = spec, code, stop, total_timeout
        self.reject = (on_tamper or spec.on_tamper) == "reject"
        self.signals = tamper_signals(spec, code)
        self.forgeable = forgeable(spec)
        self.nonce: Optional[str] = None
        self.batched = False
        self.isolation: Optional[str] = None
        self.checker_nonce = secrets.token_hex(16)
        self.results: Optional[list[TestResult]] = None
        self.pending: list[TestResult] = []
        self.jury_key: Optional[str] = None  # set while the checker is also run on the jury's answers
        self._stdout: dict[int, str] = {}
        #: a unittest harness's test methods: (passed, ran and not skipped by the tests themselves)
        self.methods: Optional[tuple[int, int]] = None
        self.out_of_time = False  # the sandbox's max_request_seconds ran out: a test not run is a timeout
        self._earlier: list[Optional[CommandRunResult]] = []  # what each case sent, for outputs the budget cut

    # the two faces ------------------------------------------------------------------------------
    def run(self, call: Callable[[RunTestsRequest], RunTestsResponse]) -> Judgement:
        step = self.start()
        while isinstance(step, RunTestsRequest):
            try:
                step = self.feed(call(step))
            except (SandboxInfraError, SandboxRequestError) as exc:
                step = self.failed(exc)
        return step

    async def arun(self, call: Callable[[RunTestsRequest], Awaitable[RunTestsResponse]]) -> Judgement:
        step = self.start()
        while isinstance(step, RunTestsRequest):
            try:
                step = self.feed(await call(step))
            except (SandboxInfraError, SandboxRequestError) as exc:
                step = self.failed(exc)
        return step

    # shared steps ---------------------------------------------------------------------------------
    def start(self) -> "RunTestsRequest | Judgement":
        try:
            self.spec.check_data()
            plan = build_plan(self.spec, self.code, stop_on_first_failure=self.stop, total_timeout=self.total_timeout)
        except TestDataError as exc:
            return self.whole(Verdict.test_data_error, str(exc))
        except ValidationError as exc:  # e.g. a language name the sandbox API does not know
            return self.whole(Verdict.test_data_error, f"the sandbox request is invalid: {exc}")
        self.nonce = plan.nonce
        self.batched = plan.batched
        self.isolation = plan.isolation
        if self.reject and self.signals:
            return self.whole(Verdict.wrong_answer, f"rejected without running for its tamper signals "
                              f"({signal_kinds(self.signals)}; on_tamper='reject'): "
                              + "; ".join(f"line {s.line}: {s.evidence}" for s in self.signals[:5]), rejected=True)
        return plan.request

    def failed(self, exc: Exception) -> Judgement:
        if isinstance(exc, SandboxRequestError):
            return self.whole(Verdict.test_data_error, f"the sandbox rejected the request: {exc}")
        return self.whole(Verdict.infra_error, f"sandbox unavailable: {exc}")

    def whole(self, verdict: Verdict, message: str, rejected: bool = False) -> Judgement:
        return self.judgement(verdict=verdict, n_total=self.spec.n_tests, message=message, tamper_rejected=rejected)

    def missing(self, libraries: list[str]) -> Judgement:
        """``infra_error``: the sandbox lacks ``libraries`` that the spec's harness provides (not run)."""
        return self.whole(Verdict.infra_error, missing_message("the", sandbox_language(self.spec), libraries,
                                                               None if self.spec.libraries else "default"))

    def judgement(self, **fields: Any) -> Judgement:
        """A :class:`Judgement` of ``fields`` with this sample's tamper signals and ``forgeable``."""
        return Judgement(tamper_signals=self.signals, forgeable=self.forgeable, **fields)

    def feed(self, resp: RunTestsResponse) -> "RunTestsRequest | Judgement":
        if self.results is not None:  # the checker program's answers
            return self.apply_checker(resp)
        cases = 1 if self.batched else self.spec.n_tests
        self.out_of_time = resp.request_time_exceeded
        if resp.status == RunStatus.SandboxError or len(resp.run_results) != cases:
            return self.whole(Verdict.infra_error, resp.message or
                              f"sandbox returned {len(resp.run_results)} results for {self.spec.n_tests} tests")
        compiled = _compile_verdict(resp.compile_result)
        if compiled is not None:
            verdict, msg = compiled
            self.results = [TestResult(index=i, verdict=verdict) for i in range(self.spec.n_tests)]
            return self.summary(msg)
        tests_compiled = _compile_verdict(resp.tests_compile_result)
        if tests_compiled is not None:  # the tests' own program (a split harness): never the solution's fault
            verdict, msg = tests_compiled
            return self.whole(Verdict.infra_error if verdict == Verdict.infra_error else Verdict.test_data_error,
                              "the tests' program does not compile: " + msg)
        if self.batched:
            self.results = self.unbatch(resp.run_results[0])
            return self.summary()
        self._earlier = list(resp.run_results)
        self.results = [self.one(i, run) for i, run in enumerate(resp.run_results)]
        pending = [r for r in self.results if r.verdict == Verdict.accepted and self.needs_program_checker]
        if pending:
            program, cases = self.spec.checker_program or "", self.spec.stdio
            triples = [(cases[r.index].stdin, self._stdout[r.index], cases[r.index].expected) for r in pending]
            self.pending = pending
            key = problem_key(program, [(c.stdin, c.expected) for c in cases])
            known = JURY_CHECKED.get(key)
            if known:
                return self.whole(Verdict.test_data_error, known)
            if known is None:  # first submission of this problem: check the jury's answers too
                self.jury_key = key
                triples += [(c.stdin, c.expected, c.expected) for c in cases]
            return checker_request(program, triples, self.checker_nonce, self.spec.run_timeout)
        return self.summary()

    @property
    def needs_program_checker(self) -> bool:
        return self.spec.kind == "stdio" and self.spec.checker == "checker"

    def apply_checker(self, resp: RunTestsResponse) -> Judgement:
        """Checker results: the contestant's outputs, then (first submission only) the jury's answers.

        A checker failing on the jury's answer is ``test_data_error`` (remembered for the problem);
        failing on the contestant's output (raised, non-bool, no finish) is ``wrong_answer``.
        """
        want = len(self.pending) + (len(self.spec.stdio) if self.jury_key else 0)
        runs = resp.run_results
        if len(runs) != want or any(r is not None and r.status == CommandRunStatus.Error for r in runs):
            return self.whole(Verdict.infra_error, resp.message or "the checker program could not be run")
        outcomes = checker_outcomes(resp, self.checker_nonce)
        if self.jury_key:
            jury = outcomes[len(self.pending):]
            bad = next((i for i, (ok, _) in enumerate(jury) if ok is not True), None)
            problem = "" if bad is None else (
                f"checker_program rejects the jury's answer of stdio[{bad}] (check(input, expected, expected) "
                f"{'returned False' if jury[bad][0] is False else 'failed: ' + jury[bad][1]})")
            JURY_CHECKED.remember(self.jury_key, problem)
            if problem:
                return self.whole(Verdict.test_data_error, problem)
        for r, (ok, why) in zip(self.pending, outcomes):
            r.verdict = Verdict.accepted if ok else Verdict.wrong_answer
            if ok is None:
                r.stderr = (r.stderr + f"\n[judgebox] the checker rejected this output: {why}").strip()[-_HEAD:]
        return self.summary()

    def unbatch(self, run: Optional[CommandRunResult]) -> list[TestResult]:
        """Per-test results of one runner process that ran every test (``assert`` kind).

        A test counts as passed only from its own nonce line; the first test without a line gets
        the whole run's verdict (timeout, crash, early exit, ...), the rest are ``skipped``; a test
        that was out of time by the run step's rule (:func:`out_of_time`) is a timeout (the process
        limit is their sum).
        """
        n = self.spec.n_tests
        if run is None:
            return [self.one(i, None) for i in range(n)]
        lines = test_lines(run.stdout, self.nonce or "")
        whole = self.one(0, run)  # the run's own verdict: marker, exit status, limits
        if whole.verdict in (Verdict.compile_error, Verdict.test_data_error, Verdict.infra_error):
            return [whole.model_copy(update={"index": i}) for i in range(n)]
        named = {"ok": Verdict.accepted, "fail": Verdict.wrong_answer, "error": Verdict.runtime_error}
        results, missing = [], False
        for i in range(n):
            line = lines.get(i)
            if line is None:  # did not run: the run's verdict for the first, skipped after it
                ran = not missing and whole.verdict != Verdict.accepted
                missing = True
                if ran and whole.verdict == Verdict.time_limit_exceeded:
                    whole.stderr = (f"{whole.stderr}\n[judgebox] asserts[{i}] was running (the run's limit: "
                                    f"{n} assert{'s' if n != 1 else ''} x run_timeout {self.spec.run_timeout:g} s)")[-_HEAD:]
                results.append(whole.model_copy(update={"index": i}) if ran else
                               TestResult(index=i, verdict=Verdict.skipped))
                continue
            verdict = named.get(line.get("status"), Verdict.runtime_error)
            seconds, cpu = line.get("seconds"), line.get("cpu")
            if verdict == Verdict.accepted and out_of_time(line, self.spec.run_timeout):
                verdict = Verdict.time_limit_exceeded
            error = str(line.get("error") or "")
            if verdict == Verdict.wrong_answer and error.strip() == "AssertionError":  # a bare assert: name it
                error = f"{error}: {self.spec.asserts[i].strip()}"
            results.append(TestResult(index=i, verdict=verdict, execution_time=seconds, cpu_time=cpu,
                                      stderr=error[-_HEAD:]))
        return results

    # one test ---------------------------------------------------------------------------------------
    def one(self, i: int, run: Optional[CommandRunResult]) -> TestResult:
        if run is None:
            return TestResult(index=i, verdict=Verdict.time_limit_exceeded if self.out_of_time else Verdict.skipped)
        res = TestResult(index=i, verdict=Verdict.accepted, execution_time=run.execution_time,
                         cpu_time=run.cpu_time, return_code=run.return_code,
                         stdout=without_protocol(run.stdout, self.nonce)[:_HEAD],
                         stderr=(run.stderr or "")[-_HEAD:])
        res.verdict = self.verdict_of(i, run, res)
        return res

    def verdict_of(self, i: int, run: CommandRunResult, res: TestResult) -> Verdict:
        if run.status == CommandRunStatus.Error:
            return Verdict.infra_error
        if run.status == CommandRunStatus.TimeLimitExceeded:
            res.stderr = (res.stderr + f"\n[judgebox] stopped at the time limit after {run.cpu_time or 0:.2f} s "
                          f"of CPU and {run.execution_time or 0:.2f} s of wall time").strip()[-_HEAD:]
            return Verdict.time_limit_exceeded
        if run.memory_exceeded:
            res.stderr = (res.stderr + f"\n[judgebox] stopped at the memory limit (memory_limit_MB "
                          f"{self.spec.memory_limit_MB})").strip()[-_HEAD:]
            return Verdict.memory_limit_exceeded
        if self.nonce is None:
            return self.stdio_verdict(i, run, res)
        m = marker(run.stdout, self.nonce)
        status = (m or {}).get("status")
        if m and m.get("error"):
            res.stderr = (res.stderr + "\n" + str(m["error"])).strip()[-_HEAD:]
        if m and status in ("ok", "fail", "error") and all(type(m.get(k)) is int for k in ("ran", "skipped", "total")):
            self.methods = (m["ran"], m["total"] - m["skipped"])  # the unittest runner's counts
        named = {"compile_error": Verdict.compile_error, "test_error": Verdict.test_data_error,
                 "fail": Verdict.wrong_answer, "error": Verdict.runtime_error, "skip": Verdict.skipped}
        if self.spec.kind == "call":  # no test code to fail: a "test_error" can only be forged
            named["test_error"] = Verdict.runtime_error
        if status in named:
            return named[status]
        if run.return_code != 0:
            return Verdict.runtime_error
        if status != "ok":
            res.stderr = (res.stderr + "\n[judgebox] exited before the tests completed "
                          "(exit status 0 without the completion marker)").strip()
            return Verdict.runtime_error
        if self.spec.kind == "call":
            return self.call_verdict(i, m.get("value"))
        return Verdict.accepted

    def stdio_verdict(self, i: int, run: CommandRunResult, res: TestResult) -> Verdict:
        if run.return_code != 0:
            stderr = run.stderr or ""
            if sandbox_language(self.spec) == "python" and _SYNTAX.search(stderr) \
                    and "Traceback (most recent call last)" not in stderr:
                return Verdict.compile_error
            return Verdict.runtime_error
        case = self.spec.stdio[i]
        out = run.stdout or ""
        if self.spec.output_file:
            written = run.files.get(self.spec.output_file)
            if written is None:
                res.stderr = (res.stderr + f"\n[judgebox] the program did not write the output file "
                              f"{self.spec.output_file!r} (or wrote more than the sandbox returns)").strip()
                return Verdict.wrong_answer
            out = base64.b64decode(written).decode("utf-8", "replace")
        elif run.stdout_truncated and run.output_budget_exhausted and self.flooded_before(i):
            res.stderr = (res.stderr + "\n[judgebox] output limit exceeded: the program's output of the earlier "
                          "cases used up the response's budget (response_limit_bytes), so this case's output was "
                          "cut").strip()
            return Verdict.wrong_answer
        elif run.stdout_truncated:
            return self.truncated_verdict(out, case.expected, res)
        if self.needs_program_checker:
            self._stdout[i] = out
            return Verdict.accepted  # provisional: the checker program decides
        if get_checker(self.spec.checker)(out, case.expected):
            return Verdict.accepted
        res.needs_checker = self.spec.multiple_answers
        return Verdict.wrong_answer

    def flooded_before(self, i: int) -> bool:
        """Whether the program's output of the cases before ``i`` (stdout and stderr as they came back)
        was larger than those cases' expected outputs: then the response's shared output budget, which
        ran out at case ``i``, was used up by the program, not by the test data (whose outputs would
        need a larger ``response_limit_bytes``: :meth:`truncated_verdict` says so)."""
        runs = self._earlier[:i]
        sent = sum(len((r.stdout or "").encode()) + len((r.stderr or "").encode()) for r in runs if r is not None)
        return sent > sum(len(c.expected.encode()) for c in self.spec.stdio[:i])

    def truncated_verdict(self, out: str, expected: str, res: TestResult) -> Verdict:
        """The verdict of a stdout cut at the sandbox output limit (``out`` came back, ``expected`` is
        the case's): the program printed more than ``out``, so a shorter expected output is a wrong
        answer, and so is one whose tokens already differ from the cut output's complete tokens under
        a text checker (``exact``, ``lines``, ``tokens``: equal outputs have equal tokens); otherwise it
        cannot be compared (test_data_error)."""
        got, want = len(out.encode()), len(expected.encode())
        if want < got:
            res.stderr = (res.stderr + "\n[judgebox] output limit exceeded").strip()
            return Verdict.wrong_answer
        if self.spec.checker in ("exact", "lines", "tokens") and not self.spec.multiple_answers:
            complete = out.split()[:-1]  # the last token may be cut in the middle
            if complete != expected.split()[:len(complete)]:
                res.stderr = (res.stderr + "\n[judgebox] output limit exceeded; the output already differs "
                              "from the expected one before the cut").strip()
                return Verdict.wrong_answer
        res.stderr = (res.stderr + f"\n[judgebox] the expected output ({want} bytes) exceeds the sandbox "
                      f"output limit (stdout was cut at {got} bytes), so the program cannot be judged; raise "
                      f"the limit above the largest expected output, e.g. JUDGEBOX_OUTPUT_LIMIT_BYTES={2 * want} "
                      "in the environment of `judgebox serve` (or of this process for the embedded "
                      "sandbox)").strip()
        return Verdict.test_data_error

    def call_verdict(self, i: int, value: Any) -> Verdict:
        case = self.spec.calls[i]
        eps = EPS if self.spec.checker == "float" else 0.0
        if any(values_close(value, want, eps) for want in [case.expected, *case.alternatives]):
            return Verdict.accepted
        return Verdict.wrong_answer

    # the whole submission -----------------------------------------------------------------------------
    def summary(self, message: str = "") -> Judgement:
        results = self.results or []
        for r in results:
            r.harness_isolation = self.isolation
        verdicts = [r.verdict for r in results]
        n_passed = verdicts.count(Verdict.accepted)
        for special in (Verdict.infra_error, Verdict.test_data_error, Verdict.compile_error):
            if special in verdicts:
                first = results[verdicts.index(special)]
                return self.judgement(verdict=special, n_passed=0, n_total=len(results), tests=results,
                                      message=message or first.stderr[-_HEAD:])
        failed = next((r for r in results if r.verdict != Verdict.accepted), None)
        verdict = Verdict.accepted if failed is None and results else (failed.verdict if failed else Verdict.skipped)
        detail = (failed.stderr.strip() or failed.stdout.strip())[-_HEAD:] if failed else ""
        if failed is not None and not detail and failed.return_code not in (None, 0):  # a bash test's exit 1
            detail = f"[judgebox] exit status {failed.return_code}, nothing on stdout or stderr"
        n_total = len(results)
        if self.methods is not None and len(results) == 1 and self.methods[1] > 0:
            n_passed, n_total = self.methods  # a unittest file: its test methods, as unittest counted them
        return self.judgement(verdict=verdict, n_passed=n_passed, n_total=n_total, tests=results,
                              message=message or detail)


#: A compile stopped at its time limit with less CPU than this share of its wall time was starved by
#: the host (a compiler does not sleep; its children's CPU counts): that says nothing of the program.
_STARVED_COMPILE_CPU_SHARE = 0.5


def _first_errors(text: str) -> str:
    """A compiler's output cut to :data:`_HEAD` characters from its start: the first error is the cause
    (its tail held follow-on errors only, starting mid-line)."""
    if len(text) <= _HEAD:
        return text
    cut = text.rfind("\n", 0, _HEAD)
    head = text[:cut if cut > 0 else _HEAD]
    return f"{head}\n[judgebox: {len(text) - len(head)} more characters of compiler output]"


def _compile_verdict(result: Optional[CommandRunResult]) -> Optional[tuple[Verdict, str]]:
    """``None`` when the compile succeeded (or there was none), else ``(verdict of every test,
    message)``: ``infra_error`` for a sandbox error or a compile stopped at its limit while starved
    of CPU (less than :data:`_STARVED_COMPILE_CPU_SHARE` of its wall time), else ``compile_error``;
    the message is the compiler's stderr, or says the host starved the compile."""
    if result is None:
        return None
    stderr = _first_errors(result.stderr or "")
    if result.status == CommandRunStatus.Error:
        return Verdict.infra_error, stderr
    if result.status == CommandRunStatus.TimeLimitExceeded:
        wall, cpu = result.execution_time or 0.0, result.cpu_time or 0.0
        if cpu < _STARVED_COMPILE_CPU_SHARE * wall:
            blocked = wall - cpu - (result.cpu_wait or 0.0)  # neither on a CPU nor waiting for one
            if result.cpu_wait is not None and blocked > _STARVED_COMPILE_CPU_SHARE * wall:
                return Verdict.compile_error, (f"[judgebox] the compile was stopped at its time limit: it spent "
                                               f"{blocked:.2f} s of {wall:.2f} s waiting on something else than a CPU "
                                               f"(the program had it read a file or pipe that never ends, such as "
                                               f"#include \"/dev/stdout\")\n" + stderr)
            return Verdict.infra_error, (f"[judgebox] the compile was stopped at its time limit after {cpu:.2f} s "
                                         f"of CPU in {wall:.2f} s of wall time: the host starved it (judge it again)")
        return Verdict.compile_error, (f"[judgebox] the compile was stopped at its time limit (compile_timeout) "
                                       f"after {cpu:.2f} s of CPU in {wall:.2f} s of wall time\n" + stderr)
    if result.return_code != 0:
        return Verdict.compile_error, stderr
    return None


__all__ = ["ajudge", "default_client", "judge", "judge_batch", "marker", "warn_once", "warn_unknown"]
