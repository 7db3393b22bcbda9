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

``prefix`` is prepended to the candidate code (HumanEval/MultiPL-E ``prompt``; empty for full programs);
``prelude`` (Python) is the import block of the dataset's official harness, put before both
(:mod:`judgebox.reward.preludes`: APPS/TACO, LiveCodeBench, LeetCode). ``cpp_std`` chooses the C++ standard
(default ``gnu++20``). ``input_file``/``output_file`` declare file I/O for ``stdio`` problems
(USACO-style ``X.in``/``X.out``): each case's ``stdin`` is also written to the input file, and the
output file, when declared, is what the checker compares instead of stdout; a case's ``files`` are
extra files written before it runs. Times are seconds, memory is MiB.
"""

from __future__ import annotations

import ast
import json
from typing import Any, ClassVar, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judgebox.sandbox.models import CppStd, validate_relative_path

from .preludes import NO_PRELUDE, PRELUDES, get_prelude

#: Spellings of Python in a spec's ``language``.
_PYTHON_NAMES = ("python", "py", "python3")

CheckerMode = Literal["exact", "lines", "tokens", "float", "lcb", "checker"]


class TestDataError(ValueError):
    """The problem's test data is empty, undecodable or inconsistent: the reward is ``None``."""

    __test__ = False  # not a pytest test class


class StdioCase(BaseModel):
    """One stdin/stdout case: text fed to stdin (and written to ``TestSpec.input_file`` when set), the
    expected output (of stdout, or of ``TestSpec.output_file`` when set) and extra ``files`` written
    into the working directory before the run (relative path -> text)."""

    model_config = ConfigDict(extra="forbid")
    stdin: str
    expected: str
    files: dict[str, str] = Field(default_factory=dict, description="relative path -> UTF-8 text")

    @field_validator("files")
    @classmethod
    def _check_files(cls, v: dict[str, str]) -> dict[str, str]:
        for path in v:
            validate_relative_path(path, "stdio[].files")
        return v


class CallCase(BaseModel):
    """One function-call case: positional ``args`` (JSON values) and the ``expected`` JSON value."""

    model_config = ConfigDict(extra="forbid")
    args: list[Any]
    expected: Any
    alternatives: list[Any] = Field(
        default_factory=list,
        description="other accepted values (APPS/TACO wrap call results in a one-element list and "
                    "their grader accepts the list or its element)")


