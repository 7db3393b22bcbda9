"""``CodeInterpreterTool`` (``code_interpreter``): a stateful Python interpreter per trajectory.

Each tool *instance* (one ``create``, one trajectory) owns one sandbox session
(:mod:`judgebox.sandbox.sessions.manager`): variables, imports and files persist across its calls, and nothing is
shared between instances, the n samples of one prompt included. ``release`` closes the session;
a session whose release never comes (a crashed worker) is closed by the sandbox after
``idle_timeout`` seconds. The session is created lazily, on the first ``execute``.

Parameters (the JSON Schema sent to the model): ``code`` (required), ``timeout`` (seconds, clamped
to ``max_timeout``), ``reset`` (a fresh interpreter before the cell; it takes effect even if the
cell then fails) and, only when ``languages`` are configured, ``language`` (those run statelessly,
one whole program per call, through ``run_code``).

Observation: the plain-text format of :mod:`judgebox.agent.tools.observation` (exact status lines there),
cut to ``output_budget`` characters, or tokens when a ``tokenizer`` is configured. A sandbox that
cannot be reached or cannot start an interpreter raises
:class:`~judgebox.sandbox.errors.SandboxInfraError` (``TrajectoryTools`` turns it into its ``infra_error``
observation): an infrastructure failure is never shown as the code's result.

Plain SandboxFusion servers have no ``/sessions``: detected once (the first ``POST /sessions``
answers 404), the tool then *replays*: each call sends the instance's earlier successful cells plus
the new one to ``/run_jupyter`` and shows the new cell's output. Cost: call ``n`` re-runs ``n - 1``
cells (quadratic time over a trajectory, a kernel start per call), and earlier cells' side effects
(files, randomness, time) are redone rather than kept.

Config (``config`` dict; YAML in ``configs/tools/code_interpreter.yaml``), see
:class:`CodeInterpreterConfig`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgebox.agent.tools.base import BaseTool
from judgebox.agent.tools.observation import NOTE_LOST, NOTE_RESET, fit_budget, format_cell, format_program
from judgebox.agent.tools.schema import OpenAIFunctionToolSchema, ToolResponse
from judgebox.sandbox.client.client import SandboxClient
from judgebox.sandbox.errors import SandboxServerError, SessionNotFound, SessionsUnsupported
from judgebox.sandbox.local import LocalSandbox
from judgebox.sandbox.models import CellRunResult, RunStatus, SessionRunResult
from judgebox.sandbox.sessions.handle import Session

__all__ = ["CodeInterpreterConfig", "CodeInterpreterTool"]

log = logging.getLogger(__name__)


class CodeInterpreterConfig(BaseModel):
    """Configuration of :class:`CodeInterpreterTool`. Units: seconds, MiB, characters or tokens.

    Attributes:
        sandbox_url: one base URL, several (a list or comma-separated), or ``None`` for an embedded
            :class:`~judgebox.sandbox.local.LocalSandbox`.
        timeout: default cell time limit (seconds) when the model gives none.
        max_timeout: the most a model-given ``timeout`` may be (larger values are clamped).
        memory_limit_MB: memory of one session's interpreter and its children (MiB; ``None``: the
            sandbox default).
        idle_timeout: seconds after which the sandbox closes a session nobody released (set it to
            about twice the longest trajectory).
        output_budget: the most characters (or tokens) of one observation (what the sandbox cut at its
            ``output_limit_bytes``, in bytes, is marked in the section's header).
        tokenizer: a Hugging Face tokenizer name/path (or object) to count ``output_budget`` in tokens.
        stderr_tail: characters of stderr shown (its end).
        traceback_frames: frames of a traceback shown (the last ones).
        languages: other ``run_code`` languages the model may pick (stateless); empty = Python only.
        client: :class:`~judgebox.sandbox.client.client.ClientSettings` fields for the HTTP client (e.g.
            ``{"max_concurrency": 64, "deadline": 120}``).
        clamp, type: read by :class:`~judgebox.agent.tools.base.BaseTool` / verl's loader.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    sandbox_url: Union[None, str, list[str]] = None
    timeout: float = Field(10.0, gt=0)
    max_timeout: float = Field(30.0, gt=0)
    memory_limit_MB: Optional[int] = Field(1024, ge=16)
    idle_timeout: float = Field(600.0, gt=0)
    output_budget: int = Field(4000, ge=64, description="characters (tokens with a tokenizer) of one observation; "
                               "the sandbox's own cap, output_limit_bytes, is in bytes")
    tokenizer: Any = None
    stderr_tail: int = Field(2000, ge=0)
    traceback_frames: int = Field(3, ge=1)
    languages: list[str] = Field(default_factory=list)
    client: dict[str, Any] = Field(default_factory=dict)
    clamp: dict[str, float] = Field(default_factory=dict)
    type: Optional[Literal["native"]] = None

    @model_validator(mode="after")
    def _timeouts(self) -> "CodeInterpreterConfig":
        if self.timeout > self.max_timeout:
            raise ValueError(f"timeout ({self.timeout:g} s) must not exceed max_timeout ({self.max_timeout:g} s)")
        return self

    @field_validator("languages")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        from judgebox.sandbox.models import SANDBOX_FUSION_LANGUAGES

        bad = [x for x in v if x not in SANDBOX_FUSION_LANGUAGES]
        if bad:
            raise ValueError(f"languages: {bad} are not run_code languages; pick from {list(SANDBOX_FUSION_LANGUAGES)}")
        return [x for x in v if x != "python"]


@dataclass
class _Instance:
    """One trajectory's state: its session (or, in replay mode, its successful cells)."""

    session: Optional[Session] = None
    cells: list[str] = field(default_factory=list)
    busy: Optional[asyncio.Lock] = None
    lost: str = ""  # why the previous state was dropped, for the next observation


class CodeInterpreterTool(BaseTool):
    """The ``code_interpreter`` tool (see the module docstring).

    Args:
        config: a :class:`CodeInterpreterConfig` as a dict (``{}`` = all defaults, embedded sandbox).
        tool_schema: overrides the built-in schema (its description then is the caller's).

    Raises:
        ValueError: a config key is unknown or out of range (the message names it).
    """

    def __init__(self, config: Optional[dict] = None, tool_schema: Any = None) -> None:
        try:
            self.settings = CodeInterpreterConfig.model_validate(dict(config or {}))
        except ValidationError as exc:
            raise ValueError(f"code_interpreter config: {exc}") from None
        s = self.settings
        config = {**dict(config or {}), "clamp": {"timeout": s.max_timeout, **s.clamp}}
        super().__init__(config, tool_schema)
        urls = s.sandbox_url if isinstance(s.sandbox_url, list) else (s.sandbox_url or "")
        self.client = SandboxClient(urls, local=None if urls else LocalSandbox(), **s.client)
        self._tokenizer = s.tokenizer
        if isinstance(self._tokenizer, str):
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(self._tokenizer)
        self._instances: dict[str, _Instance] = {}
        self._replay: Optional[bool] = None  # None: not known yet; True: the sandbox has no /sessions

    # ---------------------------------------------------------------- schema
    def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
        s = self.settings
        unit = "tokens" if s.tokenizer is not None else "characters"
        memory = f"{s.memory_limit_MB} MiB" if s.memory_limit_MB else "the sandbox's default"
        description = (
            "Run Python code in a stateful interpreter (an IPython kernel). Variables, imports, functions and "
            "files in the working directory persist from one call to the next within this conversation only; "
            "nothing is shared with other conversations. Set reset=true to start a fresh interpreter first. "
            f"Each call may run for `timeout` seconds (default {s.timeout:g}, at most {s.max_timeout:g}); a cell "
            "that runs too long is interrupted (state kept) or, if it does not stop, the interpreter is "
            f"restarted (state lost): the result's first line says which. Memory limit: {memory}. "
            "The result starts with a status line, then the printed output, the end of stderr, the last frames "
            f"of a traceback and the value of the last expression, cut to {s.output_budget} {unit} (the "
            "beginning and the end are kept).")
        properties: dict[str, Any] = {
            "code": {"type": "string", "description": "Python code to run (one notebook cell)."},
            "timeout": {"type": "number", "exclusiveMinimum": 0,
                        "description": f"Seconds the cell may run (default {s.timeout:g}, at most {s.max_timeout:g})."},
            "reset": {"type": "boolean", "default": False,
                      "description": "Start a fresh interpreter (variables and files gone) before running."},
        }
        if s.languages:
            properties["language"] = {
                "type": "string", "enum": ["python", *s.languages], "default": "python",
                "description": "python (stateful) or another language, run as a whole program each call "
                               "with no state kept between calls."}
            description += (f" Other languages ({', '.join(s.languages)}) run as one whole program per call, "
                            "with no state kept.")
        return OpenAIFunctionToolSchema.model_validate({"type": "function", "function": {
            "name": "code_interpreter", "description": description,
            "parameters": {"type": "object", "properties": properties, "required": ["code"],
                           "additionalProperties": False}}})

    # ---------------------------------------------------------------- lifecycle
    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """Register one trajectory's instance (its session starts on the first call)."""
        instance_id = instance_id if instance_id is not None else str(uuid.uuid4())
        if instance_id in self._instances:
            raise ValueError(f"code_interpreter: instance {instance_id!r} already exists: give each trajectory "
                             "its own instance id")
        self._instances[instance_id] = _Instance(busy=asyncio.Lock())
        return instance_id, ToolResponse()

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Close the instance's session (errors are logged: the sandbox reaps it after ``idle_timeout``)."""
        inst = self._instances.pop(instance_id, None)
        if inst is not None:
            await self._close(inst)

    @property
    def live_instances(self) -> int:
        """Instances created and not yet released."""
        return len(self._instances)

    async def _close(self, inst: _Instance) -> None:
        session, inst.session = inst.session, None
        if session is None:
            return
        try:
            await asyncio.shield(session.aclose())
        except Exception as exc:  # noqa: BLE001 - a release never masks the trajectory's result
            log.warning("code_interpreter: closing session %s failed (%s); the sandbox reaps it after "
                        "idle_timeout", session.session_id, exc)

    # ---------------------------------------------------------------- calls
    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, Optional[float], dict]:
        """Run one call. Returns ``(ToolResponse(text=observation), None, metrics)``; ``metrics`` has
        ``status`` (``ok``/``error``/``timeout``/``memory``/``killed``), ``state`` (kept/lost),
        ``execution_time`` (s) and ``replay``.

        Raises:
            KeyError: ``instance_id`` was never created (or already released).
            SandboxInfraError: the sandbox could not run the cell (infrastructure, not a result).
        """
        inst = self._instances.get(instance_id)
        if inst is None:
            raise KeyError(f"code_interpreter: unknown instance {instance_id!r}: call create() first")
        s = self.settings
        code = str(parameters.get("code", ""))
        timeout = min(float(parameters.get("timeout") or s.timeout), s.max_timeout)
        language = parameters.get("language") or "python"
        if language != "python":
            return await self._program(language, code, timeout)
        assert inst.busy is not None
        async with inst.busy:
            notes: list[str] = []
            if parameters.get("reset"):
                await self._close(inst)
                inst.cells.clear()
                inst.lost = ""
                notes.append(NOTE_RESET)
            elif inst.lost:
                notes.append(NOTE_LOST.format(reason=inst.lost))
            inst.lost = ""
            result = await self._cell(inst, code, timeout, notes)
        text = format_cell(result, timeout=timeout, memory_MB=s.memory_limit_MB, notes=notes,
                           stderr_tail=s.stderr_tail, traceback_frames=s.traceback_frames)
        lost = result.state == "lost" or any(n.startswith("[state lost]") for n in notes)
        metrics = {"status": _kind(result), "state": "lost" if lost else "kept",
                   "execution_time": result.execution_time, "replay": bool(self._replay)}
        return ToolResponse(text=fit_budget(text, s.output_budget, self._tokenizer)), None, metrics

    async def _cell(self, inst: _Instance, code: str, timeout: float, notes: list[str]) -> SessionRunResult:
        if self._replay is not True and inst.session is None:
            try:
                inst.session = await self._new_session()
            except SessionsUnsupported:
                log.warning("code_interpreter: the sandbox has no /sessions (plain SandboxFusion); replaying "
                            "each trajectory's successful cells through /run_jupyter")
                self._replay = True
        if self._replay:
            return await self._replayed(inst, code, timeout, notes)
        assert inst.session is not None
        try:
            try:
                result = await inst.session.arun(code, timeout)
            except SessionNotFound as exc:
                inst.session = await self._new_session()
                notes.append(NOTE_LOST.format(reason=f"the session was gone ({_reason(exc)})"))
                result = await inst.session.arun(code, timeout)
        except asyncio.CancelledError:
            # the caller gave up on this call (its own timeout, or the trajectory ended): stop the work
            # for real by closing the session; the next call starts a fresh one and says so
            inst.lost = "the previous call was cancelled before it finished, and its interpreter was closed"
            await self._close(inst)
            raise
        if result.status == RunStatus.SandboxError:
            raise SandboxServerError(f"the sandbox could not start an interpreter: {result.message}")
        if result.state == "lost" and result.message.startswith("state lost before this cell"):
            notes.append(NOTE_LOST.format(reason=result.message.split(": ", 1)[-1].split("; ")[0]))
        return result

    async def _new_session(self) -> Session:
        s = self.settings
        session = await self.client.acreate_session("python", s.memory_limit_MB, s.idle_timeout)
        self._replay = False
        return session

    async def _replayed(self, inst: _Instance, code: str, timeout: float, notes: list[str]) -> SessionRunResult:
        """Replay mode: earlier successful cells + this one in a fresh ``/run_jupyter`` kernel."""
        cells = [*inst.cells, code]
        resp = await self.client.arun_jupyter({
            "cells": cells, "cell_timeout": timeout, "total_timeout": timeout * len(cells) + 5})
        if resp.status == RunStatus.SandboxError:
            raise SandboxServerError(f"the sandbox could not run the notebook: {resp.message}")
        if len(resp.cells) < len(cells):  # an earlier cell no longer replays (timeout, kernel death)
            inst.cells.clear()
            notes.append(NOTE_LOST.format(reason="replaying the earlier cells failed"))
            return await self._replayed(inst, code, timeout, notes) if cells[:-1] else _from_cell(
                CellRunResult(), resp.driver.execution_time if resp.driver else 0.0, timeout)
        result = _from_cell(resp.cells[-1], resp.driver.execution_time if resp.driver else 0.0, timeout)
        if result.error is None:
            inst.cells.append(code)
        return result

    async def _program(self, language: str, code: str, timeout: float) -> tuple[ToolResponse, Optional[float], dict]:
        s = self.settings
        if language not in s.languages:
            text = f"[error] language {language!r} is not enabled here; use one of: python, {', '.join(s.languages)}"
            return ToolResponse(text=text), None, {"status": "error", "state": "kept"}
        resp = await self.client.arun_code({"code": code, "language": language, "run_timeout": timeout,
                                            "memory_limit_MB": s.memory_limit_MB or -1})
        if resp.status == RunStatus.SandboxError:
            raise SandboxServerError(f"the sandbox could not run {language}: {resp.message}")
        text = format_program(resp, timeout=timeout, stderr_tail=s.stderr_tail)
        status = "ok" if resp.status == RunStatus.Success else "error"
        return ToolResponse(text=fit_budget(text, s.output_budget, self._tokenizer)), None, {"status": status}

    def close(self) -> None:
        """Close the sandbox client (sessions still open are closed by their sandbox's reaper)."""
        self.client.close()


def _reason(exc: SessionNotFound) -> str:
    """The server's 404 text without the route and the advice: ``session '…' was created before …``."""
    return str(exc).split("HTTP 404: ", 1)[-1].split("; its state is lost")[0]


def _kind(r: SessionRunResult) -> str:
    if r.timed_out:
        return "timeout"
    if r.memory_exceeded:
        return "memory"
    if r.error is not None and r.error.get("ename") == "KernelDied":
        return "killed"
    return "error" if r.error is not None else "ok"


def _from_cell(cell: CellRunResult, elapsed: float, timeout: float) -> SessionRunResult:
    """A replayed ``/run_jupyter`` cell as a session result (a timeout there keeps the replayable state)."""
    error = cell.error[-1] if cell.error else None
    timed_out = bool(error and error.get("ename") == "TimeLimitExceeded")
    return SessionRunResult(status=RunStatus.Failed if error else RunStatus.Success, stdout=cell.stdout,
                            stderr=cell.stderr, display=cell.display, error=error, execution_time=elapsed or 0.0,
                            timed_out=timed_out, state="kept", stdout_truncated=cell.stdout_truncated,
                            stderr_truncated=cell.stderr_truncated, display_truncated=cell.display_truncated,
                            error_truncated=cell.error_truncated)
