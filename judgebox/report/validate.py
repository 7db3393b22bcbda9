"""Field checks of one record ``judgebox report`` reads, before anything is drawn from it.

:func:`check_row` raises ``ValueError`` naming the field (and the index in a list) for a value the
page cannot show honestly; :func:`judgebox.reward.results.scan_jsonl` adds ``file:line``. The rules:

- every kind: ``tests``, when present, a list of objects;
- ``eval`` and ``rollout``: ``verdict`` a non-empty string (a verdict is never guessed);
- ``rollout``: ``response_ids`` (and ``prompt_ids`` when present) a list of token ids, integers from
  0 to 2**32 - 1 (a tokenizer's id range); ``response_mask`` a list of 0 (observation token) and 1
  (policy token), one per response token; ``response_logprobs``, when present, one number or null
  per response token; ``messages`` a list of objects; ``extra_fields`` an object;
- ``verl``: ``score`` a number or null.

Lists are checked with C-level passes (``map(type, ...)``, ``min``, ``max``), so a 10,000-trajectory
file costs a fraction of a second; only a bad list is walked to find the first bad index.
"""

from __future__ import annotations

import json
from typing import Any, Optional

#: the largest token id a tokenizer takes (Hugging Face tokenizers hold ids as u32)
MAX_TOKEN_ID = 2**32 - 1
_NUMBER = {int, float, bool}


def _show(value: Any) -> str:
    """``value`` as short JSON for a message (at most 40 characters)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _token_ids(row: dict, field: str) -> Optional[int]:
    """The length of ``row[field]`` (``None`` when absent or null), checked as token ids."""
    ids = row.get(field)
    if ids is None:
        return None
    if not isinstance(ids, list):
        raise ValueError(f"{field} is {_show(ids)}, not a list of token ids")
    if ids and (not set(map(type, ids)) <= {int} or min(ids) < 0 or max(ids) > MAX_TOKEN_ID):
        i, bad = next((i, x) for i, x in enumerate(ids) if type(x) is not int or not 0 <= x <= MAX_TOKEN_ID)
        raise ValueError(f"{field}[{i}] is {_show(bad)}: a token id is an integer from 0 to {MAX_TOKEN_ID}")
    return len(ids)


def _objects(row: dict, field: str, container: type) -> None:
    value = row.get(field)
    if value is None:
        return
    if container is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{field} is {_show(value)}, not an object")
        return
    if not isinstance(value, list):
        raise ValueError(f"{field} is {_show(value)}, not a list of objects")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"{field}[{i}] is {_show(item)}, not an object")


def _rollout(row: dict) -> None:
    n = _token_ids(row, "response_ids")
    if n is None:
        raise ValueError("response_ids is null: a trajectory's response is a list of token ids")
    _token_ids(row, "prompt_ids")
    mask = row.get("response_mask")
    if not isinstance(mask, list):
        raise ValueError(f"response_mask is {_show(mask)}, not a list of 0 and 1")
    if len(mask) != n:
        raise ValueError(f"response_mask has {len(mask)} values, response_ids {n} tokens: one mask value per "
                         "response token")
    if not (set(map(type, mask)) <= {int} and set(mask) <= {0, 1}):
        i, bad = next((i, x) for i, x in enumerate(mask) if type(x) is not int or x not in (0, 1))
        raise ValueError(f"response_mask[{i}] is {_show(bad)}: mask values are 0 (observation token) or 1 "
                         "(policy token)")
    logprobs = row.get("response_logprobs")
    if logprobs is not None:
        if not isinstance(logprobs, list) or len(logprobs) != n:
            size = f"{len(logprobs)} values" if isinstance(logprobs, list) else _show(logprobs)
            raise ValueError(f"response_logprobs is {size}, response_ids {n} tokens: one logprob (or null) per "
                             "response token")
        if not set(map(type, logprobs)) <= _NUMBER | {type(None)}:
            i, bad = next((i, x) for i, x in enumerate(logprobs) if type(x) not in _NUMBER and x is not None)
            raise ValueError(f"response_logprobs[{i}] is {_show(bad)}, not a number or null")
    _objects(row, "messages", list)
    _objects(row, "extra_fields", dict)


def check_row(kind: str, row: dict) -> None:
    """Check the fields of one ``kind`` record (``"eval"``, ``"rollout"`` or ``"verl"``) by the rules
    of the module docstring; its signature keys are already known present.

    Raises:
        ValueError: a field the page cannot show; the message names the field (``response_mask[3]``)
            and what it must be.
    """
    _objects(row, "tests", list)
    if kind in ("eval", "rollout"):
        verdict = row.get("verdict")
        if not isinstance(verdict, str) or not verdict:
            raise ValueError(f"verdict is {_show(verdict)}: a judged record's verdict is a non-empty string "
                             "(the report never guesses one)")
    if kind == "rollout":
        _rollout(row)
    elif kind == "verl":
        score = row.get("score")
        if score is not None and type(score) not in _NUMBER:
            raise ValueError(f"score is {_show(score)}, not a number or null")
