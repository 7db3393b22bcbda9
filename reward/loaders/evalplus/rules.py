"""evalplus's rules for judging one output, and the loops that apply them. Runs inside the sandbox
(standard library only, Python >= 3.8) and on the host (tests); values are already decoded
(:mod:`judgebox.reward.loaders.evalplus.codec`).

Source: evalplus ``evalplus/eval/__init__.py`` (``unsafe_execute``, ``is_floats``) and
``evalplus/eval/_special_oracle.py`` (v0.3.1 and main). For one input, with ``out`` the candidate's
return value, ``exp`` the canonical solution's and ``atol`` the task's ``atol`` field:

1. ``exact = out == exp``: Python equality, so ``1 == 1.0 == True`` and ``(1, 2) != [1, 2]``;
2. the special oracles replace or widen ``exact`` (:func:`special_exact`); HumanEval+ ``find_zero``
   is judged by ``|poly(xs, out)| <= atol`` alone;
3. ``atol == 0`` and a float expected value (:func:`is_floats`) -> ``atol = 1e-6``;
4. not ``exact`` and ``atol != 0`` -> pass iff ``type(out) == type(exp)``, lists and tuples have equal
   lengths, and :func:`allclose` (``numpy.allclose(out, exp, rtol=1e-07, atol=atol)``);
   otherwise pass iff ``exact``. Any exception while comparing fails the input.

Unlike evalplus, step 3 does not carry over: evalplus keeps the raised ``atol`` for the inputs after
the first float one of a group (a loop variable); here each input starts from the task's ``atol``.
"""

import itertools
import math
import time

#: evalplus ``MBPP_OUTPUT_SET_EQ_TASKS``: MBPP+ entry points whose output is compared as a set
SET_EQ_ENTRY_POINTS = ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
                       "larg_nnum", "intersection_array", "find_dissimilar", "Diff")
#: evalplus ``MBPP_OUTPUT_NOT_NONE_TASKS``: MBPP+ entry points whose expected output is only "not None"
NOT_NONE_ENTRY_POINTS = ("check_str", "text_match_three", "text_starta_endb")
#: the tolerance evalplus enforces for float outputs of a task whose ``atol`` is 0
FLOAT_ATOL = 1e-6
#: numpy.allclose's default relative tolerance, which evalplus passes explicitly
RTOL = 1e-07
#: ints numpy reads as numbers inside a list (int64 and uint64); others make an object array allclose rejects
LIST_INTS = (-(2 ** 63), 2 ** 64)


def is_floats(x):
    """evalplus ``is_floats``: a float, or a non-empty list/tuple of floats only."""
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    return False


def array(x, inner=False):
    """``(shape, flat values)`` of ``x`` as ``numpy.asarray`` reads a number or a rectangular nested
    list/tuple of numbers (bool, int, float, complex; an int inside a list must fit int64/uint64);
    ``None`` for anything else (text, None, a ragged nesting, a huge int in a list), where
    ``numpy.allclose`` raises."""
    kind = type(x)
    if kind in (bool, float, complex) or (kind is int and (not inner or LIST_INTS[0] <= x < LIST_INTS[1])):
        return (), [x]
    if kind not in (list, tuple):
        return None
    parts = [array(v, True) for v in x]
    if any(p is None for p in parts) or len({p[0] for p in parts}) > 1:
        return None
    shape = parts[0][0] if parts else ()
    return (len(x),) + shape, [v for p in parts for v in p[1]]


def broadcast(a, b):
    """numpy's broadcast shape of shapes ``a`` and ``b`` (aligned right; a dimension of 1 stretches),
    or ``None`` when they do not broadcast."""
    a, b = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def flat_index(index, shape):
    """The flat position in an array of ``shape`` of the broadcast ``index`` (one per result axis)."""
    index = index[len(index) - len(shape):]
    position = 0
    for i, size in zip(index, shape):
        position = position * size + (i if size != 1 else 0)
    return position


def close(a, b, rtol, atol):
    """numpy ``isclose`` of two numbers: ``|a - b| <= atol + rtol * |b|`` when both are finite,
    else ``a == b`` (equal infinities are close, a nan never is). Raises ``OverflowError`` for an
    int too large for a float."""
    a = a if type(a) is complex else float(a)
    b = b if type(b) is complex else float(b)
    finite = all(math.isfinite(v) for v in (a.real, a.imag, b.real, b.imag))
    return abs(a - b) <= atol + rtol * abs(b) if finite else a == b


def allclose(out, exp, rtol=RTOL, atol=0.0):
    """``numpy.allclose(out, exp, rtol, atol)`` (numpy 2) for the values :func:`outputs_match` gives it
    (same type, same length): both read as arrays (:func:`array`), broadcast together
    (:func:`broadcast`), and every pair :func:`close`; ``False`` where numpy raises."""
    a, b = array(out), array(exp)
    if a is None or b is None:
        return False
    if any(type(v) is int and not -1e308 < v < 1e308 for v in (out, exp)):  # numpy's float of it overflows
        return False
    shape = broadcast(a[0], b[0])
    if shape is None:
        return False
    try:
        return all(close(a[1][flat_index(i, a[0])], b[1][flat_index(i, b[0])], rtol, atol)
                   for i in itertools.product(*[range(n) for n in shape]))
    except OverflowError:  # an int too large for a float, as numpy finds it
        return False


def pyramid_surface(base_edge, height):
    """The MBPP+ ``surface_Area`` oracle (evalplus ``_surface_Area``, Mbpp/581): a square pyramid's
    total surface, ``height`` read as the apex's height over the base, rounded to an int."""
    slant = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 2 * base_edge * slant)


