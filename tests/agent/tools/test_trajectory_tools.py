"""TrajectoryTools: one instance per trajectory, exactly-once release, timeouts that stop the work.

Includes the tool side of case BUG-117 (agent-cases.md): a hung tool does not hold its slot, one
raised exception does not lose the group.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time

import pytest

from judgebox.agent.tools import ToolMetrics, TrajectoryTools, function_tool
from tests.agent.tools.sample_tools import Counter, add, sleepy_pid


@pytest.fixture(autouse=True)
def _fresh_counter_log():
    Counter.created.clear()
    Counter.released.clear()
    yield


async def test_state_survives_calls_and_the_instance_is_released_once():
    counter = Counter({})
    async with TrajectoryTools([counter], timeout_s=5) as tt:
        first = await tt.call("counter", '{"n": 1}')
        second = await tt.call("counter", {"n": 2})
        assert (first.status, first.text, first.step_reward, first.metrics) == ("ok", "1", 1.0, {"n": 1})
        assert (second.text, second.step_reward) == ("3", 3.0)
        assert await tt.calc_rewards() == {"counter": 3.0}
        instance = tt.instances["counter"]
    assert Counter.created == [instance]
    assert Counter.released == [instance]


async def test_trajectories_do_not_share_instances():
    counter = Counter({})

    async def trajectory(n):
        async with TrajectoryTools([counter], timeout_s=5) as tt:
            return (await tt.call("counter", {"n": n})).text

    assert await asyncio.gather(trajectory(5), trajectory(7)) == ["5", "7"]
    assert len(set(Counter.created)) == 2
    assert sorted(Counter.released) == sorted(Counter.created)


async def test_parallel_first_calls_create_one_instance():
    counter = Counter({"create_delay_s": 0.1})
    async with TrajectoryTools([counter], timeout_s=5) as tt:
        results = await asyncio.gather(tt.call("counter", {"n": 1}), tt.call("counter", {"n": 1}))
    assert sorted(r.text for r in results) == ["1", "2"]
    assert len(Counter.created) == 1 and Counter.released == Counter.created


async def test_released_once_when_the_trajectory_raises():
    counter = Counter({})
    with pytest.raises(ValueError, match="loop failed"):
        async with TrajectoryTools([counter], timeout_s=5) as tt:
            await tt.call("counter", {})
            raise ValueError("loop failed")
    assert len(Counter.released) == 1 and Counter.released == Counter.created


async def test_released_once_when_the_trajectory_is_cancelled_mid_call():
    counter = Counter({})
    started = asyncio.Event()

    async def trajectory():
        async with TrajectoryTools([counter], timeout_s=None) as tt:
            await tt.call("counter", {})
            started.set()
            await tt.call("counter", {"n": -1})  # sleeps an hour

    task = asyncio.ensure_future(trajectory())
    await started.wait()
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(Counter.released) == 1 and Counter.released == Counter.created


async def test_timeout_is_an_observation_and_the_state_is_kept():
    counter = Counter({})
    metrics = ToolMetrics()
    async with TrajectoryTools([counter], timeout_s=0.2, metrics=metrics) as tt:
        t0 = time.monotonic()
        hung = await tt.call("counter", {"n": -1})
        waited = time.monotonic() - t0
        after = await tt.call("counter", {"n": 1})
    assert (hung.status, hung.text) == ("timeout", "error: tool 'counter' timed out after 0.2 s")
    assert waited < 0.2 + 1.0
    assert after.text == "1"
    stats = metrics.get("counter")
    assert (stats.calls, stats.timeouts, stats.errors, stats.abandoned) == (2, 1, 0, 0)
    assert len(Counter.released) == 1


async def test_errors_and_infra_errors_are_observations_and_counted():
    metrics = ToolMetrics()
    async with TrajectoryTools([Counter({})], timeout_s=5, metrics=metrics) as tt:
        error = await tt.call("counter", {"n": -2})
        infra = await tt.call("counter", {"n": -3})
        after = await tt.call("counter", {"n": 1})
    assert (error.status, error.text) == ("error", "error: RuntimeError: boom")
    assert (infra.status, infra.text) == (
        "infra_error", "error: sandbox unavailable (infrastructure, not your code): no live endpoint "
                       "(http://127.0.0.1:9 refused the connection)")
    assert after.text == "1"
    stats = metrics.get("counter")
    assert (stats.calls, stats.errors, stats.infra_errors, stats.timeouts) == (3, 2, 1, 0)


async def test_an_instance_created_after_its_call_timed_out_is_still_released():
    counter = Counter({"create_delay_s": 0.5})
    async with TrajectoryTools([counter], timeout_s=0.1) as tt:
        result = await tt.call("counter", {})
        assert result.status == "timeout"
    assert len(Counter.created) == 1 and Counter.released == Counter.created


async def test_release_errors_are_logged_and_do_not_mask_results(caplog):
    counter = Counter({"fail_release": True})
    with caplog.at_level(logging.ERROR, logger="judgebox.agent.tools.runner"):
        async with TrajectoryTools([counter], timeout_s=5) as tt:
            result = await tt.call("counter", {"n": 4})
    assert result.text == "4"
    assert len(Counter.released) == 1
    assert "release(" in caplog.text and "OSError: release failed" in caplog.text


async def test_closed_owner_refuses_calls_and_closes_once():
    tt = TrajectoryTools([Counter({})], timeout_s=5)
    await tt.call("counter", {})
    await tt.aclose()
    await tt.aclose()
    assert len(Counter.released) == 1
    with pytest.raises(RuntimeError, match="after the trajectory's tools were released"):
        await tt.call("counter", {})


async def test_unknown_tool_and_bad_arguments_are_observations():
    async with TrajectoryTools([Counter({}), add], timeout_s=5) as tt:
        unknown = await tt.call("python", {"code": "1"})
        bad = await tt.call("counter", {"n": "two", "tags": [{"label": 1}], "extra": 1})
    assert (unknown.status, unknown.text) == ("unknown_tool", "error: unknown tool 'python' (available: counter, add)")
    assert bad.status == "invalid_arguments"
    assert bad.text == ("error: unexpected argument 'extra' (accepted: n, tags); n must be an integer, "
                        'got string "two"; tags[0].label must be a string, got integer 1')
    assert Counter.created == []  # the tool was not called, not even created


async def test_schemas_are_the_full_json_schemas():
    tt = TrajectoryTools([Counter({})], timeout_s=5)
    [schema] = tt.schemas()
    assert schema["function"]["parameters"]["properties"]["tags"]["items"] == {
        "type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"],
        "additionalProperties": False}
    assert schema["function"]["parameters"]["properties"]["n"]["default"] == 1


@pytest.mark.slow
async def test_process_tool_timeout_kills_the_worker_and_the_next_call_gets_a_new_one(tmp_path):
    pidfile = tmp_path / "pid"
    async with TrajectoryTools([sleepy_pid], timeout_s=5) as tt:
        warm = await tt.call("sleepy_pid", {"seconds": 0})  # the worker is started (and kept) here
        hung = await tt.call("sleepy_pid", {"seconds": 1000, "pidfile": str(pidfile)})
        hung_pid = int(pidfile.read_text())
        after = await tt.call("sleepy_pid", {"seconds": 0})
    assert (hung.status, hung.text) == ("timeout", "error: tool 'sleepy_pid' timed out after 5 s")
    assert hung.latency_s < 5 + 1.0
    assert not os.path.exists(f"/proc/{hung_pid}")  # killed and reaped
    assert warm.text == f"slept 0 s in {hung_pid}"  # the same (reused) worker
    assert after.status == "ok" and after.text.startswith("slept 0 s in ")
    assert int(after.text.rsplit(" ", 1)[1]) != hung_pid
    sleepy_pid.close()


async def test_process_tool_error_names_the_functions_exception():
    from tests.agent.tools.sample_tools import fail_in_worker
    async with TrajectoryTools([fail_in_worker], timeout_s=30) as tt:
        result = await tt.call("fail_in_worker", {"message": "bad input"})
    assert (result.status, result.text) == ("error", "error: ValueError: bad input")
    fail_in_worker.close()


release_hung = threading.Event()


@function_tool(name="code_interpreter")
def hang_or_boom(code: str) -> str:
    """Run code (test double for BUG-117).

    Args:
        code: "hang" blocks its thread and ignores cancellation; "boom" raises.
    """
    if code == "hang":
        release_hung.wait(10**6)
        return "released"
    if code == "boom":
        raise RuntimeError("boom")
    return f"ran {code}"


@pytest.mark.slow
async def test_bug_117_a_hung_tool_does_not_hold_the_group_and_an_exception_does_not_lose_it():
    """BUG-117, tool side: n = 4, tool_timeout_s = 5; trajectory 2 hangs in a thread, 3 raises."""
    metrics = ToolMetrics()

    async def trajectory(i: int) -> list[str]:
        async with TrajectoryTools([hang_or_boom], timeout_s=5, metrics=metrics) as tt:
            code = {2: "hang", 3: "boom"}.get(i, "print(1)")
            first = await tt.call("code_interpreter", {"code": code})
            then = await tt.call("code_interpreter", {"code": "print(2)"})  # the trajectory continues
            return [first.text, then.text]

    # the hung call is released only after the group: the group finishing at all shows it was not held
    group = await asyncio.gather(*(trajectory(i) for i in (1, 2, 3, 4)))
    assert group == [
        ["ran print(1)", "ran print(2)"],
        ["error: tool 'code_interpreter' timed out after 5 s", "ran print(2)"],
        ["error: RuntimeError: boom", "ran print(2)"],
        ["ran print(1)", "ran print(2)"],
    ]
    assert metrics.totals() == {"tool_calls": 8, "tool_errors": 1, "tool_timeouts": 1}
    assert metrics.get("code_interpreter").abandoned == 1
    assert hang_or_boom.abandoned_running == 1
    release_hung.set()
    for _ in range(100):
        if hang_or_boom.abandoned_running == 0:
            break
        await asyncio.sleep(0.01)
    assert hang_or_boom.abandoned_running == 0


def _pipes() -> set[str]:
    """This process's open pipes (their ``pipe:[inode]`` names)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("pipe:"):
            out.add(target)
    return out


