"""The public surface: one top-level name, ``__all__`` of every public package pinned (a change here
is an API change, to be made on purpose and written in the changelog), and every judgebox module
loaded under exactly one name."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

PUBLIC = {
    "judgebox.sandbox": [
        "BatchItemError", "ClientSettings", "CommandRunResult", "CommandRunStatus", "IsolationUnavailable", "LocalSandbox",
        "RunCodeRequest", "RunCodeResponse", "RunJupyterRequest", "RunJupyterResponse", "RunStatus",
        "RunTestsRequest", "RunTestsResponse", "SandboxClient", "SandboxError", "SandboxInfraError",
        "SandboxOverloaded", "SandboxRequestError", "SandboxServerError", "SandboxSettings", "SandboxUnavailable",
        "Session", "SessionInfo", "SessionNotFound", "SessionRunResult", "SessionsUnsupported"],
    "judgebox.sandbox.client": ["ClientSettings", "SandboxClient"],
    "judgebox.sandbox.sessions": ["KernelSession", "Session", "SessionManager", "SessionStartError"],
    "judgebox.sandbox.server": ["create_app"],
    "judgebox.sandbox.ray": ["Pool", "PoolConfig"],
    "judgebox.sandbox.isolation": ["Isolation", "IsolationUnavailable", "RunIsolation"],
    "judgebox.reward": [
        "CallCase", "Judgement", "StdioCase", "TestDataError", "TestResult", "TestSpec", "Verdict", "ajudge",
        "compute_score", "compute_score_batch", "extract_code", "judge", "judge_batch", "judge_many", "score_batch"],
    "judgebox.reward.checkers": ["CHECKERS", "Checker", "DEFAULT_MODE", "get_checker"],
    "judgebox.reward.tamper": ["KINDS", "MAX_SIGNALS", "RULES", "TamperSignal", "scan", "signal_kinds"],
    "judgebox.reward.loaders": ["FORMATS", "Manifest", "Problem", "convert_rows", "get_manifest", "list_manifests",
                                "load_dataset", "load_problems", "read_numbered_rows", "read_rows"],
    "judgebox.agent": ["AgentLoopConfig", "AgentLoopOutput", "AgentState", "ToolAgentLoop", "backends", "collate",
                       "parsers", "scoring", "tools"],
    "judgebox.agent.tools": [
        "BaseTool", "CodeInterpreterTool", "FunctionTool", "OpenAIFunctionSchema", "OpenAIFunctionToolSchema",
        "ToolCallResult", "ToolConfigError", "ToolMetrics", "ToolResponse", "TrajectoryTools", "function_tool",
        "load_tools"],
    "judgebox.agent.parsers": ["PARSER_METRICS", "ParsedToolCall", "ParsedTurn", "Segment", "ToolCallParser",
                               "get_parser", "parser_names", "register_parser"],
    "judgebox.agent.backends": ["Backend", "EngineInfo", "GenerationResult", "HFBackend", "OpenAIBackend", "VLLMBackend"],
    "judgebox.report": ["Records", "build_page", "read_records", "read_summary", "write_report"],
    "judgebox.integrations.verl": ["JudgeboxToolAgentLoop", "VerlToolAdapter", "check_correctness", "compute_score",
                                   "compute_score_batch"],
    "judgebox.integrations.trl": ["CodeInterpreterEnv", "WORKER_EXTENSION", "code_interpreter_tool", "code_reward",
                                  "make_code_reward", "make_environment_factory", "make_rollout_func",
                                  "trajectory_reward"],
    "judgebox.integrations.openrlhf": ["RewardRequest", "create_router"],
}
#: names whose module needs an optional framework (verl, TRL, vLLM, torch) to import
NEEDS_FRAMEWORK = {("judgebox.integrations.verl", "JudgeboxToolAgentLoop"),
                   ("judgebox.integrations.verl", "VerlToolAdapter"),
                   ("judgebox.integrations.trl", "make_rollout_func"), ("judgebox.integrations.trl", "trajectory_reward"),
                   ("judgebox.integrations.trl", "CodeInterpreterEnv"),
                   ("judgebox.integrations.trl", "make_environment_factory"),
                   ("judgebox.integrations.trl", "code_interpreter_tool"),
                   ("judgebox.integrations.trl", "WORKER_EXTENSION"),
                   ("judgebox.agent", "ToolAgentLoop"), ("judgebox.agent", "AgentState"),
                   ("judgebox.agent.backends", "HFBackend"), ("judgebox.agent.backends", "VLLMBackend")}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module):
    assert sorted(importlib.import_module(module).__all__) == PUBLIC[module]


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_resolves(module):
    mod = importlib.import_module(module)
    for name in PUBLIC[module]:
        if (module, name) in NEEDS_FRAMEWORK:
            continue
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_one_top_level_name_and_no_module_loaded_twice():
    """Importing every public package loads judgebox's files under ``judgebox.*`` only: no top-level
    ``sandbox``, ``reward``, ``agent`` or ``integrations`` (names a user's own project often has),
    and no file under two module names."""
    code = ("import importlib, json, sys\n"
            f"for m in {sorted(PUBLIC)!r}:\n    importlib.import_module(m)\n"
            "import judgebox.cli, judgebox.sandbox.server, judgebox.sandbox.sessions.jupyter\n"
            "files = [(n, getattr(m, '__file__', None)) for n, m in list(sys.modules.items())]\n"
            "print(json.dumps([(n, f) for n, f in files if f]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    loaded = json.loads(out.stdout)
    ours = [(n, f) for n, f in loaded if n.split(".")[0] in ("judgebox", "sandbox", "reward", "agent", "integrations")]
    assert ours and all(n.split(".")[0] == "judgebox" for n, _ in ours), [n for n, _ in ours if not n.startswith("judgebox")]
    by_file: dict[str, list[str]] = {}
    for name, path in ours:
        by_file.setdefault(path, []).append(name)
    assert {f: n for f, n in by_file.items() if len(n) > 1} == {}
