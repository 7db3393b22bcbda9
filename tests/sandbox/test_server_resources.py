"""Whatever a run does, the server's memory and answers stay bounded: kernel channels nobody reads,
folders of any depth, many cases printing at the cap, request files past the disk quota.

Each test is a finding of a red-team round (against processes and files the test makes itself)."""

from __future__ import annotations

import base64
import json
import shutil

import httpx
import pytest

from judgebox.sandbox import LocalSandbox


def rss_mib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) >> 10


@pytest.mark.slow
def test_a_kernel_cannot_fill_the_server_through_channels_nobody_reads():
    """A cell sent 24 x 50 MiB on the kernel's stdin socket: the server queued them (1,269 MiB
    resident until the session was deleted). The server no longer connects stdin or control, and
    queues at most a few messages on the channels it reads."""
    sandbox = LocalSandbox()
    try:
        s = sandbox.create_session()
        s.run("x = 1")
        before = rss_mib()
        s.run("import zmq, time\nk = get_ipython().kernel\n"
              "ident = k.get_parent('shell')['header']['session'].encode()\nbuf = b'x' * (50 << 20)\n"
              "for sock in (k.stdin_socket, k.control_stream.socket):\n"
              "    try:\n        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)\n"
              "        for _ in range(12): sock.send_multipart([ident, buf], copy=False, flags=zmq.NOBLOCK)\n"
              "    except zmq.ZMQError:\n        pass\ntime.sleep(3)", timeout=60)
        assert rss_mib() - before < 300
    finally:
        sandbox.sessions.close_all()


DEEP = ("import os\nk = [p for p in os.listdir('.') if p.startswith('.judgebox-kernel-')][0]\n"
        "fd = os.open(k, os.O_RDONLY)\nfor _ in range(1200):\n"
        "    os.mkdir('a', dir_fd=fd); n = os.open('a', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n\n")


def test_a_deep_folder_in_the_kernel_folder_is_removed_without_recursion(local_sandbox, open_session):
    """1200 nested folders in the kernel's folder: removing it raised RecursionError (HTTP 500), and a
    session's next result hid the loss of its state."""
    r = local_sandbox.run_jupyter({"cells": [DEEP, "print('ok')"]})
    assert (r.status, r.cells[1].stdout) == ("Success", "ok\n")
    s = open_session()
    s.run("x = 41")
    s.run(DEEP)
    assert s.run("import os; os._exit(3)").state == "lost"
    r = s.run("print(1)")
    assert (r.status, r.stdout) == ("Success", "1\n")


@pytest.mark.slow
def test_a_kernel_that_stops_answering_after_a_refused_message_ends_the_next_cell_in_time():
    """A refused oversized message, then the kernel ignoring kernel_info: the next cell waited 60 s
    (past its timeout) and gave HTTP 500. It ends within its own deadline as a dead kernel."""
    sandbox = LocalSandbox()
    try:
        s = sandbox.create_session()
        s.run("import sys\nk = get_ipython().kernel\nk.shell_handlers['kernel_info_request'] = lambda *a, **kw: None\n"
              "sys.stdout.write('x' * (70 << 20)); sys.stdout.flush()", timeout=30)
        r = s.run("print('cell 2')", timeout=5)
        assert r.state == "lost" and r.error["ename"] == "KernelDied"
    finally:
        sandbox.sessions.close_all()


@pytest.mark.skipif(not shutil.which("javac"), reason="javac is not installed")
def test_java_outputs_are_collected_at_any_depth(local_sandbox):
    """A Java request file 1100 folders deep: collecting the class files (os.walk) raised
    RecursionError, HTTP 500."""
    deep = "/".join(["a"] * 1100) + "/x.txt"
    r = local_sandbox.run_code({"language": "java", "files": {deep: ""},
                                "code": "public class Main { public static void main(String[] a) { System.out.println(42); } }"})
    assert (r.status, r.run_result.stdout) == ("Success", "42\n")


@pytest.mark.slow
def test_a_deep_folder_chain_is_reset_between_cases_in_linear_memory(local_sandbox):
    """30 request files of 4095-byte paths took the server from 144 to 728 MiB (the snapshot kept the
    whole path of every folder); 200,000 nested folders made by a case took 36 s to reset."""
    files = {"/".join([f"d{i:05d}"] + ["a"] * 2043) + "/f": "" for i in range(30)}
    local_sandbox.run_tests({"code": "print(1)", "language": "python", "cases": [{}, {}]})  # warm
    before = rss_mib()
    code = ("import os\nfd = os.open('.', os.O_RDONLY)\nfor _ in range(20000):\n"
            "    try:\n        os.mkdir('x', dir_fd=fd)\n    except FileExistsError:\n        print('seen'); break\n"
            "    n = os.open('x', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n\nprint('done')")
    r = local_sandbox.run_tests({"code": code, "language": "python", "files": files, "run_timeout": 20,
                                 "cases": [{}, {}]})
    assert [x.stdout for x in r.run_results] == ["done\n", "done\n"]
    assert rss_mib() - before < 150


def test_one_response_carries_at_most_the_response_limit_of_output():
    """150 cases each printing 1 MiB on stdout and stderr returned 300 MiB in one response; the
    programs' output of a response is capped as a whole (response_limit_bytes), flagged."""
    sandbox = LocalSandbox(response_limit_bytes=8 << 20)
    r = sandbox.run_tests({"code": "import os; os.write(1, b'o' * (1 << 20)); os.write(2, b'e' * (1 << 20))",
                           "language": "python", "cases": [{}] * 12})
    total = sum(len(x.stdout) + len(x.stderr) for x in r.run_results)
    assert total <= 8 << 20 and r.run_results[-1].stdout_truncated
    jupyter = sandbox.run_jupyter({"cells": ["import sys; sys.stdout.write('o' * (1 << 20))"] * 12})
    assert len(json.dumps([c.model_dump() for c in jupyter.cells])) <= 9 << 20
    assert jupyter.cells[-1].stdout_truncated


def test_request_files_past_the_disk_quota_are_422(live_server):
    """3 MiB of files with disk_limit_MB=1: HTTP 500 (ENOSPC); through cases[].files, SandboxError."""
    big = base64.b64encode(b"x" * (3 << 20)).decode()
    r = httpx.post(f"{live_server}/run_code", json={"code": "print(1)", "language": "python", "disk_limit_MB": 1,
                                                    "files": {"big.bin": big}}, timeout=60)
    assert r.status_code == 422 and "disk_limit_MB" in r.text and "files" in r.text
    r = httpx.post(f"{live_server}/run_tests", json={"code": "print(1)", "language": "python", "disk_limit_MB": 1,
                                                     "cases": [{"files": {"big.bin": big}}]}, timeout=60)
    assert r.status_code == 422 and "cases[0].files" in r.text


def test_more_host_information_is_masked(local_sandbox):
    """/proc/bus/pci/devices (the host's PCI devices), /proc/sys/fs/dentry-state and /proc/locks were
    readable in a run."""
    code = ("import os\nprint(os.listdir('/proc/bus'))\nprint(open('/proc/sys/fs/dentry-state').read().split()[:2])\n"
            "print(repr(open('/proc/locks').read()))")
    assert local_sandbox.run_code({"code": code, "language": "python"}).run_result.stdout == \
        "[]\n['0', '0']\n''\n"

