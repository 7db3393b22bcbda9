"""``BaseTool``: verl's async tool lifecycle (``verl.tools.base_tool.BaseTool``), same names and shapes.

A verl tool ports by changing its imports to ``judgebox.agent.tools``. The lifecycle, per trajectory::

    instance_id, first_response = await tool.create()          # once, on first use
    response, step_reward, metrics = await tool.execute(instance_id, {"code": "x = 1"})
    ...                                                          # more calls, same instance
    reward = await tool.calc_reward(instance_id)                 # optional
    await tool.release(instance_id)                              # exactly once

Unlike verl's agent loop (create + release around *every* call), judgebox's
:class:`judgebox.agent.tools.TrajectoryTools` keeps one instance per trajectory, so a stateful tool's state
survives between calls, and releases it exactly once however the trajectory ends.

A subclass gives its schema either through the ``tool_schema`` argument (e.g. from YAML) or by
overriding :meth:`get_openai_tool_schema` (called by ``__init__`` when no schema is given), as in
verl. ``config`` is the tool's own configuration dict; one key is read here:

- ``clamp``: ``{parameter: maximum}``; a model-supplied number above the maximum is lowered to it
  before ``execute`` (e.g. ``{"timeout": 30}`` for a cell timeout in seconds). See
  :meth:`clamp_arguments`.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any, Mapping, Optional, Union

from pydantic import ValidationError

from judgebox.agent.tools.arguments import prepare_arguments, validator_for
from judgebox.agent.tools.schema import OpenAIFunctionToolSchema, ToolResponse

__all__ = ["BaseTool", "coerce_tool_schema"]


def coerce_tool_schema(schema: Union[OpenAIFunctionToolSchema, Mapping[str, Any], Any]) -> OpenAIFunctionToolSchema:
    """An :class:`OpenAIFunctionToolSchema` from a model, a dict, or any pydantic model of that shape.

    A verl ``OpenAIFunctionToolSchema`` is accepted too (through its dump, so whatever verl already
    dropped stays dropped). Raises ``ValueError`` naming the bad field.
    """
    if isinstance(schema, OpenAIFunctionToolSchema):
        return schema
    if hasattr(schema, "model_dump") and not isinstance(schema, Mapping):
        schema = schema.model_dump(exclude_none=True)
    try:
        return OpenAIFunctionToolSchema.model_validate(schema)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
                             for err in e.errors())
        raise ValueError(f"bad tool_schema: {problems}") from None


class BaseTool:
    """Base class of judgebox tools (verl's interface).

    Attributes:
        config: the tool's configuration (a dict; ``{}`` when none was given).
        tool_schema: the tool's :class:`OpenAIFunctionToolSchema` (full JSON Schema of its parameters).
        name: ``tool_schema.function.name``.

    Raises:
        ValueError: no schema was given and the class defines none, or the schema is malformed.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each subclass's own ``execute`` checks its arguments first (:meth:`check_arguments`): a
        tool called directly (verl's and TRL's adapters, users' code) refuses what the agent loop
        refuses, with the same observation, and runs nothing."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("execute")
        if own is None or getattr(own, "checks_arguments", False):
            return

        @functools.wraps(own)
        async def execute(self: "BaseTool", instance_id: str, parameters: Any,
                          **kw: Any) -> tuple[ToolResponse, Optional[float], dict]:
            args, problem = self.check_arguments(parameters)
            if problem is not None:
                return ToolResponse(text=problem), None, {"status": "invalid_arguments"}
            return await own(self, instance_id, args, **kw)

        execute.checks_arguments = True  # type: ignore[attr-defined]
        cls.execute = execute  # type: ignore[method-assign]

    def check_arguments(self, parameters: Any) -> tuple[Optional[dict[str, Any]], Optional[str]]:
        """``(parameters validated against the tool's own schema and clamped, None)``, or ``(None,
        "error: ...")`` naming the field (:func:`judgebox.agent.tools.arguments.prepare_arguments`:
        ``{"code": 5}`` is ``error: code must be a string, got integer 5``, a call without ``code``
        ``error: code is required``)."""
        if self.tool_schema is None:  # a function tool inside its worker process: its caller checked
            return dict(parameters), None
        if getattr(self, "_validator", None) is None:
            self._validator = validator_for(self.tool_schema.function.parameters)
        args, problem = prepare_arguments(parameters, self.tool_schema.function.parameters, self._validator)
        return (None, problem) if problem is not None else (self.clamp_arguments(args), None)

    #: True when cancelling ``execute`` really stops the work (an async tool that awaits a sandbox
    #: whose run is killed on cancellation). A tool whose work keeps running after cancellation (a
    #: sync function in a thread) sets False, so timeouts count the call as abandoned.
    cancel_stops_work: bool = True

    def __init__(self, config: Optional[dict] = None,
                 tool_schema: Union[OpenAIFunctionToolSchema, dict, None] = None) -> None:
        self.config: dict = dict(config or {})
        self.tool_schema: Optional[OpenAIFunctionToolSchema] = None
        self._validator: Any = None
        schema = tool_schema if tool_schema is not None else self.get_openai_tool_schema()
        if schema is None:
            raise ValueError(f"{type(self).__name__}: no tool_schema was given and the class does not "
                             "define one (override get_openai_tool_schema() or pass tool_schema=)")
        self.tool_schema = coerce_tool_schema(schema)
        clamp = self.config.get("clamp", {})
        if not isinstance(clamp, Mapping) or not all(isinstance(v, (int, float)) for v in clamp.values()):
            raise ValueError(f"{type(self).__name__}: config.clamp must map parameter names to numbers, "
                             f"got {clamp!r}")

    @property
    def name(self) -> str:
        return self.tool_schema.function.name

    def get_openai_tool_schema(self) -> Optional[OpenAIFunctionToolSchema]:
        """The tool's schema. Subclasses without a YAML schema override this to return their own."""
        return self.tool_schema

    def clamp_arguments(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """``parameters`` with each number named in ``config["clamp"]`` lowered to its maximum.

        Runs after validation, before :meth:`execute`. Override for other limits.
        """
        clamp = self.config.get("clamp") or {}
        out = dict(parameters)
        for key, maximum in clamp.items():
            value = out.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > maximum:
                out[key] = maximum
        return out

    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """Create one instance (e.g. one trajectory's state); returns its id and a first response."""
        return (instance_id if instance_id is not None else str(uuid.uuid4())), ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, Optional[float], dict]:
        """Run one call: ``(response, step_reward or None, metrics)``. A subclass's ``execute`` gets
        ``parameters`` checked against its schema and clamped (:meth:`check_arguments`); invalid ones
        answer ``(ToolResponse(text="error: ..."), None, {"status": "invalid_arguments"})``."""
        raise NotImplementedError(f"{type(self).__name__}.execute")

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> Optional[float]:
        """A reward from the instance's state, or ``None`` when the tool gives none."""
        return None

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Free the instance's resources. Called exactly once per created instance."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
