"""``ToolAgentLoop``: one trajectory per ``await loop.run(messages)``, token-in/token-out.

A state machine after verl's ToolAgentLoop, one handler per state::

    PENDING ──> GENERATING ──> PROCESSING_TOOLS ──> GENERATING ...
                    │    └───> INTERACTING ──────> GENERATING ...
                    └────────> TERMINATED  (stop_reason: completed | length | context_exhausted
                                                          | max_turns | aborted)

What the trajectory holds (BUG-107/108/110/111/114): the prompt is rendered once with the model's
chat template (``tools=`` the tools' schemas); every generated id is appended as produced (mask 1,
its logprob kept), never decoded and re-encoded; the observations are the template's own delta for
one round's messages (mask 0, logprob 0.0); after every turn ``len(response_ids) ==
len(response_mask) == len(response_logprobs)`` is asserted, and turn ``k+1``'s prompt is
``prompt_ids + response_ids`` of turn ``k`` plus the observation.

Limits (:class:`agent.AgentLoopConfig`): every request asks for ``max_tokens = min(max_tokens_per_turn,
max_model_len - tokens so far, response_length - response tokens)``, so none can exceed the context;
an observation that would leave no room ends the trajectory ``context_exhausted`` (BUG-124), one that
overflows ``response_length`` ends it ``length``. A turn cut by its token limit runs no call (BUG-116):
one observation says so, or the trajectory ends ``length``. An aborted generation is retried from the
state before it (BUG-112), at most ``max_generation_retries`` times, then the trajectory is
``aborted`` and not scored; an engine that raises (unreachable server, dead engine) counts as an
aborted generation, with the error in ``extra_fields["failure"]``.

The engine's own limits (:meth:`ToolAgentLoop.check_engine`, read once from a backend that has
``engine_info``): its ``max_model_len`` is the loop's when the config sets none (a trajectory that
fills the engine's context ends ``context_exhausted``, scored, instead of an engine error), and a
configured ``max_model_len`` above it is an error before any trajectory. When logprobs are asked
for, ``extra_fields["logprobs_mode"]`` says what they are (vLLM's names; ``unknown`` when the engine
does not say): ``processed_logprobs`` is the sampling distribution's (BUG-221).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence, Union

from pydantic import ValidationError

from judgebox.agent.backends.base import Backend, EngineInfo, GenerationResult
from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.output import AgentLoopOutput
from judgebox.agent.render import Renderer
from judgebox.agent.scoring import ScoreFn, score_trajectory

log = logging.getLogger(__name__)

TRUNCATED_TURN = "error: your last message hit the token limit; no tool was run"

#: An interaction (verl's ``generate_response`` in one callable): the transcript so far -> the user's
#: reply, ``(reply, terminate)`` to append a last reply and end, or ``None`` to end the trajectory.
Interaction = Callable[[list[dict]], Awaitable[Union[str, tuple[str, bool], None]]]


class AgentState(enum.Enum):
    """States of one trajectory."""

    PENDING = "pending"
    GENERATING = "generating"
    PROCESSING_TOOLS = "processing_tools"
    INTERACTING = "interacting"
    TERMINATED = "terminated"


class MissingLogprobs(RuntimeError):
    """The engine returned a turn without the logprobs that were asked for."""


@dataclass
class Trajectory:
    """The mutable state of one run (what verl calls AgentData)."""

    request_id: str
    messages: list[dict]
    context: list[dict]
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    response_logprobs: Optional[list[float]] = None
    last_turn: Optional[GenerationResult] = None
    last_text: str = ""
    truncated: bool = False
    calls: list = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    assistant: dict = field(default_factory=dict)
    assistant_turns: int = 0
    tool_rounds: int = 0
    user_turns: int = 0
    observations: int = 0  # tool rounds and user replies appended to the trajectory
    stop_reason: Optional[str] = None
    failure: Optional[str] = None
    step_rewards: list[float] = field(default_factory=list)
    counts: dict = field(default_factory=lambda: dict.fromkeys(
        ("tool_calls", "tool_calls_parsed", "tool_errors", "tool_timeouts", "parse_errors", "retries",
         "response_truncated", "truncated_turns", "unclosed_tool_call", "stop_token_restored"), 0))
    timing: dict = field(default_factory=lambda: {"generate_s": 0.0, "tools_s": 0.0, "score_s": 0.0})
    requests: list[dict] = field(default_factory=list)

    def check_lengths(self) -> None:
        """The bookkeeping invariant; a violation is a bug and fails loudly (BUG-108)."""
        n = len(self.response_ids)
        lp = n if self.response_logprobs is None else len(self.response_logprobs)
        if not n == len(self.response_mask) == lp:
            raise AssertionError(f"trajectory {self.request_id}: response_ids {n}, response_mask "
                                 f"{len(self.response_mask)}, response_logprobs {lp} differ")

    def append(self, ids: list[int], mask: int, logprobs: Optional[list[float]]) -> None:
        self.response_ids += ids
        self.response_mask += [mask] * len(ids)
        if self.response_logprobs is not None:
            self.response_logprobs += logprobs if logprobs is not None else [0.0] * len(ids)
        self.check_lengths()


class ToolAgentLoop:
    """Runs trajectories of one model with one set of tools.

    Args:
        config: the limits and policies (validated already).
        tokenizer: the model's ``transformers`` tokenizer (its chat template renders the prompt).
        backend: a :class:`judgebox.agent.backends.Backend`.
        tools: ``BaseTool`` instances (a sequence or ``{name: tool}``); each trajectory gets its own
            :class:`judgebox.agent.tools.TrajectoryTools` over them.
        score_fn: ``score_fn(final_text, ground_truth, **info) -> dict`` with ``score``; default
            :func:`judgebox.agent.scoring.code_score` (the judge with the problem's TestSpec).
        interaction: ``async interaction(messages) -> reply | None`` for user turns (BUG-110/121).
        tool_metrics: an :class:`judgebox.agent.tools.ToolMetrics` shared by all trajectories (optional).

    Raises:
        ValueError: unknown parser format, or no stop ids could be found.
    """

    def __init__(self, config: AgentLoopConfig, tokenizer: Any, backend: Backend, tools: Union[
                 Sequence[Any], Mapping[str, Any]] = (), score_fn: Optional[ScoreFn] = None,
                 interaction: Optional[Interaction] = None, tool_metrics: Any = None) -> None:
        from judgebox.agent.parsers import get_parser
        from judgebox.agent.scoring import code_score

        self.config = config
        self.tokenizer = tokenizer
        self.backend = backend
        self.tools = dict(tools) if isinstance(tools, Mapping) else {t.name: t for t in tools}
        self.schemas = [t.get_openai_tool_schema().to_openai() for t in self.tools.values()]
        self.score_fn = score_fn or code_score
        self.interaction = interaction
        self.tool_metrics = tool_metrics
        self.stop_ids = list(config.stop_token_ids if config.stop_token_ids is not None
                             else default_stop_token_ids(tokenizer))
        if not self.stop_ids:
            raise ValueError("no stop_token_ids: the tokenizer declares no eos id; set stop_token_ids")
        self.parser = get_parser(config.format, calls_in_reasoning=config.calls_in_reasoning,
                                 tools=self.schemas or None)
        self.renderer = Renderer(tokenizer, self.schemas or None, self.stop_ids, config.chat_template_kwargs)
        self.engine: Optional[EngineInfo] = None
        self._engine_checked = False
        self._engine_lock: Optional[asyncio.Lock] = None
        self._warned: set = set()
        self.handlers = {AgentState.PENDING: self._pending, AgentState.GENERATING: self._generating,
                         AgentState.PROCESSING_TOOLS: self._processing_tools,
                         AgentState.INTERACTING: self._interacting}

    async def run(self, messages: list[dict], *, ground_truth: Any = None, info: Optional[dict] = None,
                  request_id: Optional[str] = None, sampling_params: Optional[dict] = None,
                  tools_kwargs: Optional[Mapping[str, dict]] = None, score_fn: Optional[ScoreFn] = None,
                  **sample_kwargs: Any) -> AgentLoopOutput:
        """Run one trajectory to its end and score it.

        Args:
            messages: the conversation so far (OpenAI message dicts), ending with a user message.
            ground_truth: what the scorer compares against (a TestSpec for code problems).
            info: extra keyword arguments for ``score_fn`` (``data_source``, ``extra_info``, ...).
            request_id: the trajectory's id (default: a new uuid); tools and routers key on it.
            sampling_params: backend sampling parameters; ``sample_kwargs`` are merged into them
                (``temperature=1.0, seed=3, logprobs=0``, ``structured_outputs={...}``).
            tools_kwargs: ``{tool name: create kwargs}`` (verl's ``tools_kwargs[name]["create_kwargs"]``).
            score_fn: this trajectory's scorer (default: the loop's).

        Returns:
            the :class:`judgebox.agent.output.AgentLoopOutput`; ``extra_fields["stop_reason"]`` says how it
            ended. Only a bug raises (``AssertionError`` for broken bookkeeping).

        Raises:
            ValueError: the rendered prompt is longer than ``prompt_length`` (or leaves no room in
                ``max_model_len``).
        """
        from judgebox.agent.tools import TrajectoryTools

        params = {**(sampling_params or {}), **sample_kwargs}
        await self.check_engine()
        if params.get("logprobs") is not None:
            self._warn_logprobs(params)
        traj = Trajectory(request_id=request_id or uuid.uuid4().hex, messages=[dict(m) for m in messages],
                          context=[dict(m) for m in messages])
        if params.get("logprobs") is not None:
            traj.response_logprobs = []
        start = time.perf_counter()
        async with TrajectoryTools(self.tools, timeout_s=self.config.tool_timeout_s, metrics=self.tool_metrics,
                                   create_kwargs=tools_kwargs, instance_id=traj.request_id) as tt:
            state = AgentState.PENDING
            while state is not AgentState.TERMINATED:
                state = await self.handlers[state](traj, tt, params)
            rewards = await tt.calc_rewards() if self.tools else {}
        return await self._finish(traj, score_fn or self.score_fn, ground_truth, info or {}, rewards,
                                  time.perf_counter() - start)

    async def check_engine(self) -> Optional[EngineInfo]:
        """Read the engine's limits once (a backend without ``engine_info``: ``None``, nothing checked).

        When the config sets no ``max_model_len``, the engine's becomes the loop's (``self.config`` is
        re-validated with it); the logprobs mode is kept for the trajectories' records.

        Returns:
            the :class:`judgebox.agent.backends.EngineInfo`, or ``None``.

        Raises:
            ValueError: the configured ``max_model_len`` (or ``prompt_length``/``response_length``)
                exceeds the engine's context, naming both figures and where the engine's was read.
        """
        if self._engine_checked:
            return self.engine
        if self._engine_lock is None:
            self._engine_lock = asyncio.Lock()
        async with self._engine_lock:
            if self._engine_checked:
                return self.engine
            probe = getattr(self.backend, "engine_info", None)
            try:
                info = await probe() if probe is not None else None
            except Exception as exc:  # noqa: BLE001 - an engine that cannot start or answer: its requests report it
                log.warning("the engine's limits could not be read (%s: %s); max_model_len stays %s",
                            type(exc).__name__, exc, self.config.max_model_len)
                info = None
            limit = info.max_model_len if info is not None else None
            if limit is not None:
                mine = self.config.max_model_len
                if mine is not None and mine > limit:
                    raise ValueError(f"max_model_len = {mine} exceeds the engine's max_model_len = {limit} "
                                     f"({info.source}); lower max_model_len or start the engine with a longer context")
                if mine is None:
                    try:
                        self.config = type(self.config).model_validate({**self.config.model_dump(),
                                                                        "max_model_len": limit})
                    except ValidationError as exc:
                        reason = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
                        raise ValueError(f"the engine's max_model_len = {limit} ({info.source}): {reason}") from None
            self.engine, self._engine_checked = info, True
        return info

    @property
    def logprobs_mode(self) -> Optional[str]:
        """What the engine's logprobs are (:data:`judgebox.agent.backends.base.LogprobsMode`), or
        ``None`` when unknown or not read yet (:meth:`check_engine`)."""
        return self.engine.logprobs_mode if self.engine is not None else None

    def _warn_logprobs(self, params: dict) -> None:
        """Say once per kind when recorded logprobs will not be the temperature-scaled distribution's."""
        mode = self.logprobs_mode
        scaled = params.get("temperature", 1.0) not in (None, 0, 1)  # 1 == 1.0
        nucleus = params.get("top_p") not in (None, 1) or params.get("top_k") not in (None, 0, -1)
        kind = None
        if mode in ("processed_logprobs", "processed_logits") and nucleus:
            kind = ("nucleus", f"the recorded logprobs are {mode}: renormalized over the top-p/top-k "
                    f"nucleus (top_p={params.get('top_p')}, top_k={params.get('top_k')}), so they will not "
                    "match a trainer's temperature-only recompute")
        elif mode in ("raw_logprobs", "raw_logits") and scaled:
            kind = ("raw", f"the recorded logprobs are {mode}: the model's distribution before "
                    f"temperature {params['temperature']}, not the one sampled from (start vLLM with "
                    "logprobs_mode='processed_logprobs')")
        elif mode is None and scaled:
            kind = ("unknown", "the engine does not say whether its logprobs are temperature-scaled "
                    "(extra_fields['logprobs_mode'] = 'unknown'); for vLLM servers use "
                    "--logprobs-mode processed_logprobs and tell the backend (logprobs_mode=...)")
        if kind is not None and kind[0] not in self._warned:
            self._warned.add(kind[0])
            warnings.warn(kind[1], UserWarning, stacklevel=3)

    # ------------------------------------------------------------------------------ handlers

    async def _pending(self, traj: Trajectory, tt: Any, params: dict) -> AgentState:
        traj.prompt_ids = self.renderer.prompt(traj.messages)
        limit = self.config.prompt_length
        if limit is not None and len(traj.prompt_ids) > limit:
            raise ValueError(f"the rendered prompt has {len(traj.prompt_ids)} tokens > prompt_length = {limit}; "
                             "shorten the prompt or raise prompt_length")
        if self.config.max_model_len is not None and len(traj.prompt_ids) >= self.config.max_model_len:
            raise ValueError(f"the rendered prompt has {len(traj.prompt_ids)} tokens, leaving no room in "
                             f"max_model_len = {self.config.max_model_len}")
        return AgentState.GENERATING

    async def _generating(self, traj: Trajectory, tt: Any, params: dict) -> AgentState:
        cfg = self.config
        if cfg.max_assistant_turns is not None and traj.assistant_turns >= cfg.max_assistant_turns:
            return self._end(traj, "max_turns")
        max_tokens = cfg.max_tokens(len(traj.prompt_ids), len(traj.response_ids))
        if max_tokens is not None and max_tokens <= 0:
            context_left = (None if cfg.max_model_len is None
                            else cfg.max_model_len - len(traj.prompt_ids) - len(traj.response_ids))
            return self._end(traj, "context_exhausted" if context_left is not None and context_left <= 0 else "length")
        request = {**params, "max_tokens": max_tokens, "stop_token_ids": self.stop_ids}
        traj.requests.append({"max_tokens": max_tokens, "prompt_tokens": len(traj.prompt_ids) + len(traj.response_ids)})
        prompt = traj.prompt_ids + traj.response_ids
        error = None
        for attempt in range(cfg.max_generation_retries + 1):
            started = time.perf_counter()
            try:
                result = await asyncio.wait_for(self.backend.generate(prompt, request, traj.request_id),
                                                cfg.generation_timeout_s)
            except asyncio.TimeoutError:
                result = GenerationResult([], None, "abort")
            except Exception as exc:  # noqa: BLE001 - an unreachable or failing engine is an aborted turn
                error = f"{type(exc).__name__}: {exc}"
                log.warning("trajectory %s: generation failed (attempt %d of %d): %s", traj.request_id, attempt + 1,
                            cfg.max_generation_retries + 1, error)
                result = GenerationResult([], None, "abort")
            traj.timing["generate_s"] += time.perf_counter() - started
            if result.finish_reason != "abort":
                break
            if attempt < cfg.max_generation_retries:
                traj.counts["retries"] += 1
        else:
            traj.failure = f"generation failed: {error}" if error else "generation aborted"
            return self._end(traj, "aborted")
        traj.assistant_turns += 1
        ids, logprobs, finish = self._cut_at_stop(result)
        if traj.response_logprobs is not None and logprobs is None:
            traj.failure = "missing_logprobs"
            return self._end(traj, "aborted")
        if logprobs is not None and len(logprobs) != len(ids):  # never padded or shifted (BUG-223)
            traj.failure = "logprob_length_mismatch"
            log.warning("trajectory %s: the backend returned %d ids and %d logprobs; excluded",
                        traj.request_id, len(ids), len(logprobs))
            return self._end(traj, "aborted")
        traj.append(ids, 1, logprobs if traj.response_logprobs is not None else None)
        traj.last_turn = GenerationResult(ids, logprobs, finish)
        traj.truncated = finish == "length" or (
            max_tokens is not None and len(ids) >= max_tokens and (not ids or ids[-1] not in self.stop_ids))
        traj.last_text = self.tokenizer.decode(ids, skip_special_tokens=False)
        turn = self.parser.parse(traj.last_text)
        traj.calls, traj.errors = list(turn.calls), list(turn.errors)
        traj.assistant = assistant_message(turn)
        traj.messages.append(traj.assistant)
        traj.counts["tool_calls_parsed"] += len(turn.calls)
        traj.counts["parse_errors"] += len(turn.errors)
        # a complete call whose end tag never came (the turn stopped inside the envelope, BUG-225)
        traj.counts["unclosed_tool_call"] += turn.metrics.get("unclosed_call", 0)
        last_turn = cfg.max_assistant_turns is not None and traj.assistant_turns >= cfg.max_assistant_turns
        if traj.truncated:
            traj.counts["truncated_turns"] += 1
            if not (traj.calls or traj.errors) or last_turn:
                traj.counts["response_truncated"] = 1
                return self._end(traj, "length")
            traj.calls, traj.errors = [], [TRUNCATED_TURN]
            return await self._observe(traj, [{"role": "tool", "content": TRUNCATED_TURN}], next_state=AgentState.GENERATING)
        if traj.calls or traj.errors:  # results no generation would read are not run (verl's order)
            if last_turn or (cfg.max_tool_rounds is not None and traj.tool_rounds >= cfg.max_tool_rounds):
                return self._end(traj, "max_turns")
            return AgentState.PROCESSING_TOOLS
        if self.interaction is not None and (cfg.max_user_turns is None or traj.user_turns < cfg.max_user_turns):
            return AgentState.INTERACTING
        return self._complete(traj)

    async def _processing_tools(self, traj: Trajectory, tt: Any, params: dict) -> AgentState:
        cap = self.config.max_parallel_calls
        run, refused = (traj.calls, []) if cap is None else (traj.calls[:cap], traj.calls[cap:])
        started = time.perf_counter()
        results = await run_calls(tt, run)
        traj.timing["tools_s"] += time.perf_counter() - started
        texts = []
        for result in results:
            traj.counts["tool_calls"] += 1
            traj.counts["tool_timeouts"] += result.status == "timeout"
            traj.counts["tool_errors"] += result.status not in ("ok", "timeout")
            if result.step_reward is not None:
                traj.step_rewards.append(result.step_reward)
            texts.append(self._clip(result.text))
        texts += [f"error: too many tool calls in one turn; only the first {cap} were run, "
                  f"{call.name!r} was not" for call in refused]
        texts += traj.errors
        traj.tool_rounds += 1
        return await self._observe(traj, [{"role": "tool", "content": t} for t in texts],
                                   next_state=AgentState.GENERATING)

    async def _interacting(self, traj: Trajectory, tt: Any, params: dict) -> AgentState:
        reply = await self.interaction(traj.messages)
        reply, terminate = reply if isinstance(reply, tuple) else (reply, False)
        if reply is None:
            return self._complete(traj)
        traj.user_turns += 1
        state = await self._observe(traj, [{"role": "user", "content": reply}], next_state=AgentState.GENERATING)
        return self._end(traj, "completed") if terminate and state is AgentState.GENERATING else state

    # ------------------------------------------------------------------------------ helpers

    async def _observe(self, traj: Trajectory, new: list[dict], next_state: AgentState) -> AgentState:
        """Append the template's delta for ``new`` (mask 0) if it fits; else end the trajectory."""
        last = traj.last_turn.token_ids[-1] if traj.last_turn and traj.last_turn.token_ids else None
        obs = self.renderer.delta(traj.context, traj.assistant, new, last)
        if (obs and traj.last_turn is not None and traj.last_turn.finish_reason == "stop" and last != obs[0]
                and obs[0] in self.stop_ids):
            traj.counts["stop_token_restored"] += 1  # the server dropped the stop id it matched (BUG-223)
        cfg = self.config
        total = len(traj.prompt_ids) + len(traj.response_ids) + len(obs)
        traj.messages += new
        if cfg.max_model_len is not None and total >= cfg.max_model_len:
            return self._end(traj, "context_exhausted")
        if cfg.response_length is not None and len(traj.response_ids) + len(obs) >= cfg.response_length:
            traj.counts["response_truncated"] = 1
            return self._end(traj, "length")
        traj.append(obs, 0, None)
        traj.observations += 1
        return next_state

    def _clip(self, text: str) -> str:
        """A tool response cut to ``max_tool_response_length`` tokens on the configured side.

        The cut is in tokens; a byte-level token cut can split a character, so each kept piece is
        decoded on its own and a piece of a split character at a cut edge is dropped (never shown as
        U+FFFD); the middle side keeps the head and the tail with ``...`` between them."""
        limit = self.config.max_tool_response_length
        if limit is None:
            return text
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        if len(ids) <= limit:
            return text
        side = self.config.tool_response_truncate_side
        head_n = limit if side == "right" else 0 if side == "left" else limit // 2
        tail_n = limit - head_n
        head = self.tokenizer.decode(ids[:head_n], skip_special_tokens=True) if head_n else ""
        tail = self.tokenizer.decode(ids[len(ids) - tail_n:], skip_special_tokens=True) if tail_n else ""
        if head and not text.startswith(head):
            head = head.rstrip("\ufffd")
        if tail and not text.endswith(tail):
            tail = tail.lstrip("\ufffd")
        body = head + ("\n...\n" if head and tail else "") + tail
        return body + f"\n...(tool response cut to {limit} of {len(ids)} tokens)"

    def _cut_at_stop(self, result: GenerationResult) -> tuple[list[int], Optional[list[float]], str]:
        """The turn up to its first stop id (BUG-111: ids a backend produced after one are dropped)."""
        ids, lp, finish = list(result.token_ids), result.logprobs, result.finish_reason
        for i, token in enumerate(ids):
            if token in self.stop_ids:
                return ids[: i + 1], (lp[: i + 1] if lp is not None else None), "stop"
        return ids, (list(lp) if lp is not None else None), finish

    def _complete(self, traj: Trajectory) -> AgentState:
        """End a finished trajectory; a last turn that stopped without its stop id (a server that
        dropped the id it matched) gets the template's end-of-turn id back, mask 0 (BUG-223)."""
        turn = traj.last_turn
        if turn is not None and turn.finish_reason == "stop" and (not turn.token_ids or turn.token_ids[-1] not in self.stop_ids):
            end = self.renderer.end_of_turn(traj.context, traj.assistant)
            if end is not None:
                traj.append([end], 0, None)
                traj.counts["stop_token_restored"] += 1
        return self._end(traj, "completed")

    @staticmethod
    def _end(traj: Trajectory, reason: str) -> AgentState:
        traj.stop_reason = reason
        return AgentState.TERMINATED

    async def _finish(self, traj: Trajectory, score_fn: ScoreFn, ground_truth: Any, info: dict,
                      tool_rewards: dict, wall: float) -> AgentLoopOutput:
        started = time.perf_counter()
        final_text = self.parser.parse(traj.last_text).content if traj.last_turn is not None else ""
        reward, reward_info = await score_trajectory(
            score_fn, self.config, stop_reason=traj.stop_reason, failure=traj.failure,
            final_text=final_text, ground_truth=ground_truth, info=info, step_rewards=traj.step_rewards)
        traj.timing["score_s"] = time.perf_counter() - started
        metrics = {**traj.timing, "wall_s": wall + traj.timing["score_s"], "num_requests": len(traj.requests),
                   # the policy's own tokens (BUG-222): what any length penalty counts, not the span
                   # from the first to the last action token, which holds the observations between
                   "num_generated_tokens": sum(traj.response_mask)}
        metrics["loop_s"] = max(0.0, wall - traj.timing["generate_s"] - traj.timing["tools_s"])
        extra = {"stop_reason": traj.stop_reason, **traj.counts, "reward_info": reward_info,
                 "tool_rewards": tool_rewards, "requests": traj.requests, "request_id": traj.request_id}
        if traj.failure:
            extra["failure"] = traj.failure
        if traj.response_logprobs is not None:
            extra["logprobs_mode"] = self.logprobs_mode or "unknown"
        return AgentLoopOutput(prompt_ids=traj.prompt_ids, response_ids=traj.response_ids,
                               response_mask=traj.response_mask, response_logprobs=traj.response_logprobs,
                               num_turns=1 + traj.assistant_turns + traj.observations,
                               reward_score=reward, metrics=metrics, extra_fields=extra, messages=traj.messages)


def assistant_message(turn: Any) -> dict:
    """The transcript message of a parsed assistant turn (OpenAI shape, calls in ``tool_calls``)."""
    message: dict = {"role": "assistant", "content": turn.content}
    if turn.reasoning is not None:
        message["reasoning_content"] = turn.reasoning
    if turn.calls:
        message["tool_calls"] = [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in turn.calls]
    return message


async def run_calls(tt: Any, calls: Sequence[Any]) -> list[Any]:
    """Run one round's calls; results in call order.

    Calls to different tools run concurrently; calls to the same tool run one after another in
    emitted order, since they share that tool's (stateful) instance (BUG-103a).
    """
    by_tool: dict[str, list[int]] = {}
    for i, call in enumerate(calls):
        by_tool.setdefault(call.name, []).append(i)
    results: list[Any] = [None] * len(calls)

    async def sequence(indices: list[int]) -> None:
        for i in indices:
            results[i] = await tt.call(calls[i].name, calls[i].arguments)

    await asyncio.gather(*(sequence(ix) for ix in by_tool.values()))
    return results


def default_stop_token_ids(tokenizer: Any) -> list[int]:
    """Every end-of-turn id the model declares: its generation config's ``eos_token_id`` (one or a
    list, read from the tokenizer's directory) and the tokenizer's ``eos_token_id``, in that order."""
    ids: list[int] = []
    path = getattr(tokenizer, "name_or_path", None)
    if path:
        try:
            from transformers import GenerationConfig

            eos = GenerationConfig.from_pretrained(path).eos_token_id
        except (OSError, ValueError):
            eos = None
        ids += [eos] if isinstance(eos, int) else list(eos or [])
    if tokenizer.eos_token_id is not None:
        ids.append(tokenizer.eos_token_id)
    return list(dict.fromkeys(ids))
