"""Benchmark of the tool agent loop on the tiny random Qwen3 with vLLM's engine (CPU here).

Prints:
1. the loop's own time per turn (ms: rendering the prompt and observations, parsing, bookkeeping,
   scoring excluded), against the engine's generate time per turn, from one trajectory at a time;
2. trajectories/s for ``--concurrency`` (64) trajectories at once, each with ``--calls`` (3) tool
   calls then a final answer;
3. how that run's trajectory time splits between generation, tools and the loop's bookkeeping.

Each turn's text is forced (the tests' ``ForcedTokens`` logits processor) so every trajectory really
makes its calls; the tool is an instant function tool (``--tool echo``, isolates the loop) or the
embedded sandbox (``--tool sandbox``).

Usage: PYTHONPATH=$PWD python tests/bench/bench_agent.py [--concurrency 64] [--calls 3] [--tool echo]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", "/var/cache/judgebox/inductor")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


def build(args):
    from transformers import AutoTokenizer

    from judgebox.agent.backends import VLLMBackend
    from judgebox.agent.tools import function_tool
    from tests.agent.forcing import ForcedTokens
    from tests.agent.loop_helpers import SCHEMA, code_interpreter
    from tests.agent.tiny import tiny_qwen3

    path = str(tiny_qwen3())
    tokenizer = AutoTokenizer.from_pretrained(path)
    engine_kwargs = dict(max_model_len=4096, dtype="bfloat16", max_num_seqs=max(64, args.concurrency),
                         logits_processors=[ForcedTokens], enforce_eager=not args.compile)
    if args.gpu:
        engine_kwargs.update(gpu_memory_utilization=0.3)
    backend = VLLMBackend.from_model(path, **engine_kwargs)

    @function_tool(name="code_interpreter", schema=SCHEMA)
    async def echo(code: str, timeout: int = 0, reset: bool = False) -> str:
        """Return the code (an instant tool)."""
        return code

    return tokenizer, backend, (code_interpreter if args.tool == "sandbox" else echo)


async def trajectories(args, tokenizer, backend, tool, count: int, concurrency: int):
    from judgebox.agent.config import AgentLoopConfig
    from judgebox.agent.loop import ToolAgentLoop
    from tests.agent.loop_helpers import Forced, call

    script = [call("code_interpreter", code=f"print({i})") for i in range(args.calls)] + ["The answer is 42."]
    loop = ToolAgentLoop(AgentLoopConfig(max_tokens_per_turn=64), tokenizer, Forced(backend, tokenizer, script),
                         tools=(tool,), score_fn=lambda *a, **k: {"score": 0.0})
    gate = asyncio.Semaphore(concurrency)

    async def one(i):
        async with gate:
            return await loop.run([{"role": "user", "content": f"Task {i}: compute."}], request_id=f"b{i}-{time.time()}",
                                  temperature=1.0)

    start = time.perf_counter()
    outs = await asyncio.gather(*(one(i) for i in range(count)))
    return outs, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--trajectories", type=int, help="total trajectories (default: --concurrency)")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--tool", choices=["echo", "sandbox"], default="echo")
    parser.add_argument("--sequential", type=int, default=4, help="trajectories run one at a time for part 1")
    parser.add_argument("--compile", action="store_true", help="let vLLM compile (default: eager)")
    parser.add_argument("--gpu", action="store_true", help="GPU engine settings (tests/gpu)")
    args = parser.parse_args()

    tokenizer, backend, tool = build(args)

    async def run():
        await trajectories(args, tokenizer, backend, tool, 1, 1)  # warm-up (first requests compile)
        seq, _ = await trajectories(args, tokenizer, backend, tool, args.sequential, 1)
        turns = [o.extra_fields["requests"] for o in seq]
        n_turns = sum(len(t) for t in turns)
        loop_ms = 1000 * sum(o.metrics["loop_s"] for o in seq) / n_turns
        gen_ms = 1000 * sum(o.metrics["generate_s"] for o in seq) / n_turns
        print(f"1. one trajectory at a time ({args.sequential} x {args.calls + 1} turns): loop overhead "
              f"{loop_ms:.2f} ms/turn vs generate {gen_ms:.1f} ms/turn ({100 * loop_ms / (loop_ms + gen_ms):.1f}%)")
        total = args.trajectories or args.concurrency
        outs, wall = await trajectories(args, tokenizer, backend, tool, total, args.concurrency)
        assert all(o.extra_fields["tool_calls"] == args.calls for o in outs), "a trajectory missed its calls"
        tokens = sum(len(o.response_ids) for o in outs)
        print(f"2. {total} trajectories, {args.concurrency} at once, {args.calls} tool calls each: "
              f"{total / wall:.2f} trajectories/s ({wall:.1f} s, {tokens / wall:.0f} response tokens/s)")
        parts = {k: sum(o.metrics[k] for o in outs) for k in ("generate_s", "tools_s", "loop_s")}
        whole = sum(parts.values())
        print("3. split of trajectory time: " + ", ".join(f"{k[:-2]} {100 * v / whole:.1f}%" for k, v in parts.items())
              + f"; loop per turn (p50) {1000 * statistics.median(o.metrics['loop_s'] / len(o.extra_fields['requests']) for o in outs):.1f} ms")

    try:
        asyncio.run(run())
    finally:
        backend.shutdown()


if __name__ == "__main__":
    main()
