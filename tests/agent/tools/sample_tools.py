"""Function tools the tests load by module path (``tests.agent.tools.sample_tools.<name>``).

Module level, so a ``process=True`` worker can import them.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Literal, Optional

from judgebox.agent.tools import BaseTool, ToolResponse, function_tool
from judgebox.sandbox.errors import SandboxUnavailable


@function_tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@function_tool(name="shout")
async def shout_async(text: str, times: Optional[int] = 1, style: Literal["upper", "title"] = "upper") -> str:
    """Repeat text loudly.

    Args:
        text: What to say.
        times: How many times.
        style: How to shout.
    """
    await asyncio.sleep(0)
    return " ".join([text.upper() if style == "upper" else text.title()] * (times or 1))


@function_tool
def scored(answer: str) -> tuple:
    """Score an answer.

    Args:
        answer: The answer.
    """
    return ToolResponse(text=f"got {answer}"), 1.0 if answer == "42" else 0.0, {"length": len(answer)}


def word_count(text: str) -> int:
    """Count the words of a text (a plain function, wrapped by load_tools).

    Args:
        text: The text.
    """
    return len(text.split())


@function_tool(process=True)
def sleepy_pid(seconds: float, pidfile: str = "") -> str:
    """Write this worker's pid to a file, then sleep.

    Args:
        seconds: How long to sleep.
        pidfile: Where to write the pid first (empty: nowhere).
    """
    if pidfile:
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
    time.sleep(seconds)
    return f"slept {seconds:g} s in {os.getpid()}"


@function_tool(process=True)
def fail_in_worker(message: str) -> str:
    """Raise in the worker.

    Args:
        message: The error message.
    """
    raise ValueError(message)


class Counter(BaseTool):
    """A stateful tool: each instance counts its calls. Records every create and release.

    ``config``: ``fail_release`` (raise in release), ``create_delay_s`` (sleep in create).
    ``execute`` with ``n`` = -1 sleeps an hour (cancellable), -2 raises ``RuntimeError("boom")``,
    -3 raises ``SandboxUnavailable``.
    """

    created: list = []
    released: list = []
    create_kwargs: list = []

    def get_openai_tool_schema(self):
        return {"type": "function", "function": {
            "name": "counter", "description": "Add n to this trajectory's counter and return it.",
            "parameters": {"type": "object", "properties": {
                "n": {"type": "integer", "description": "How much to add.", "default": 1},
                "tags": {"type": "array", "items": {"type": "object", "properties": {
                    "label": {"type": "string"}}, "required": ["label"], "additionalProperties": False}},
            }, "additionalProperties": False}}}

    async def create(self, instance_id=None, **kwargs):
        await asyncio.sleep(self.config.get("create_delay_s", 0))
        instance_id, response = await super().create(instance_id, **kwargs)
        self.counts = getattr(self, "counts", {})
        self.counts[instance_id] = 0
        Counter.created.append(instance_id)
        Counter.create_kwargs.append(kwargs)
        return instance_id, response

    async def execute(self, instance_id, parameters, **kwargs):
        n = parameters.get("n", 1)
        if n == -1:
            await asyncio.sleep(3600)
        if n == -2:
            raise RuntimeError("boom")
        if n == -3:
            raise SandboxUnavailable("no live endpoint (http://127.0.0.1:9 refused the connection)")
        self.counts[instance_id] += n
        return ToolResponse(text=str(self.counts[instance_id])), float(self.counts[instance_id]), {"n": n}

    async def calc_reward(self, instance_id, **kwargs):
        return float(self.counts[instance_id])

    async def release(self, instance_id, **kwargs):
        Counter.released.append(instance_id)
        if self.config.get("fail_release"):
            raise OSError("release failed")
