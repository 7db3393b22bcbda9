"""Sandbox sessions: one kernel per session, state kept between calls, timeouts, deaths and limits.

Every behaviour is pinned on both faces: the embedded ``LocalSandbox.create_session`` and
``SandboxClient(url).create_session`` against a live ``judgebox serve`` (real kernels, real HTTP).
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from judgebox.sandbox import SessionNotFound
from judgebox.sandbox.errors import SandboxRequestError
from tests.sandbox.procs import alive_with, load_per_core, unique_sleep

pytestmark = pytest.mark.timeout(300)


def test_bug_118_variables_imports_and_files_persist_between_calls(open_session):
    """BUG-118 (sandbox side): x = 41 + 1 and an import survive to the next call, a file too; the
    final expression's value is a display bundle."""
    s = open_session()
    assert s.run("x = 41 + 1\nimport math").status == "Success"
    r = s.run("print(x, math.floor(2.5))")
    assert (r.status, r.stdout, r.state) == ("Success", "42 2\n", "kept")
    s.run("open('f.txt', 'w').write('hi')")
    assert s.run("print(open('f.txt').read())").stdout == "hi\n"
    assert s.run("x * 2").display == [{"text/plain": "84"}]


def test_sessions_share_nothing(open_session):
    """Two sessions (the n samples of one prompt): neither sees the other's names or files."""
    a, b = open_session(), open_session()
    a.run("secret = 1\nopen('f.txt', 'w').write('a')")
    r = b.run("import os\nprint('secret' in globals(), os.path.exists('f.txt'))")
    assert r.stdout == "False False\n"


@pytest.mark.slow
def test_bug_035_timeout_interrupts_keeps_state_and_partial_output(open_session):
    """A busy loop past timeout=2 is interrupted: stdout before it is kept, the error is
    TimeLimitExceeded, state is kept (x still there)."""
    s = open_session()
    s.run("x = 7")
    r = s.run('print("step1", flush=True)\nwhile True: pass', timeout=2)
    assert (r.status, r.stdout, r.timed_out, r.state) == ("Failed", "step1\n", True, "kept")
    assert r.error["ename"] == "TimeLimitExceeded"
    assert r.error["evalue"] == "the cell did not finish within 2s; it was interrupted and the session state is kept"
    assert 2.0 <= r.execution_time < 6.0 * load_per_core()
    assert s.run("print(x)").stdout == "7\n"


@pytest.mark.slow
def test_a_cell_that_ignores_the_interrupt_is_killed_with_its_children_and_state_is_lost(open_session):
    """SIGINT ignored: after the grace the kernel and its background child are killed; the result
    says state lost; the next call runs in a fresh kernel where x is gone but the file stays."""
    s = open_session()
    marker = unique_sleep()
    s.run(f"x = 1\nopen('kept.txt', 'w').write('k')\nimport subprocess\nsubprocess.Popen(['sleep', '{marker}'])")
    assert alive_with(f"sleep {marker}")
    r = s.run("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('p', flush=True)\n"
              "while True: pass", timeout=1)
    assert (r.stdout, r.timed_out, r.state, r.error["ename"]) == ("p\n", True, "lost", "TimeLimitExceeded")
    assert "did not stop within" in r.error["evalue"]
    assert alive_with(f"sleep {marker}") == []
    r = s.run("print('x' in globals(), open('kept.txt').read())")
    assert (r.stdout, r.state) == ("False k\n", "kept")


def test_a_dead_kernel_is_reported_once_and_replaced(open_session):
    """os._exit(3): Failed, KernelDied with the exit code, state lost; the next call runs in a fresh
    kernel (state kept from then on)."""
    s = open_session()
    s.run("y = 5")
    r = s.run("import os; os._exit(3)")
    assert (r.status, r.state, r.error["ename"]) == ("Failed", "lost", "KernelDied")
    assert r.error["evalue"] == "the kernel died during the cell (exit code 3)"
    r = s.run("print('y' in globals())")
    assert (r.status, r.stdout, r.state) == ("Success", "False\n", "kept")