@pytest.mark.slow
async def test_process_tool_timeouts_leave_no_children_or_fds(tmp_path):
    import multiprocessing
    async with TrajectoryTools([sleepy_pid], timeout_s=30) as tt:  # starts multiprocessing's resource tracker once
        await tt.call("sleepy_pid", {"seconds": 0})
    sleepy_pid.close()
    pipes_before = _pipes()
    others = set(multiprocessing.active_children())  # e.g. a session-scoped vLLM engine core

    async def trajectory(i: int) -> tuple[str, str]:
        async with TrajectoryTools([sleepy_pid], timeout_s=5) as tt:
            ok = await tt.call("sleepy_pid", {"seconds": 0})
            hung = await tt.call("sleepy_pid", {"seconds": 1000, "pidfile": str(tmp_path / f"{i}.pid")})
            return ok.status, hung.status

    assert await asyncio.gather(trajectory(0), trajectory(1)) == [("ok", "timeout"), ("ok", "timeout")]
    for i in (0, 1):
        assert not os.path.exists(f"/proc/{(tmp_path / f'{i}.pid').read_text()}")
    sleepy_pid.close()  # the idle workers
    assert set(multiprocessing.active_children()) == others
    # pipes only: the worker's channels are pipes, while other parts of a full test session (a vLLM
    # engine's sockets, event loops of other tests) may open or close fds meanwhile
    assert _pipes() == pipes_before


