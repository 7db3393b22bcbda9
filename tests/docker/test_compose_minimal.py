"""Issue 46: ``JUDGEBOX_ISOLATION=minimal`` in compose stays an explicit choice, fixed for what it
still promises: nothing of a run outlives its end (kill by uid that nothing evades, every fork-server
child reaped), runs cut off the network by uid (loopback too), the memory ceiling read from the
container's cgroup with admission by the sum of limits, System V and POSIX IPC removed with the
run, a read-only root, and /proc showing a run only its own processes. Each test is a finding of the
compose red team on 2056cab, aimed only at what the test itself creates."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import time
from typing import Iterator

import pytest

from tests.docker.stack import SURVIVOR, Stack, free_port

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]

RUN_UIDS = range(61000, 61000 + 1024)


@pytest.fixture(scope="module")
def stack(docker_images) -> Iterator[Stack]:
    """A compose project of compose.yaml with ``JUDGEBOX_ISOLATION=minimal`` (one executor, requests of up
    to 3,000 MiB on its 4 GiB)."""
    s = Stack(project=f"judgebox-min-{os.getpid()}", port=free_port(),
              env={"JUDGEBOX_REPLICAS": "1", "JUDGEBOX_ISOLATION": "minimal",
                   # requests may ask for more than half the executor's 4 GiB: admission by the sum shows
                   "JUDGEBOX_MAX_MEMORY_MB": "3000"})
    s.env["JUDGEBOX_PORT"] = str(s.port)
    s.compose("down", "-v", "--remove-orphans", "-t", "1")
    try:
        s.compose("up", "-d", "--no-build")
        s.wait_healthy(replicas=1)
        yield s
    finally:
        s.compose("down", "-v", "--remove-orphans", "-t", "1", check=False)


def executor(stack) -> str:
    return stack.containers("executor")[0]


def run_on(stack, code: str, **extra) -> dict:
    return stack.replica_post(executor(stack), "/run_code", {"code": code, "language": "python", **extra},
                              timeout=float(extra.get("run_timeout", 30)) + 30)


def processes(container: str) -> list[tuple[int, int, str]]:
    """``(pid, uid, state)`` of every process in the container (as root: all of them)."""
    out = subprocess.run(["docker", "exec", container, "ps", "-eo", "pid=,uid=,stat="], capture_output=True,
                         text=True, check=True).stdout
    return [(int(p), int(u), s) for p, u, s in (line.split() for line in out.splitlines())]


def health(stack) -> dict:
    out = subprocess.run(["docker", "exec", executor(stack), "python3", "-c",
                          "import urllib.request as u; print(u.urlopen('http://127.0.0.1:8080/health').read().decode())"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["isolation"]


def test_minimal_is_what_health_says_and_the_ceiling_is_the_containers(stack):
    info = health(stack)
    assert info["isolation"] == "minimal" and not info["filesystem_view"] and not info["memory_cgroup"]
    assert 4000 <= info["memory_ceiling_MB"] <= 4608, info  # finding 7: not the host's RAM
    assert set(info["shared_tmp_sysctls"]) == {"protected_symlinks", "protected_hardlinks", "protected_regular",
                                               "protected_fifos"}


def test_python_runs_leave_no_zombie(stack):
    """Finding 4: each Python run left a zombie (the fork-server's child of a failed fork: without
    CAP_SYS_ADMIN its namespace switch back failed), 101 after 100 runs."""
    for i in range(100):
        assert run_on(stack, f"print({i})")["run_result"]["stdout"] == f"{i}\n"
    assert [p for p in processes(executor(stack)) if p[2].startswith("Z")] == []


def test_a_process_that_detaches_and_exits_its_main_thread_is_killed(stack):
    """Findings 1-3: setsid, a thread that keeps running while the main thread alone exits, and
    255 sleeping children: nothing of the run uid is left once it answered."""
    run_on(stack, SURVIVOR, run_timeout=3)
    deadline = time.monotonic() + 10
    while [p for p in processes(executor(stack)) if p[1] in RUN_UIDS] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [p for p in processes(executor(stack)) if p[1] in RUN_UIDS] == []


def test_runs_send_no_packet_anywhere(stack):
    """Findings 6 and 11: runs reached the executors' and the gateway's APIs, and a listener on the
    Docker host's bridge address; now every packet of a run uid is refused, loopback included."""
    with stack.host_listener() as (bridge, port, accepted):
        code = ("import socket\n"
                f"for host, port in [('127.0.0.1', 8080), ('gateway', 8080), ({bridge!r}, {port})]:\n"
                "    try:\n"
                "        socket.create_connection((host, port), timeout=3).close()\n"
                "        print('connected')\n"
                "    except OSError as e:\n"
                "        print(type(e).__name__)\n")
        out = run_on(stack, code)["run_result"]["stdout"]
    assert "connected" not in out and len(out.splitlines()) == 3, out
    assert accepted == []


