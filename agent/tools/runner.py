"""``TrajectoryTools``: the owner of one trajectory's tool instances, calls, timeouts and releases.

verl's agent loop creates and releases a tool instance around every call, so no state survives,
validates nothing, and lets a hung tool stall the batch. Here, per trajectory::

    async with TrajectoryTools(tools, timeout_s=30, metrics=step_metrics) as tt:
        prompt = tokenizer.apply_chat_template(messages, tools=tt.schemas(), ...)
        result = await tt.call("code_interpreter", '{"code": "x = 1"}')   # never raises
        ...                                                                  # same instance
    # every created instance released exactly once: normal end, exception, cancellation

``call`` never raises for a bad call or a failing tool (only ``CancelledError`` passes through, after
the call's work is stopped). Its ``status`` and observation text (``result.response.text``):

================  ===========================================================================
status            observation
================  ===========================================================================
ok                the tool's own response
invalid_arguments ``error: timeout must be an integer, got string "ten"`` (see ``arguments``)
unknown_tool      ``error: unknown tool 'foo' (available: code_interpreter)``
timeout           ``error: tool 'code_interpreter' timed out after 5 s``
error             ``error: RuntimeError: boom`` (the exception's type and message)
infra_error       ``error: sandbox unavailable (infrastructure, not your code): <message>``
================  ===========================================================================

The timeout covers creating the instance (first use) and ``execute``; on expiry the call is
cancelled — an async tool's work stops there (e.g. the sandbox run is killed), a ``process=True``
function tool's worker is killed — and the caller waits at most ``cancel_grace_s`` more for the
cancellation to finish. Work that cannot be stopped (a sync function in a thread) or does not
finish within the grace is abandoned and counted in :class:`ToolMetrics`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional, Sequence, Union

from judgebox.agent.tools.base import BaseTool
from judgebox.agent.tools.function import normalize_return
from judgebox.agent.tools.metrics import ToolMetrics
from judgebox.agent.tools.schema import ToolResponse
from judgebox.sandbox.errors import SandboxInfraError

__all__ = ["ToolCallResult", "TrajectoryTools"]

log = logging.getLogger(__name__)

Status = Literal["ok", "invalid_arguments", "unknown_tool", "timeout", "error", "infra_error"]


@dataclass(frozen=True)
class ToolCallResult:
    """One call's outcome. ``latency_s`` is seconds from ``call`` to its return."""

    name: str
    response: ToolResponse
    status: Status
    latency_s: float
    step_reward: Optional[float] = None
    metrics: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The observation text (``""`` when the tool returned none)."""
        return self.response.text or ""


def describe_exception(e: BaseException) -> str:
    """``"<Type>: <message>"``; a ``process=True`` worker's error names the function's exception."""
    type_name = getattr(e, "remote_type", None) or type(e).__name__
    message = str(e)
    return f"{type_name}: {message}" if message else type_name


class TrajectoryTools:
    """The tools of one trajectory: an ``async with`` owner of their instances.

    Args:
        tools: the tools, as ``{name: tool}`` or a sequence (named by ``tool.name``; a repeated name
            is a ``ValueError``).
        timeout_s: the per-call limit in seconds (``None``: no limit), covering create + execute.
        metrics: counters to add to; share one :class:`ToolMetrics` across a step's trajectories.
        create_kwargs: ``{tool name: kwargs}`` passed to that tool's ``create`` (verl's
            ``tools_kwargs[name]["create_kwargs"]``).
        instance_id: passed to every ``create`` (e.g. the trajectory's request id); ``None`` lets
            each tool mint one.
        cancel_grace_s: seconds to wait for a cancelled call's work to stop before abandoning it.
        release_timeout_s: seconds allowed to each ``release``; a slower one is logged and left.
    """

    def __init__(self, tools: Union[Mapping[str, BaseTool], Sequence[BaseTool]], *,
                 timeout_s: Optional[float], metrics: Optional[ToolMetrics] = None,
                 create_kwargs: Optional[Mapping[str, dict]] = None, instance_id: Optional[str] = None,
                 cancel_grace_s: float = 2.0, release_timeout_s: float = 30.0) -> None:
        if isinstance(tools, Mapping):
            self.tools = dict(tools)
        else:
            self.tools = {}
            for tool in tools:
                if tool.name in self.tools:
                    raise ValueError(f"two tools are named {tool.name!r}: {self.tools[tool.name]!r} and {tool!r}")
                self.tools[tool.name] = tool
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number of seconds or None, got {timeout_s!r}")
        self.timeout_s = timeout_s
        self.metrics = metrics if metrics is not None else ToolMetrics()
        self.create_kwargs = dict(create_kwargs or {})
        self.instance_id = instance_id
        self.cancel_grace_s = cancel_grace_s
        self.release_timeout_s = release_timeout_s
        self._creates: dict[str, asyncio.Task] = {}
        self._inflight: set[asyncio.Task] = set()
        self._close_task: Optional[asyncio.Task] = None

    # ----------------------------------------------------------------------------- public face

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI tool dicts (full JSON Schemas) for ``apply_chat_template(tools=...)``."""
        return [tool.tool_schema.to_openai() for tool in self.tools.values()]

    @property
    def instances(self) -> dict[str, str]:
        """``{tool name: instance id}`` of the instances created so far and not failed."""
        return {name: t.result() for name, t in self._creates.items()
                if t.done() and not t.cancelled() and t.exception() is None}

    async def __aenter__(self) -> "TrajectoryTools":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop calls in flight and release every created instance, once; safe to call again.

        Release errors are logged, never raised. If the caller is cancelled while waiting, the
        releases still run to the end (shielded).
        """
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close())
        await asyncio.shield(self._close_task)

    async def call(self, name: str, arguments: Union[str, dict], **execute_kwargs: Any) -> ToolCallResult:
        """Validate and run one call of tool ``name``; returns a :class:`ToolCallResult`, never raises.

        ``arguments`` is the model's JSON text or a decoded dict; ``execute_kwargs`` go to
        ``execute``. Raises ``RuntimeError`` only when called after :meth:`aclose`.
        """
        if self._close_task is not None:
            raise RuntimeError("TrajectoryTools.call after the trajectory's tools were released")
        start = time.monotonic()
        tool = self.tools.get(name)
        if tool is None:
            text = f"error: unknown tool {name!r} (available: {', '.join(self.tools) or 'none'})"
            return ToolCallResult(name, ToolResponse(text=text), "unknown_tool", time.monotonic() - start)
        args, problem = tool.check_arguments(arguments)  # before an instance is made for a call that cannot run
        if problem is not None:
            return self._finish(name, start, ToolResponse(text=problem), "invalid_arguments")

        task = asyncio.ensure_future(self._create_and_execute(name, tool, args, execute_kwargs))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout_s)
        except asyncio.CancelledError:
            await self._stop(name, tool, task)
            raise
        if not done:
            await self._stop(name, tool, task)
            text = f"error: tool {name!r} timed out after {self.timeout_s:g} s"
            return self._finish(name, start, ToolResponse(text=text), "timeout")
        error = task.exception() if not task.cancelled() else asyncio.CancelledError()
        if error is None:
            try:
                response, reward, metrics = normalize_return(task.result())
            except TypeError as e:
                error = e
            else:
                return self._finish(name, start, response, "ok", reward, metrics)
        if isinstance(error, SandboxInfraError):
            log.warning("tool %r: sandbox unavailable: %s", name, error)
            text = f"error: sandbox unavailable (infrastructure, not your code): {error}"
            return self._finish(name, start, ToolResponse(text=text), "infra_error")
        log.info("tool %r raised %s", name, describe_exception(error), exc_info=error)
        return self._finish(name, start, ToolResponse(text=f"error: {describe_exception(error)}"), "error")

    async def calc_rewards(self) -> dict[str, Optional[float]]:
        """``{tool name: calc_reward(instance)}`` for each tool used; a raising one is logged, ``None``."""
        out: dict[str, Optional[float]] = {}
        for name, instance_id in self.instances.items():
            try:
                out[name] = await self.tools[name].calc_reward(instance_id)
            except Exception:  # noqa: BLE001 - a reward that cannot be computed is unknown, not 0
                log.exception("tool %r: calc_reward(%r) failed", name, instance_id)
                out[name] = None
        return out

    # ------------------------------------------------------------------------------ internals

    def _finish(self, name: str, start: float, response: ToolResponse, status: Status,
                reward: Optional[float] = None, metrics: Optional[dict] = None) -> ToolCallResult:
        latency = time.monotonic() - start
        self.metrics.record(name, status, latency)
        return ToolCallResult(name, response, status, latency, reward, dict(metrics or {}))

    async def _create_and_execute(self, name: str, tool: BaseTool, args: dict, kwargs: dict) -> Any:
        create = self._creates.get(name)
        if create is None or (create.done() and (create.cancelled() or create.exception() is not None)):
            # its own task, shielded: an instance created after its call timed out is still released
            create = asyncio.ensure_future(self._create(tool))
            self._creates[name] = create
        instance_id = await asyncio.shield(create)
        return await tool.execute(instance_id, args, **kwargs)

    async def _create(self, tool: BaseTool) -> str:
        instance_id, _ = await tool.create(self.instance_id, **self.create_kwargs.get(tool.name, {}))
        return instance_id

    async def _stop(self, name: str, tool: BaseTool, task: asyncio.Task) -> None:
        """Cancel ``task`` and wait up to the grace for it; count it abandoned if its work goes on."""
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=self.cancel_grace_s)
        if not done or not tool.cancel_stops_work:
            log.warning("tool %r: a cancelled call %s", name,
                        "is still running" if not done else "runs on in its thread")
            self.metrics.abandon(name)
        if done and not task.cancelled() and task.exception() is not None:
            log.info("tool %r: cancelled call ended with %s", name, describe_exception(task.exception()))

    async def _close(self) -> None:
        for task in list(self._inflight):
            task.cancel()
        if self._inflight:
            await asyncio.wait(self._inflight, timeout=self.cancel_grace_s)
        creates = list(self._creates.items())
        if creates:
            await asyncio.wait([t for _, t in creates], timeout=self.release_timeout_s)
        releases = []
        for name, create in creates:
            if not create.done():
                log.error("tool %r: create still running after %g s at release; its instance is left",
                          name, self.release_timeout_s)
                create.cancel()
            elif not create.cancelled() and create.exception() is None:
                releases.append((name, create.result()))
        results = await asyncio.gather(*(self._release(name, iid) for name, iid in releases),
                                       return_exceptions=True)
        for (name, iid), result in zip(releases, results):
            if isinstance(result, BaseException):
                log.error("tool %r: release(%r) failed: %s", name, iid, describe_exception(result),
                          exc_info=result)

    async def _release(self, name: str, instance_id: str) -> None:
        await asyncio.wait_for(self.tools[name].release(instance_id), self.release_timeout_s)
