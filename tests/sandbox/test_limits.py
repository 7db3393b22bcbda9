"""Per-run limits: memory, processes, file size, stack; the same verdicts embedded and over HTTP.

Each named failure case (BUG-037, BUG-038) is pinned with its exact expected values; the resource bombs (memory, fork, disk) end as ``Failed`` and leave the sandbox healthy.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil

import httpx
import pytest

from judgebox.sandbox import LocalSandbox, RunCodeResponse
from tests.sandbox.procs import alive_with, unique_sleep

PRINT_1 = {"code": "print(1)", "language": "python"}


@functools.lru_cache(maxsize=None)
def cgroup_memory() -> bool:
    """Whether executors here enforce memory with a cgroup (root on a cgroup host)."""
    return LocalSandbox().executor.isolation.describe()["memory_cgroup"]


def assert_memory_killed(r: RunCodeResponse) -> None:
    """BUG-037's expectation: Failed, run Finished with rc != 0, no 'alive', memory_exceeded.

    On a cgroup host the kernel OOM-kills the program (rc -9) and ``memory_exceeded`` is true; a
    single allocation larger than RAM + swap is refused before it touches memory (Python:
    ``MemoryError``, rc 1), which is the program's own failure, not a limit hit.
    """
    assert r.status == "Failed", r
    assert r.run_result.status == "Finished"
    assert r.run_result.return_code in (-9, 1)
    assert "alive" not in r.run_result.stdout
    if r.run_result.return_code == 1:
        assert r.run_result.stderr.rstrip().endswith("MemoryError")
    elif cgroup_memory():
        assert r.run_result.memory_exceeded is True


def test_bug_037_memory_bomb_one_allocation(run_code):
    """BUG-037 (a): an 8 GiB bytearray under memory_limit_MB=512 is killed and reported."""
    r = run_code({"code": "x = bytearray(8 * 1024**3)\nprint('alive')", "language": "python",
                  "memory_limit_MB": 512})
    assert_memory_killed(r)
    after = run_code(PRINT_1)
    assert (after.status, after.run_result.stdout) == ("Success", "1\n")


def test_bug_037_memory_bomb_growing(run_code):
    """BUG-037 (b): a list growing 1 MB at a time under 512 MiB, run_timeout=5: killed, not TLE."""
    r = run_code({"code": "a = []\nwhile True:\n    a.append(' ' * 10**6)", "language": "python",
                  "memory_limit_MB": 512, "run_timeout": 5})
    assert_memory_killed(r)
    if cgroup_memory():  # small allocations never fail: the cgroup OOM killer stops it
        assert (r.run_result.return_code, r.run_result.memory_exceeded) == (-9, True)
    after = run_code(PRINT_1)
    assert (after.status, after.run_result.stdout) == ("Success", "1\n")


def test_memory_bomb_in_a_child_process_is_contained(run_code):
    """A bomb in a forked child is charged to the same run: the run is Failed, nothing survives."""
    code = ("import os, sys\npid = os.fork()\nif pid == 0:\n    x = bytearray(2 * 1024**3)\n    os._exit(0)\n"
            "_, status = os.waitpid(pid, 0)\nsys.exit(3 if os.WIFSIGNALED(status) else 0)")
    r = run_code({"code": code, "language": "python", "memory_limit_MB": 256})
    assert r.status == "Failed"
    assert r.run_result.return_code in (3, -9)
    if cgroup_memory():
        assert r.run_result.memory_exceeded is True


def test_bug_038a_numpy_starts_under_a_memory_limit(run_code):
    """BUG-038 (a): numpy (OpenBLAS threads) imports under memory_limit_MB=512: stdout "6\\n", rc 0."""
    r = run_code({"code": "import numpy as np\nprint(int(np.arange(4).sum()))", "language": "python",
                  "memory_limit_MB": 512})
    assert (r.status, r.run_result.stdout, r.run_result.return_code) == ("Success", "6\n", 0), r
    assert r.run_result.memory_exceeded is False


@pytest.mark.parametrize("language,code,stdout", [
    ("nodejs", "console.log([1, 2, 3].map(x => x * 2).join(' '))", "2 4 6\n"),
    ("java", "public class Main { public static void main(String[] a) { System.out.println(6 * 7); } }", "42\n"),
    ("go", 'package main\nimport "fmt"\nfunc main() { fmt.Println(7 * 6) }', "42\n"),
])
def test_bug_038_threaded_runtimes_start_under_a_memory_limit(local_sandbox, language, code, stdout):
    """BUG-038's kind: JVM, V8 and the Go runtime reserve far more address space than 512 MiB."""
    if language not in local_sandbox.executor.languages():
        pytest.skip(f"{language} toolchain not installed")
    r = local_sandbox.run_code({"code": code, "language": language, "memory_limit_MB": 512,
                                "compile_timeout": 60})
    assert (r.status, r.run_result.stdout) == ("Success", stdout), r