class TestSpec(BaseModel):
    """A problem's tests; the single input of the judge. Serialises to JSON for verl ground truth."""

    model_config = ConfigDict(extra="forbid")
    __test__: ClassVar[bool] = False  # not a pytest test class

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
    prompt: Optional[str] = Field(
        None, description="the problem's prompt, when the code judged restates it (prefix is then empty): a "
        "split harness reads the entry function's header and the declarations the tests use from it, never "
        "from the candidate's code (None: prefix is the prompt)")
    prelude: str = Field("", description="Python put before prefix + code: the official harness's import "
                                         "block (judgebox.reward.preludes.PRELUDES), set by the loader")
    cpp_std: CppStd = Field(None, description="g++ -std value for C++ (None = gnu++20)")
    input_file: Optional[str] = Field(None, description="stdio: each case's stdin is also written here")
    output_file: Optional[str] = Field(None, description="stdio: the checker compares this file's content "
                                                         "(not stdout) with the expected output")
    checker: CheckerMode = "lines"
    checker_program: Optional[str] = None
    run_timeout: float = Field(10.0, gt=0, description="seconds per test case")
    memory_limit_MB: int = Field(1024, ge=-1, description="MiB per test case")
    shared_module: bool = Field(
        False, description="Python unittest harness: the tests run in the solution's own module, as BigCodeBench's "
                           "harness runs code + tests as one module (its tests patch the module's names); "
                           "default: a module of their own holding a copy of the solution's names")
    unittest_class: Optional[str] = Field(
        None, description="Python unittest harness: run only the TestCase class of this name (BigCodeBench: "
                          "TestCases); default: every TestCase class of the file, as python -m unittest")
    libraries: list[str] = Field(
        default_factory=list, description="modules outside Python's standard library that the dataset's harness "
                                          "gives this problem's programs (BigCodeBench's libs): checked before "
                                          "the run; a sandbox without one judges it infra_error, never wrong")
    multiple_answers: bool = Field(
        False, description="the problem accepts several answers; without a checker program a wrong "
                           "answer is flagged needs_checker for dataset audits")
    on_tamper: Literal["report", "reject"] = Field(
        "report", description="report: tamper signals are reported beside the verdict; reject: a sample with "
                              "any tamper signal is judged wrong_answer without running "
                              "(judgebox.reward.tamper; the judge's on_tamper keyword overrides it)")

    @field_validator("input_file", "output_file")
    @classmethod
    def _check_path(cls, v: Optional[str], info: Any) -> Optional[str]:
        return None if v is None else validate_relative_path(v, info.field_name)


    @property
    def n_tests(self) -> int:
        """How many tests the problem has (every one counts; none is dropped or sampled)."""
        return {"stdio": len(self.stdio), "call": len(self.calls), "assert": len(self.asserts),
                "harness": 1}[self.kind]

    def check_data(self) -> None:
        """Validate the test data before anything runs.

        Raises:
            TestDataError: no tests, a ``None`` expected value, a missing ``fn_name``/``harness``/
                ``checker_program``, or Python test code that does not parse (BUG-005, BUG-016).
        """
        if self.n_tests == 0 or (self.kind == "harness" and not (self.harness or "").strip()):
            raise TestDataError(f"{self.kind}: the problem has no tests; a problem without tests "
                                "can be neither passed nor failed")
        if self.kind == "stdio" and self.checker == "checker" and not self.checker_program:
            raise TestDataError("checker_program: checker mode needs a Python checker program "
                                "defining check(input, output, expected) -> bool")
        if self.kind == "call":
            if not self.fn_name:
                raise TestDataError("fn_name: call tests need the function name")
            if self.language != "python":
                raise TestDataError(f"language: call tests run Python only, not {self.language!r}")
            bad = [i for i, c in enumerate(self.calls) if c.expected is None]
            if bad:
                raise TestDataError(f"calls[{bad[0]}].expected: null expected value is malformed test "
                                    "data (use the JSON value the function must return)")
        if self.kind == "harness" and self.language == "python" and self.harness:
            _parse(self.harness, "harness")
        if self.kind == "assert":
            for i, a in enumerate(self.asserts):
                _parse(a, f"asserts[{i}]")
            _parse(self.setup_code, "setup_code")
        if self.checker_program:
            _parse(self.checker_program, "checker_program")
        if self.prelude and self.language not in _PYTHON_NAMES:
            raise TestDataError(f"prelude: a Python prelude cannot run before {self.language!r} code")
        if (self.input_file or self.output_file) and self.kind != "stdio":
            raise TestDataError(f"input_file/output_file: file I/O applies to stdio tests, not {self.kind}")
        if self.output_file and self.input_file == self.output_file:
            raise TestDataError("output_file: it must differ from input_file")
        if self.output_file:
            empty = [i for i, c in enumerate(self.stdio) if not c.expected.strip()]
            if empty:
                raise TestDataError(f"stdio[{empty[0]}].expected: output_file {self.output_file!r} is declared "
                                    "but the case has no expected output")

    @classmethod
    def from_in_outs(cls, in_outs: Union[str, dict, None], **fields: Any) -> "TestSpec":
        """Build a spec from verl/APPS/TACO ``input_output`` data: ``{"inputs", "outputs"[, "fn_name"]
        [, "assert_case"]}``, as a dict or a JSON string.

        stdio inputs/outputs may be strings or lists of lines (joined with ``\\n``, as APPS's
        ``testing_util.run_test`` joins them). With ``fn_name``, each input is either the argument
        list, whose output is the return value itself (APPS/TACO), or a string of one JSON value per
        line, whose output is the JSON text of the return value (LiveCodeBench). An APPS output that
        is a non-empty list also accepts its first element, the rule of APPS's ``run_test``
        (``output == expected or output == expected[0]``). Non-empty ``assert_case`` entries make
        assert tests. A ``language`` key sets the spec's language, ``prelude`` names a :data:`judgebox.reward.preludes.PRELUDES`
        entry (``"none"``: no prelude); Python data without a ``prelude`` key gets the ``verl`` prelude,
        the import block verl's ``prime_code`` scorer puts before every solution of this format, so
        the verdict is verl's (other languages get none); ``input_file``/``output_file`` declare file I/O. ``fields`` override spec fields (``language``,
        ``checker``, ``run_timeout``, ...).

        Raises:
            TestDataError: undecodable JSON, not a dict, missing/empty/mismatched lists (BUG-005).
        """
        if isinstance(in_outs, (str, bytes)):
            try:
                in_outs = json.loads(in_outs)
            except ValueError as exc:
                raise TestDataError(f"input_output: not valid JSON ({exc})") from None
        if not isinstance(in_outs, dict) or not isinstance(in_outs.get("inputs"), list) \
                or not isinstance(in_outs.get("outputs"), list):
            raise TestDataError('input_output: expected {"inputs": [...], "outputs": [...]}')
        inputs, outputs = in_outs["inputs"], in_outs["outputs"]
        if isinstance(in_outs.get("language"), str) and in_outs["language"]:
            fields = {"language": in_outs["language"], **fields}
        if in_outs.get("prelude") == NO_PRELUDE:
            fields = {"prelude": "", **fields}
        elif in_outs.get("prelude"):
            try:
                fields = {"prelude": get_prelude(str(in_outs["prelude"])), **fields}
            except ValueError as exc:
                raise TestDataError(f"input_output.{exc}") from None
        elif str(fields.get("language", "python")).lower() in _PYTHON_NAMES:
            fields = {"prelude": PRELUDES["verl"], **fields}  # verl prime_code's import block
        for key in ("input_file", "output_file"):
            if in_outs.get(key):
                fields = {key: in_outs[key], **fields}
        asserts = [a for a in in_outs.get("assert_case") or [] if isinstance(a, str) and a.strip()]
        if asserts:
            return cls._build(kind="assert", asserts=asserts, **fields)
        if len(inputs) != len(outputs):
            raise TestDataError(f"input_output: {len(inputs)} inputs but {len(outputs)} outputs")
        if not inputs:
            raise TestDataError("input_output: no test cases")
        fn_name = in_outs.get("fn_name")
        if fn_name:
            calls = [CallCase(args=_call_args(i, x), **_call_expected(x, o, i))
                     for i, (x, o) in enumerate(zip(inputs, outputs))]
            return cls._build(kind="call", fn_name=fn_name, calls=calls, **fields)
        stdio = [StdioCase(stdin=_text(x, f"inputs[{i}]"), expected=_text(o, f"outputs[{i}]"))
                 for i, (x, o) in enumerate(zip(inputs, outputs))]
        return cls._build(kind="stdio", stdio=stdio, **fields)

    @classmethod
    def from_ground_truth(cls, ground_truth: Union[str, dict, "TestSpec"], **fields: Any) -> "TestSpec":
        """A spec from verl ``ground_truth``: a TestSpec, its JSON/dict (has ``kind``), open-r1
        ``verification_info`` (has ``test_cases``, :meth:`from_verification_info`) or ``in_outs``
        (:meth:`from_in_outs`).

        Raises:
            TestDataError: the data is undecodable or invalid (the message names the field).
        """
        if isinstance(ground_truth, TestSpec):
            return ground_truth.model_copy(update=fields) if fields else ground_truth
        if isinstance(ground_truth, (str, bytes)):
            try:
                ground_truth = json.loads(ground_truth)
            except ValueError as exc:
                raise TestDataError(f"ground_truth: not valid JSON ({exc})") from None
        if isinstance(ground_truth, dict) and "kind" in ground_truth:
            return cls._build(**{**ground_truth, **fields})
        if isinstance(ground_truth, dict) and "test_cases" in ground_truth:
            return cls.from_verification_info(ground_truth, **fields)
        return cls.from_in_outs(ground_truth, **fields)

    @classmethod
    def from_verification_info(cls, info: Union[str, dict, None], **fields: Any) -> "TestSpec":
        """A spec from open-r1 ``verification_info``: ``{"language": "python", "test_cases": [{"type":
        "stdin_stdout", "input": "1 2\\n", "output": "3\\n"}, ...]}`` (dict or JSON string; source:
        open-r1 ``verifiable-coding-problems`` datasets and ``open_r1.rewards.code_reward``).

        Each case becomes a stdio case (``input``/``output`` text or lists of lines); ``language``
        (default ``python``) sets the spec's language; ``fields`` override spec fields.

        Raises:
            TestDataError: undecodable JSON, no ``test_cases`` list, an empty list, a case that is not
                an object, a ``type`` other than ``stdin_stdout``, or non-text ``input``/``output``.
        """
        if isinstance(info, (str, bytes)):
            try:
                info = json.loads(info)
            except ValueError as exc:
                raise TestDataError(f"verification_info: not valid JSON ({exc})") from None
        cases = info.get("test_cases") if isinstance(info, dict) else None
        if not isinstance(cases, list):
            raise TestDataError('verification_info: expected {"language": ..., "test_cases": [...]}')
        if not cases:
            raise TestDataError("verification_info.test_cases: no test cases")
        stdio = []
        for i, case in enumerate(cases):
            field = f"verification_info.test_cases[{i}]"
            if not isinstance(case, dict):
                raise TestDataError(f"{field}: expected an object with type, input and output")
            if case.get("type", "stdin_stdout") != "stdin_stdout":
                raise TestDataError(f"{field}.type: {case.get('type')!r} is not supported; use "
                                    "'stdin_stdout' cases (or a TestSpec for other kinds)")
            stdio.append(StdioCase(stdin=_text(case.get("input"), f"{field}.input"),
                                   expected=_text(case.get("output"), f"{field}.output")))
        if isinstance(info.get("language"), str) and info["language"]:
            fields = {"language": info["language"], **fields}
        return cls._build(kind="stdio", stdio=stdio, **fields)

    @classmethod
    def _build(cls, **data: Any) -> "TestSpec":
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise TestDataError(f"test spec: {exc}") from None


