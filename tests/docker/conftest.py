"""Fixtures for the container tests: the images (built by scripts/docker-setup.sh) and a compose stack.

Tests that use these fixtures skip only when the Docker engine cannot be started on this machine
(docker-setup.sh exit code 3); any other setup failure fails them.
"""

from __future__ import annotations

import os
import time
from typing import Iterator

import pytest

from tests.docker.stack import ENGINE_UNAVAILABLE, Stack, free_port, setup_images


@pytest.fixture(scope="session")
def docker_images() -> None:
    """Start the engine and build the images once per test session (scripts/docker-setup.sh)."""
    started = time.monotonic()
    proc = setup_images()
    if proc.returncode == ENGINE_UNAVAILABLE:
        pytest.skip(f"the Docker engine cannot be started here:\n{proc.stderr[-2000:]}")
    assert proc.returncode == 0, f"scripts/docker-setup.sh failed:\n{proc.stderr[-4000:]}"
    print(f"\n[docker] images ready in {time.monotonic() - started:.0f} s")


@pytest.fixture(scope="module")
def stack(docker_images) -> Iterator[Stack]:
    """A fresh compose project (2 executors + gateway), brought down with its volumes afterwards."""
    s = Stack(project=f"judgebox-test-{os.getpid()}", port=free_port(),
              env={"JUDGEBOX_PORT": "", "JUDGEBOX_REPLICAS": "2"})
    s.env["JUDGEBOX_PORT"] = str(s.port)
    s.compose("down", "-v", "--remove-orphans", "-t", "1")
    try:
        started = time.monotonic()
        s.compose("up", "-d", "--no-build")
        s.wait_healthy(replicas=2)
        print(f"\n[docker] stack up and healthy in {time.monotonic() - started:.0f} s")
        yield s
    finally:
        s.compose("down", "-v", "--remove-orphans", "-t", "1", check=False)