def test_a_kernel_killed_while_idle_says_state_lost_at_the_next_call(open_session):
    """The kernel dies between calls (killed from outside): the next call starts a fresh kernel and
    its result says state lost, with the reason."""
    s = open_session()
    folder = s.run("import os; print(next(n for n in os.listdir('.') if n.startswith('.judgebox-kernel-')))").stdout
    kernel = [p for p in os.listdir("/proc") if p.isdigit() and folder.strip().encode() in _cmdline(p)]
    assert len(kernel) == 1
    os.kill(int(kernel[0]), 9)  # from outside: an idle session's processes are frozen, they cannot exit
    r = s.run("print('fresh')")
    assert (r.status, r.stdout, r.state) == ("Success", "fresh\n", "lost")
    assert r.message == "state lost before this cell: the kernel died while idle (exit code -9)"


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_memory_limit_kills_the_kernel_and_is_reported(open_session):
    """A cell allocating 1 GiB in a 256 MiB session: memory_exceeded, MemoryLimitExceeded, state lost;
    the session keeps working."""
    s = open_session(memory_limit_MB=256)
    r = s.run("a = bytearray(1 << 30)\na[::4096] = b'x' * len(a[::4096])", timeout=30)
    assert (r.memory_exceeded, r.state, r.error["ename"]) == (True, "lost", "MemoryLimitExceeded")
    assert r.error["evalue"] == "the kernel was killed for exceeding the memory limit of 256 MiB"
    assert s.run("print(1)").stdout == "1\n"


def test_closed_session_is_not_found_naming_it(open_session):
    """After close, a call raises SessionNotFound naming the id and why (closed)."""
    s = open_session()
    sid = s.session_id
    s.close()
    owner = s._owner
    with pytest.raises(SessionNotFound) as e:
        owner.run_session(sid, {"code": "1"}, s.endpoint, s.token)
    assert sid in str(e.value) and "is closed (closed by its owner (DELETE)); its state is lost" in str(e.value)


def test_code_over_the_size_limit_is_422(open_session):
    """A cell over max_code_bytes (1 MiB) is rejected as a request error naming the field."""
    s = open_session()
    with pytest.raises(SandboxRequestError) as e:
        s.run("#" * ((1 << 20) + 1))
    assert e.value.status_code == 422 and "code: 1048577 bytes exceeds the limit of 1048576 bytes" in str(e.value)


def test_session_cells_get_the_isolation_of_run_code(open_session, embedded):
    """A session's kernel runs under the same child set-up as run_code: the same uid, its own
    network namespace with loopback only, its own cgroup namespace (every path ``/``), the scrubbed
    environment keys, a PID
    namespace of its own and a filesystem view without the host's /home and /srv."""
    probe = ("import os, socket\n"
             "print(os.getuid() >= 61000, os.getpid() < 10, os.path.exists('/home') or os.path.exists('/srv'),\n"
             "      os.readlink('/proc/self/ns/net') != SERVER_NS, sorted(socket.if_nameindex()))\n"
             "print(all(l.rstrip().endswith(':/') for l in open('/proc/self/cgroup')),"
             " os.readlink('/proc/self/ns/cgroup') != SERVER_CG)\n"
             "print(sorted(k for k in os.environ if k.startswith('JUDGEBOX') or k in ('PATH', 'HOME')))")
    probe = probe.replace("SERVER_NS", repr(os.readlink("/proc/self/ns/net")))
    probe = probe.replace("SERVER_CG", repr(os.readlink("/proc/self/ns/cgroup")))
    session_out = open_session().run(probe).stdout
    run_out = embedded.run_code({"code": probe, "language": "python"}).run_result.stdout
    assert session_out == run_out
    ids, cgroup, _ = session_out.splitlines()
    assert ids == "True True False True [(1, 'lo')]" and cgroup == "True True"


@pytest.mark.slow
async def test_async_face_runs_sessions_concurrently(open_session):
    """arun from an event loop: two sessions' cells run at once and return their own values."""
    a, b = open_session(), open_session()
    ra, rb = await asyncio.gather(a.arun("import time; time.sleep(1); print('a')"),
                                  b.arun("import time; time.sleep(1); print('b')"))
    assert (ra.stdout, rb.stdout) == ("a\n", "b\n")
    await a.aclose()


