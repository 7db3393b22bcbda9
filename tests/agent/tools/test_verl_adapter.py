"""The verl adapter, built by verl's own loader and driven by verl's own tool-call step.

verl 0.9.1 (installed from PyPI): ``verl.tools.tool_registry.initialize_tools_from_config`` builds the
tools; ``ToolAgentLoop._call_tool`` (create -> execute -> release around every call) runs them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from judgebox.agent.tools import ToolConfigError
from tests.agent.tools.sample_tools import Counter

verl_registry = pytest.importorskip("verl.tools.tool_registry")
from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop  # noqa: E402
from verl.experimental.agent_loop.tool_parser import FunctionCall  # noqa: E402
from verl.tools.base_tool import BaseTool as VerlBaseTool  # noqa: E402

from judgebox.integrations.verl.tool_adapter import VerlToolAdapter  # noqa: E402

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parents[3]


@pytest.fixture(autouse=True)
def _fresh_counter_log():
    Counter.created.clear()
    Counter.released.clear()
    Counter.create_kwargs.clear()
    yield


@pytest.fixture(scope="module")
def verl_tools():
    tools = verl_registry.initialize_tools_from_config(str(DATA / "verl_tools.yaml"))
    return {tool.name: tool for tool in tools}


def agent_data(request_id: str) -> AgentData:
    return AgentData(messages=[], image_data=[], video_data=[], audio_data=None, mm_processor_kwargs=None,
                     metrics={}, request_id=request_id, tools_kwargs={})


async def verl_call(tools, name: str, arguments: dict, data: AgentData, tools_kwargs: dict | None = None) -> str:
    """One tool call through verl's own ToolAgentLoop._call_tool; the observation text."""
    loop_self = SimpleNamespace(tools=tools, max_tool_response_length=10_000, tool_response_truncate_side="middle")
    call = FunctionCall(name=name, arguments=json.dumps(arguments))
    response, _reward, _metrics = await ToolAgentLoop._call_tool(loop_self, call, tools_kwargs or {}, data)
    return response.text


async def settle():
    """Let the releases scheduled by dropped AgentData objects run (they are freed by refcount)."""
    for _ in range(5):
        await asyncio.sleep(0.01)


def test_verl_loader_builds_adapters_with_full_schemas(verl_tools):
    assert set(verl_tools) == {"counter", "add"}
    counter = verl_tools["counter"]
    assert isinstance(counter, VerlToolAdapter) and isinstance(counter, VerlBaseTool)
    # what verl's loop sends to the chat template: the full JSON Schema, nested items included
    dumped = counter.tool_schema.model_dump(exclude_unset=True, exclude_none=True)
    assert dumped == Counter({}).tool_schema.to_openai()
    assert dumped["function"]["parameters"]["properties"]["tags"]["items"]["required"] == ["label"]
    # what verl's parsers read (qwen3_coder converts values by these types)
    assert counter.tool_schema.function.parameters.properties["n"].type == "integer"


async def test_state_is_per_trajectory_and_released_once_when_verl_drops_it(verl_tools):
    r1, r2 = agent_data("req-1"), agent_data("req-2")
    tools_kwargs = {"counter": {"create_kwargs": {"ground_truth": "42"}}}
    assert await verl_call(verl_tools, "counter", {"n": 2}, r1, tools_kwargs) == "2"
    assert await verl_call(verl_tools, "counter", {"n": 3}, r1) == "5"  # verl released the call; state kept
    assert await verl_call(verl_tools, "counter", {}, r2) == "1"  # another trajectory, its own state
    assert await verl_call(verl_tools, "counter", {"n": 1000}, r2) == "101"  # clamped to 100
    assert Counter.created == ["req-1", "req-2"] and Counter.released == []
    assert Counter.create_kwargs == [{"create_kwargs": {"ground_truth": "42"}}, {"create_kwargs": {}}]
    assert verl_tools["counter"].live_trajectories == 2
    del r1
    await settle()
    assert Counter.released == ["req-1"]
    del r2
    await settle()
    assert Counter.released == ["req-1", "req-2"]
    assert verl_tools["counter"].live_trajectories == 0


async def test_validation_and_timeouts_are_observations_in_verl(verl_tools):
    data = agent_data("req-3")
    before = verl_tools["counter"].metrics.get("counter")
    assert await verl_call(verl_tools, "counter", {"n": "two"}, data) == 'error: n must be an integer, got string "two"'
    assert await verl_call(verl_tools, "counter", {"n": -1}, data) == "error: tool 'counter' timed out after 0.5 s"
    assert await verl_call(verl_tools, "counter", {"n": -2}, data) == "error: RuntimeError: boom"
    assert await verl_call(verl_tools, "counter", {"n": 1}, data) == "1"
    after = verl_tools["counter"].metrics.get("counter")
    assert (after.calls - before.calls, after.invalid_arguments - before.invalid_arguments,
            after.timeouts - before.timeouts, after.errors - before.errors) == (4, 1, 1, 1)
    del data
    await settle()
    assert Counter.released == ["req-3"]


async def test_without_agent_data_each_call_is_its_own_trajectory(verl_tools):
    add = verl_tools["add"]
    instance_id, _ = await add.create()
    response, reward, metrics = await add.execute(instance_id, {"a": 1})
    assert (response.text, reward, metrics["status"]) == ("3", None, "ok")
    assert add.live_trajectories == 1
    await add.release(instance_id)
    assert add.live_trajectories == 0


def test_adapter_config_mistakes_are_named():
    with pytest.raises(ToolConfigError, match=r"unknown key\(s\) \['timeout'\]"):
        VerlToolAdapter({"type": "native", "timeout": 3, "tool": {"function": "tests.agent.tools.sample_tools.add"}})
    with pytest.raises(ToolConfigError, match="'tool' must be a load_tools entry"):
        VerlToolAdapter({"type": "native"})


async def test_shipped_verl_config_runs_code_interpreter_with_state_per_trajectory():
    """BUG-118 through verl's own loop step: state survives calls in T1, T2 sees none of it."""
    [tool] = verl_registry.initialize_tools_from_config(str(ROOT / "configs/verl/tool_config.yaml"))
    assert tool.name == "code_interpreter" and isinstance(tool, VerlToolAdapter)
    tools = {"code_interpreter": tool}
    t1, t2 = agent_data("t1"), agent_data("t2")

    async def run_t1():
        out = []
        for code in ["x = 41 + 1\nimport math", "print(x, math.floor(2.5))", "open('f.txt','w').write('hi')",
                     "print(open('f.txt').read())"]:
            out.append(await verl_call(tools, "code_interpreter", {"code": code}, t1))  # noqa: F821  (deleted after use)
        return out

    t2_code = "print('x' in globals()); import os; print(os.path.exists('f.txt'))"
    out1, out2 = await asyncio.gather(run_t1(), verl_call(tools, "code_interpreter", {"code": t2_code}, t2))
    assert out1 == ["[ok] the cell ran; it printed nothing and its last line has no value",
                    "[ok]\n[stdout]\n42 2", "[ok]\n[value]\n2", "[ok]\n[stdout]\nhi"]
    assert out2 == "[ok]\n[stdout]\nFalse\nFalse"
    assert await verl_call(tools, "code_interpreter", {"code": "1", "timeout": "ten"}, t1) == \
        'error: timeout must be a number, got string "ten"'
    assert tool.inner.live_instances == 2
    del t1, t2
    await settle()
    assert tool.inner.live_instances == 0 and tool.live_trajectories == 0
    tool.inner.close()
