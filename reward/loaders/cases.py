"""Test-case formats shared by several datasets, turned into :class:`judgebox.reward.spec.TestSpec`.

- APPS/TACO ``input_output``: ``{"inputs": [...], "outputs": [...], "fn_name"?: str}``, read by
  :meth:`judgebox.reward.spec.TestSpec.from_in_outs`: with ``fn_name`` each input is the list of arguments
  and each output the return value (a list output also accepts its first element, APPS's rule).
  When the inputs are text (LiveCodeBench data in this shape), they follow the LiveCodeBench
  functional rule below.
- stdin/stdout pairs (CodeContests ``{"input": [...], "output": [...]}``, SandboxFusion
  ``[{"input": {"stdin"}, "output": {"stdout"}}]``).
- LiveCodeBench ``{"input", "output", "testtype": "stdin" | "functional"}``: a functional input is
  one JSON value per line (one line per argument), the output one JSON value.

Every function raises :class:`judgebox.reward.spec.TestDataError` for empty, undecodable or mismatched data
(case BUG-005): such a problem is never scored.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from judgebox.reward.spec import StdioCase, TestDataError, TestSpec


def decode_json(value: Any, what: str) -> Any:
    """``value`` parsed if it is a JSON string, else returned as is. Raises ``TestDataError``."""
    if not isinstance(value, (str, bytes)):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise TestDataError(f"{what} is not valid JSON ({exc.msg} at char {exc.pos})") from None


def stdio_spec(inputs: Sequence[Any], outputs: Sequence[Any], **fields: Any) -> TestSpec:
    """A ``stdio`` spec from aligned input and expected-output texts.

    Raises:
        TestDataError: no cases, lengths differ, or a value is not text.
    """
    _check_pairs(inputs, outputs)
    if not all(isinstance(x, str) for x in (*inputs, *outputs)):
        raise TestDataError("stdio inputs and outputs must all be strings")
    cases = [StdioCase(stdin=i, expected=o) for i, o in zip(inputs, outputs)]
    return TestSpec(kind="stdio", stdio=cases, **fields)


def apps_spec(input_output: Any, **fields: Any) -> TestSpec:
    """A spec from an APPS/TACO ``input_output`` value (JSON text or dict), read by the rules of
    :meth:`judgebox.reward.spec.TestSpec.from_in_outs` (those of APPS's ``testing_util.run_test``).

    Raises:
        TestDataError: undecodable JSON, not an object with ``inputs`` and ``outputs``, or bad cases.
    """
    io = decode_json(input_output, "input_output")
    if not isinstance(io, dict) or "inputs" not in io or "outputs" not in io:
        raise TestDataError("input_output must be an object with 'inputs' and 'outputs'")
    return TestSpec.from_in_outs(io, **fields)


def lcb_spec(tests: Sequence[dict], fn_name: Optional[str], **fields: Any) -> TestSpec:
    """A spec from LiveCodeBench test dicts (all ``stdin`` or all ``functional``). Raises ``TestDataError``."""
    if not tests:
        raise TestDataError("no test cases")
    kinds = {t.get("testtype", "stdin") for t in tests}
    if kinds == {"stdin"}:
        return stdio_spec([t["input"] for t in tests], [t["output"] for t in tests], **fields)
    if kinds != {"functional"} or not fn_name:
        raise TestDataError(f"mixed or unnamed functional tests (testtype {sorted(kinds)}, fn_name {fn_name!r})")
    return TestSpec.from_in_outs({"fn_name": fn_name, "inputs": [t["input"] for t in tests],
                                  "outputs": [t["output"] for t in tests]}, **fields)


def _check_pairs(inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise TestDataError("inputs and outputs must be lists")
    if not inputs:
        raise TestDataError("no test cases")
    if len(inputs) != len(outputs):
        raise TestDataError(f"{len(inputs)} inputs but {len(outputs)} outputs")
