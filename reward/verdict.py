"""Verdicts: what the judge says about one submission, per test and overall."""

from __future__ import annotations

from enum import Enum
from typing import ClassVar, Literal, Optional

from pydantic import BaseModel, Field

from .tamper import TamperSignal


class Verdict(str, Enum):
    """Outcome names (Codeforces/DMOJ vocabulary). ``test_data_error`` and ``infra_error`` carry no
    information about the program: their reward is ``None``, never 0."""

    accepted = "accepted"
    wrong_answer = "wrong_answer"
    runtime_error = "runtime_error"
    time_limit_exceeded = "time_limit_exceeded"
    memory_limit_exceeded = "memory_limit_exceeded"
    compile_error = "compile_error"
    skipped = "skipped"
    test_data_error = "test_data_error"
    infra_error = "infra_error"


def unscorable_reason(verdict: "Verdict | str | None") -> Optional[str]:
    """Why a result carries no reward: ``"test_data"`` (the dataset's tests are unusable: fix the data),
    ``"infrastructure"`` (the sandbox or the engine failed: re-run), or ``None`` for a verdict about
    the program. A dashboard tells them apart with it instead of blaming the sandbox for bad data."""
    value = verdict.value if isinstance(verdict, Verdict) else verdict
    if value == Verdict.test_data_error.value:
        return "test_data"
    if value == Verdict.infra_error.value:
        return "infrastructure"
    return None


class TestResult(BaseModel):
    """One test's outcome. Times in seconds; ``stdout``/``stderr`` are heads/tails (characters)."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    index: int
    verdict: Verdict
    execution_time: Optional[float] = None
    cpu_time: Optional[float] = None
    return_code: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    needs_checker: bool = False
    harness_isolation: Optional[Literal["process", "in-process"]] = Field(
        None, description="function-call tests: run in their own process apart from the solution (Python, C++), or in its process")


class Judgement(BaseModel):
    """A submission's outcome: overall verdict, counts and per-test detail.

    ``n_total`` counts every test of the problem (none dropped); ``pass_rate = n_passed / n_total``.
    For a unittest harness the tests are its test methods as ``unittest`` ran them (a skip the test
    file declares is neither passed nor counted), though ``tests`` holds the one run of the file.
    ``verdict`` is ``accepted`` only when every test passed.
    """

    verdict: Verdict
    n_passed: int = 0
    n_total: int = 0
    tests: list[TestResult] = Field(default_factory=list)
    message: str = ""
    tamper_signals: list[TamperSignal] = Field(
        default_factory=list, description="what the static scan of the candidate's code found "
        "(:func:`judgebox.reward.tamper.scan`); empty for stdio problems, which are judged on the host")
    forgeable: bool = Field(False, description="the tests share the solution's process, so a deliberate program "
                            "could forge this verdict (in-process Python harnesses, MultiPL-E harnesses of "
                            "other languages, BigCodeBench's module harness)")
    tamper_rejected: bool = Field(False, description="judged wrong_answer for its tamper signals "
                                  "(on_tamper='reject'); the program was not run")

    @property
    def passed(self) -> bool:
        """True iff every test ran and passed."""
        return self.verdict == Verdict.accepted

    @property
    def pass_rate(self) -> Optional[float]:
        """Fraction of tests passed, or ``None`` for test-data and infrastructure errors."""
        if self.verdict in (Verdict.test_data_error, Verdict.infra_error) or self.n_total == 0:
            return None
        return self.n_passed / self.n_total
