"""One model for a problem's tests, covering the formats real datasets use.

Kinds:

- ``stdio``: run the program once per case with ``stdin``; compare stdout to ``expected`` with the
  output checker ``checker`` (APPS/TACO/CodeContests/LiveCodeBench stdin problems).
- ``call``: call ``fn_name`` (a top-level function, or a ``class Solution`` method, the method winning
  when both exist) with ``args`` (already JSON-decoded); compare the JSON value of the result with
  ``expected`` (APPS/TACO ``fn_name``, LiveCodeBench functional). Python only.
- ``assert``: each string of ``asserts`` is one test statement, run after ``setup_code`` in a copy of
  the solution's namespace (MBPP ``test_list``/``test_setup_code``, verl ``assert_case``).
- ``harness``: ``harness`` is a test program run against the solution (HumanEval ``test`` +
  ``check(entry_point)``; MultiPL-E ``tests`` in the problem's language).

``prefix`` is prepended to the candidate code (HumanEval/MultiPL-E ``prompt``; empty for full programs).
Times are seconds, memory is MiB.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

CheckerMode = Literal["exact", "lines", "tokens", "float", "lcb", "checker"]


class TestDataError(ValueError):
    """The problem's test data is empty, undecodable or inconsistent: the reward is ``None``."""


class StdioCase(BaseModel):
    """One stdin/stdout case: text fed to stdin and the expected stdout."""

    model_config = ConfigDict(extra="forbid")
    stdin: str
    expected: str


class CallCase(BaseModel):
    """One function-call case: positional ``args`` (JSON values) and the ``expected`` JSON value."""

    model_config = ConfigDict(extra="forbid")
    args: list[Any]
    expected: Any


class TestSpec(BaseModel):
    """A problem's tests; the single input of the judge. Serialises to JSON for verl ground truth."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["stdio", "call", "assert", "harness"]
    language: str = "python"
    stdio: list[StdioCase] = Field(default_factory=list)
    calls: list[CallCase] = Field(default_factory=list)
    fn_name: Optional[str] = None
    asserts: list[str] = Field(default_factory=list)
    setup_code: str = ""
    harness: Optional[str] = None
    entry_point: Optional[str] = None
    prefix: str = ""
    checker: CheckerMode = "lines"
    checker_program: Optional[str] = None
    run_timeout: float = Field(10.0, gt=0, description="seconds per test case")
    memory_limit_MB: int = Field(1024, ge=-1, description="MiB per test case")
