"""Where a TRL GRPO step goes: rollout (generation through vLLM), tools, reward and the optimizer.

``trl.GRPOTrainer`` on the tiny random Qwen3 (CPU) with judgebox's rollout
(:func:`judgebox.integrations.trl.rollout.make_rollout_func`: the agent loop with a ``code_interpreter`` tool on the embedded
sandbox, every turn constrained to a tool call, the MBPP gold answer or a wrong one) and the
trajectory reward (judgebox's judge). A callback times each step; the rollout object times each
rollout call and sums its trajectories' ``generate_s``/``tools_s``/``score_s``.

    python tests/bench/bench_trl_step.py [--steps 3] [--group 4]

Prints, per step and in total: step wall seconds, the rollout call's share of it (weight sync
included), and the trajectories' summed generation, tool and scoring seconds (concurrent
trajectories overlap, so these sums are split into shares of the rollout wall in proportion).
The first step includes vLLM's and the trainer's warm-up; the total row leaves it out when there are
more than one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", "/var/cache/judgebox/inductor")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--group", type=int, default=4, help="num_generations (completions per prompt)")
    args = ap.parse_args()

    import trl
    from transformers import AutoTokenizer, TrainerCallback

    import datasets
    from judgebox.agent import AgentLoopConfig, ToolAgentLoop
    from judgebox.agent.backends import VLLMBackend
    from judgebox.integrations.trl.rollout import make_rollout_func, prompt_lookup, trajectory_reward
    from judgebox.integrations.trl.weight_sync import WORKER_EXTENSION
    from tests.agent.tiny import tiny_qwen3
    from tests.integrations.mbpp import WRONG_COMMON, fenced, ground_truth, mbpp_problems
    from tests.integrations.test_trl_rollout import interpreter

    model_dir = str(tiny_qwen3())
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    engine_loop = asyncio.new_event_loop()
    threading.Thread(target=engine_loop.run_forever, daemon=True).start()

    async def start():
        return VLLMBackend.from_model(model_dir, max_model_len=2048, dtype="bfloat16", enforce_eager=True,
                                      max_num_seqs=16, seed=0, worker_extension_cls=WORKER_EXTENSION)

    backend = asyncio.run_coroutine_threadsafe(start(), engine_loop).result(600)
    problem = mbpp_problems(2)[1]
    call = ('<tool_call>\n{"name": "code_interpreter", "arguments": {"code": '
            '"print(sorted({3, 4, 5} & {4, 5, 7}))"}}\n</tool_call>')
    choices = [call, fenced(problem.gold), fenced(WRONG_COMMON)]
    loop = ToolAgentLoop(AgentLoopConfig(max_assistant_turns=3, max_tokens_per_turn=256, response_length=1024,
                                         max_model_len=2048, tool_timeout_s=30), tokenizer, backend,
                         tools=[interpreter()])
    rows = [{"prompt": [{"role": "user", "content": "Write common_elements(a, b)."}],
             "ground_truth": ground_truth(problem)}] * 2
    rollout = make_rollout_func(loop, engine_loop, ground_truth_of=prompt_lookup(rows),
                                sampling_params={"structured_outputs": {"choice": choices}, "temperature": 1.0})

    steps: list[float] = []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.started = time.perf_counter()

        def on_step_end(self, *a, **k):
            steps.append(time.perf_counter() - self.started)

    with tempfile.TemporaryDirectory() as out:
        config = trl.GRPOConfig(output_dir=out, use_cpu=True, use_vllm=False, max_steps=args.steps,
                                per_device_train_batch_size=args.group, num_generations=args.group,
                                max_completion_length=1024, report_to="none", learning_rate=1e-2,
                                save_strategy="no", model_init_kwargs={"dtype": "float32"}, seed=0)
        trainer = trl.GRPOTrainer(model=model_dir, reward_funcs=[trajectory_reward], args=config,
                                  rollout_func=rollout, train_dataset=datasets.Dataset.from_list(rows),
                                  callbacks=[StepTimer()])
        trainer.train()
    backend.shutdown()

    print(f"{'step':>5} {'step s':>8} {'rollout':>8} {'  sync':>7} {'generate':>9} {' tools':>7} {'reward':>7} "
          f"{'optimizer':>9}   (shares of the step; {args.group} trajectories per step)")
    rowsum = {k: 0.0 for k in ("step", "wall_s", "sync_s", "generate_s", "tools_s", "score_s")}
    for i, (step_s, t) in enumerate(zip(steps, rollout.timings)):
        print(line(str(i + 1), step_s, t))
        if i or len(steps) == 1:
            rowsum["step"] += step_s
            for k in ("wall_s", "sync_s", "generate_s", "tools_s", "score_s"):
                rowsum[k] += t[k]
    print(line("total", rowsum.pop("step"), rowsum))
    return 0


def line(name: str, step_s: float, t: dict) -> str:
    """One row: the rollout's wall share of the step, split by the trajectories' summed seconds."""
    work = t["generate_s"] + t["tools_s"] + t["score_s"]
    inside = t["wall_s"] - t["sync_s"]

    def share(seconds: float) -> str:
        return f"{100 * seconds / step_s:6.1f}%"

    def part(key: str) -> str:
        return share(inside * t[key] / work if work else 0.0)

    return (f"{name:>5} {step_s:8.2f} {share(t['wall_s']):>8} {share(t['sync_s']):>7} {part('generate_s'):>9} "
            f"{part('tools_s'):>7} {part('score_s'):>7} {share(step_s - t['wall_s']):>9}")


if __name__ == "__main__":
    sys.exit(main())