def test_bug_038b_server_under_stack_hard_limit_8MiB(live_server_factory):
    """BUG-038 (b): with the server's RLIMIT_STACK hard limit at 8 MiB (as under ``ulimit -Hs 8192``)
    the 256 MiB stack request is clamped, never raised in preexec: Success "1\\n"."""
    server = live_server_factory()
    eight_MiB = 8192 * 1024
    resource.prlimit(server.process.pid, resource.RLIMIT_STACK, (eight_MiB, eight_MiB))
    assert resource.prlimit(server.process.pid, resource.RLIMIT_STACK) == (eight_MiB, eight_MiB)
    r = httpx.post(f"{server.url}/run_code", json={**PRINT_1, "memory_limit_MB": 1024}, timeout=60).json()
    assert (r["status"], r["run_result"]["stdout"], r["run_result"]["return_code"]) == ("Success", "1\n", 0)
    stack = httpx.post(f"{server.url}/run_code", timeout=60, json={
        "code": "import resource\nprint(resource.getrlimit(resource.RLIMIT_STACK))", "language": "python"}).json()
    assert stack["run_result"]["stdout"] == f"({eight_MiB}, {eight_MiB})\n"


def test_huge_memory_request_is_clamped_not_refused(run_code):
    """A limit beyond the host (10 TiB) is clamped to what the host allows; the request runs."""
    r = run_code({**PRINT_1, "memory_limit_MB": 10 * 1024 * 1024})
    assert (r.status, r.run_result.stdout) == ("Success", "1\n")


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_deep_recursion_has_a_256MiB_stack(local_sandbox):
    """One million nested calls (about 100 MiB of stack) run as on real judges, not SIGSEGV."""
    code = ("#include <cstdio>\nint f(int n){ volatile char pad[64]; pad[0]=n & 1; return n ? f(n-1)+pad[0]%2 : 0; }\n"
            "int main(){ std::printf(\"%d\\n\", f(1000000)); }")
    r = local_sandbox.run_code({"code": code, "language": "cpp", "compile_timeout": 60})
    assert (r.status, r.run_result.stdout) == ("Success", "500000\n"), r


@pytest.mark.slow
def test_fork_bomb_is_capped_and_cleaned(run_code):
    """A fork bomb hits the process cap, ends as TimeLimitExceeded, and no process of it survives."""
    marker = unique_sleep()
    code = (f"import os, time\nwhile True:\n    try:\n        if os.fork() == 0:\n"
            f"            os.execvp('sleep', ['sleep', '{marker}'])\n    except OSError:\n        time.sleep(0.01)")
    r = run_code({"code": code, "language": "python", "run_timeout": 2})
    assert r.status == "Failed"
    assert r.run_result.status == "TimeLimitExceeded"
    assert alive_with(marker) == []
    after = run_code(PRINT_1)
    assert (after.status, after.run_result.stdout) == ("Success", "1\n")


