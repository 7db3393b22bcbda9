"""Starting a program. A file that is briefly busy (``ETXTBSY``: a just-written binary whose write
descriptor another thread's fork still holds) is retried, never reported as an infrastructure error
(it was, for Rust rows of MultiPL-E under concurrency); a file that stays busy is still a spawn
error. A program file in the working folder that cannot be executed exits 126/127, as in a shell."""

from __future__ import annotations

import os
import threading

import pytest

from judgebox.sandbox.limits import RunLimits
from judgebox.sandbox.process import run_process


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


# ---------------------------------------------------------------- a program file the run spoiled (audit finding 5 b)
def run_in(tmp_path, argv):
    return run_process(argv, cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"}, limits=RunLimits.for_timeout(5))


@pytest.mark.parametrize("name, mode, content, status, reason", [
    ("main", 0o644, b"\x7fELF", 126, "Permission denied"),  # chmod -x
    ("main", 0o755, b"not a program", 126, "Exec format error"),  # rewritten
    ("gone", None, None, 127, "No such file or directory"),  # removed
])
def test_a_program_file_in_the_working_folder_that_cannot_run_exits_like_a_shell_says(tmp_path, name, mode, content,
                                                                                      status, reason):
    """The run's own program file (``./main`` in the working folder) that cannot be executed is
    the run's failure: return code 126 (not executable) or 127 (missing), the reason on stderr,
    no ``spawn_error`` (which the executor reports as ``SandboxError``, reward masked)."""
    if content is not None:
        (tmp_path / name).write_bytes(content)
        (tmp_path / name).chmod(mode)
    res = run_in(tmp_path, [f"./{name}"])
    assert (res.spawn_error, res.return_code, res.timed_out) == (None, status, False)
    assert res.stderr.decode().startswith(f"./{name}: {reason} (the program file in the working folder")


def test_a_missing_program_outside_the_working_folder_stays_a_spawn_error(tmp_path):
    """An interpreter or toolchain outside the working folder that cannot be started is the
    sandbox's failure (``spawn_error``), even under a name that looks like a path into it."""
    (tmp_path / "sub").mkdir()
    for argv in (["/nonexistent/python3"], ["no-such-interpreter-here"], ["../../nonexistent/main"]):
        res = run_in(tmp_path / "sub", argv)
        assert res.return_code is None and res.spawn_error and "No such file or directory" in res.spawn_error, argv
