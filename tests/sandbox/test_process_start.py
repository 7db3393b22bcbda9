"""Starting a program whose file is briefly busy (``ETXTBSY``): a just-written binary whose write
descriptor another thread's fork still holds. The start is retried, never reported as an
infrastructure error (it was, for Rust rows of MultiPL-E under concurrency); a file that stays busy
is still a spawn error."""

from __future__ import annotations

import os
import threading

from sandbox.process import RunLimits, run_process


def busy_program(tmp_path):
    path = tmp_path / "main"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o755)
    os.write(fd, b"#!/bin/sh\necho started\n")
    return str(path), fd


def start(path: str, tmp_path):
    return run_process([path], cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"}, limits=RunLimits.for_timeout(5))


def test_a_program_busy_for_a_moment_is_started(tmp_path):
    path, fd = busy_program(tmp_path)
    closer = threading.Timer(0.02, os.close, args=(fd,))
    closer.start()
    res = start(path, tmp_path)
    closer.join()
    assert (res.spawn_error, res.return_code, res.stdout) == (None, 0, b"started\n")


def test_a_program_that_stays_busy_is_a_spawn_error(tmp_path):
    path, fd = busy_program(tmp_path)
    try:
        res = start(path, tmp_path)
    finally:
        os.close(fd)
    assert res.spawn_error is not None and "Text file busy" in res.spawn_error
