"""Generation backends behind one protocol (:class:`Backend`): token ids in, token ids out.

- :class:`VLLMBackend`: vLLM's ``AsyncLLM`` in process (the default);
- :class:`OpenAIBackend`: OpenAI-compatible servers on ``/v1/completions`` with token-id prompts;
- :class:`HFBackend`: transformers ``generate``, for small models on CPU.

The three are imported at first use (``from judgebox.agent.backends import OpenAIBackend``): the
OpenAI backend's HTTP client alone is ~0.07 s of every ``judgebox`` command's start.
"""

import importlib
from typing import Any

from judgebox.agent.backends.base import Backend, EngineInfo, GenerationResult

_LAZY = {"HFBackend": "hf", "OpenAIBackend": "openai", "VLLMBackend": "vllm"}

__all__ = ["Backend", "EngineInfo", "GenerationResult", "HFBackend", "OpenAIBackend", "VLLMBackend"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"judgebox.agent.backends.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
