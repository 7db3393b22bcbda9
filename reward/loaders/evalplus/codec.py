"""A typed JSON codec for evalplus test data: it runs inside the sandbox (standard library only,
Python >= 3.8) and on the host.

evalplus compares the candidate's return value with the canonical solution's as Python values
(``out == exp``, ``type(out) == type(exp)``), so a tuple must stay a tuple on its way from the
reference run to the test program. JSON keeps ``None``, ``bool``, ``int`` (any size), ``str``, finite
``float`` and ``list`` as they are; every other value is one JSON object with one tag key:
``{"$tuple": [...]}``, ``$set``, ``$frozenset``, ``$deque`` (items), ``$dict``, ``$ordered``,
``$counter`` (``[key, value]`` pairs, so keys keep their types), ``$float`` (``"nan"``, ``"inf"``,
``"-inf"``), ``$complex`` (``[real, imag]``), ``$bytes`` (latin-1 text), ``$decimal`` (its text) and
``$fraction`` (``[numerator, denominator]``). A subclass of a builtin type is encoded as its builtin
value and a numpy value as its ``tolist()``, as judgebox's runner carries the candidate's values;
anything else (a generator, a class instance, a regex match) raises ``TypeError``: it is not data.

Its source is part of the programs :mod:`judgebox.reward.loaders.evalplus.programs` builds.
"""

import collections
import decimal
import fractions
import json
import math

#: exact type -> tag of the types encoded as a list of items
ITEM_TAGS = {tuple: "$tuple", set: "$set", frozenset: "$frozenset", collections.deque: "$deque"}
#: exact type -> tag of the types encoded as a list of [key, value] pairs
PAIR_TAGS = {dict: "$dict", collections.OrderedDict: "$ordered", collections.Counter: "$counter",
             collections.defaultdict: "$dict"}
#: builtin bases a subclass value is encoded as (bool before int: a bool is an int)
BASES = (bool, int, float, str, bytes, tuple, list, dict, set, frozenset)
MAX_DEPTH = 200


def encode(value, depth=0):
    """``value`` as JSON-able data (see the module docstring). Raises ``TypeError`` for a value
    that is not data or is nested deeper than :data:`MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        raise TypeError("a value nested deeper than %d levels" % MAX_DEPTH)
    kind, inner = type(value), depth + 1
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if kind is list:
        return [encode(v, inner) for v in value]
    if kind in ITEM_TAGS:
        return {ITEM_TAGS[kind]: [encode(v, inner) for v in value]}
    if kind in PAIR_TAGS:
        return {PAIR_TAGS[kind]: [[encode(k, inner), encode(v, inner)] for k, v in value.items()]}
    if kind is complex:
        return {"$complex": [encode(value.real, inner), encode(value.imag, inner)]}
    if kind is bytes:
        return {"$bytes": value.decode("latin-1")}
    if kind is decimal.Decimal:
        return {"$decimal": str(value)}
    if kind is fractions.Fraction:
        return {"$fraction": [value.numerator, value.denominator]}
    base = next((b for b in BASES if isinstance(value, b)), None)
    if base is not None:
        return encode(base(value), inner)
    if kind.__module__ == "numpy" and hasattr(value, "tolist"):
        return encode(value.tolist(), inner)
    raise TypeError("a %s value is not data (plain values and containers only)" % kind.__name__)


def decode(data, depth=0):
    """The value :func:`encode` made ``data`` from. Raises ``ValueError`` for anything it cannot
    have made (an unknown tag, a tag object with more than one key, ...)."""
    if depth > MAX_DEPTH + 1:
        raise ValueError("data nested too deep")
    kind, inner = type(data), depth + 1
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [decode(v, inner) for v in data]
    if kind is not dict or len(data) != 1:
        raise ValueError("not encoded data: %r" % (data,))
    (tag, body), = data.items()
    try:
        if tag in ("$tuple", "$set", "$frozenset", "$deque"):
            items = [decode(v, inner) for v in body]
            maker = {"$tuple": tuple, "$set": set, "$frozenset": frozenset, "$deque": collections.deque}[tag]
            return maker(items)
        if tag in ("$dict", "$ordered", "$counter"):
            pairs = dict([(decode(k, inner), decode(v, inner)) for k, v in body])
            maker = {"$dict": dict, "$ordered": collections.OrderedDict, "$counter": collections.Counter}[tag]
            return maker(pairs)
        if tag == "$float":
            return float(body)
        if tag == "$complex":
            return complex(decode(body[0], inner), decode(body[1], inner))
        if tag == "$bytes":
            return body.encode("latin-1")
        if tag == "$decimal":
            return decimal.Decimal(body)
        if tag == "$fraction":
            return fractions.Fraction(int(body[0]), int(body[1]))
    except (TypeError, ValueError, ArithmeticError, IndexError, AttributeError) as exc:
        raise ValueError("bad %s data: %s" % (tag, exc)) from None
    raise ValueError("unknown tag %r" % (tag,))


def dumps(value):
    """JSON text of :func:`encode` ``(value)`` (no NaN/Infinity tokens: those are tagged)."""
    return json.dumps(encode(value), allow_nan=False, ensure_ascii=False)


def loads(text):
    """The value :func:`dumps` wrote as ``text``."""
    return decode(json.loads(text))
