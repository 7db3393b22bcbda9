"""The runner behind ``judgebox rollout``: n scored trajectories per problem, written as they finish.

Each problem's prompt becomes one user message (as ``judgebox data convert`` writes it); each of
its ``n`` trajectories runs through :class:`agent.ToolAgentLoop`, then the final assistant turn is
judged with the problem's TestSpec by ``reward/evaluate.py``'s own machinery
(:meth:`judgebox.reward.evaluate.Evaluation.judge_sample`: the completion becomes the candidate program,
infrastructure errors are retried). One jsonl line per trajectory, flushed (fsynced within a second): the
:class:`agent.AgentLoopOutput` fields plus ``task_id``, ``sample_index`` (= ``sample_id``, so
``judgebox eval``'s loaders read it) and the judgement's fields (``verdict``, ``passed``, ...).

Resumable like ``judgebox eval``: a re-run keeps every trajectory already written and runs only the
missing ones plus those that ended ``infra_error`` (an aborted generation or an unavailable
sandbox: not final). The summary has ``judgebox eval``'s keys (``pass_at_k``, ``verdicts``, ...)
plus ``stop_reasons``, ``tool_calls_per_trajectory``, ``parse_errors``, ``tool_errors``,
``tool_timeouts`` and ``mean_reward``. ``tools=()`` is plain sampling: one turn per trajectory, so
the summary is the model's offline pass@k.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from pydantic import Field

from judgebox.agent.loop import ToolAgentLoop
from judgebox.reward.evaluate import GIVE_UP_AFTER, GIVE_UP_SECONDS, Evaluation, GiveUp, Sample, stale_tests
from judgebox.reward.loaders import Problem
from judgebox.reward.report import EvalSummary, summarize
from judgebox.reward.results import JsonlAppender, compact, read_results
from judgebox.reward.verdict import Verdict, unscorable_reason


def digest(data: Any) -> str:
    """The first 16 hex digits of the sha256 of ``data`` as sorted JSON (what isn't JSON: its ``str``)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


class RolloutSummary(EvalSummary):
    """``judgebox eval``'s summary plus the agent's counters (totals over trajectories with a result)."""

    stop_reasons: dict[str, int] = Field(default_factory=dict, description="trajectories per stop reason")
    tool_calls_per_trajectory: float = Field(0.0, description="tool calls executed, mean per trajectory")
    parse_errors: int = Field(0, description="malformed tool calls")
    tool_errors: int = Field(0, description="tool calls that ended in an error (timeouts not included)")
    tool_timeouts: int = Field(0, description="tool calls that timed out")
    mean_reward: Optional[float] = Field(None, description="mean reward_score over scored trajectories")
    n_unscorable: int = Field(0, description="trajectories without a reward (the sandbox failed, bad test data): "
                                            "never counted as 0 (BUG-205)")
    unscorable_reasons: dict[str, int] = Field(
        default_factory=dict, description="trajectories without a reward by what failed: 'infrastructure' (sandbox "
                                          "or engine: re-run) or 'test_data' (the dataset's tests: fix them)")
    unscorable_groups: int = Field(0, description="problems none of whose trajectories could be scored: "
                                                  "they contribute no reward")
    model: Optional[str] = Field(None, description="the model (directory or hub id) that generated the trajectories; "
                                                   "`judgebox report` loads its tokenizer for the token view")


def prompt_messages(problem: Problem, system: Optional[str] = None) -> list[dict]:
    """The chat messages of a problem: an optional system message (unless the row has its own), then
    its whole chat prompt when it has one (earlier turns included, BUG-218), else its prompt as the
    user's."""
    history = [dict(m) for m in problem.messages]
    head = [{"role": "system", "content": system}] if system and not any(m.get("role") == "system" for m in history) else []
    return head + (history or [{"role": "user", "content": problem.prompt}])


class Rollout:
    """Trajectories of one dataset into a jsonl, with their judgement and a summary.

    Args:
        problems: the dataset (problems without usable tests are skipped).
        loop: the agent loop (its tokenizer, backend, tools and config).
        out_path: the trajectories jsonl (created, or resumed).
        n: trajectories per problem.
        sampling_params: backend sampling parameters; a ``seed`` is offset by the trajectory's
            global index so the n samples differ.
        evaluation: judges final answers (default: an :class:`judgebox.reward.evaluate.Evaluation` on the
            embedded sandbox); its ``concurrency`` is unused here.
        concurrency: trajectories in flight at once.
        system: a system message before each prompt.
        dataset: the name in the summary.
        give_up_after: trajectories in a row ending ``infra_error`` that stop the run (``None``:
            ``max(GIVE_UP_AFTER, 4 * concurrency)``, as ``judgebox eval``).
        give_up_seconds: at least ``concurrency`` trajectories in a row ending ``infra_error`` and
            none judged for this long also stop it (:class:`judgebox.reward.evaluate.GiveUp`).
        settings: what generated the trajectories (model, sampling parameters, tools, loop config,
            system message: any JSON data): each record keeps its hash as ``rollout_settings`` (and,
            for a dict, each key's as ``rollout_settings_parts``), and a file written with other
            settings is not resumed (:meth:`plan` raises, naming the keys that differ).

    Raises:
        ValueError: ``n < 1`` or ``concurrency < 1``.
    """

    def __init__(self, problems: list[Problem], loop: ToolAgentLoop, out_path: Path, *, n: int = 1,
                 sampling_params: Optional[dict] = None, evaluation: Optional[Evaluation] = None,
                 concurrency: int = 64, system: Optional[str] = None, dataset: str = "dataset",
                 give_up_after: Optional[int] = None, settings: Any = None,
                 give_up_seconds: float = GIVE_UP_SECONDS) -> None:
        if n < 1 or concurrency < 1:
            raise ValueError(f"--n and --concurrency must be >= 1; got {n} and {concurrency}")
        self.problems = [p for p in problems if p.spec is not None]
        self.all_task_ids = [p.task_id for p in problems]
        self.loop = loop
        self.out_path = Path(out_path)
        self.n = n
        self.sampling_params = dict(sampling_params or {})
        self.evaluation = evaluation or Evaluation(problems, self.out_path, dataset=dataset)
        self.concurrency = concurrency
        self.system = system
        self.dataset = dataset
        self.give_up_after = give_up_after or max(GIVE_UP_AFTER, 4 * concurrency)
        self.give_up_seconds = give_up_seconds
        #: older lines of a trajectory the file held (counted once, the newest; BUG-211)
        self.duplicates_dropped = 0
        #: why the run stopped early (``""``: it did not); see :meth:`run`
        self.gave_up = ""
        #: the hash of ``settings`` each record keeps (``None``: none given, nothing checked)
        self.settings_id = None if settings is None else digest(settings)
        #: a dict's hash per key, which records keep too, to name the settings that differ
        self.settings_parts = {k: digest(v) for k, v in settings.items()} if isinstance(settings, dict) else None

    def check_prompts(self) -> None:
        """Render every problem's prompt with the loop's chat template before any trajectory runs.

        Raises:
            ValueError: the template cannot render a row's prompt, naming the row, the message and
                why (e.g. a tool call whose ``arguments`` is text that is not a JSON object, for a
                template that iterates them): never an exception mid-rollout, nor a silent fallback.
        """
        for problem in self.problems:
            messages = prompt_messages(problem, self.system)
            try:
                self.loop.renderer.prompt(messages)
            except Exception as exc:  # the template's own error (TypeError, jinja2's TemplateError, ...)
                where = next((f"message {i}: tool_calls[{j}].function.arguments is text, not a JSON object "
                              f"({str(c.get('function', {}).get('arguments'))[:60]!r})"
                              for i, m in enumerate(messages) for j, c in enumerate(m.get("tool_calls") or [])
                              if isinstance((c.get("function") or {}).get("arguments"), str)), "its messages")
                raise ValueError(f"row {problem.task_id}: the chat template cannot render {where}: "
                                 f"{type(exc).__name__}: {exc}") from None

    def keys(self) -> list[tuple[str, int]]:
        """Every ``(task_id, sample_index)`` of the run, in order."""
        return [(p.task_id, i) for p in self.problems for i in range(self.n)]

    def plan(self) -> tuple[dict, list[tuple[str, int]]]:
        """``(records already written, keys to run)``: missing ones and ``infra_error`` ones.

        Raises:
            ValueError: the file holds trajectories generated with other settings (a resumed file
                mixing two models or samplers would be scored as one run), from another prompt
                (``prompt_sha256``) or judged against other tests (``tests_sha256``).
        """
        found = read_results(self.out_path)
        done, self.duplicates_dropped = found.records, found.duplicates
        other = next((r for r in done.values() if self.settings_id is not None
                      and r.get("rollout_settings") not in (None, self.settings_id)), None)
        if other is not None:
            parts = other.get("rollout_settings_parts") or {}
            differ = [k for k, v in (self.settings_parts or {}).items() if k not in parts or parts[k] != v] or \
                [k for k in parts if k not in (self.settings_parts or {})]
            named = ", ".join(differ) if parts and differ else \
                "the model, --sampling-params, --tools, --config or --system, or an older judgebox wrote it"
            raise ValueError(f"{self.out_path}: its trajectories were generated with other settings ({named} "
                             "differ); give another --out, or the same settings to resume it")
        problems = {p.task_id: p for p in self.problems}
        for (task_id, index), record in done.items():
            problem = problems.get(task_id)
            if problem is None or index >= self.n or record["verdict"] == Verdict.infra_error.value:
                continue  # outside this run, or redone
            if record.get("prompt_sha256") not in (None, self.prompt_digest(problem)):
                raise ValueError(f"{self.out_path}: the trajectory of task {task_id!r} sample {index} was generated "
                                 "from another prompt than the dataset's now (another dataset file of the same name, "
                                 "or its prompts changed); give another --out")
            stale_tests(self.out_path, record, problem, "trajectory", "--out")
        pending = [k for k in self.keys() if k not in done or done[k]["verdict"] == Verdict.infra_error.value]
        return done, pending

    def prompt_digest(self, problem: Problem) -> str:
        """The first 16 hex digits of the sha256 of ``problem``'s prompt messages: each record keeps it as
        ``prompt_sha256``, so a resumed file is never kept for prompts that changed since."""
        return digest(prompt_messages(problem, self.system))

    async def trajectory(self, problem: Problem, index: int, ordinal: int) -> dict[str, Any]:
        """Run, judge and return the record of one trajectory."""
        params = dict(self.sampling_params)
        if params.get("seed") is not None:
            params["seed"] = int(params["seed"]) + ordinal
        judged: dict[str, Any] = {}

        async def judge(final_text: str, ground_truth: Any, **info: Any) -> dict:
            row = await self.evaluation.judge_sample(Sample(task_id=problem.task_id, sample_id=index,
                                                            completion=final_text))
            judged.update(row)
            unknown = row["verdict"] in (Verdict.infra_error.value, Verdict.test_data_error.value)
            return {"score": None if unknown else (1.0 if row["passed"] else 0.0), "infra_error": unknown,
                    "verdict": row["verdict"], "pass_rate": row["pass_rate"], "format_error": not final_text.strip()}

        out = await self.loop.run(prompt_messages(problem, self.system), request_id=f"{problem.task_id}#{index}",
                                  sampling_params=params, score_fn=judge)
        stop = out.extra_fields["stop_reason"]
        if not judged and stop != "aborted":  # reward decided by policy (overflow): still judge the text
            text = out.messages[-1].get("content", "") if out.messages and out.messages[-1]["role"] == "assistant" else ""
            await judge(text, None)
        if stop == "aborted":
            judged = {"verdict": Verdict.infra_error.value, "passed": False, "n_passed": 0, "n_total": 0,
                      "pass_rate": None, "message": out.extra_fields.get("failure", "aborted")}
        record = out.model_dump(mode="json")
        record.update({k: v for k, v in judged.items() if k not in ("sample_id", "task_id")})
        record.update(task_id=problem.task_id, sample_index=index, sample_id=index,
                      prompt_sha256=self.prompt_digest(problem))
        if self.settings_id is not None:
            record["rollout_settings"] = self.settings_id
        if self.settings_parts is not None:
            record["rollout_settings_parts"] = self.settings_parts
        return record

    async def run(self, ks: Iterable[int] = (1,), progress: bool = True,
                  announce: Optional[Callable[[dict, list], None]] = None) -> RolloutSummary:
        """Run every pending trajectory, appending records as they finish; return the summary.

        After ``give_up_after`` trajectories in a row that ended ``infra_error``, or ``concurrency`` of
        them and none judged for ``give_up_seconds``
        (an engine that aborts everything, a sandbox that died), the trajectories not yet started are
        left to run and :attr:`gave_up` says why, as ``judgebox eval`` does; the summary counts them
        as pending.

        The output file is locked first (one run per file: a second one stops before it starts an
        engine), then read: ``announce(done, pending)`` (the :meth:`plan`) is called before anything runs.

        Raises:
            ValueError: another process is writing the output file.
        """
        from tqdm import tqdm

        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        with JsonlAppender(self.out_path) as out:
            done, pending = self.plan()
            if announce is not None:
                announce(done, pending)
            self.check_prompts()
            if pending:
                await self.loop.check_engine()  # the engine's context and the config agree, before any trajectory
            before = set(done)
            by_id = {p.task_id: p for p in self.problems}
            order = {k: i for i, k in enumerate(self.keys())}
            start = time.perf_counter()
            bar = tqdm(total=len(order), initial=len(order) - len(pending), unit="traj", disable=not progress,
                       desc=self.dataset, dynamic_ncols=True)
            semaphore = asyncio.Semaphore(self.concurrency)
            breaker = GiveUp(self.give_up_after, self.concurrency, self.give_up_seconds, "trajectories")
            self.gave_up = ""

            async def one(key: tuple[str, int]) -> None:
                async with semaphore:
                    if self.gave_up:
                        return  # left to run: a rerun runs it
                    record = await self.trajectory(by_id[key[0]], key[1], order[key])
                breaker.record(record)
                self.gave_up = breaker.reason
                out.write(record)
                done[key] = record
                bar.update(1)

            try:
                await asyncio.gather(*(one(k) for k in pending))
            finally:
                bar.close()
        if self.duplicates_dropped or any(k in before for k in pending):
            compact(self.out_path, done)  # one line per trajectory: the re-run replace the old
        wall = time.perf_counter() - start
        summary = self.summary(ks, done, wall_time_s=wall)
        summary.samples_per_s = len(pending) / wall if wall > 0 else None
        return summary

    def summary(self, ks: Iterable[int], records: Optional[dict] = None,
                wall_time_s: Optional[float] = None) -> RolloutSummary:
        """The summary of the run's records (read from the jsonl when not given)."""
        if records is None:
            found = read_results(self.out_path)
            records, self.duplicates_dropped = found.records, found.duplicates
        rows = [records[k] for k in self.keys() if k in records]
        base = summarize(self.dataset, self.all_task_ids, rows, ks, n_pending=len(self.keys()) - len(rows),
                         wall_time_s=wall_time_s)
        extra = [r.get("extra_fields", {}) for r in rows]
        rewards = [r["reward_score"] for r in rows if r.get("reward_score") is not None]
        unscorable = [r for r in rows if r.get("reward_score") is None]
        by_problem: dict[str, list[bool]] = {}
        for r in rows:
            by_problem.setdefault(r.get("task_id"), []).append(r.get("reward_score") is None)
        return RolloutSummary(
            **{**base.model_dump(exclude={"unscorable_reasons"}), "duplicates_dropped": self.duplicates_dropped},
            stop_reasons=dict(Counter(e.get("stop_reason") for e in extra)),
            tool_calls_per_trajectory=sum(e.get("tool_calls", 0) for e in extra) / len(rows) if rows else 0.0,
            parse_errors=sum(e.get("parse_errors", 0) for e in extra),
            tool_errors=sum(e.get("tool_errors", 0) for e in extra),
            tool_timeouts=sum(e.get("tool_timeouts", 0) for e in extra),
            mean_reward=sum(rewards) / len(rewards) if rewards else None, n_unscorable=len(unscorable),
            unscorable_reasons=dict(Counter(unscorable_reason(r.get("verdict")) or "infrastructure" for r in unscorable)),
            unscorable_groups=sum(1 for flags in by_problem.values() if all(flags)))
