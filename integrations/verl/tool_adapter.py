"""``VerlToolAdapter``: a judgebox tool inside verl's agent loop, built by verl's own tool loader.

verl (0.9.1: ``verl.tools.tool_registry.initialize_tools_from_config``) instantiates each YAML entry
as ``class_name(config=..., tool_schema=...)``. Point ``class_name`` at this class and describe the
judgebox tool under ``config.tool`` with the same entry format as :func:`judgebox.agent.tools.load_tools`
(``configs/verl/tool_config.yaml``)::

    tools:
      - class_name: judgebox.integrations.verl.tool_adapter.VerlToolAdapter
        config:
          type: native                      # verl requires it
          timeout_s: 30                     # per-call limit (seconds); null = none
          idle_release_s: 900               # backstop release of a trajectory's state (seconds)
          tool:                             # a load_tools entry
            class_name: judgebox.agent.tools.code_interpreter.CodeInterpreterTool
            config: {clamp: {timeout: 30}}

What the adapter fixes in verl's loop, which calls ``create`` → ``execute`` → ``release`` around
*every* call (so no state survives) and passes ``agent_data`` to ``execute``:

- **State per trajectory**: calls are keyed by ``agent_data.request_id`` and run through one
  :class:`judgebox.agent.tools.TrajectoryTools` per trajectory; verl's per-call ``release`` is a no-op for it.
  The trajectory's instance is released exactly once, when verl drops its ``AgentData`` (end of the
  trajectory, normal or not), or after ``idle_release_s`` without calls as a backstop. Without
  ``agent_data`` a call is its own trajectory (verl's per-call semantics) and ``release`` ends it.
- **Full schema**: leave ``tool_schema`` out of the verl YAML; verl's schema model drops nested
  ``items``/``properties``/``default``. ``self.tool_schema`` dumps the judgebox tool's full schema for
  the chat template, while verl's tool parsers still see the per-property types they read.
- **Validation, timeouts, metrics**: as :class:`TrajectoryTools` (errors become observations).
  ``metrics`` (the triple's third item) holds ``status`` and ``latency_s``; the adapter's
  :attr:`metrics` counts every call.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
import uuid
import weakref
from typing import Any, Optional

from pydantic import PrivateAttr
from verl.tools.base_tool import BaseTool as VerlBaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema as VerlToolSchema
from verl.tools.schemas import ToolResponse as VerlToolResponse

from judgebox.agent.tools.config import ToolConfigError, build_tool
from judgebox.agent.tools.metrics import ToolMetrics
from judgebox.agent.tools.runner import TrajectoryTools

__all__ = ["VerlToolAdapter"]

log = logging.getLogger(__name__)


class _FullSchema(VerlToolSchema):
    """verl's schema model for its parsers; ``model_dump`` gives the full JSON Schema instead."""

    _full: dict = PrivateAttr(default_factory=dict)

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(self._full)


def _verl_schema(full: dict[str, Any]) -> VerlToolSchema:
    function = full["function"]
    parameters = function.get("parameters") or {}
    properties = {
        name: {"type": prop.get("type", "string"), "description": prop.get("description"), "enum": prop.get("enum")}
        for name, prop in parameters.get("properties", {}).items()
    }
    schema = _FullSchema.model_validate({
        "type": "function",
        "function": {"name": function["name"], "description": function.get("description", ""),
                     "parameters": {"type": "object", "properties": properties,
                                    "required": parameters.get("required", [])}},
    })
    schema._full = full
    return schema


class _Trajectory:
    def __init__(self, tools: TrajectoryTools) -> None:
        self.tools = tools
        self.last_used = time.monotonic()


