"""CRUXEval (Gu et al. 2024; facebookresearch/cruxeval ``data/cruxeval.jsonl``, HF ``cruxeval-org/cruxeval``):
800 short Python functions ``f`` with an input and its output. Rows: ``code`` (defines ``f``), ``input`` (the
argument list as Python source, e.g. ``"[1, 2], 3"``), ``output`` (the value's literal), ``id`` (``sample_0``).

Two tasks, two formats: ``cruxeval-input`` (CRUXEval-I: the model writes a call ``f(<input>)`` that returns the
given output) and ``cruxeval-output`` (CRUXEval-O: the model writes the output of ``f(<input>)``). A sample is
the model's text; gold is ``f(<input>)`` resp. ``<output>``.

The rule (``evaluation/evaluate_generations.py`` and ``utils_general.py``): a generation ``g`` passes when
``code + "\\nassert " + output + " == " + g`` runs without error (3 s), except that an input-task ``g``
without ``f(`` and an output-task ``g`` that contains ``f(<input>)`` are not run and do not pass. ``g`` is
taken from the model's text as ``inference/tasks/*_prediction.py`` (``postprocess_generation``) take it:
the text after ``[ANSWER]`` (the CoT prompts), cut at the ``[/ANSWER]`` stop word; then for the input task
the part before ``==``, from ``assert f`` on (``f`` + the rest), for the output task the part after ``==``.
:func:`answer` does this; where the answer region is a whole ``assert A == B`` (or ``A == B``), ``A``/``B``
are taken by Python's parser instead, so an ``==`` inside a string literal does not cut it. Before that,
reasoning (up to ``</think>``) is dropped and a fenced block inside the answer region is unwrapped.

Here the check runs in judgebox's Python harness, in the sandbox: the candidate program is ``code`` and a
function returning ``(g)``; the tests, in their own process, assert ``output == answer()`` (the runner's
honest ``==``). A wrong value is ``wrong_answer``; a skipped answer is ``wrong_answer`` with the reason.
Stricter than the official script, on answers that game it (:func:`answer_program`): ``g`` must be one
expression (``0) or (True`` cannot widen the assertion), an input answer one call of ``f``, an output
answer must not call ``f`` however spaced. Unlike the official script, which drops skipped generations
from a problem's ``n`` once one of them passed, every sample counts.

The answer becomes a program in :meth:`CruxProblem.candidate` (what ``judgebox eval`` calls); the spec
alone (verl's ground truth after ``judgebox data convert``) would judge a completion as code, so
CRUXEval rewards outside ``judgebox eval`` must go through the problem's ``candidate``.
Errors: a missing field raises ``KeyError`` (the loader names file, row and field).
"""

from __future__ import annotations

import ast
from typing import Any, Literal

from judgebox.reward.extract import extract_code, split_reasoning
from judgebox.reward.spec import TestSpec

from .problem import Problem, text_columns

FIELDS = {"code", "input", "output", "id"}
#: The name of the candidate's answer function (the spec's ``entry_point``).
ENTRY = "judgebox_cruxeval_answer"
#: CRUXEval's time limit per check (``check_correctness(code, 3)``), seconds.
TIMEOUT = 3.0


class CruxProblem(Problem):
    """A CRUXEval problem: a completion is an answer, not a program (see the module docstring).

    Attributes:
        task: ``"input"`` (CRUXEval-I) or ``"output"`` (CRUXEval-O).
        call_input: the row's ``input`` (the output task refuses an answer that calls ``f(<input>)``).
    """

    task: Literal["input", "output"]
    call_input: str

    def candidate(self, completion: str, sanitize: bool = False) -> tuple[TestSpec, str]:
        """The spec and the candidate program for one completion.

        Raises:
            ValueError: no usable spec, or ``sanitize`` (CRUXEval answers are not programs to sanitize).
        """
        if self.spec is None:
            raise ValueError(f"{self.task_id}: no test spec ({self.data_error})")
        if sanitize:
            raise ValueError(f"{self.task_id}: CRUXEval answers are expressions; --sanitize does not apply")
        return self.spec, answer_program(answer(completion, self.task), self.task, self.call_input)