def _parse(source: str, field: str) -> None:
    try:
        ast.parse(source or "")
    except (SyntaxError, ValueError) as exc:
        raise TestDataError(f"{field}: the test code does not parse ({exc})") from None


def _text(value: Any, field: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value) + "\n"
    raise TestDataError(f"{field}: expected text or a list of lines, got {type(value).__name__}")


def _call_args(index: int, value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        try:
            return [json.loads(line) for line in value.split("\n") if line.strip()]
        except ValueError as exc:
            raise TestDataError(f"inputs[{index}]: expected one JSON value per line ({exc})") from None
    raise TestDataError(f"inputs[{index}]: expected a list of arguments or JSON lines")


def _call_expected(args: Any, output: Any, index: int) -> dict[str, Any]:
    """``expected`` and ``alternatives`` of a call case of :meth:`TestSpec.from_in_outs`: the JSON
    text of the value after LiveCodeBench text input; else the value, where a non-empty list also
    accepts its first element (APPS wraps results in a one-element list, shown unwrapped unless
    it holds ``null``, which would read as a missing value)."""
    if isinstance(args, str):
        return {"expected": _json_value(output, index)}
    if isinstance(output, list) and len(output) == 1 and output[0] is not None:
        return {"expected": output[0], "alternatives": [output]}
    if isinstance(output, list) and output:
        return {"expected": output, "alternatives": [output[0]]}
    return {"expected": output}


def _json_value(value: Any, index: int) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise TestDataError(f"outputs[{index}]: expected the JSON text of the return value, got "
                                f"{value[:80]!r}") from None
    return value