def test_a_server_holding_more_fds_than_max_open_files_still_starts_kernels_and_programs(embedded):
    """The child's set-up opens files (cgroup.procs, a socket) while it still holds the parent's
    descriptors: with 1100 open in this process (> max_open_files 1024, as with ~40 live sessions)
    a session and a run_code still start."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with embedded.create_session() as s:
            assert s.run("print(6 * 7)").stdout == "42\n"
        r = embedded.run_code({"code": "print(1)", "language": "python"})
        assert (r.status, r.run_result.stdout) == ("Success", "1\n")
    finally:
        for fd in held:
            os.close(fd)


# ---------------------------------------------------------------- a session's own full disk or memory (issue 37, finding 11)
FILL_DISK = ("import errno, os\ni, full = 0, False\n"
             "while not full:\n"  # files of at most 200 MiB (RLIMIT_FSIZE) until the disk is full
             "    fd = os.open(f'fill{i}', os.O_WRONLY | os.O_CREAT); i += 1\n"
             "    try:\n        for _ in range(200):\n            os.write(fd, b'x' * (1 << 20))\n"
             "    except OSError as e:\n        full = e.errno == errno.ENOSPC\n    os.close(fd)\n"
             "fd = os.open('last', os.O_WRONLY | os.O_CREAT)\n"
             "try:\n    while True:\n        os.write(fd, b'x' * 4096)\n"
             "except OSError:\n    pass\nos._exit(1)\n")
#: a writer smaller than the kernel fills the session's memory with files; the memory limit kills the kernel
FILL_MEMORY = ("import os, subprocess, time\n"
               "subprocess.Popen(['sh', '-c', 'i=0; while :; do cat /dev/zero > f$i; i=$((i+1)); done'])\n"
               "time.sleep(30)\n")


def test_a_session_whose_disk_is_full_restarts_and_can_free_it(open_session):
    """Finding 11 (disk): a cell filled the session's disk and ended its kernel; the next kernel
    failed every cell (ipykernel probes the temporary folder by writing a file: "No usable temporary
    directory"), the one that would free space too. It starts with its temporary folder set: cells
    run, and freeing space works."""
    s = open_session()
    s.run("x = 1")
    assert s.run(FILL_DISK, timeout=120).state == "lost"
    r = s.run("print(1)")
    assert (r.status, r.stdout, r.error) == ("Success", "1\n", None)
    r = s.run("import os\nfor p in os.listdir('.'):\n    if p.startswith('fill'): os.remove(p)\n"
              "open('new.txt', 'w').write('ok'); print(open('new.txt').read())")
    assert (r.status, r.stdout) == ("Success", "ok\n")


def test_a_session_whose_files_fill_its_memory_fails_as_the_program_not_the_sandbox(open_session):
    """Finding 11 (memory): files count towards the session's memory limit, so once they filled it
    no kernel could start again: every later call was ``SandboxError`` ("kernel failed to start";
    ``code_interpreter``: "sandbox unavailable (infrastructure, not your code)"). It is the
    program's failure: ``Failed``, ``MemoryLimitExceeded``, saying to create a new session, at once."""
    s = open_session(memory_limit_MB=256)
    s.run("x = 1")
    r = s.run(FILL_MEMORY, timeout=60)
    assert (r.status, r.state, r.memory_exceeded) == ("Failed", "lost", True)
    # how much the files hold when the kernel is killed depends on the moment of the kill (the kernel's
    # own memory at that instant is what a new one may find free): a kernel that fits may start; one
    # that does not is the program's failure at once, never SandboxError nor the start-up timeout
    for _ in range(2):
        start = time.monotonic()
        r = s.run("print(1)")
        assert time.monotonic() - start < 55  # never the kernel start-up timeout (60 s) holding a slot
        assert r.status in ("Success", "Failed"), r
        if r.status == "Failed":
            assert (r.memory_exceeded, (r.error or {}).get("ename")) == (True, "MemoryLimitExceeded"), r
            assert "no kernel can start" in r.message and "create a new session" in r.message
