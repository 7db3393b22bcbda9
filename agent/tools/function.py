"""``@function_tool``: a typed, documented Python function (sync or async) as a :class:`BaseTool`.

The schema comes from the type hints and the Google-style docstring through
``transformers.utils.get_json_schema`` (the same source as verl's ``@function_tool``), then two
repairs so it is a true JSON Schema: each parameter's Python default becomes ``"default"``, and
transformers' OpenAPI-style ``"nullable": true`` becomes ``null`` in ``"type"`` (so ``jsonschema``
accepts the ``None`` that ``Optional[...]`` allows).

The function may return a ``str``, a :class:`ToolResponse`, or verl's triple
``(response, step_reward, metrics)`` (also ``(response,)`` / ``(response, reward)``); a ``dict``
becomes its JSON text, ``None`` an empty response, anything else ``str(value)``.

Where it runs:

- ``async def``: awaited on the caller's loop; a timeout cancels it.
- sync, default: in its own daemon thread. Python cannot stop a thread, so on a timeout the caller
  stops waiting at once and the call is *abandoned* (counted in
  :class:`judgebox.agent.tools.ToolMetrics` and :attr:`FunctionTool.abandoned_running`); it never holds a
  shared executor slot.
- ``process=True`` (sync or async): in a worker process (``spawn``; reused between calls); a
  timeout or cancellation SIGKILLs the worker's process group, so the work really stops. Arguments
  and results cross a pipe (picklable values only); the function must be importable by its
  module and qualified name (a module-level function).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
import json
import multiprocessing
import os
import signal
import threading
from typing import Any, Callable, Optional, Union

from judgebox.agent.tools.base import BaseTool
from judgebox.agent.tools.schema import OpenAIFunctionToolSchema, ToolResponse
from judgebox.extras import require

__all__ = ["FunctionTool", "ToolWorkerError", "function_tool", "normalize_return"]

_IN_WORKER = False  # set in worker processes: the decorator then skips the schema (not needed there)


class ToolWorkerError(RuntimeError):
    """A ``process=True`` call failed in its worker process.

    Attributes:
        remote_type: the name of the exception type raised by the function in the worker
            (``None`` when the worker itself died); ``str(error)`` is then its message.
    """

    def __init__(self, message: str, remote_type: Optional[str] = None) -> None:
        super().__init__(message)
        self.remote_type = remote_type


def normalize_return(ret: Any) -> tuple[ToolResponse, Optional[float], dict]:
    """A function tool's return value as ``(ToolResponse, step_reward or None, metrics)``.

    Raises ``TypeError`` for a tuple of length 0 or over 3 (an authoring bug, not a result).
    """
    if isinstance(ret, tuple):
        if not 1 <= len(ret) <= 3:
            raise TypeError(f"a function tool returned a tuple of length {len(ret)}; return "
                            "(response,), (response, reward) or (response, reward, metrics)")
        reward = None if len(ret) < 2 or ret[1] is None else float(ret[1])
        metrics = {} if len(ret) < 3 or ret[2] is None else dict(ret[2])
        return _as_response(ret[0]), reward, metrics
    return _as_response(ret), None, {}


def _as_response(value: Any) -> ToolResponse:
    if isinstance(value, ToolResponse):
        return value
    if value is None:
        return ToolResponse()
    if isinstance(value, str):
        return ToolResponse(text=value)
    if isinstance(value, dict):
        return ToolResponse(text=json.dumps(value, ensure_ascii=False))
    return ToolResponse(text=str(value))


def _json_schema_nulls(node: Any) -> Any:
    """``{"type": T, "nullable": true}`` -> ``{"type": [T, "null"]}``, recursively."""
    if isinstance(node, list):
        return [_json_schema_nulls(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema_nulls(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = types + ["null"] if "null" not in types else types
    return out


def schema_from_function(fn: Callable, name: str) -> OpenAIFunctionToolSchema:
    """The tool schema of ``fn`` (see the module docstring); ``ValueError`` for ``*args``/``**kwargs``.

    ``transformers`` raises ``DocstringParsingException`` / ``TypeHintParsingException`` when a
    parameter lacks a type hint or an ``Args:`` line.
    """
    get_json_schema = require("transformers.utils").get_json_schema  # heavy import, only when a schema is built

    sig = inspect.signature(fn)
    variadic = [p.name for p in sig.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if variadic:
        raise ValueError(f"function tool {name!r} ({fn.__module__}.{fn.__qualname__}) has variadic "
                         f"parameters {variadic}: a tool schema needs named parameters")
    raw = get_json_schema(fn)["function"]
    parameters = _json_schema_nulls(raw.get("parameters") or {"type": "object", "properties": {}})
    for p in sig.parameters.values():
        prop = parameters.get("properties", {}).get(p.name)
        if prop is not None and p.default is not p.empty and "default" not in prop:
            with contextlib.suppress(TypeError, ValueError):
                prop["default"] = json.loads(json.dumps(p.default))  # JSON values only
    return OpenAIFunctionToolSchema.model_validate(
        {"type": "function", "function": {"name": name, "description": raw.get("description", ""),
                                          "parameters": parameters}})


class FunctionTool(BaseTool):
    """A :class:`BaseTool` around one function; made by :func:`function_tool`.

    Calling the object calls the function itself (``tool(1, 2)``), so decorated functions stay
    usable as functions. Stateless: ``create``/``release`` only mint and forget an id.

    Attributes:
        fn: the function.
        process: whether calls run in a killable worker process.
        abandoned_running: sync in-thread calls whose caller gave up (timeout or cancellation) and
            that are still running.
    """

    def __init__(self, fn: Callable, *, name: Optional[str] = None,
                 schema: Union[OpenAIFunctionToolSchema, dict, None] = None, process: bool = False,
                 config: Optional[dict] = None) -> None:
        self.fn = fn
        self.process = process
        self.is_async = inspect.iscoroutinefunction(fn)
        self.cancel_stops_work = self.is_async or process
        self.abandoned_running = 0
        self._lock = threading.Lock()
        self._idle_workers: list[_Worker] = []
        if process and "<locals>" in fn.__qualname__:
            raise ValueError(f"function tool {fn.__qualname__!r}: process=True needs a module-level function "
                             "(the worker process imports it by module and name)")
        functools.update_wrapper(self, fn)
        tool_name = name or fn.__name__
        if schema is None:
            schema = None if _IN_WORKER else schema_from_function(fn, tool_name)
        elif name is not None:  # an explicit schema keeps its own name unless one is given
            schema = {**(schema.model_dump() if hasattr(schema, "model_dump") else schema)}
            schema["function"] = {**schema["function"], "name": name}
        if schema is None:  # in a worker process: the function is all that is needed
            self.config, self.tool_schema = dict(config or {}), None
            return
        super().__init__(config, schema)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, Optional[float], dict]:
        """Call the function with ``parameters`` as keyword arguments; ``kwargs`` are not passed."""
        if self.process:
            ret = await self._call_in_worker(parameters)
        elif self.is_async:
            ret = await self.fn(**parameters)
        else:
            ret = await self._call_in_thread(parameters)
        return normalize_return(ret)

    async def _call_in_thread(self, parameters: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        state = {"returned": False, "abandoned": False}  # guarded by self._lock

        def settle(ok: bool, value: Any) -> None:
            if not future.done():
                (future.set_result if ok else future.set_exception)(value)

        def run() -> None:
            try:
                ok, value = True, self.fn(**parameters)
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting caller
                ok, value = False, e
            with self._lock:
                state["returned"] = True
                if state["abandoned"]:
                    self.abandoned_running -= 1
                    return
            with contextlib.suppress(RuntimeError):  # the caller's loop may be closed by now
                loop.call_soon_threadsafe(settle, ok, value)

        threading.Thread(target=run, name=f"tool-{self.name}", daemon=True).start()
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if not state["returned"]:
                    state["abandoned"] = True
                    self.abandoned_running += 1
            raise

    async def _call_in_worker(self, parameters: dict[str, Any]) -> Any:
        with self._lock:
            worker = self._idle_workers.pop() if self._idle_workers else None
        if worker is None or not worker.alive():
            worker = _Worker()
        try:
            ok, value = await worker.call(self.fn.__module__, self.fn.__qualname__, parameters)
        except BaseException:
            worker.kill()
            raise
        with self._lock:
            if len(self._idle_workers) < int(self.config.get("process_pool_size", 4)):
                self._idle_workers.append(worker)
                worker = None
        if worker is not None:
            worker.kill()
        if not ok:
            raise ToolWorkerError(value[1], remote_type=value[0])
        return value

    def close(self) -> None:
        """Stop the idle worker processes (``process=True``); later calls start new ones."""
        with self._lock:
            workers, self._idle_workers = self._idle_workers, []
        for w in workers:
            w.kill()


def function_tool(fn: Union[Callable, str, None] = None, *, name: Optional[str] = None,
                  schema: Union[OpenAIFunctionToolSchema, dict, None] = None, process: bool = False,
                  config: Optional[dict] = None) -> Any:
    """Turn a function into a :class:`FunctionTool` (a :class:`BaseTool`).

    Forms: ``@function_tool``, ``@function_tool("name")``, ``@function_tool(name=..., process=True)``.

    Args:
        fn: the function (bare decorator form) or the tool's name.
        name: the tool's name; default the function's ``__name__``.
        schema: use this tool schema instead of deriving one (it keeps its name unless ``name`` is given).
        process: run each call in a killable worker process (see the module docstring).
        config: the tool's config, e.g. ``{"clamp": {"timeout": 30}}``,
            ``{"process_pool_size": 4}`` (idle workers kept).

    Raises:
        ValueError: variadic parameters or a malformed schema; transformers' parsing exceptions for a
            missing type hint or docstring line.
    """
    if isinstance(fn, str):
        fn, name = None, fn

    def decorate(f: Callable) -> FunctionTool:
        return FunctionTool(f, name=name, schema=schema, process=process, config=config)

    return decorate(fn) if fn is not None else decorate


# ---------------------------------------------------------------- worker processes (process=True)

class _Worker:
    """One ``spawn``ed worker process in its own process group, talking over a pipe."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child,), daemon=True, name="judgebox-tool-worker")
        self.proc.start()
        child.close()

    def alive(self) -> bool:
        try:
            return self.proc.is_alive()
        except ValueError:  # closed
            return False

    async def call(self, module: str, qualname: str, parameters: dict[str, Any]) -> tuple[bool, Any]:
        """``(True, result)`` or ``(False, (type name, message))``; kill() unblocks it."""
        self.conn.send((module, qualname, parameters))
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def receive() -> None:
            try:
                ok, value = True, self.conn.recv()
            except BaseException as e:  # noqa: BLE001 - EOF after kill(), or the worker died
                ok, value = False, e
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(lambda: future.done() or (
                    future.set_result(value) if ok else future.set_exception(value)))

        threading.Thread(target=receive, name="tool-worker-recv", daemon=True).start()
        try:
            return await future
        except (EOFError, OSError):
            code = self.proc.exitcode
            raise ToolWorkerError(f"the tool's worker process died (exit code {code})") from None

    def kill(self) -> None:
        """SIGKILL the worker's process group (its children too) and the worker itself, then reap it."""
        if self.proc.is_alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.kill()  # also before the worker reached setpgrp()
        self.proc.join(2)
        self.conn.close()
        if self.proc.exitcode is not None:
            self.proc.close()  # its sentinel pipe


def _worker_main(conn: Any) -> None:
    global _IN_WORKER
    _IN_WORKER = True
    os.setpgrp()  # kill() takes the function's own children with it
    while True:
        try:
            module, qualname, parameters = conn.recv()
        except EOFError:
            return
        try:
            target: Any = importlib.import_module(module)
            for part in qualname.split("."):
                target = getattr(target, part)
            fn = target.fn if isinstance(target, FunctionTool) else target
            result = asyncio.run(fn(**parameters)) if inspect.iscoroutinefunction(fn) else fn(**parameters)
            conn.send((True, result))
        except BaseException as e:  # noqa: BLE001 - reported to the caller as the tool's error
            try:
                conn.send((False, (type(e).__name__, str(e))))
            except Exception:  # noqa: BLE001 - e.g. the result was not picklable
                return
