"""TRL integration: a ``GRPOTrainer(rollout_func=...)`` backed by judgebox's tool agent loop.

``make_rollout_func(loop, event_loop, ground_truth_of=...)`` returns TRL's ``rollout_func(prompts,
trainer) -> dict`` (TRL 1.16, experimental API): every prompt TRL hands over (the sampler has already
repeated each one ``num_generations`` times) becomes one :class:`agent.ToolAgentLoop` trajectory,
all run concurrently on ``event_loop`` (the loop the in-process vLLM engine lives on). It returns
``prompt_ids``, ``completion_ids`` (every response token, tool observations included), ``logprobs``
(the sampled tokens'; 0.0 for observation tokens) and ``env_mask`` (1 = policy token, 0 = tool
observation: TRL leaves those out of the loss), plus extra columns TRL passes to the reward
functions: ``trajectory_reward`` (the loop's own score: the judge on the final answer plus any
step rewards; ``None`` when unknown), ``final_text``, ``stop_reason`` and ``num_turns``.
:func:`trajectory_reward` is the ``reward_funcs`` entry that hands ``trajectory_reward`` to TRL.

Weights: before generating, when the trainer has taken an optimizer step since the last sync, the
policy's current weights go into the engine in memory (:mod:`judgebox.integrations.trl.weight_sync`; the engine must be
started with ``worker_extension_cls=judgebox.integrations.trl.weight_sync.WORKER_EXTENSION``). ``rollout.syncs`` records
each sync (step, tensors, bytes, seconds); ``rollout.timings`` records each call (seconds): ``wall_s``
(the whole call, sync included), ``sync_s``, and the trajectories' summed ``generate_s``, ``tools_s``
and ``score_s`` (they overlap in time: sums over concurrent trajectories, not shares of ``wall_s``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Callable, Iterable, Optional

from judgebox.integrations.trl.weight_sync import named_tensors, push_weights

log = logging.getLogger(__name__)


def prompt_key(prompt: Any) -> str:
    """A hashable key for a plain or conversational prompt (its JSON text)."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True)


def prompt_lookup(rows: Iterable[dict], column: str = "ground_truth", prompt_column: str = "prompt"
                  ) -> Callable[[Any], Any]:
    """``ground_truth_of(prompt)`` for :func:`make_rollout_func`: ``rows[i][column]`` looked up by the
    row's prompt (TRL's ``rollout_func`` receives prompts only).

    Raises:
        KeyError: (when called) a prompt that is in none of ``rows``.
    """
    table = {prompt_key(row[prompt_column]): row[column] for row in rows}

    def ground_truth_of(prompt: Any) -> Any:
        key = prompt_key(prompt)
        if key not in table:
            raise KeyError(f"ground_truth_of: no row has this prompt: {key[:200]}")
        return table[key]

    return ground_truth_of


def trajectory_reward(prompts: list, completions: list, trajectory_reward: list, **_: Any) -> list:
    """TRL ``reward_funcs`` entry: the agent loop's own score of each trajectory (``None`` = unknown,
    which TRL leaves out of the group statistics)."""
    return list(trajectory_reward)


