"""``judgebox rollout``: generate scored agent trajectories with a model (tool calls, pass@k), resumably."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import get_args

from judgebox.cli.common import (
    FORCE_HELP,
    UsageError,
    html_page,
    infra_exit,
    json_arg,
    ks,
    outputs,
    readable,
    resumable,
    resume_notes,
    writable,
)
from judgebox.cli.sandboxes import checked_client


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``rollout``'s flags."""
    p.add_argument("dataset", help="a dataset name (see `judgebox datasets`) or a data file path")
    p.add_argument("--format", help="loader format for a data file path (e.g. humaneval, mbpp, apps)")
    p.add_argument("--model", required=True, help="model directory or name (its tokenizer renders prompts)")
    p.add_argument("--tokenizer", help="tokenizer directory (default: --model)")
    p.add_argument("--backend", choices=["vllm", "openai", "hf"], default="vllm",
                   help="vllm: AsyncLLM in this process (default); openai: servers at --base-url; hf: transformers")
    p.add_argument("--base-url", action="append", default=[],
                   help="OpenAI-compatible server root (repeatable; trajectories stick to one)")
    from judgebox.agent.backends.base import LogprobsMode

    p.add_argument("--logprobs-mode", choices=get_args(LogprobsMode),
                   help="--backend openai: the servers' vLLM --logprobs-mode (the API does not report it); "
                        "recorded on every trajectory (default: unknown)")
    p.add_argument("--served-model-name", help="the model name the servers expect (default: --model)")
    p.add_argument("--n", type=int, default=1, help="trajectories per problem (default 1)")
    p.add_argument("--tools", default="none",
                   help="tool config YAML (e.g. configs/tools/code_interpreter.yaml) or 'none' (plain sampling)")
    p.add_argument("--sampling-params", help="JSON object (or @file) of sampling parameters, "
                                             "e.g. '{\"temperature\": 0.6, \"top_p\": 0.95, \"seed\": 0}'")
    p.add_argument("--config", help="JSON object (or @file) of AgentLoopConfig keys, e.g. "
                                    "'{\"max_tool_rounds\": 4, \"max_tokens_per_turn\": 1024}'")
    p.add_argument("--max-model-len", type=int, help="the engine's context in tokens (AgentLoopConfig.max_model_len)")
    p.add_argument("--engine-args", help="JSON object of extra vllm.AsyncEngineArgs (vllm backend)")
    p.add_argument("--system", help="a system message put before each prompt")
    p.add_argument("--out", help="trajectories jsonl, appended and resumed "
                                 "(default: judgebox-results/DATASET.rollout.jsonl)")
    p.add_argument("--summary", help="write the summary JSON here")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--html", help="write the report page here (as `judgebox report`, token texts from "
                                  "--tokenizer/--model)")
    p.add_argument("--sandbox-url", action="append", default=[],
                   help="sandbox base URL for judging (repeatable); default: the embedded sandbox")
    p.add_argument("--concurrency", type=int, default=64, help="trajectories in flight (default 64)")
    p.add_argument("--k", type=ks, default=[1], help="pass@k budgets (default 1)")
    p.add_argument("--retries", type=int, default=2, help="extra judging attempts on infrastructure errors")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Generate, judge and record ``--n`` trajectories per problem, resumably; exit status: the
    package's docstring."""
    from judgebox.agent.rollout import Rollout
    from judgebox.reward.evaluate import Evaluation
    from judgebox.reward.loaders import load_dataset
    from judgebox.reward.report import print_table, write_summary

    sampling = json_arg("--sampling-params", args.sampling_params)
    config, tools = loop_settings(args)
    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    out = writable("--out", args.out or f"judgebox-results/{name}.rollout.jsonl", make_parent=True)
    for flag, path in (("--summary", args.summary), ("--html", args.html)):
        if path:
            writable(flag, path)
    source = str(out.resolve())
    outputs([("DATASET", args.dataset, "input"), ("--tools", None if args.tools == "none" else args.tools, "input"),
             *((flag, value[1:], "input") for flag, value in (("--sampling-params", args.sampling_params),
                                                              ("--config", args.config)) if (value or "").startswith("@")),
             ("--out", out, "trajectories"), ("--summary", args.summary, "summary"), ("--html", args.html, "page")],
             {"summary": source, "page": source}, args.force, {p.task_id for p in problems})
    check_model(args)
    from transformers import AutoTokenizer

    from judgebox.agent.loop import ToolAgentLoop

    client = checked_client(args.sandbox_url, manifest, problems)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or args.model)

    async def run():
        backend = LazyBackend(lambda: backend_of(args, config))
        try:
            loop = ToolAgentLoop(config, tokenizer, backend, tools=tools)
            evaluation = Evaluation(problems, out, client=client,
                                    retries=args.retries, dataset=name)
            # named by their flags: a resume with other settings names the ones that differ; not --backend
            # (the same model served by another engine, a vLLM server for the embedded one, goes on the run)
            generated_by = {"--model": args.model, "--sampling-params": sampling, "--system": args.system,
                            "--tools": None if args.tools == "none" else Path(args.tools).read_text(),
                            "--config": config.model_dump(mode="json")}
            rollout = Rollout(problems, loop, out, n=args.n, sampling_params=sampling, evaluation=evaluation,
                              concurrency=args.concurrency, system=args.system, dataset=name, settings=generated_by)
            def announce(done: dict, pending: list) -> None:
                if done:
                    print(f"resuming from {out}: keeping {len(rollout.keys()) - len(pending)} of "
                          f"{len(rollout.keys())} trajectories; running {len(pending)}")
                    resume_notes(out, len(set(done) - set(rollout.keys())), rollout.duplicates_dropped,
                                 "trajectories", f"problems not in this run or samples beyond --n {args.n}")

            summary = await rollout.run(args.k, progress=not args.no_progress, announce=announce)
            gave_up.append(rollout.gave_up)
            return summary
        finally:
            await backend.close()

    gave_up: list[str] = []
    summary, code = resumable(run(), "trajectories", out)
    if summary is None:
        return code
    print_table(summary, command="rollout")
    print(f"stop reasons: {summary.stop_reasons}; tool calls per trajectory: "
          f"{summary.tool_calls_per_trajectory:.2f}; parse errors: {summary.parse_errors}; "
          f"tool errors: {summary.tool_errors}; tool timeouts: {summary.tool_timeouts}")
    print(f"trajectories: {out}")
    summary.model = args.model
    summary.results_file = source
    if args.summary:
        write_summary(summary, Path(args.summary))
        print(f"summary: {args.summary}")
    html_page(args.html, out, summary, tokenizer=args.tokenizer or args.model)
    if gave_up and gave_up[0]:
        print(f"judgebox rollout: {gave_up[0]}; {summary.n_samples_pending} trajectories were not run; those so far "
              f"are in {out}: run the same command to resume", file=sys.stderr)
        return 2
    return infra_exit(summary, "trajectories hit infrastructure errors (aborted generation or sandbox)", "redo them")


