"""End-to-end scoring of a finished trajectory: the final assistant turn only.

The score comes from the last *generated* assistant turn (its mask-1 tokens, reasoning and tool
calls removed by the parser): never from user, tool or interaction text, even when it holds a
correct-looking answer (BUG-121). The scorer is ``score_fn(final_text, ground_truth, **info) ->
dict`` (sync or async) returning at least ``score``; optional keys ``format_error`` (no answer
could be parsed) and ``infra_error`` (the scorer could not judge). Built in:

- :func:`code_score` (the default): the judge with the problem's ``TestSpec`` through
  :func:`reward.compute_score` (code extracted from the final text);
- :func:`answer_score`: a ``#### 72`` or ``\\boxed{72}`` answer against the ground truth.

Policies (:class:`agent.AgentLoopConfig`, BUG-122): a trajectory cut by ``length`` gets
``overflow_reward`` when it is set (never ``failed_parse_reward``: a cut answer is not a format
error); ``failed_parse_reward`` replaces the score of a *finished* answer whose scorer reports
``format_error``; length checks never touch a trajectory that finished. ``aborted`` trajectories and
infrastructure failures get reward ``None`` with the reason in ``reward_info["reason"]``. Per-step
tool rewards join by ``step_reward_rule`` (``sum``/``mean`` times ``step_reward_weight``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from typing import Any, Awaitable, Callable, Optional, Union

from judgebox.agent.config import AgentLoopConfig

log = logging.getLogger(__name__)

ScoreFn = Callable[..., Union[dict, Awaitable[dict]]]


def code_score(final_text: str, ground_truth: Any, **info: Any) -> dict:
    """Judge the code in ``final_text`` against ``ground_truth`` (a ``TestSpec``, dict or JSON).

    ``info`` keys reach :func:`reward.compute_score` (``data_source``, ``extra_info``,
    ``sandbox_url``, ``score_mode``, ...). Adds ``format_error`` = no code in the text.
    """
    from judgebox.reward.score import compute_score

    kwargs = {k: v for k, v in info.items() if k not in ("stop_reason", "num_turns")}
    result = dict(compute_score(solution_str=final_text, ground_truth=ground_truth, **kwargs))
    result["format_error"] = not final_text.strip()
    return result


_HASHES = re.compile(r"####\s*([^\n]+)")
_BOXED = "\\boxed{"


def final_answer(text: str) -> Optional[str]:
    """The last ``\\boxed{...}`` (balanced braces) or ``#### ...`` answer in ``text``, or ``None``."""
    start = text.rfind(_BOXED)
    if start >= 0:
        depth, i = 1, start + len(_BOXED)
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            return text[start + len(_BOXED): i - 1].strip()
    found = _HASHES.findall(text)
    return found[-1].strip() if found else None


def _normal(answer: str) -> str:
    answer = answer.strip().rstrip(".").replace(",", "").replace("$", "")
    try:
        return repr(float(answer))
    except ValueError:
        return answer


def answer_score(final_text: str, ground_truth: Any, **info: Any) -> dict:
    """1.0 when the final ``####``/``\\boxed{}`` answer equals ``ground_truth`` (numbers compared as
    numbers, ``,`` and ``$`` ignored), else 0.0; ``format_error`` when there is no such answer."""
    answer = final_answer(final_text)
    if answer is None:
        return {"score": 0.0, "acc": False, "answer": None, "format_error": True}
    ok = _normal(answer) == _normal(str(ground_truth))
    return {"score": 1.0 if ok else 0.0, "acc": ok, "answer": answer, "format_error": False}


async def call_score_fn(score_fn: ScoreFn, final_text: str, ground_truth: Any, info: dict) -> dict:
    """Run a sync scorer in a thread (it may block on a sandbox) or await an async one."""
    if inspect.iscoroutinefunction(score_fn):
        return dict(await score_fn(final_text, ground_truth, **info))
    result = await asyncio.to_thread(score_fn, final_text, ground_truth, **info)
    if inspect.isawaitable(result):
        result = await result
    return dict(result)


def combine_steps(config: AgentLoopConfig, step_rewards: list[float]) -> float:
    """The per-step tool rewards combined by ``step_reward_rule`` (0.0 when ignored or none)."""
    if config.step_reward_rule == "ignore" or not step_rewards:
        return 0.0
    total = sum(step_rewards) if config.step_reward_rule == "sum" else sum(step_rewards) / len(step_rewards)
    return config.step_reward_weight * total


async def score_trajectory(score_fn: ScoreFn, config: AgentLoopConfig, *, stop_reason: Optional[str],
                           failure: Optional[str], final_text: str, ground_truth: Any, info: dict,
                           step_rewards: list[float]) -> tuple[Optional[float], dict]:
    """``(reward, reward_info)`` of a finished trajectory; ``reward`` is ``None`` when unknown.

    ``reward_info`` always has ``stop_reason``, ``format_error`` and, when the reward is ``None``,
    ``reason``; it includes the scorer's own keys.
    """
    base = {"stop_reason": stop_reason, "format_error": False}
    if stop_reason == "aborted":
        return None, {**base, "reason": failure or "aborted"}
    if stop_reason == "length" and config.overflow_reward is not None:
        return float(config.overflow_reward), {**base, "score": float(config.overflow_reward), "overflow": True}
    try:
        result = await call_score_fn(score_fn, final_text, ground_truth, {**info, "stop_reason": stop_reason})
    except Exception as exc:  # noqa: BLE001 - a scorer crash is an unknown reward, not a zero
        log.exception("score_fn failed")
        return None, {**base, "reason": f"score_fn raised {type(exc).__name__}: {exc}"}
    info_out = {**result, **base, "format_error": bool(result.get("format_error")) and stop_reason != "length"}
    if result.get("infra_error") or result.get("score") is None:
        return None, {**info_out, "reason": result.get("reason") or f"scorer could not judge "
                                                                     f"({result.get('verdict', 'no score')})"}
    score = float(result["score"])
    if info_out["format_error"] and config.failed_parse_reward is not None:
        score = float(config.failed_parse_reward)
    score += combine_steps(config, step_rewards)
    return score, {**info_out, "score": score}
