"""The PID namespace's init: the native one is built once, checked before use, serves every run
as pid 1 with ``SIGCHLD`` ignored, and the inits a dead server left are killed at the next start.

Every process a test signals is one it started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from judgebox.sandbox.isolation import pidns

needs_cc = pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
SIGCHLD_BIT = 1 << 16


@needs_cc
def test_native_init_is_built_once_and_refused_when_it_does_not_wait(tmp_path):
    folder = str(tmp_path / "init")
    argv = pidns.native_init(folder)
    assert argv is not None and len(argv) == 1 and os.path.dirname(argv[0]) == folder
    built = os.stat(argv[0])
    assert pidns.native_init(folder) == argv  # the same file, not built again
    again = os.stat(argv[0])
    assert (again.st_ino, again.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)
    assert os.listdir(folder) == [os.path.basename(argv[0])]  # no partial file left
    os.chmod(argv[0], 0o777)  # writable by others: never run as root
    assert pidns.native_init(folder) is None
    os.chmod(argv[0], 0o755)
    assert pidns.native_init(folder) == argv
    # a file in its place that exits at once is not used: env+sleep serves instead
    with open(argv[0], "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    assert pidns.native_init(folder) is None


@needs_cc
def test_a_runs_pid_1_is_the_native_init_and_ignores_sigchld(local_sandbox):
    if local_sandbox.executor.isolation.view is None:
        pytest.skip("full isolation only (a PID namespace per run)")
    code = ("fields = dict(l.split(':', 1) for l in open('/proc/1/status'))\n"
            "print(fields['Name'].strip(), int(fields['SigIgn'], 16) & (1 << 16))")
    r = local_sandbox.run_code({"code": code, "language": "python"})
    name, ignored = r.run_result.stdout.split()
    assert name.startswith("init-") and int(ignored) == SIGCHLD_BIT, r


@needs_cc
def test_inits_left_by_a_dead_server_are_killed_at_start(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names a server that died
    env = {pidns._TAG[:-1]: str(gone.pid)}
    native = pidns.native_init(str(tmp_path / "init"))
    assert native is not None
    inits = [subprocess.Popen(argv, env=env, start_new_session=True) for argv in (native, pidns.INIT)]
    try:
        for p in inits:  # Popen returns inside exec, before the kernel records the new environment
            while pidns._TAG.encode() not in open(f"/proc/{p.pid}/environ", "rb").read():
                time.sleep(0.001)
        killed = pidns.remove_stale()
        assert [p.wait(timeout=10) for p in inits] == [-9, -9], killed
    finally:
        for p in inits:
            p.kill()
            p.wait()