def loop_settings(args: argparse.Namespace):
    """``(AgentLoopConfig, tools)`` from ``--config``, ``--max-model-len`` and ``--tools`` (``none``: plain
    sampling, one assistant turn).

    Raises:
        UsageError: a bad ``--config`` key or value (named), an unreadable ``--tools`` file.
    """
    from pydantic import ValidationError

    from judgebox.agent.config import AgentLoopConfig

    settings = json_arg("--config", args.config)
    if args.tools == "none":
        settings.setdefault("max_assistant_turns", 1)
        tools = []
    else:
        from judgebox.agent.tools import load_tools

        tools = load_tools(readable("--tools", args.tools, "give a tool config YAML (verl format) or 'none'"))
    if args.max_model_len is not None:
        settings.setdefault("max_model_len", args.max_model_len)
    try:
        return AgentLoopConfig(**settings), tools
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "config"
        raise UsageError(f"--config: {where}: {error['msg']} (see agent.AgentLoopConfig)") from None


def check_model(args: argparse.Namespace) -> None:
    """Refuse, before any trajectory, what would fail every one: ``--backend openai`` without a URL, a
    model or tokenizer path that is not a directory, an engine that is not installed.

    Raises:
        UsageError: naming the flag and the fix; ModuleNotFoundError: transformers (the agent extra).
    """
    import importlib.util

    import transformers  # noqa: F401  first: a missing agent extra is named before the engine

    from judgebox.extras import install_line

    if args.backend == "openai" and not args.base_url:
        raise UsageError("--backend openai needs --base-url URL (repeatable)")
    for flag, value in (("--model", args.model), ("--tokenizer", args.tokenizer)):
        # a path (not a hub id "name" or "org/name") must be a directory here; transformers would
        # read it as a hub id and answer "Repo id must be in the form 'repo_name' or ..."
        if value and (value.startswith(("/", ".", "~")) or value.count("/") > 1) \
                and not Path(value).expanduser().is_dir():
            raise UsageError(f"{flag} {value}: no such directory; give a model directory (config.json and "
                             "tokenizer files) or a hub id such as Qwen/Qwen3-0.6B")
    for module in {"vllm": ("vllm", "torch"), "hf": ("torch",)}.get(args.backend, ()):
        if importlib.util.find_spec(module) is None:  # before any trajectory, not an infra_error each
            raise UsageError(f"--backend {args.backend}: {install_line(module)}")


