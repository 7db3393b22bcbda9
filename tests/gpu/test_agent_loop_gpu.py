"""The agent loop at scale on a GPU (marked ``gpu``; skipped without CUDA and the ``vllm`` package).

Runs ``tests/bench/bench_agent.py`` with the same tiny random Qwen3 on the GPU engine: 1024
trajectories, 256 at once, 3 tool calls each, and checks every trajectory made its calls. The
figures (loop ms/turn vs generate, trajectories/s, split) are printed; ``-s`` shows them.

Run: PYTHONPATH=$PWD python -m pytest -m gpu -s tests/gpu/test_agent_loop_gpu.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(not has_cuda(), reason="needs a CUDA GPU and the vllm (GPU) package")
def test_agent_loop_at_scale_on_gpu():
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, str(root / "tests/bench/bench_agent.py"), "--gpu", "--compile", "--concurrency", "256",
           "--trajectories", "1024", "--calls", "3", "--sequential", "8"]
    out = subprocess.run(cmd, cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
                         text=True, timeout=540)
    print(out.stdout[-4000:])
    assert out.returncode == 0, out.stderr[-4000:]
    assert "1024 trajectories, 256 at once, 3 tool calls each" in out.stdout
