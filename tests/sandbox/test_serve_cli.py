"""``judgebox serve``'s own flags: a bad one ends the command at once with one line naming it."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("port", ["99999", "-5", "http"])
def test_a_port_out_of_range_ends_serve_at_once_naming_it(port):
    """``--port 99999`` started a server that hung after uvicorn's "Servname not supported"."""
    proc = subprocess.run([sys.executable, "-m", "judgebox.cli", "serve", f"--port={port}"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    expected = f"'{port}'" if port == "http" else port
    assert lines == [f"judgebox serve: error: argument --port: {expected} is not a TCP port number (0-65535) "
                     "(see judgebox serve --help)"]
