"""Test-case formats shared by several datasets, turned into :class:`reward.spec.TestSpec`.

- APPS/TACO ``input_output``: ``{"inputs": [...], "outputs": [...], "fn_name"?: str}``; with
  ``fn_name`` each input is the list of arguments and each output the return value, which APPS wraps
  in a one-element list (unwrapped here when every output is so wrapped). When the inputs are
  text (LiveCodeBench data in this shape), they follow the LiveCodeBench functional rule below.
- stdin/stdout pairs (CodeContests ``{"input": [...], "output": [...]}``, SandboxFusion
  ``[{"input": {"stdin"}, "output": {"stdout"}}]``).
- LiveCodeBench ``{"input", "output", "testtype": "stdin" | "functional"}``: a functional input is
  one JSON value per line (one line per argument), the output one JSON value.

Every function raises :class:`reward.spec.TestDataError` for empty, undecodable or mismatched data
(case BUG-005): such a problem is never scored.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from reward.spec import CallCase, StdioCase, TestDataError, TestSpec


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


def call_spec(fn_name: str, args: Sequence[list], expected: Sequence[Any], **fields: Any) -> TestSpec:
    """A ``call`` spec: ``args[i]`` is the argument list of case ``i``, ``expected[i]`` its value.

    Raises:
        TestDataError: no cases, lengths differ, or an argument list is not a list.
    """
    _check_pairs(args, expected)
    if not all(isinstance(a, list) for a in args):
        raise TestDataError(f"call inputs for {fn_name} must be argument lists")
    cases = [CallCase(args=a, expected=e) for a, e in zip(args, expected)]
    return TestSpec(kind="call", fn_name=fn_name, calls=cases, **fields)


def apps_spec(input_output: Any, **fields: Any) -> TestSpec:
    """A spec from an APPS/TACO ``input_output`` value (JSON text or dict), read by the rules of
    :meth:`reward.spec.TestSpec.from_in_outs` (those of APPS's ``testing_util.run_test``).

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
    return call_spec(fn_name, *lcb_call_values([t["input"] for t in tests],
                                                [t["output"] for t in tests]), **fields)


def lcb_call_values(inputs: Sequence[str], outputs: Sequence[Any]) -> tuple[list[list], list]:
    """LiveCodeBench functional texts -> (argument lists, expected values): one JSON value per input
    line, one JSON value per output. Raises ``TestDataError`` for text that is not JSON."""
    args = [[decode_json(line, "functional input") for line in i.split("\n") if line.strip()]
            for i in inputs]
    return args, [decode_json(o, "functional output") for o in outputs]


def _check_pairs(inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise TestDataError("inputs and outputs must be lists")
    if not inputs:
        raise TestDataError("no test cases")
    if len(inputs) != len(outputs):
        raise TestDataError(f"{len(inputs)} inputs but {len(outputs)} outputs")
