"""SandboxFusion dataset rows (``content``, ``test``, ``labels``, optional ``canonical_solution``), as
users pass them in ``provided_data`` and as SandboxFusion's ``code_eval_*`` samples store them.

The test format is recognised from the row:

- ``test`` a list (or JSON list) of ``{"input": {"stdin"}, "output": {"stdout"}}`` -> stdio
  (CodeContests);
- ``test`` base64+zlib+pickle of ``{"input_output": ...}`` -> APPS-style stdio or call
  (LiveCodeBench v1; LiveCodeBench's comparison rules and prelude);
- ``test_list`` (+ ``labels.test_setup_code``) -> assert (MBPP).
"""

from __future__ import annotations

from typing import Any

from judgebox.reward.preludes import PRELUDES
from judgebox.reward.spec import TestDataError, TestSpec

from .cases import apps_spec, decode_json, stdio_spec
from .livecodebench import decode_compressed
from .mbpp import entry_point as mbpp_entry_point
from .problem import Problem, guarded_spec, text_columns

FIELDS = {"content", "test", "labels", "canonical_solution"}


def row_spec(row: dict[str, Any], labels: dict[str, Any]) -> TestSpec:
    """The spec of one SandboxFusion row. Raises ``TestDataError`` when no known format matches."""
    if row.get("test_list"):
        tests = list(row["test_list"])
        return TestSpec(kind="assert", asserts=tests, setup_code=labels.get("test_setup_code") or "",
                        entry_point=mbpp_entry_point(tests, row.get("canonical_solution")))
    test = row.get("test")
    if not test:
        raise TestDataError("row has neither 'test' nor 'test_list'")
    decoded = decode_compressed(test, "test") if isinstance(test, str) else test
    if isinstance(decoded, dict) and "input_output" in decoded:
        return apps_spec(decoded["input_output"], checker="lcb", prelude=PRELUDES["livecodebench"])
    if isinstance(decoded, list) and all(isinstance(t, dict) for t in decoded):
        return stdio_spec([(t.get("input") or {}).get("stdin") for t in decoded],
                          [(t.get("output") or {}).get("stdout") for t in decoded])
    raise TestDataError("unrecognised 'test' format (expected stdio cases or input_output)")


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One SandboxFusion row; unusable test data becomes ``data_error``."""
    labels = decode_json(row.get("labels") or {}, "labels")
    labels = labels if isinstance(labels, dict) else {}
    language = labels.get("execution_language") or labels.get("programming_language") or "python"
    spec, error = guarded_spec(lambda: row_spec(row, labels).model_copy(update={"language": language}))
    task_id = labels.get("task_id") or row.get("id", index)
    return Problem(task_id=str(task_id), prompt=row.get("content", ""), spec=spec, data_error=error,
                   gold=row.get("canonical_solution"), data_source=data_source, language=language,
                   columns=text_columns(row, FIELDS))