def test_ipc_and_shared_files_end_with_their_run(stack):
    """Findings 8-9: a SysV segment, a POSIX queue and files in /tmp, /dev/shm, /run/lock outlived
    their run; PHP's session folder and the image's layers took writes. A later run (another uid)
    finds none of them, and the root filesystem is read-only."""
    plant = ("import ctypes, os\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "print(libc.shmget(0x4a44, 1 << 20, 0o1666) >= 0)\n"
             "print(libc.mq_open(b'/jbx46m', os.O_CREAT | os.O_RDWR, 0o666, None) >= 0)\n"
             "for d in ['/tmp', '/dev/shm', '/run/lock', '/var/lib/php/sessions', '/var/cache', '/opt']:\n"
             "    try:\n"
             "        open(d + '/jbx46m', 'w').write('x')\n"
             "        os.chmod(d + '/jbx46m', 0o666)\n"
             "        print(d, 'written')\n"
             "    except OSError as e:\n"
             "        print(d, type(e).__name__)\n")
    first = run_on(stack, plant)["run_result"]["stdout"].splitlines()
    assert first[:2] == ["True", "True"] and "/tmp written" in first, first
    assert {line.split()[0] for line in first[2:] if line.endswith("written")} <= {"/tmp", "/dev/shm", "/run/lock"}
    look = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "print(libc.shmget(0x4a44, 0, 0), libc.mq_open(b'/jbx46m', os.O_RDONLY, 0, None))\n"
            "print([d for d in ['/tmp', '/dev/shm', '/run/lock'] if os.path.exists(d + '/jbx46m')])\n")
    assert run_on(stack, look)["run_result"]["stdout"] == "-1 -1\n[]\n"


def test_concurrent_runs_never_hold_more_memory_limits_than_the_executor_has(stack):
    """Finding 7: without a memory cgroup per run, two runs of 3,000 MiB each on a 4 GiB executor
    could be killed by the container's OOM killer for each other's allocations; the second waits
    until the first's limit is free (its start comes after the first's end)."""
    first = ("import time\ntime.sleep(3)\nprint(time.time())\n")
    second = ("import time\nprint(time.time())\n")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        a = pool.submit(run_on, stack, first, memory_limit_MB=3000, run_timeout=20)
        time.sleep(1)
        b = pool.submit(run_on, stack, second, memory_limit_MB=3000, run_timeout=20)
        a_end, b_start = float(a.result()["run_result"]["stdout"]), float(b.result()["run_result"]["stdout"])
    assert b_start >= a_end


def test_proc_shows_a_run_only_its_own_processes(stack):
    """Finding 12: runs saw other runs' pids and command lines, and the server's."""
    code = ("import os\n"
            "seen = [open(f'/proc/{p}/cmdline', 'rb').read() for p in os.listdir('/proc') if p.isdigit()]\n"
            "print(len(seen) <= 3, any(b'--port' in c for c in seen))\n")
    assert run_on(stack, code)["run_result"]["stdout"] == "True False\n"
