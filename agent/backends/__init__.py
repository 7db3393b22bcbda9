"""Generation backends behind one protocol (:class:`Backend`): token ids in, token ids out.

- :class:`VLLMBackend`: vLLM's ``AsyncLLM`` in process (the default);
- :class:`OpenAIBackend`: OpenAI-compatible servers on ``/v1/completions`` with token-id prompts;
- :class:`HFBackend`: transformers ``generate``, for small models on CPU.
"""

from judgebox.agent.backends.base import Backend, EngineInfo, GenerationResult
from judgebox.agent.backends.hf import HFBackend
from judgebox.agent.backends.openai import OpenAIBackend
from judgebox.agent.backends.vllm import VLLMBackend

__all__ = ["Backend", "EngineInfo", "GenerationResult", "HFBackend", "OpenAIBackend", "VLLMBackend"]