def digit_distance(a, b):
    """The MBPP+ ``digit_distance_nums`` oracle (evalplus ``_digit_distance_nums``, Mbpp/558): the
    sum of the digit-by-digit differences, the shorter number padded with leading zeros."""
    x, y = str(a), str(b)
    width = max(len(x), len(y))
    return sum(abs(int(p) - int(q)) for p, q in zip(x.zfill(width), y.zfill(width)))


def poly(xs, x):
    """The HumanEval+ ``find_zero`` oracle (evalplus ``_poly``, HumanEval/32): ``sum(xs[i] * x**i)``."""
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))


def special_exact(dataset, entry_point, args, out, exp, atol, exact):
    """``exact`` after evalplus's MBPP+ special oracles (``dataset == "mbpp"``): ``are_equivalent``
    accepts any output; ``sum_div`` also accepts 0; ``surface_Area`` also an output within ``atol`` of
    :func:`pyramid_surface`; ``digit_distance_nums`` also :func:`digit_distance`; the entry points of
    :data:`SET_EQ_ENTRY_POINTS` compare ``set(out) == set(exp)``; those of
    :data:`NOT_NONE_ENTRY_POINTS` (expected: whether the reference returned something) compare a bool
    output with ``exp`` and any other output by ``out is not None``."""
    if dataset != "mbpp":
        return exact
    if entry_point == "are_equivalent":
        return True
    if entry_point == "sum_div":
        return exact or out == 0
    if entry_point == "surface_Area":
        return exact or abs(out - pyramid_surface(*args)) <= atol
    if entry_point == "digit_distance_nums":
        return exact or out == digit_distance(*args)
    if entry_point in SET_EQ_ENTRY_POINTS:
        return set(out) == set(exp)
    if entry_point in NOT_NONE_ENTRY_POINTS:
        return out == exp if isinstance(out, bool) else exp == (out is not None)
    return exact


def outputs_match(dataset, entry_point, args, out, exp, atol):
    """Whether evalplus accepts output ``out`` for input ``args`` (the module docstring's steps).

    Args:
        dataset: ``"humaneval"`` or ``"mbpp"`` (which special oracles apply).
        entry_point: the task's function name.
        args: the input's argument list (after the call, as the special oracles see it).
        out, exp: the candidate's and the canonical solution's return values.
        atol: the task's absolute tolerance (``atol`` field, >= 0).
    """
    try:
        exact = bool(out == exp)
        exact = bool(special_exact(dataset, entry_point, args, out, exp, atol, exact))
        if dataset == "humaneval" and entry_point == "find_zero":
            return abs(poly(*args, out)) <= atol
        if atol == 0 and is_floats(exp):
            atol = FLOAT_ATOL
        if exact or atol == 0:
            return exact
        if type(out) is not type(exp) or (isinstance(exp, (list, tuple)) and len(out) != len(exp)):
            return False
        return allclose(out, exp, RTOL, atol)
    except Exception:
        return False


def cut(text, limit):
    """``text`` cut to ``limit`` characters (``...`` marks a cut)."""
    return text if len(text) <= limit else text[:limit] + "..."


def short(value, limit=200):
    """``repr(value)``, cut to ``limit`` characters."""
    return cut(repr(value), limit)


def run_task(fn, task, decode):
    """Call ``fn`` on every input of ``task``, group by group, in order; raise ``AssertionError`` at
    the first output :func:`outputs_match` rejects (naming the input, the output and the expected
    one). An exception of ``fn`` propagates (the test program's runtime error).

    Args:
        fn: the candidate's function (``None`` when the solution does not define it: ``NameError``).
        task: ``{"dataset", "entry_point", "atol", "groups": [[name, inputs, outputs], ...]}``, each
            input an argument list, ``outputs`` the canonical solution's return values, both encoded.
        decode: turns encoded data back into values (:func:`judgebox.reward.loaders.evalplus.codec.decode`).
    """
    entry, dataset, atol = task["entry_point"], task["dataset"], task["atol"]
    if not callable(fn):
        raise NameError("%r is not defined by the solution" % entry)
    for name, inputs, outputs in task["groups"]:
        for i, (args, exp) in enumerate(zip(decode(inputs), decode(outputs))):
            out = fn(*args)
            if not outputs_match(dataset, entry, args, out, exp, atol):
                shown = cut(", ".join(short(a, 100) for a in args), 300)
                raise AssertionError("%s[%d]: %s(%s) returned %s, expected %s"
                                     % (name, i, entry, shown, short(out), short(exp)))


def run_reference(fn, groups, not_none, encode):
    """The canonical solution's outputs on every input, as evalplus's ``trusted_exec`` computes them.

    Args:
        fn: the canonical solution's function.
        groups: ``[[name, inputs], ...]``, each input an argument list.
        not_none: record only ``out is not None`` (the :data:`NOT_NONE_ENTRY_POINTS` tasks).
        encode: turns one output into JSON-able data (raises ``TypeError`` for what is not data).

    Returns:
        ``{"outputs": [[encoded output, ...] per group], "seconds": time spent in fn}``, or
        ``{"error": text, "where": "plus_input[3]"}`` at the first input the reference fails on.
    """
    outputs, seconds = [], 0.0
    for name, inputs in groups:
        done = []
        for i, args in enumerate(inputs):
            where = "%s[%d]" % (name, i)
            start = time.perf_counter()
            try:
                out = fn(*args)
            except BaseException as exc:  # SystemExit from the reference too
                return {"error": "%s: %s" % (type(exc).__name__, cut(str(exc), 500)), "where": where}
            seconds += time.perf_counter() - start
            try:
                done.append(encode(out is not None if not_none else out))
            except (TypeError, ValueError, RecursionError) as exc:
                return {"error": "its output cannot be carried: %s" % exc, "where": where}
        outputs.append(done)
    return {"outputs": outputs, "seconds": seconds}
