"""A hostile notebook or session never makes the root server read, write or connect for it, runs no
code before its first cell, and stays inside its output caps and its CPU budget.

Each test is the exact attack of a security finding, aimed only at canary files and sockets the
test itself creates: the program replaces whatever the server keeps in the run's folder (the kernel
log, the connection file, the kernel's IPC sockets) by links to them, or plants start-up hooks.
Pinned on the embedded sandbox and over HTTP (``/run_jupyter`` and sessions) and through the
``code_interpreter`` tool.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
import threading
import time

import pytest

from judgebox.sandbox import LocalSandbox
from tests.sandbox.procs import load_per_core

pytestmark = pytest.mark.timeout(300)

#: A cell that replaces every file, socket and link the program did not make itself in its working
#: folder tree (whatever the server keeps there) by a link to ``TARGET``, then kills its kernel.
REDIRECT = """
import os
target = {target!r}
for root, dirs, names in os.walk('.'):
    for name in names:
        path = os.path.join(root, name)
        if name.startswith('mine-'):
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        os.symlink(target, path)
for name in ('.kernel.log', '.kernel.json', '.kernel-1', '.kernel-2', '.kernel-3', '.kernel-4', '.kernel-5'):
    if not os.path.lexists(name):
        os.symlink(target, name)
os._exit(3)
"""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.fixture
def canary(tmp_path):
    """A root-only (0600) host file with a secret the program must never see or change."""
    path = tmp_path / "canary"
    path.write_text("SECRET-7f3a9c")
    os.chmod(path, 0o600)
    return path


def _startup_hooks(marker_dir: str) -> dict[str, str]:
    """Every place a kernel could load code from at start-up, each hook writing a marker file named
    after itself and burning 3 CPU seconds (which no limit would count)."""
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    places = [".ipython/profile_default/startup/00-x.py", ".ipython/profile_default/ipython_config.py",
              ".ipython/profile_default/ipython_kernel_config.py", ".jupyter/jupyter_config.py",
              ".jupyter/ipython_kernel_config.py", "ipython_kernel_config.py", "ipython_config.py",
              "jupyter_config.py", "ipykernel_launcher.py", f".local/lib/{minor}/site-packages/usercustomize.py",
              ".local/etc/jupyter/ipython_kernel_config.py", ".config/ipython/profile_default/startup/00-x.py"]
    hooks = {}
    for place in places:
        tag = place.replace("/", "_")
        hooks[place] = b64(f"import os, time\nopen(os.path.join({marker_dir!r}, 'hook-{tag}'), 'w').close()\n"
                           "t = time.process_time()\nwhile time.process_time() - t < 3: pass\n")
    return hooks


def test_a_kernel_runs_no_code_of_the_run_before_its_first_cell(run_jupyter, canary):
    """Finding 7 (and the entry of finding 1): start-up hooks planted through ``files`` (IPython
    start-up files and profiles, Jupyter config, a module shadowing ``ipykernel_launcher``, a user
    site ``usercustomize``) ran inside the kernel before it answered, outside every time limit (8 CPU
    seconds at total_timeout=2 gave Success, execution_time 0.015 s). None of them runs now."""
    r = run_jupyter({"cells": ["import os; print(sorted(n for n in os.listdir('.') if n.startswith('hook-')))"],
                     "files": _startup_hooks("."), "total_timeout": 20})
    assert r.status == "Success", r.message
    assert r.cells[0].stdout == "[]\n"


def test_a_kernel_that_fails_to_start_never_shows_a_host_file(run_jupyter, canary):
    """Finding 1: an IPython start-up file replaced the kernel log by a link to a root-only host file
    and exited; the server read the log tail as root and answered ``kernel failed to start: ...
    SECRET``. The run's start-up file does not run, and nothing the run can link is read."""
    hook = b64("import os\nfor n in os.listdir('.'):\n    if not n.startswith('.ipython'):\n"
               "        os.unlink(n) if not os.path.isdir(n) else None\n"
               f"    os.symlink({str(canary)!r}, n) if not os.path.lexists(n) else None\n"
               f"os.symlink({str(canary)!r}, '.kernel.log') if not os.path.lexists('.kernel.log') else None\n"
               "os._exit(1)\n")
    r = run_jupyter({"cells": ["print('ran')"], "files": {".ipython/profile_default/startup/00-x.py": hook}})
    assert "SECRET" not in r.model_dump_json()
    assert (r.status, r.cells[0].stdout) == ("Success", "ran\n")
    assert canary.read_text() == "SECRET-7f3a9c"