def answer(text: str, task: str) -> str:
    """The answer ``g`` in a model's text (see the module docstring for the rules)."""
    text = split_reasoning(text)[1]
    if "[ANSWER]" in text:
        text = text.split("[ANSWER]")[1]
    text = text.split("[/ANSWER]")[0]
    if "```" in text:
        text = extract_code(text, "python")
    text = text.strip()
    parsed = _parts(text)
    if parsed is not None:
        return parsed[0] if task == "input" or len(parsed) == 1 else parsed[1]
    if "==" in text:
        text = text.split("==")[0] if task == "input" else text.split("==")[1]
    if task == "input" and "assert f" in text:
        text = "f" + text.split("assert f")[1].strip()
    return text.strip()


def _parts(text: str) -> tuple[str, ...] | None:
    """``(A, B)`` of a text that is exactly one ``assert A == B`` or ``A == B``; ``(text,)`` of one other
    expression; ``None`` otherwise (not Python, several statements, another statement)."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return None
    if len(body) != 1:
        return None
    node = body[0]
    test = node.test if isinstance(node, ast.Assert) and node.msg is None else \
        node.value if isinstance(node, ast.Expr) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        sides = ast.get_source_segment(text, test.left), ast.get_source_segment(text, test.comparators[0])
        return None if None in sides else sides
    return (text,) if isinstance(node, ast.Expr) else None


def answer_program(g: str, task: str, call_input: str) -> str:
    """The candidate code put after the problem's ``code``: a function :data:`ENTRY` that returns ``(g)``,
    or raises ``AssertionError`` saying why ``g`` is not run: the official guards (no ``f(`` in an input
    answer, ``f(<input>)`` in an output answer), and, checked by Python's parser, ``g`` that is not one
    expression, an input answer that is not one call of ``f`` (``f([]) or [4, 5]`` would pass any ``f``
    with a falsy value) or an output answer that calls ``f`` at all (however it is spaced)."""
    reason = None
    if task == "input" and "f(" not in g:
        reason = "the answer has no call 'f(': CRUXEval-I does not run it"
    elif task == "output" and f"f({call_input})" in g:
        reason = "the answer calls f on the given input: CRUXEval-O does not run it"
    else:
        try:
            tree = ast.parse(g, mode="eval")
        except (SyntaxError, ValueError) as exc:
            reason = (f"the answer is not one Python expression, as CRUXEval-I/O answers are "
                      f"({type(exc).__name__}: {exc})")
        else:
            calls_f = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                       and n.func.id == "f"]
            if task == "input" and not (isinstance(tree.body, ast.Call) and tree.body in calls_f):
                reason = "the answer is not one call f(...): CRUXEval-I answers are calls of f"
            elif task == "output" and calls_f:
                reason = "the answer calls f: CRUXEval-O answers are the output's literal"
    if reason is not None:
        return f"\n\ndef {ENTRY}():\n    raise AssertionError({reason + ': ' + g[:200]!r})\n"
    return f"\n\ndef {ENTRY}():\n    return (\n{g}\n    )\n"


def _problem(row: dict[str, Any], data_source: str, task: Literal["input", "output"]) -> Problem:
    code, given, output, task_id = row["code"], row["input"], row["output"], str(row["id"])
    spec = TestSpec(kind="harness", language="python", prefix=code + "\n", entry_point=ENTRY, run_timeout=TIMEOUT,
                    harness=f"def check(answer):\n    assert {output} == answer()\n")
    return CruxProblem(task_id=task_id, prompt=_prompt(code, given, output, task), spec=spec, task=task,
                       call_input=given, gold=f"f({given})" if task == "input" else output,
                       data_source=data_source, columns=text_columns(row, FIELDS))


def _prompt(code: str, given: str, output: str, task: str) -> str:
    """A plain instruction (judgebox's words; CRUXEval's own few-shot prompts are in its ``prompts.py``)."""
    if task == "input":
        ask, line = "Find an input for which f returns the given output.", f"assert f(??) == {output}"
    else:
        ask, line = "Give the output of f on the given input, as a Python literal.", f"assert f({given}) == ??"
    return (f"{ask} Answer with the completed assertion between [ANSWER] and [/ANSWER].\n\n"
            f"[PYTHON]\n{code}\n{line}\n[/PYTHON]\n")


def input_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One row as a CRUXEval-I problem. Raises ``KeyError`` naming a missing field."""
    return _problem(row, data_source, "input")


def output_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One row as a CRUXEval-O problem. Raises ``KeyError`` naming a missing field."""
    return _problem(row, data_source, "output")
