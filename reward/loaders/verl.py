"""verl RL rows (parquet): ``data_source``, ``prompt`` (chat messages), ``ability``,
``reward_model`` (``{"style": "rule", "ground_truth": ...}``), ``extra_info`` (``index``, ...).

``ground_truth`` (JSON text or object) is read as a judgebox :class:`judgebox.reward.spec.TestSpec` (what
``judgebox data convert`` writes: it has ``kind``), or as verl's code format ``{"inputs", "outputs",
"fn_name"?}`` (APPS-style). :func:`to_row` writes a :class:`Problem` back as such a row.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from judgebox.reward.spec import TestSpec

from .cases import apps_spec, decode_json
from .problem import Problem, guarded_spec


def ground_truth_spec(ground_truth: Any) -> TestSpec:
    """The spec held by a ``reward_model.ground_truth`` value. Raises ``TestDataError``/``ValueError``."""
    value = decode_json(ground_truth, "reward_model.ground_truth")
    if isinstance(value, dict) and "kind" in value:
        return TestSpec.model_validate(value)
    return apps_spec(value)


def decoded_arguments(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with each tool call's JSON-text ``arguments`` (OpenAI's form) decoded to the object
    chat templates iterate (Qwen's ``arguments|items``); text that is not a JSON object stays text."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    out = []
    for call in calls:
        call = dict(call)
        fn = dict(call.get("function") or {})
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                value = json.loads(args)
            except ValueError:
                value = None
            if isinstance(value, dict):
                fn["arguments"] = value
        if fn:
            call["function"] = fn
        out.append(call)
    return {**message, "tool_calls": out}


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One verl row; unusable ground truth becomes ``data_error``."""
    extra = row.get("extra_info") or {}
    spec, error = guarded_spec(lambda: ground_truth_spec((row.get("reward_model") or {})["ground_truth"]))
    messages = row.get("prompt")
    chat = [] if isinstance(messages, str) else [decoded_arguments(dict(m)) for m in list(messages or [])]
    prompt = messages if isinstance(messages, str) else next(
        (m.get("content", "") for m in reversed(chat) if m.get("role") == "user"), "")
    history = chat if len(chat) > 1 or any(m.get("role") != "user" for m in chat) else []
    return Problem(task_id=str(extra.get("task_id", extra.get("index", index))), prompt=prompt, messages=history,
                   spec=spec, data_error=error, gold=extra.get("reference"),
                   data_source=row.get("data_source") or data_source,
                   language=spec.language if spec else "python",
                   stop_tokens=list(extra.get("stop_tokens") or []))


def to_row(problem: Problem, index: int, *, agent_name: Optional[str] = None,
           tool_selection: Optional[list[str]] = None, system: Optional[str] = None) -> dict[str, Any]:
    """A GRPO-ready verl row for ``problem`` (``ground_truth`` = the TestSpec as JSON text).

    Args:
        problem: a problem with a spec.
        index: the row's ``extra_info.index``.
        agent_name: verl agent-loop name (e.g. ``"tool_agent"``), written as the ``agent_name`` column.
        tool_selection: tool names for the agent loop, written as ``extra_info.tool_selection``.
        system: an optional system message put before the user prompt.

    Raises:
        ValueError: the problem has no spec (its test data is unusable).
    """
    if problem.spec is None:
        raise ValueError(f"{problem.task_id}: cannot convert a problem without tests ({problem.data_error})")
    messages = ([{"role": "system", "content": system}] if system else []) + (
        list(problem.messages) or [{"role": "user", "content": problem.prompt}])
    extra: dict[str, Any] = {"index": index, "task_id": problem.task_id, "reference": problem.gold}
    if problem.stop_tokens:
        extra["stop_tokens"] = list(problem.stop_tokens)
    if tool_selection is not None:
        extra["tool_selection"] = list(tool_selection)
    row: dict[str, Any] = {
        "data_source": problem.data_source, "prompt": messages, "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(problem.spec.model_dump(mode="json"))},
        "extra_info": extra,
    }
    if agent_name is not None:
        row["agent_name"] = agent_name
    return row