@pytest.mark.slow
async def test_bug_117_with_the_real_code_interpreter_the_hung_session_is_replaced_not_leaked():
    """A cell sleeping 10**6 s: the call is cut at tool_timeout_s, its session closed, the next call
    runs in a fresh one and says so; no session outlives the trajectory."""
    from pathlib import Path

    from judgebox.agent.tools import load_tools

    [tool] = load_tools(Path(__file__).parents[3] / "configs/tools/code_interpreter.yaml")
    metrics = ToolMetrics()
    async with TrajectoryTools([tool], timeout_s=10, metrics=metrics) as tt:  # a kernel start fits
        assert (await tt.call("code_interpreter", {"code": "y = 1"})).status == "ok"
        assert len(tool.client.list_sessions().sessions) == 1
        hung = await tt.call("code_interpreter", {"code": "import time; time.sleep(10**6)", "timeout": 30})
        assert len(tool.client.list_sessions().sessions) == 0  # killed, not left running
        after = await tt.call("code_interpreter", {"code": "print('y' in globals())"})
    assert (hung.status, hung.text) == ("timeout", "error: tool 'code_interpreter' timed out after 10 s")
    assert hung.latency_s < 10 + 1.0
    assert after.text == ("[ok]\n[state lost] the previous call was cancelled before it finished, and its "
                          "interpreter was closed; this cell ran in a fresh interpreter\n[stdout]\nFalse")
    assert len(tool.client.list_sessions().sessions) == 0 and tool.live_instances == 0
    assert metrics.totals() == {"tool_calls": 3, "tool_errors": 0, "tool_timeouts": 1}
    tool.close()