class AgentRollout:
    """The ``rollout_func`` object :func:`make_rollout_func` returns (callable as TRL calls it)."""

    def __init__(self, loop: Any, event_loop: asyncio.AbstractEventLoop, *,
                 ground_truth_of: Optional[Callable[[Any], Any]] = None,
                 sampling_params: Optional[dict] = None, sync_weights: bool = True,
                 sync_dtype: Any = "bfloat16") -> None:
        self.loop = loop
        self.event_loop = event_loop
        self.ground_truth_of = ground_truth_of
        self.sampling_params = {"temperature": 1.0, **(sampling_params or {}), "logprobs": 0}
        self.sync_weights = sync_weights
        self.sync_dtype = sync_dtype
        self.synced_step = 0  # the engine starts from the checkpoint the trainer starts from
        self.syncs: list[dict] = []
        self.timings: list[dict] = []

    def __call__(self, prompts: list, trainer: Any) -> dict:
        started = time.perf_counter()
        if self.sync_weights and trainer.state.global_step != self.synced_step:
            self.sync(trainer)
        synced = time.perf_counter()
        outputs = self._run(self._rollouts(prompts))
        self.timings.append({"step": trainer.state.global_step, "trajectories": len(outputs),
                             "wall_s": time.perf_counter() - started, "sync_s": synced - started,
                             **{k: sum(o.metrics.get(k, 0.0) for o in outputs)
                                for k in ("generate_s", "tools_s", "score_s")}})
        for o in outputs:
            if o.extra_fields.get("failure"):
                log.warning("rollout %s: %s (%s)", o.extra_fields.get("request_id"), o.extra_fields["stop_reason"],
                            o.extra_fields["failure"])
        # TRL needs >= 1 completion token: a trajectory that produced none (aborted before its first
        # token) gets one end-of-turn token, masked out (env_mask 0); its reward is None.
        empty = [self.loop.stop_ids[0]]
        return {
            "prompt_ids": [o.prompt_ids for o in outputs],
            "completion_ids": [o.response_ids or empty for o in outputs],
            "logprobs": [(o.response_logprobs or [0.0] * len(o.response_ids)) or [0.0] for o in outputs],
            "env_mask": [o.response_mask or [0] for o in outputs],
            "trajectory_reward": [o.reward_score for o in outputs],
            "final_text": [_final_text(o) for o in outputs],
            "stop_reason": [o.extra_fields["stop_reason"] for o in outputs],
            "num_turns": [o.num_turns for o in outputs],
        }

    def sync(self, trainer: Any) -> dict:
        """Push the trainer's current policy weights into the engine; returns the sync record."""
        import torch

        model = trainer.accelerator.unwrap_model(trainer.model)
        dtype = getattr(torch, self.sync_dtype) if isinstance(self.sync_dtype, str) else self.sync_dtype
        record = self._run(push_weights(self.loop.backend.engine, named_tensors(model, dtype)))
        record["step"] = trainer.state.global_step
        self.syncs.append(record)
        self.synced_step = trainer.state.global_step
        return record

    async def _rollouts(self, prompts: list) -> list:
        async def one(prompt: Any):
            messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
            truth = self.ground_truth_of(prompt) if self.ground_truth_of else None
            return await self.loop.run(messages, ground_truth=truth, sampling_params=dict(self.sampling_params))

        return list(await asyncio.gather(*(one(p) for p in prompts)))

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.event_loop).result()


def _final_text(output: Any) -> str:
    assistant = [m for m in output.messages if m.get("role") == "assistant"]
    return str(assistant[-1].get("content") or "") if assistant else ""


def make_rollout_func(loop: Any, event_loop: asyncio.AbstractEventLoop, *,
                      ground_truth_of: Optional[Callable[[Any], Any]] = None,
                      sampling_params: Optional[dict] = None, sync_weights: bool = True,
                      sync_dtype: Any = "bfloat16") -> AgentRollout:
    """TRL's ``rollout_func`` running ``loop`` (an :class:`agent.ToolAgentLoop` on a
    :class:`judgebox.agent.backends.VLLMBackend`) for every prompt.

    Args:
        loop: the agent loop (its tools, parser, limits and scorer are used as configured).
        event_loop: the running event loop (in another thread) that owns the vLLM engine.
        ground_truth_of: ``prompt -> ground truth`` for the loop's scorer (e.g. :func:`prompt_lookup`
            over the training rows); without it the scorer gets ``None``.
        sampling_params: vLLM sampling parameters (``temperature`` 1.0 by default; ``logprobs`` is
            always 0: the sampled token's logprob).
        sync_weights: push the trainer's weights into the engine after every optimizer step.
        sync_dtype: the engine's dtype (tensors are cast before they are sent).
    """
    return AgentRollout(loop, event_loop, ground_truth_of=ground_truth_of, sampling_params=sampling_params,
                        sync_weights=sync_weights, sync_dtype=sync_dtype)