class VerlToolAdapter(VerlBaseTool):
    """A verl ``BaseTool`` running one judgebox tool with per-trajectory state.

    Args:
        config: ``type`` (``native``), ``tool`` (a :func:`judgebox.agent.tools.load_tools` entry, required),
            ``timeout_s`` (per call, seconds; default 30, ``None`` = none), ``idle_release_s``
            (default 900).
        tool_schema: verl's (lossy) schema from the YAML, or ``None`` to use the tool's own full one.

    Raises:
        ToolConfigError: a missing or bad ``tool`` entry, or an unknown config key.
    """

    _KEYS = {"type", "tool", "timeout_s", "idle_release_s"}

    def __init__(self, config: dict, tool_schema: Optional[VerlToolSchema] = None) -> None:
        unknown = sorted(set(config) - self._KEYS)
        if unknown:
            raise ToolConfigError(f"VerlToolAdapter config: unknown key(s) {unknown}; allowed: {sorted(self._KEYS)}")
        entry = config.get("tool")
        if not isinstance(entry, dict):
            raise ToolConfigError("VerlToolAdapter config: 'tool' must be a load_tools entry "
                                  "({class_name: ..., config: ...} or {function: ...})")
        if tool_schema is not None and "tool_schema" not in entry and "class_name" in entry:
            entry = {**entry, "tool_schema": tool_schema.model_dump(exclude_none=True)}
        self.config = config
        self.inner = build_tool(entry, "VerlToolAdapter config.tool")
        self.tool_schema = _verl_schema(self.inner.tool_schema.to_openai())
        self.name = self.inner.name
        self.timeout_s: Optional[float] = config.get("timeout_s", 30)
        self.idle_release_s: float = float(config.get("idle_release_s", 900))
        self.metrics = ToolMetrics()
        self._trajectories: dict[str, _Trajectory] = {}
        self._releasing: set[asyncio.Task] = set()
        self._create_kwargs: dict[str, dict] = {}  # verl's create kwargs, by call id, until its execute

    def get_openai_tool_schema(self) -> VerlToolSchema:
        return self.tool_schema

    @property
    def live_trajectories(self) -> int:
        """How many trajectories hold a (not yet released) state."""
        return len(self._trajectories)

    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> tuple[str, VerlToolResponse]:
        """A call id for verl; the trajectory's instance is created on its first ``execute``, with
        these ``kwargs`` (verl passes ``create_kwargs=tools_kwargs[name]["create_kwargs"]``)."""
        instance_id = instance_id or str(uuid.uuid4())
        if kwargs:
            self._create_kwargs[instance_id] = kwargs
        return instance_id, VerlToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[VerlToolResponse, Optional[float], dict]:
        """Run the call in the trajectory's :class:`TrajectoryTools`; never raises for a bad call."""
        agent_data = kwargs.pop("agent_data", None)
        key = getattr(agent_data, "request_id", None) or instance_id
        create_kwargs = self._create_kwargs.pop(instance_id, {})
        self._release_idle()
        trajectory = self._trajectories.get(key)
        if trajectory is None:
            tools = TrajectoryTools([self.inner], timeout_s=self.timeout_s, metrics=self.metrics, instance_id=key,
                                    create_kwargs={self.name: create_kwargs})
            trajectory = self._trajectories[key] = _Trajectory(tools)
            if agent_data is not None:
                loop = asyncio.get_running_loop()
                weakref.finalize(agent_data, self._release_soon, loop, key)
        trajectory.last_used = time.monotonic()
        result = await trajectory.tools.call(self.name, parameters)
        trajectory.last_used = time.monotonic()
        response = VerlToolResponse(**result.response.model_dump(exclude_none=True))
        metrics = {**result.metrics, "status": result.status, "latency_s": result.latency_s}
        return response, result.step_reward, metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> Optional[float]:
        trajectory = self._trajectories.get(instance_id)
        return (await trajectory.tools.calc_rewards()).get(self.name) if trajectory else None

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Ends a trajectory keyed by this call id (no ``agent_data``); otherwise nothing to do."""
        self._create_kwargs.pop(instance_id, None)
        await self.release_trajectory(instance_id)

    async def release_trajectory(self, key: str) -> None:
        """Release trajectory ``key``'s instance now (idempotent)."""
        trajectory = self._trajectories.pop(key, None)
        if trajectory is not None:
            await trajectory.tools.aclose()

    def _release_soon(self, loop: asyncio.AbstractEventLoop, key: str) -> None:
        """``AgentData`` was collected: release its trajectory on the loop that ran it."""
        try:
            loop.call_soon_threadsafe(self._spawn_release, key)
        except RuntimeError:  # the loop is closed: nothing can release asynchronously any more
            log.warning("trajectory %r of tool %r ended after its event loop closed; not released", key, self.name)

    def _spawn_release(self, key: str) -> None:
        task = asyncio.ensure_future(self.release_trajectory(key))
        self._releasing.add(task)  # a strong reference until it is done
        task.add_done_callback(self._releasing.discard)

    def _release_idle(self) -> None:
        cutoff = time.monotonic() - self.idle_release_s
        for key in [k for k, t in self._trajectories.items() if t.last_used < cutoff]:
            log.warning("tool %r: trajectory %r idle for %g s, releasing it", self.name, key, self.idle_release_s)
            self._spawn_release(key)
