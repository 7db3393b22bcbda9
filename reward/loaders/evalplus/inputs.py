"""The fields of an evalplus row, checked, and its test inputs as evalplus passes them.

evalplus's release files (``HumanEvalPlus.jsonl.gz``, ``MbppPlus.jsonl.gz``) hold one JSON object per
task: ``task_id``, ``prompt``, ``entry_point``, ``canonical_solution``, ``base_input`` (the original
benchmark's inputs) and ``plus_input`` (evalplus's added ones), each a list of argument lists, and
``atol`` (the absolute tolerance of float outputs, >= 0). JSON has no tuple, set or complex number:
evalplus's ``mbpp_deserialize_inputs`` (``evalplus/data/mbpp.py``) rebuilds them for the MBPP+ tasks
that take them, by task number; :data:`MBPP_INPUT_SHAPES` is that table (HumanEval+ inputs are used as
read).
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable


class FieldError(KeyError):
    """A required field of a row is missing or unusable. A ``KeyError``, so the dataset loader names
    the file, the row and the field (``row 3 has no field 'atol' (a number >= 0, got 'x')``)."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(field)
        self.field, self.why = field, why

    def __str__(self) -> str:
        return f"{self.field!r} ({self.why})"


def checked_text(row: dict[str, Any], field: str) -> str:
    """``row[field]``, a string. Raises ``KeyError`` when missing, :class:`FieldError` when not text."""
    value = row[field]
    if not isinstance(value, str):
        raise FieldError(field, f"text, got {type(value).__name__}")
    return value


def checked_entry_point(row: dict[str, Any]) -> str:
    """``row["entry_point"]``: a Python identifier. Raises ``KeyError``/:class:`FieldError`."""
    entry = checked_text(row, "entry_point")
    if not entry.isidentifier():
        raise FieldError("entry_point", f"a function name, got {entry!r}")
    return entry


def checked_atol(row: dict[str, Any]) -> float:
    """``row["atol"]``: a finite number >= 0. Raises ``KeyError``/:class:`FieldError`."""
    atol = row["atol"]
    if isinstance(atol, bool) or not isinstance(atol, (int, float)) or not math.isfinite(atol) or atol < 0:
        raise FieldError("atol", f"a number >= 0, got {atol!r}")
    return atol


def checked_inputs(row: dict[str, Any], field: str, dataset: str) -> list[Any]:
    """``row[field]`` (``base_input``/``plus_input``): a list of argument lists, rebuilt for MBPP+ by
    :data:`MBPP_INPUT_SHAPES`. Raises ``KeyError``/:class:`FieldError` (naming the input)."""
    inputs = row[field]
    if not isinstance(inputs, list):
        raise FieldError(field, f"a list of argument lists, got {type(inputs).__name__}")
    bad = next((i for i, args in enumerate(inputs) if not isinstance(args, list)), None)
    if bad is not None:
        raise FieldError(field, f"a list of argument lists; item {bad} is a {type(inputs[bad]).__name__}")
    number = mbpp_task_number(row.get("task_id")) if dataset == "mbpp" else None
    shape = MBPP_INPUT_SHAPES.get(number)
    if shape is None:
        return inputs
    try:
        return [shape(args) for args in inputs]
    except (TypeError, ValueError, IndexError, AttributeError) as exc:
        raise FieldError(field, f"MBPP+ task {number} takes inputs of another shape ({exc})") from None


def mbpp_task_number(task_id: Any) -> Any:
    """The ``N`` of an MBPP+ task id ``"Mbpp/N"``, or ``None``."""
    match = re.fullmatch(r"Mbpp/(\d+)", str(task_id))
    return int(match.group(1)) if match else None


# --- evalplus's mbpp_deserialize_inputs, one function per shape ------------------------------------
def each_tuple(args: list) -> list:
    """Every argument a tuple."""
    return [tuple(a) for a in args]


def each_list_of_tuples(args: list) -> list:
    """Every argument a list of tuples."""
    return [[tuple(x) for x in a] for a in args]


def first_list_of_tuples(args: list) -> list:
    """Two arguments: a list of tuples, then the second as read."""
    return [[tuple(x) for x in args[0]], args[1]]


def second_tuple(args: list) -> list:
    """Two arguments: the first as read, then a tuple."""
    return [args[0], tuple(args[1])]


def first_tuple(args: list) -> list:
    """Two arguments: a tuple, then the second as read."""
    return [tuple(args[0]), args[1]]


def first_tuple_of_three(args: list) -> list:
    """Three arguments: a tuple, then the other two as read."""
    return [tuple(args[0]), args[1], args[2]]


def sets_or_empty_dicts(args: list) -> list:
    """One argument, a list whose non-empty lists become sets and whose other items ``{}`` (an empty
    dict, as evalplus writes it)."""
    return [[set(x) if isinstance(x, list) and x else {} for x in args[0]]]


def float_and_complex(args: list) -> tuple:
    """A float and a complex number (read from its text)."""
    return (float(args[0]), complex(args[1]))


def one_complex(args: list) -> list:
    """One complex number, read from its text."""
    return [complex(args[0])]


def each_tuple_of_tuples(args: list) -> list:
    """Every argument a tuple of tuples."""
    return [tuple(tuple(x) for x in a) for a in args]


def first_tuple_with_tuples(args: list) -> list:
    """One argument: a tuple whose list items become tuples."""
    return [tuple(tuple(x) if isinstance(x, list) else x for x in args[0])]


def dict_of_tuples(args: list) -> list:
    """A dict whose values become tuples, then the other arguments as read."""
    return [{k: tuple(v) for k, v in args[0].items()}, *args[1:]]


def all_tuples(args: Any) -> Any:
    """Every list, at any depth (the argument list too), a tuple."""
    return tuple(all_tuples(x) for x in args) if isinstance(args, list) else args


def _table(*entries: tuple[Callable, tuple[int, ...]]) -> dict[int, Callable]:
    return {number: shape for shape, numbers in entries for number in numbers}


#: MBPP+ task number -> how each input's arguments are rebuilt (evalplus ``mbpp_deserialize_inputs``).
MBPP_INPUT_SHAPES: dict[int, Callable] = _table(
    (each_tuple, (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630,
                  726, 740, 744, 809)),
    (each_list_of_tuples, (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780)),
    (first_list_of_tuples, (75, 413, 444, 753)),
    (second_tuple, (106, 750)),
    (sets_or_empty_dicts, (115,)),
    (float_and_complex, (124,)),
    (first_tuple, (250, 405, 446, 617, 720, 763, 808)),
    (each_tuple_of_tuples, (259, 401, 445)),
    (first_tuple_with_tuples, (278,)),
    (first_tuple_of_three, (307,)),
    (dict_of_tuples, (722,)),
    (one_complex, (252,)),
    (all_tuples, (580, 615, 791)),
)
