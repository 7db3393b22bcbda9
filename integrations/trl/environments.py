"""TRL's native tool paths with judgebox's code interpreter: ``environment_factory=`` and ``tools=``.

TRL 1.16's ``GRPOTrainer`` (read from ``trl/trainer/grpo_trainer.py``) takes

- ``environment_factory``: a no-argument callable returning an environment. TRL builds one instance
  per concurrent rollout (pooled, reused across batches), calls ``reset(**row)`` before each rollout
  (the row's dataset columns; a returned string is appended to the last user message), exposes every
  public method of the class other than ``reset``/``get_reward`` as a tool (its JSON schema built by
  ``transformers.utils.get_json_schema`` from the type hints and Google-style docstring), and, when
  the class defines ``get_reward()`` (no arguments), calls it once per finished rollout as an extra
  reward source with weight 1, logged under the class name (``rewards/CodeInterpreterEnv/mean``).
- ``tools``: plain callables (sync or async) exposed the same way, with no state between calls.

:func:`make_environment_factory` returns the factory for :class:`CodeInterpreterEnv`: ``reset``
starts one trajectory (its own stateful Python interpreter, a sandbox session opened on the first
``run_code`` call and closed by ``get_reward``, the next ``reset`` or
:meth:`CodeInterpreterEnvFactory.close`),
``run_code(code)`` runs one cell and returns the observation text of :mod:`judgebox.agent.tools.observation`
(status line, stdout, stderr tail, traceback, cut to ``output_budget``), ``submit(code)`` records the
final solution (judged at once, in a thread pool, while other rollouts still generate), and
``get_reward()`` returns its score by :func:`reward.make_code_reward` against the row's tests (the same columns and spec ``code_reward`` reads): a pass rate (or 0/1), 0.0 when nothing was
submitted (no test passed), ``None`` when the verdict is unknown (bad test data, sandbox failure;
TRL turns it into NaN and leaves it out of the group statistics).

The environment only sees tool calls, never the model's final message (TRL hands ``get_reward``
nothing), hence ``submit``. To score the final message instead, pass ``reward_funcs=[code_reward]``
next to ``tools=[code_interpreter_tool()]``.

:func:`code_interpreter_tool` returns an async ``run_code(code)`` for ``tools=``: each call runs in a
fresh interpreter (a session opened and closed around the call), so nothing persists between calls.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import weakref
from typing import Any, Callable, Optional

from judgebox.agent.tools.code_interpreter import CodeInterpreterTool
from judgebox.agent.tools.runner import TrajectoryTools
from judgebox.integrations.trl.reward import make_code_reward, row_spec, tests_column
from judgebox.reward.spec import TestDataError
from judgebox.sandbox.client.client import LoopThread, SandboxClient

__all__ = ["CodeInterpreterEnv", "CodeInterpreterEnvFactory", "code_interpreter_tool", "make_environment_factory"]

log = logging.getLogger(__name__)

#: Appended to the last user message by ``reset`` (TRL's semantics of a string returned by ``reset``).
INSTRUCTIONS = ("\n\nYou can run Python with the run_code tool (state persists between calls). "
                "Submit your final solution with the submit tool; its tests run after the conversation.")

#: Dataset columns TRL passes to ``reset`` that are not reward columns.
_NOT_COLUMNS = ("prompt", "completion", "completion_ids")


class CodeInterpreterEnv:
    """One rollout's environment (TRL's ``environment_factory`` protocol). Made by
    :class:`CodeInterpreterEnvFactory`; TRL exposes ``run_code`` and ``submit`` as tools.

    Not thread-safe: TRL drives one instance from one thread at a time.
    """

    def __init__(self, factory: "CodeInterpreterEnvFactory") -> None:
        self._factory = factory
        self._row: Optional[dict] = None
        self._judging: Optional[concurrent.futures.Future] = None
        self._tools: Optional[TrajectoryTools] = None
        self._release: Optional[weakref.finalize] = None

    def reset(self, **row: Any) -> Optional[str]:
        """Start a trajectory for one dataset row: the previous trajectory's interpreter is closed, a
        new one opens on the first ``run_code``. Returns the instructions appended to the prompt
        (``None`` when the factory was made with ``instructions=None``)."""
        self._end()
        self._row, self._judging = dict(row), None
        self._tools = TrajectoryTools([self._factory.tool], timeout_s=self._factory.tool_timeout_s)
        # runs once: at the next reset, get_reward, the factory's close, or this object's collection
        self._release = weakref.finalize(self, _release, self._factory.runner, self._tools)
        self._factory._track(self)
        return self._factory.instructions

    def run_code(self, code: str) -> str:
        """Run Python code in this conversation's interpreter. Variables, imports and functions persist
        from one call to the next.

        Args:
            code: Python code to run (one notebook cell).

        Returns:
            A status line, then the printed output, the end of stderr and the traceback if any.
        """
        if self._tools is None:
            raise RuntimeError("CodeInterpreterEnv.run_code outside a trajectory: call reset() first (get_reward "
                               "ends the trajectory)")
        result = self._factory.runner.submit(self._tools.call("code_interpreter", {"code": code})).result()
        return result.text

    def submit(self, code: str) -> str:
        """Submit your final solution. It is tested once the conversation ends; a later submission
        replaces an earlier one.

        Args:
            code: the complete Python solution (functions and imports the tests need).

        Returns:
            A confirmation.
        """
        # judged now, in the factory's pool, while other rollouts still generate: get_reward, which
        # TRL calls once per rollout one after another, then only collects the verdict
        if self._row is None:
            raise RuntimeError("CodeInterpreterEnv.submit before reset()")
        if self._judging is not None:
            self._judging.cancel()
        self._judging = self._factory.pool.submit(self._score, dict(self._row), code)
        return f"Submitted {len(code)} characters; the tests run after this conversation."

    def get_reward(self) -> Optional[float]:
        """The submitted solution's score on the row's tests: the pass rate (or 0/1 with
        ``score_mode="binary"``); 0.0 when nothing was submitted; ``None`` when the verdict is unknown
        (bad test data, sandbox failure). Ends the trajectory: its interpreter is released.

        Raises:
            RuntimeError: called before ``reset``.
            ValueError: the row has no tests column (see :data:`judgebox.integrations.trl.reward.TEST_COLUMNS`).
        """
        if self._row is None:
            raise RuntimeError("CodeInterpreterEnv.get_reward before reset()")
        self._end()
        if self._judging is not None:
            return self._judging.result()
        column = tests_column(self._row)
        try:
            row_spec(self._row[column], self._row.get("language"))
        except TestDataError as exc:
            log.warning("CodeInterpreterEnv: test_data_error, reward masked: column %r: %s", column, exc)
            return None
        return 0.0

    def _score(self, row: dict, code: str) -> Optional[float]:
        columns = {k: [v] for k, v in row.items() if k not in _NOT_COLUMNS}
        return self._factory.reward([row.get("prompt")], [code], **columns)[0]

    def _end(self) -> None:
        """Release this trajectory's interpreter (idempotent)."""
        self._tools = None
        if self._release is not None:
            self._release()


