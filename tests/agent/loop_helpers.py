"""Helpers of the loop tests: a forcing wrapper around the real engine, scripted backends, test tools.

``Forced(backend, tokenizer, script)`` passes every request to the real backend, adding for turn
``k`` of a trajectory the parameters that make the engine emit ``script[k]`` exactly (its canonical
ids, then ``<|im_end|>``; ``(text, end_id)`` picks the end id; a dict is merged as raw sampling
parameters, e.g. a structured-output constraint); ``None`` leaves that turn free. ``script`` is a
list for every trajectory or ``{request_id: list}``. It records each request's prompt ids, params
and result, so tests can check the prefix invariant and ``max_tokens``.

``code_interpreter`` here runs code in the embedded sandbox (stateless, with the case files'
schema; the production tool is ``judgebox.agent.tools.CodeInterpreterTool``) and counts executions;
``flaky_interpreter`` (same name and schema) blocks its thread on ``HANG`` ignoring cancellation,
raises on ``BOOM`` and otherwise echoes the code (BUG-117).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Optional, Union

from judgebox.agent.backends.base import GenerationResult
from judgebox.agent.tools import function_tool
from tests.agent.conftest import IM_END, force

SCHEMA = {"type": "function", "function": {
    "name": "code_interpreter", "description": "Run Python code and return its standard output.",
    "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "timeout": {"type": "integer"},
                                                    "reset": {"type": "boolean"}}, "required": ["code"]}}}

EXECUTIONS: list[str] = []


@function_tool(name="code_interpreter", schema=SCHEMA)
async def code_interpreter(code: str, timeout: Optional[int] = None, reset: Optional[bool] = None) -> str:
    """Run code in the embedded sandbox; the text is stdout (stderr appended when not empty)."""
    from judgebox.sandbox import LocalSandbox

    EXECUTIONS.append(code)
    out = await LocalSandbox().arun_code({"code": code, "language": "python", "run_timeout": timeout or 10})
    run = out.run_result
    text = (run.stdout if run else "") or ""
    if run and run.stderr:
        text += run.stderr
    return text.rstrip("\n")


@function_tool(name="code_interpreter", schema=SCHEMA)
def flaky_interpreter(code: str, timeout: Optional[int] = None, reset: Optional[bool] = None) -> str:
    """HANG: block forever ignoring cancellation; BOOM: raise; anything else: echoed."""
    if code == "HANG":
        time.sleep(10**6)
    if code == "BOOM":
        raise RuntimeError("boom")
    return code


@function_tool(name="slow_one", schema={"type": "function", "function": {
    "name": "slow_one", "description": "Answer 1 slowly.", "parameters": {"type": "object", "properties": {}}}})
async def slow_one() -> str:
    """Answer 1 after 0.5 s."""
    await asyncio.sleep(0.5)
    return "1"


@function_tool(name="fast_two", schema={"type": "function", "function": {
    "name": "fast_two", "description": "Answer 2 at once.", "parameters": {"type": "object", "properties": {}}}})
async def fast_two() -> str:
    """Answer 2 at once."""
    return "2"


@function_tool(name="emit", schema={"type": "function", "function": {
    "name": "emit", "description": "Return n lines.", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}})
def emit(n: int) -> str:
    """Return ``n`` lines ``x``."""
    return "\n".join(["x"] * n)


def call(name: str, **arguments) -> str:
    """A hermes tool-call text as Qwen3 writes it (compact JSON)."""
    import json

    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, separators=(",", ":")) + "</tool_call>"


class Forced:
    """The real backend, with per-turn forced texts (see the module docstring)."""

    def __init__(self, backend, tokenizer, script: Union[list, dict], extra: Optional[dict] = None) -> None:
        self.backend, self.tokenizer, self.script = backend, tokenizer, script
        self.extra = extra or {}
        self.turn: dict = defaultdict(int)
        self.log: list[dict] = []

    def text_for(self, request_id: str, k: int):
        script = self.script[request_id] if isinstance(self.script, dict) else self.script
        return script[k] if k < len(script) else None

    async def generate(self, prompt_ids, sampling_params, request_id=None) -> GenerationResult:
        k = self.turn[request_id]
        self.turn[request_id] += 1
        item = self.text_for(request_id, k)
        params = dict(sampling_params)
        if isinstance(item, dict):
            params.update(item)
        elif item is not None:
            text, end = (item, IM_END) if isinstance(item, str) else item
            params.update(force(self.tokenizer, text, end))
        params.update(self.extra)
        result = await self.backend.generate(prompt_ids, params, request_id)
        self.log.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "params": params,
                         "result": result})
        return result


class Scripted:
    """A backend that returns fixed results in order (for cases the real engine cannot produce)."""

    def __init__(self, results: list[GenerationResult]) -> None:
        self.results = list(results)
        self.log: list[dict] = []

    async def generate(self, prompt_ids, sampling_params, request_id=None) -> GenerationResult:
        self.log.append({"prompt_ids": list(prompt_ids), "params": dict(sampling_params)})
        return self.results.pop(0)
