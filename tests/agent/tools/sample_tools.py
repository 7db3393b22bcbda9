"""Function tools the tests load by module path (``tests.agent.tools.sample_tools.<name>``).

Module level, so a ``process=True`` worker can import them.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Literal, Optional

from agent.tools import ToolResponse, function_tool


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
