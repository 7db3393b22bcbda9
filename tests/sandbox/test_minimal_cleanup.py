"""Issue 46: what minimal isolation (no namespaces, no cgroup per run) still promises, on this host:
nothing of a run outlives its end, its System V IPC goes with it, the executor's memory is the
ceiling, and concurrent runs never hold more memory limits than it. (The same in a container:
``tests/docker/test_compose_minimal.py``.) Every probe aims at processes and IPC objects it creates."""

from __future__ import annotations

import os
import threading
import time

import pytest

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.config import SandboxSettings
from judgebox.sandbox.isolation.budget import MemoryBudget
from judgebox.sandbox.isolation.users import tasks_of_uid
from tests.docker.stack import SURVIVOR
from tests.sandbox.test_isolation import needs_root, reachable_python

UIDS = range(61000, 61000 + 1024)


@pytest.fixture(scope="module")
def minimal() -> LocalSandbox:
    """Minimal isolation with a uid per run and no cgroup (as in a container without SYS_ADMIN)."""
    return LocalSandbox(settings=SandboxSettings(isolation="minimal", use_cgroups=False, python=reachable_python()))


@needs_root
def test_a_process_whose_main_thread_alone_exited_is_killed_with_its_run(minimal):
    """Finding 1: the kill by uid skipped a process whose leader shows as a zombie while another of
    its threads runs on (a detached process in a session of its own, its main thread gone)."""
    result = minimal.run_code({"code": SURVIVOR, "language": "python", "run_timeout": 2})
    word, uid = result.run_result.stdout.split()
    uid = int(uid)
    assert word == "detached" and uid in UIDS and tasks_of_uid(uid) == []


@needs_root
def test_system_v_ipc_of_a_run_is_removed_with_it(minimal):
    """Finding 8: a segment, a semaphore set and a message queue outlived their run."""
    plant = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
             "print(libc.shmget(0x4a45, 4096, 0o1666) >= 0, libc.semget(0x4a45, 1, 0o1666) >= 0, "
             "libc.msgget(0x4a45, 0o1666) >= 0)\n")
    assert minimal.run_code({"code": plant, "language": "python"}).run_result.stdout == "True True True\n"
    with open("/proc/sysvipc/shm") as shm, open("/proc/sysvipc/sem") as sem, open("/proc/sysvipc/msg") as msg:
        keys = [line.split()[0] for f in (shm, sem, msg) for line in f.readlines()[1:]]
    assert str(0x4a45) not in keys and "4a45" not in keys


def test_the_memory_ceiling_is_the_servers_own_cgroup_or_ram(minimal):
    info = minimal.executor.isolation.describe()
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    assert 0 < info["memory_ceiling_MB"] <= ram
    assert set(info["shared_tmp_sysctls"]) == {"protected_symlinks", "protected_hardlinks", "protected_regular",
                                               "protected_fifos"}


def test_memory_limits_held_together_never_exceed_the_budget():
    """Admission by the sum of limits: a second hold that would pass the capacity waits until the
    first is released, then proceeds; one that never fits in time is refused, naming the sizes."""
    budget = MemoryBudget(3 << 30)
    order: list[str] = []
    first_in, release = threading.Event(), threading.Event()

    def first() -> None:
        with budget.hold(2 << 30):
            order.append("first in")
            first_in.set()
            release.wait(10)
            order.append("first out")

    def second() -> None:
        first_in.wait(10)
        with budget.hold(2 << 30):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    first_in.wait(10)
    time.sleep(0.2)
    assert order == ["first in"] and budget.held == 2 << 30  # the second is waiting
    release.set()
    for t in threads:
        t.join(10)
    assert order == ["first in", "first out", "second in"] and budget.held == 0
    with budget.hold(3 << 30), pytest.raises(RuntimeError, match="runs in progress hold 3072 of 3072 MiB"):
        with budget.hold(1 << 20, wait_s=0.1):
            pass
