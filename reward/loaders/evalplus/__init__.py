"""HumanEval+ and MBPP+ (evalplus, Liu et al. 2023; github.com/evalplus/evalplus): the release files
``HumanEvalPlus.jsonl.gz`` and ``MbppPlus.jsonl.gz``, formats ``humaneval-plus`` and ``mbpp-plus``.

A row has ``task_id``, ``prompt``, ``entry_point``, ``canonical_solution``, ``base_input``,
``plus_input`` and ``atol`` (:mod:`~judgebox.reward.loaders.evalplus.inputs`); a missing or unusable
field is an error naming the file, the row and the field before anything is scored. As in evalplus
(``evaluate.py``), a sample continues ``prompt`` (a HumanEval+ prompt is the function's signature and
docstring; an MBPP+ prompt is a docstring holding the task and one example assertion, so a sample is a
whole program after it), and the gold sample is ``canonical_solution``.

Tests: evalplus's differential testing. The expected output of every input is what
``prompt + canonical_solution`` returns on it, computed once in the sandbox and cached
(:mod:`~judgebox.reward.loaders.evalplus.reference`); a reference that fails makes the task unusable
(``data_error``, verdict ``test_data_error``), never a wrong verdict. The task's
:class:`~judgebox.reward.spec.TestSpec` is one ``harness`` test
(:func:`~judgebox.reward.loaders.evalplus.programs.test_program`) that runs the base inputs, then the
plus inputs, and passes when every output matches by evalplus's rules
(:mod:`~judgebox.reward.loaders.evalplus.rules`), as evalplus's ``plus`` status does: pass@k is the
HumanEval+/MBPP+ figure. Its ``run_timeout`` is four times the reference's time plus 2 s per MiB of
test data, at least 10 s (:func:`~judgebox.reward.loaders.evalplus.programs.run_timeout`), its memory
4096 MiB (evalplus's 4 GiB).
"""

from __future__ import annotations

from typing import Any

from judgebox.reward.spec import TestDataError, TestSpec

from ..problem import Problem, guarded_spec, text_columns
from .codec import encode
from .inputs import checked_atol, checked_entry_point, checked_inputs, checked_text
from .programs import run_timeout, test_program
from .reference import reference_outputs
from .rules import NOT_NONE_ENTRY_POINTS

#: fields that are not samples (``code``, MBPP's original solution, stays one: ``--samples column:code``)
FIELDS = {"task_id", "prompt", "entry_point", "canonical_solution", "contract", "assertion", "test", "source_file"}
#: input groups, in the order they run (evalplus runs base, then plus)
GROUPS = ("base_input", "plus_input")
#: MiB per run (evalplus's ``EVALPLUS_MAX_MEMORY_BYTES`` default, 4 GiB)
MEMORY_LIMIT_MB = 4096


def humaneval_plus(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One HumanEval+ row (format ``humaneval-plus``). Raises ``KeyError`` naming a missing field."""
    return to_problem(row, data_source, "humaneval")


def mbpp_plus(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One MBPP+ row (format ``mbpp-plus``). Raises ``KeyError`` naming a missing field."""
    return to_problem(row, data_source, "mbpp")


def to_problem(row: dict[str, Any], data_source: str, dataset: str) -> Problem:
    """One evalplus row of ``dataset`` (``"humaneval"`` or ``"mbpp"``: which special oracles and
    input shapes apply).

    Raises:
        KeyError: a required field is missing or unusable
            (:class:`~judgebox.reward.loaders.evalplus.inputs.FieldError`).
        SandboxInfraError: the sandbox could not compute the reference outputs.
    """
    task_id = str(row["task_id"])
    prompt, canonical = checked_text(row, "prompt"), checked_text(row, "canonical_solution")
    entry, atol = checked_entry_point(row), checked_atol(row)
    groups = [[field, [encode(args) for args in checked_inputs(row, field, dataset)]] for field in GROUPS]

    def build() -> TestSpec:
        if not any(inputs for _, inputs in groups):
            raise TestDataError("base_input/plus_input: the task has no inputs; it can be neither passed "
                                "nor failed")
        not_none = dataset == "mbpp" and entry in NOT_NONE_ENTRY_POINTS
        reference = reference_outputs(prompt + canonical, entry, groups, not_none)
        task = {"dataset": dataset, "entry_point": entry, "atol": atol,
                "groups": [[name, inputs, outputs] for (name, inputs), outputs in zip(groups, reference.outputs)]}
        program = test_program(task)
        return TestSpec(kind="harness", harness=program, entry_point=entry, prefix=prompt,
                        run_timeout=run_timeout(reference.seconds, len(program.encode())),
                        memory_limit_MB=MEMORY_LIMIT_MB)

    spec, error = guarded_spec(build)
    return Problem(task_id=task_id, prompt=prompt, spec=spec, data_error=error, gold=canonical,
                   data_source=data_source, columns=text_columns(row, FIELDS))


__all__ = ["humaneval_plus", "mbpp_plus", "to_problem"]