class LazyBackend:
    """A backend started on its first request, so that re-running a finished rollout starts no engine
    (vLLM's took minutes to say "running 0")."""

    def __init__(self, make) -> None:
        import asyncio

        self.make, self.backend, self.lock = make, None, asyncio.Lock()

    async def started(self):
        async with self.lock:
            if self.backend is None:
                self.backend = self.make()
        return self.backend

    async def engine_info(self):
        backend = await self.started()
        probe = getattr(backend, "engine_info", None)
        return await probe() if probe is not None else None

    async def generate(self, prompt_ids, sampling_params, request_id=None):
        return await (await self.started()).generate(prompt_ids, sampling_params, request_id)

    async def close(self) -> None:
        if hasattr(self.backend, "shutdown"):
            self.backend.shutdown()
        elif hasattr(self.backend, "aclose"):
            await self.backend.aclose()


def backend_of(args: argparse.Namespace, config):
    """The generation backend named by ``--backend``."""
    if args.backend == "vllm":
        import os
        import warnings

        # vLLM's start-up lines only on request (each variable is read at import, by the engine's
        # processes too, and a value the user set is kept): its INFO lines (~60 per start) and, on CPU,
        # its warning that Triton has no CPU backend (VLLM_LOGGING_LEVEL=WARNING or INFO shows them),
        # torch's C++ NUMA-binding notice (TORCH_CPP_LOG_LEVEL) and torch's FutureWarnings raised
        # inside vLLM (PYTHONWARNINGS); none says anything a rollout's user can act on
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
        if "PYTHONWARNINGS" not in os.environ:
            os.environ["PYTHONWARNINGS"] = "ignore::FutureWarning"
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"vllm\.")
        from judgebox.agent.backends import VLLMBackend

        kwargs = {"max_model_len": config.max_model_len} if config.max_model_len else {}
        if args.no_progress:  # its checkpoint-loading bar too
            kwargs["use_tqdm_on_load"] = False
        return VLLMBackend.from_model(args.model, **{**kwargs, **json_arg("--engine-args", args.engine_args)})
    if args.backend == "openai":
        from judgebox.agent.backends import OpenAIBackend

        return OpenAIBackend(args.base_url, args.served_model_name or args.model, logprobs_mode=args.logprobs_mode)
    from judgebox.agent.backends import HFBackend

    return HFBackend.from_model(args.model, max_model_len=config.max_model_len)