@pytest.mark.slow
def test_a_session_restart_never_writes_or_creates_a_host_file(open_session, canary, tmp_path):
    """Finding 2: a cell replaced the kernel log (and the connection file) by links and exited; at the
    restart the server opened them for writing as root and overwrote a root 0600 file with output
    the program chose, or created a root-owned file where a dangling link pointed."""
    created = tmp_path / "created-by-server"
    s = open_session()
    assert s.run("x = 1").status == "Success"
    r = s.run(REDIRECT.format(target=str(canary)))
    assert r.state == "lost"
    r = s.run("print('again')")
    assert (r.status, r.stdout) == ("Success", "again\n"), r.message
    r = s.run(REDIRECT.format(target=str(created)))
    r = s.run("print('again')")
    assert (r.status, r.stdout) == ("Success", "again\n"), r.message
    assert canary.read_text() == "SECRET-7f3a9c"
    assert oct(canary.stat().st_mode & 0o777) == "0o600"
    assert not created.exists()


@pytest.fixture
def listener(tmp_path):
    """A Unix socket listening on the host (as root) that counts the connections it accepts."""
    path = str(tmp_path / "host.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(64)
    srv.settimeout(0.2)
    accepted = []
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except (socket.timeout, OSError):
                continue
            accepted.append(1)
            conn.close()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    yield path, accepted
    stop.set()
    t.join()
    srv.close()


@pytest.mark.slow
def test_the_server_never_connects_to_a_socket_the_program_names(open_session, listener):
    """Finding 4: the kernel's ZeroMQ IPC socket files lived in the run-writable folder; replaced by
    links to a host listener and the kernel killed, the server's reconnects reached it 74 times, as
    uid 0. The server's sockets stay bound to the kernel's own socket files."""
    path, accepted = listener
    s = open_session()
    assert s.run("x = 1").status == "Success"
    s.run(REDIRECT.format(target=path))
    time.sleep(2.0)  # the window in which the server's sockets reconnected
    r = s.run("print('again')")
    assert (r.status, r.stdout) == ("Success", "again\n"), r.message
    s.run(REDIRECT.format(target=path))
    time.sleep(1.0)
    assert accepted == []


@pytest.mark.slow
def test_the_code_interpreter_never_shows_a_host_file(canary):
    """Finding 1 through the tool: two ``code_interpreter`` calls put the secret into the model's own
    observation (the first plants the links and kills the kernel, the second restarts it)."""
    import asyncio

    from judgebox.agent.tools import CodeInterpreterTool

    async def main() -> list[str]:
        tool = CodeInterpreterTool({"timeout": 20})
        instance, _ = await tool.create()
        try:
            texts = []
            for code in (REDIRECT.format(target=str(canary)), "print('again')"):
                response, _, _ = await tool.execute(instance, {"code": code})
                texts.append(response.text)
            return texts
        finally:
            await tool.release(instance)
            tool.client.local.sessions.close_all()

    texts = asyncio.run(main())
    assert not any("SECRET" in t for t in texts), texts
    assert "again" in texts[1]
    assert canary.read_text() == "SECRET-7f3a9c"


def test_display_and_error_text_are_capped_in_bytes_with_flags(run_jupyter):
    """Finding 8: ``display()`` of 8 MiB and an 8 MB exception text came back whole (stdout was cut
    at 1 MiB) and the server held it all. Each kind is now capped at ``output_limit_bytes`` (1 MiB)
    at a character boundary, and a flag says so."""
    r = run_jupyter({"cells": ["from IPython.display import display\ndisplay({'text/plain': 'é' * (4 << 20)}, raw=True)",
                               "raise ValueError('x' * 8_000_000)", "'small'"]})
    big, err, small = r.cells
    text = big.display[0]["text/plain"]
    # the cap counts the MIME name and a fixed cost per entry too (64 bytes)
    assert (1 << 20) - 128 <= len(text.encode()) <= 1 << 20 and set(text) == {"é"}
    assert big.display_truncated and not big.stdout_truncated and not big.error_truncated
    assert err.error[0]["ename"] == "ValueError"
    assert (1 << 20) - 128 <= len(err.error[0]["evalue"].encode()) <= 1 << 20
    assert err.error_truncated and not err.display_truncated
    assert small.display == [{"text/plain": "'small'"}] and not small.display_truncated


@pytest.mark.slow
def test_an_idle_session_computes_nothing(open_session):
    """Finding 9: a thread left by one cell used 4.4 CPU s in 4 s while the session was idle. Between
    cells every process of the session is frozen: the kernel's CPU time does not move while idle."""
    s = open_session()
    assert s.run("import threading\ndef spin():\n    while True: pass\n"
                 "threading.Thread(target=spin, daemon=True).start()").status == "Success"
    before = s.run("import resource; r = resource.getrusage(resource.RUSAGE_SELF); print(r.ru_utime + r.ru_stime)")
    time.sleep(3.0)
    after = s.run("r = resource.getrusage(resource.RUSAGE_SELF); print(r.ru_utime + r.ru_stime)")
    idle_cpu = float(after.stdout) - float(before.stdout)
    assert idle_cpu < 0.5, f"{idle_cpu:.2f} CPU s used in 3 s of idle time"


@pytest.mark.slow
def test_session_cpu_limit_counts_the_whole_session():
    """``session_cpu_limit`` was RLIMIT_CPU per process: two busy processes of one cell each stayed
    under it. It is now the CPU seconds of the whole session (its cgroup): the cell that reaches it
    loses its kernel, and every later cell fails at once."""
    sandbox = LocalSandbox(session_cpu_limit=3)
    try:
        s = sandbox.create_session()
        burn = ("import subprocess, sys\nsrc = 'import time\\nt = time.process_time()\\n"
                "while time.process_time() - t < 2: pass'\n"
                "ps = [subprocess.Popen([sys.executable, '-c', src]) for _ in range(2)]\n"
                "[p.wait() for p in ps]\nprint('done')")
        r = s.run(burn, timeout=30)
        if r.status == "Success":  # both finished before the budget was seen: the next cell sees it
            r = s.run(burn, timeout=30)
        assert (r.status, r.state, r.error["ename"]) == ("Failed", "lost", "KernelDied")
        assert "session_cpu_limit" in r.error["evalue"]
        again = s.run("print(1)")
        assert again.status == "Failed" and "session_cpu_limit" in again.error["evalue"]
    finally:
        sandbox.sessions.close_all()


@pytest.mark.slow
def test_a_message_over_the_size_cap_is_refused_and_flagged(local_sandbox):
    """One ZeroMQ message over the server's per-message cap (64 MiB) is refused by the server's
    socket instead of being held in its memory; the cell still ends, every flag says output was
    lost, and the next cell runs."""
    r = local_sandbox.run_jupyter({"cells": ["from IPython.display import display\n"
                                             "display({'text/plain': 'x' * (80 << 20)}, raw=True)\nprint('after')",
                                             "print('next')"], "total_timeout": 60})
    big, nxt = r.cells
    assert big.display == [] and big.display_truncated and big.stdout_truncated
    assert nxt.stdout == "next\n"


FORGE = """
k = get_ipython().kernel
S = k.session
parent = k.get_parent()["header"]
for parts in ([S.pack({"msg_type": "stream"}), S.pack(parent), S.pack({}), S.pack({})],
              [S.pack({"msg_type": "stream", "msg_id": "x"}), S.pack(parent), S.pack({}), S.pack([1, 2])],
              [S.pack({"msg_type": "stream", "msg_id": "y"}), S.pack("not a header"), S.pack({}), S.pack({})]):
    S.send_raw(k.iopub_socket, parts, ident=b"stream")
import time; time.sleep(0.5)
print("after")
"""


@pytest.mark.slow
def test_messages_the_kernel_forges_are_dropped(run_jupyter):
    """A cell sent hand-made IOPub messages (no msg_id in the header, a list as content, a string as
    parent header): HTTP 500 (KeyError, AttributeError). They are dropped; the cell's own output stays."""
    r = run_jupyter({"cells": [FORGE, "print('next')"]})
    assert (r.status, r.cells[0].stdout, r.cells[1].stdout) == ("Success", "after\n", "next\n")


@pytest.mark.slow
def test_many_display_entries_and_error_records_stay_under_the_caps(local_sandbox):
    """Display bundles with 8 MiB MIME names and empty values (335 MB, no flag), and 20,000 error
    records of a 1 KiB name (13 MB, no flag), passed the per-cell caps: names and entries count too."""
    keys = "from IPython.display import display\nfor i in range(40): display({('%d' % i) + 'K' * (8 << 20): ''}, raw=True)"
    errors = ("k = get_ipython().kernel\nfor _ in range(20000):\n    k.session.send(k.iopub_socket, 'error', "
              "content={'ename': 'E' * 1024, 'evalue': '', 'traceback': []}, parent=k.get_parent())\n"
              "import time; time.sleep(1)")
    big_keys, big_errors = local_sandbox.run_jupyter({"cells": [keys, errors], "total_timeout": 120}).cells
    size = lambda x: len(json.dumps(x).encode())  # noqa: E731
    assert big_keys.display_truncated and size(big_keys.display) <= (1 << 20) + 4096
    assert big_errors.error_truncated and size(big_errors.error) <= 2 << 20


@pytest.mark.slow
def test_a_flooded_shell_socket_does_not_hold_a_cell_past_its_timeout(open_session):
    """A cell flooding the shell socket with signed execute_reply frames kept a timeout=5 cell for 40 s
    (the drain never returned to the deadline). The cell ends within its timeout and grace."""
    flood = """
import time
k = get_ipython().kernel
S, sock = k.session, k.shell_stream.socket
ident = k._parent_ident["shell"]
ident = list(ident) if isinstance(ident, (list, tuple)) else [ident]
def flood(stop=time.monotonic() + 30):
    i = 0
    while time.monotonic() < stop:
        i += 1
        header = ('{"msg_id":"f%d","msg_type":"execute_reply","username":"u","session":"%s","date":'
                  '"2020-01-01T00:00:00.000000Z","version":"5.3"}' % (i, S.session)).encode()
        body = [header, b"{}", b"{}", b'{"status":"ok"}']
        h = S.auth.copy()
        for f in body:
            h.update(f)
        sock.send_multipart(ident + [b"<IDS|MSG>", h.hexdigest().encode(), *body])
k.shell_stream.io_loop.add_callback(flood)
while True:
    time.sleep(1)
"""
    s = open_session()
    start = time.monotonic()
    r = s.run(flood, timeout=5)
    assert r.timed_out and time.monotonic() - start < 20 * load_per_core()


def test_a_cell_that_takes_the_folder_away_does_not_break_the_session(open_session):
    """``chmod(".", 0)`` then ``os._exit``: every later cell was SandboxError (the new kernel could not
    start). The working folder gets back its mode at every kernel start."""
    s = open_session()
    assert s.run("import os\nos.chmod('.', 0)\nos._exit(1)").state == "lost"
    r = s.run("import os; print(oct(os.stat('.').st_mode & 0o777))")
    assert (r.status, r.stdout) == ("Success", "0o700\n"), r.message


@pytest.mark.slow
def test_what_a_kernel_prints_to_its_descriptors_counts_against_the_disk_quota():
    """A cell writing to descriptor 1 filled the server's log file on the host disk (256 MiB per
    kernel, outside the run's disk quota). The log lives on the run's own disk now."""
    sandbox = LocalSandbox(disk_limit_MB=16)
    try:
        s = sandbox.create_session()
        s.run("import os\nfor _ in range(24): os.write(1, b'x' * (1 << 20))")  # ipykernel echoes it to the log
        r = s.run("import shutil; print(shutil.disk_usage('/tmp').used >> 20)")
        assert int(r.stdout) >= 15, r.stdout  # the run's 16 MiB disk holds it, not the host's
    finally:
        sandbox.sessions.close_all()


@pytest.mark.slow
def test_run_jupyter_is_clamped_to_max_run_timeout():
    """``total_timeout: 1e9`` ran a kernel past the server's 300 s ``max_run_timeout`` (the deadline
    used the unclamped value)."""
    sandbox = LocalSandbox(max_run_timeout=2)
    start = time.monotonic()
    r = sandbox.run_jupyter({"cells": ["import time\nwhile True: time.sleep(1)"], "total_timeout": 1e9})
    assert r.driver.status == "TimeLimitExceeded" and time.monotonic() - start < 15 * load_per_core()