def test_fork_loop_sees_the_process_cap(local_sandbox):
    """A program that forks until refused is stopped by the cap (256 processes), not by the host."""
    code = ("import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
            "            time.sleep(30)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
            "    print(n < 256, e.errno)")
    r = local_sandbox.run_code({"code": code, "language": "python", "run_timeout": 10})
    assert (r.status, r.run_result.stdout) == ("Success", "True 11\n"), r  # EAGAIN


def test_disk_filler_stops_at_the_file_size_limit(run_code):
    """A program writing one endless file is stopped at 256 MiB: Failed, rc 1, "File too large"."""
    code = ("chunk = b'x' * (1 << 20)\nwith open('fill.bin', 'wb') as f:\n    while True:\n"
            "        f.write(chunk)\n        f.flush()")
    r = run_code({"code": code, "language": "python", "run_timeout": 20})
    assert (r.status, r.run_result.status, r.run_result.return_code) == ("Failed", "Finished", 1), r
    assert "File too large" in r.run_result.stderr


def test_open_files_are_capped_at_1024(local_sandbox):
    """RLIMIT_NOFILE: a descriptor leak ends in EMFILE (24) below 1024 open files."""
    code = ("import os\nfds = []\ntry:\n    while True:\n        fds.append(os.open('/dev/null', os.O_RDONLY))\n"
            "except OSError as e:\n    print(len(fds) < 1024, e.errno)")
    r = local_sandbox.run_code({"code": code, "language": "python"})
    assert (r.status, r.run_result.stdout) == ("Success", "True 24\n"), r


# --- the no-cgroup fallback (unprivileged containers): rlimits and the run uid -------------------

@pytest.fixture(scope="module")
def no_cgroups() -> LocalSandbox:
    """An embedded sandbox told not to use cgroups, as where /sys/fs/cgroup is read-only."""
    sandbox = LocalSandbox(use_cgroups=False)
    assert sandbox.executor.isolation.describe()["memory_limit"] == "rlimit_data"
    return sandbox


def test_fallback_numpy_still_starts_under_512MiB(no_cgroups):
    """BUG-038 (a) without cgroups: RLIMIT_DATA (never RLIMIT_AS) lets numpy start."""
    r = no_cgroups.run_code({"code": "import numpy as np\nprint(int(np.arange(4).sum()))",
                             "language": "python", "memory_limit_MB": 512})
    assert (r.status, r.run_result.stdout) == ("Success", "6\n"), r


def test_fallback_memory_bomb_fails_with_the_programs_own_error(no_cgroups):
    """BUG-037 (b) without cgroups: the allocation is refused (MemoryError, rc 1): Failed; the
    fallback does not claim ``memory_exceeded`` since no limit hit was observed by the sandbox."""
    r = no_cgroups.run_code({"code": "a = []\nwhile True:\n    a.append(' ' * 10**6)", "language": "python",
                             "memory_limit_MB": 512, "run_timeout": 5})
    assert (r.status, r.run_result.return_code, r.run_result.memory_exceeded) == ("Failed", 1, False), r
    assert r.run_result.stderr.rstrip().endswith("MemoryError")


@pytest.mark.skipif(os.geteuid() != 0, reason="per-run uids need root")
def test_fallback_fork_loop_and_escaped_daemon_under_a_run_uid():
    """Without cgroups, root runs each request as its own uid: RLIMIT_NPROC caps a fork loop and
    the uid sweep kills a daemon that left the process group."""
    from tests.sandbox.test_isolation import reachable_python

    sandbox = LocalSandbox(use_cgroups=False, python=reachable_python())
    assert sandbox.executor.isolation.describe()["process_limit"] == "rlimit_nproc"
    code = ("import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
            "            time.sleep(30)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
            "    print(n < 256, e.errno)")
    r = sandbox.run_code({"code": code, "language": "python", "run_timeout": 10})
    assert (r.status, r.run_result.stdout) == ("Success", "True 11\n"), r
    marker = unique_sleep()
    r = sandbox.run_code({"code": f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'], "
                                  f"start_new_session=True)\nprint('spawned')", "language": "python"})
    assert r.run_result.stdout == "spawned\n"
    assert alive_with(marker) == []