class CodeInterpreterEnvFactory:
    """TRL's ``environment_factory``: ``factory()`` returns a new :class:`CodeInterpreterEnv`.

    Owns what its environments share: one :class:`~judgebox.agent.tools.CodeInterpreterTool` (its sandbox
    client), an event loop thread the tool's calls run on, the reward function and the thread pool
    that judges submissions. ``close()`` (or ``with``) releases every environment's interpreter and
    stops the threads; an environment's interpreter is otherwise released when the environment or the
    factory is garbage-collected, and the sandbox reaps a session nobody released after the tool's
    ``idle_timeout``.

    See :func:`make_environment_factory` for the arguments.
    """

    def __init__(self, config: Optional[dict] = None, *, score_mode: str = "pass_rate",
                 client: Optional[SandboxClient] = None, tool_timeout_s: Optional[float] = 60.0,
                 instructions: Optional[str] = INSTRUCTIONS, judge_concurrency: int = 8) -> None:
        self.tool = CodeInterpreterTool(config)
        self.pool = concurrent.futures.ThreadPoolExecutor(judge_concurrency, thread_name_prefix="judgebox-env-judge")
        self.reward: Callable[..., list[Optional[float]]] = make_code_reward(score_mode=score_mode, client=client)
        self.tool_timeout_s = tool_timeout_s
        self.instructions = instructions
        self.runner = LoopThread()
        self._envs: "weakref.WeakSet[CodeInterpreterEnv]" = weakref.WeakSet()
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _shutdown, self._envs, self.runner, self.tool, self.pool)

    def __call__(self) -> CodeInterpreterEnv:
        if not self._finalizer.alive:
            raise RuntimeError("CodeInterpreterEnvFactory: called after close()")
        return CodeInterpreterEnv(self)

    def _track(self, env: CodeInterpreterEnv) -> None:
        with self._lock:
            self._envs.add(env)

    @property
    def live_sessions(self) -> int:
        """Interpreter sessions open now (trajectories that ran code and were not released yet)."""
        return self.tool.live_instances

    def close(self) -> None:
        """Release every environment's interpreter, stop the loop thread, close the sandbox client
        (idempotent)."""
        self._finalizer()

    def __enter__(self) -> "CodeInterpreterEnvFactory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _release(runner: LoopThread, tools: TrajectoryTools) -> None:
    if runner.loop.is_closed():  # the factory was closed: it released every trajectory then
        return
    runner.submit(tools.aclose()).result()


