"""A compose project of compose.yaml driven from Python: the container tests' and benchmark's handle.

Each :class:`Stack` runs under its own compose project name on a free loopback port, so it never
collides with a developer's `docker compose up` or another test server.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import httpx

from tests.conftest import free_port  # noqa: F401  (re-exported for the docker tests and bench)

REPO = Path(__file__).resolve().parents[2]
#: A program that tries to outlive its run (issue 46, findings 1-3): a process it forks takes a
#: session of its own and exits its main thread alone (``SYS_exit``, without the GIL), while a
#: thread of it starts 200 sleeping children and keeps running; the program prints ``detached``
#: and its uid once all that is in place, and ends.
SURVIVOR = ("import ctypes, os, threading, time\n"
            "r, w = os.pipe()\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    def keep():\n"
            "        time.sleep(0.2)\n"
            "        for _ in range(200):\n"
            "            if os.fork() == 0:\n"
            "                time.sleep(600)\n"
            "                os._exit(0)\n"
            "        os.write(w, b'x')\n"
            "        time.sleep(600)\n"
            "    threading.Thread(target=keep).start()\n"
            "    for fd in (0, 1, 2):\n"
            "        os.close(fd)\n"
            "    ctypes.CDLL(None).syscall(60, 0)  # exit(2) of this thread only\n"
            "os.read(r, 1)\n"
            "print('detached', os.getuid(), flush=True)\n")
ENGINE_UNAVAILABLE = 3  # docker-setup.sh's exit code when dockerd cannot be started


def setup_images(timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run scripts/docker-setup.sh (engine, base image, wheelhouse, compose build); never raises on its exit code."""
    return subprocess.run(["bash", str(REPO / "scripts" / "docker-setup.sh")], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def compose_command() -> list[str]:
    """``docker compose`` (v2 plugin) when present, else Debian's ``docker-compose`` (v1)."""
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True) if shutil.which("docker") else None
    if v2 is not None and v2.returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    raise RuntimeError("neither `docker compose` nor `docker-compose` is installed")


@dataclass
class Stack:
    """One compose project of compose.yaml: ``url`` is its gateway on the host's loopback."""

    project: str
    port: int
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def compose(self, *args: str, timeout: float = 300, check: bool = True,
                extra_env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
        """Run a compose subcommand for this project; raises AssertionError with its output on failure."""
        cmd = [*compose_command(), "-f", str(REPO / "compose.yaml"), "-p", self.project, *args]
        proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, **self.env, **(extra_env or {})},
                              capture_output=True, text=True, timeout=timeout)
        if check:
            assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    def containers(self, service: str, all_states: bool = False) -> list[str]:
        """Ids of this project's containers of ``service`` (running only unless ``all_states``)."""
        args = ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=com.docker.compose.project={self.project}",
                "--filter", f"label=com.docker.compose.service={service}"]
        out = subprocess.run(args + (["-a"] if all_states else []), capture_output=True, text=True, check=True)
        return out.stdout.split()

    def inspect(self, container: str) -> dict:
        """``docker inspect`` of one container."""
        out = subprocess.run(["docker", "inspect", container], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)[0]

    def replica_post(self, container: str, path: str, body: dict, timeout: float = 60) -> dict:
        """POST ``body`` to one executor replica from inside its container (its loopback)."""
        script = ("import json,sys,urllib.request as u;"
                  f"r=u.Request('http://127.0.0.1:8080{path}',data=sys.stdin.buffer.read(),"
                  "headers={'content-type':'application/json'});"
                  f"print(u.urlopen(r,timeout={timeout}).read().decode())")
        out = subprocess.run(["docker", "exec", "-i", container, "python3", "-c", script],
                             input=json.dumps(body), capture_output=True, text=True, timeout=timeout + 30)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def wait_healthy(self, replicas: int, timeout: float = 180) -> None:
        """Wait until ``replicas`` executors report healthy and the gateway answers /v1/ping."""
        deadline = time.monotonic() + timeout
        status: list[str] = []
        while time.monotonic() < deadline:
            ids = self.containers("executor")
            status = [self.inspect(c)["State"].get("Health", {}).get("Status", "none") for c in ids]
            if status.count("healthy") >= replicas:
                try:
                    if httpx.get(f"{self.url}/v1/ping", timeout=5).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
            time.sleep(1)
        logs = self.compose("logs", "--tail", "30", check=False)
        raise AssertionError(f"stack not healthy in {timeout} s (executors: {status}):\n{logs.stdout}")

    def bridge_address(self) -> str:
        """The Docker host's address on this project's ``sandbox`` network (its gateway)."""
        out = subprocess.run(["docker", "network", "inspect", f"{self.project}_sandbox"], capture_output=True,
                             text=True, check=True).stdout
        return json.loads(out)[0]["IPAM"]["Config"][0]["Gateway"]

    @contextlib.contextmanager
    def host_listener(self) -> Iterator[tuple[str, int, list]]:
        """A TCP listener of the test's own on the host's bridge address: ``(address, port,
        accepted)``, ``accepted`` filling with the connections it gets while the block runs."""
        address = self.bridge_address()
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, 0))
        listener.listen(8)
        listener.settimeout(0.5)
        accepted: list = []
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    accepted.append(listener.accept()[1])
                except OSError:
                    pass

        thread = threading.Thread(target=accept)
        thread.start()
        try:
            yield address, listener.getsockname()[1], accepted
        finally:
            stop.set()
            thread.join()
            listener.close()

    def leftovers(self) -> dict[str, list[str]]:
        """Containers, networks and volumes still labelled with this project."""
        label = f"label=com.docker.compose.project={self.project}"
        found = {}
        for kind, args in (("containers", ["ps", "-aq"]), ("networks", ["network", "ls", "-q"]),
                           ("volumes", ["volume", "ls", "-q"])):
            out = subprocess.run(["docker", *args, "--filter", label], capture_output=True, text=True, check=True)
            found[kind] = out.stdout.split()
        return found


