"""A run's processes stay the run's: it cannot make a child of the server (``CLONE_PARENT``), reach
host sockets outside its network namespace (``AF_VSOCK``), use ``io_uring`` past the syscall filter,
or raise a limit the server left room for; and no request ever waits on a namespace without end.

Each test is the exact attack of a security finding; every process it aims at is one it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from judgebox.sandbox.isolation.pidns import PidNamespace
from tests.conftest import FACES
from tests.sandbox.procs import load_per_core, zombies_of

#: 20 children made with ``clone(CLONE_PARENT | SIGCHLD)`` (raw syscall): each would be the
#: server's child, left as its zombie; prints how many were made and the last errno.
CLONE_PARENT_CHILDREN = """
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
made = 0
for _ in range(20):
    pid = libc.syscall(56, 0x00008000 | signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    made += pid > 0
print(made, os.strerror(ctypes.get_errno()))
"""


@pytest.fixture(params=FACES)
def face(request, local_sandbox):
    """``(run_code(body) -> dict, server pid)`` on the embedded sandbox, then over HTTP."""
    if request.param == "embedded":
        return (lambda body: local_sandbox.run_code(body).model_dump(mode="json")), os.getpid()
    server = request.getfixturevalue("live_server_process")
    return (lambda body: httpx.post(f"{server.url}/run_code", json=body, timeout=120).json()), server.process.pid


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw clone syscall number 56 is x86_64's")
def test_clone_parent_is_refused_and_the_server_keeps_answering(face):
    """Finding 3: a run passed ``CLONE_PARENT``; 20 such children exited as zombies of the server, the
    run's namespace init never ended and ``PidNamespace.reap()`` waited on it forever (two requests:
    every later request got 504, SIGTERM no longer stopped the server). The flag is refused now."""
    run_code, server_pid = face
    r = run_code({"code": CLONE_PARENT_CHILDREN, "language": "python", "run_timeout": 10})
    assert r["run_result"]["stdout"] == "0 Operation not permitted\n"
    assert run_code({"code": "print(1)", "language": "python"})["run_result"]["stdout"] == "1\n"
    assert zombies_of(server_pid) == []


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw clone syscall number 56 is x86_64's")
def test_a_namespace_is_reaped_even_with_children_outside_the_tree(tmp_path):
    """The mechanism under the filter: a program made without the filter leaves 20 ``CLONE_PARENT``
    zombies of the starter in its namespace; ``reap()`` reaps them, the namespace ends, and no
    zombie is left (before: ``reap()`` never returned)."""
    ns = PidNamespace()
    with ns.spawning():
        program = subprocess.Popen([sys.executable, "-c", CLONE_PARENT_CHILDREN], stdout=subprocess.PIPE)
    out, _ = program.communicate(timeout=30)
    assert out.decode().split()[0] == "20"
    start = time.monotonic()
    ns.reap(deadline_s=10)
    assert time.monotonic() - start < 10 * load_per_core()
    assert zombies_of(os.getpid()) == []


def test_io_uring_and_vsock_are_refused(local_sandbox):
    """Not tested by the audit (they would leave the machine), denied as Docker's default profile
    denies them: ``io_uring_setup`` (its operations bypass the syscall filter) and ``socket(AF_VSOCK)``."""
    code = ("import ctypes, os, socket\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "params = ctypes.create_string_buffer(120)\n"
            "print(libc.syscall(425, 8, params), os.strerror(ctypes.get_errno()))\n"
            "try:\n    socket.socket(40, socket.SOCK_STREAM)\nexcept OSError as e:\n    print(e.strerror)\n")
    r = local_sandbox.run_code({"code": code, "language": "python"})
    assert r.run_result.stdout == "-1 Operation not permitted\nOperation not permitted\n"


def test_file_watches_are_refused_and_a_runs_processes_are_the_oom_killers_first_choice(local_sandbox):
    """Issue 46: an inotify watch on the toolchains every run shares read-only reported a concurrent
    run's compiler opening its files; and a container's OOM killer, picking the largest process,
    killed the server for a run's tmpfs files and socket buffers (no process holds them)."""
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "print(libc.inotify_init1(0), ctypes.get_errno(), libc.fanotify_init(0x200, 0), ctypes.get_errno())\n"
            "print(open('/proc/self/oom_score_adj').read().strip())\n")
    r = local_sandbox.run_code({"code": code, "language": "python"})
    assert r.run_result.stdout == "-1 1 -1 1\n1000\n"


def test_a_program_cannot_raise_a_limit_the_server_left_room_for(face):
    """Finding 10: ``RLIMIT_NOFILE``'s hard limit stayed the server's (20000): a program raised its
    soft limit and opened 5,000 descriptors. Every hard limit is now the run's own soft limit."""
    run_code, _ = face
    code = ("import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))\n"
            "try:\n    resource.setrlimit(resource.RLIMIT_NOFILE, (5000, 5000))\nexcept ValueError as e:\n"
            "    print('refused')\n"
            "print(all(s == h for s, h in (resource.getrlimit(getattr(resource, n)) for n in dir(resource)"
            " if n.startswith('RLIMIT_'))))\n")
    assert run_code({"code": code, "language": "python"})["run_result"]["stdout"] == "(1024, 1024)\nrefused\nTrue\n"


def test_sigterm_stops_a_server_after_hostile_requests(live_server_factory):
    """Finding 3's aftermath: once wedged, SIGTERM no longer stopped the server. After two hostile
    requests at once the server still answers, and SIGTERM ends it within its grace period."""
    server = live_server_factory("--max-concurrency", "2")
    body = {"code": CLONE_PARENT_CHILDREN, "language": "python", "run_timeout": 10}
    with httpx.Client(timeout=60) as client:
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda _: client.post(f"{server.url}/run_code", json=body), range(2)))
        assert client.post(f"{server.url}/run_code", json={"code": "print(1)", "language": "python"}
                           ).json()["run_result"]["stdout"] == "1\n"
    os.killpg(server.process.pid, signal.SIGTERM)
    server.process.wait(timeout=30)