def _shutdown(envs: "weakref.WeakSet[CodeInterpreterEnv]", runner: LoopThread, tool: CodeInterpreterTool,
              pool: concurrent.futures.ThreadPoolExecutor) -> None:
    for env in list(envs):
        try:
            env._end()
        except Exception as exc:  # noqa: BLE001 - one failed release must not leave the others open
            log.warning("CodeInterpreterEnv: releasing a trajectory failed (%s); the sandbox reaps it "
                        "after idle_timeout", exc)
    pool.shutdown(wait=True, cancel_futures=True)
    runner.stop()
    tool.close()


def make_environment_factory(config: Optional[dict] = None, *, score_mode: str = "pass_rate",
                             client: Optional[SandboxClient] = None, tool_timeout_s: Optional[float] = 60.0,
                             instructions: Optional[str] = INSTRUCTIONS, judge_concurrency: int = 8
                             ) -> CodeInterpreterEnvFactory:
    """TRL's ``environment_factory`` for ``GRPOTrainer`` (see the module docstring).

    Args:
        config: the code interpreter's :class:`~judgebox.agent.tools.code_interpreter.CodeInterpreterConfig`
            as a dict (``None``: defaults, embedded sandbox; ``{"sandbox_url": ...}`` for a server).
        score_mode: ``"pass_rate"`` or ``"binary"`` (:func:`reward.make_code_reward`).
        client: the sandbox client that judges submissions (default: environment, else embedded).
        tool_timeout_s: seconds one ``run_code`` call may take, interpreter start included
            (``None``: no limit beyond the cell's own timeout).
        instructions: text ``reset`` appends to the last user message (``None``: nothing).
        judge_concurrency: submissions judged at once (each is judged when submitted, in a thread pool).

    Raises:
        ValueError: a bad ``config`` key or value, or an unknown ``score_mode``.
    """
    return CodeInterpreterEnvFactory(config, score_mode=score_mode, client=client, tool_timeout_s=tool_timeout_s,
                                     instructions=instructions, judge_concurrency=judge_concurrency)


def code_interpreter_tool(config: Optional[dict] = None, *, tool_timeout_s: Optional[float] = 60.0
                          ) -> Callable[..., Any]:
    """An async ``run_code(code) -> str`` for ``GRPOTrainer(tools=[...])``: each call runs in a fresh
    interpreter (a session opened and closed around it), so nothing persists between calls; the
    observation is the same text :class:`CodeInterpreterEnv.run_code` returns.

    Args:
        config: as in :func:`make_environment_factory`.
        tool_timeout_s: seconds one call may take, interpreter start included.

    Raises:
        ValueError: a bad ``config`` key or value.
    """
    tool = CodeInterpreterTool(config)

    async def run_code(code: str) -> str:
        """Run Python code in a fresh interpreter and return what it printed. Nothing persists
        between calls.

        Args:
            code: Python code to run (a complete program).

        Returns:
            A status line, then the printed output, the end of stderr and the traceback if any.
        """
        async with TrajectoryTools([tool], timeout_s=tool_timeout_s) as tools:
            return (await tools.call("code_interpreter", {"code": code})).text

    run_code.tool = tool  # type: ignore[attr-defined]  # its live_instances / close()
    return run_code
