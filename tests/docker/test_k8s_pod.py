"""configs/k8s/executor-deployment.yaml on the real image: the executor container started with what the
Deployment gives it (its capabilities, profiles, environment, read-only root with the manifest's
writable folders, no init process) serves under full isolation, keeps the default route a pod needs,
and runs programs that have a network namespace of their own. The Kubernetes objects themselves are
validated offline in test_k8s.py; no cluster runs here, so Docker stands in for the kubelet."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest
import yaml

from tests.docker.stack import free_port

pytestmark = [pytest.mark.docker, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]


def deployment_container() -> tuple[dict, dict]:
    """``(pod template, its one container)`` of the Deployment."""
    docs = yaml.safe_load_all((REPO / "configs" / "k8s" / "executor-deployment.yaml").read_text())
    (template,) = [d["spec"]["template"] for d in docs if d and d.get("kind") == "Deployment"]
    (container,) = template["spec"]["containers"]
    return template, container


def docker_flags(template: dict, container: dict, uid_locks: Path) -> list[str]:
    """``docker run`` flags for what the kubelet would give the container."""
    security = container["securityContext"]
    flags = ["--cap-drop", "ALL", *(f"--cap-add={cap}" for cap in security["capabilities"]["add"])]
    if security["allowPrivilegeEscalation"] is False:
        flags += ["--security-opt", "no-new-privileges:true"]
    if security["seccompProfile"]["type"] == "Unconfined":
        flags += ["--security-opt", "seccomp=unconfined"]
    if template["metadata"]["annotations"].get(f"container.apparmor.security.beta.kubernetes.io/{container['name']}") \
            == "unconfined":
        flags += ["--security-opt", "apparmor=unconfined"]
    if security.get("readOnlyRootFilesystem"):
        flags.append("--read-only")
    volumes = {v["name"]: v for v in template["spec"]["volumes"]}
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "hostPath" in volume:
            flags += ["-v", f"{uid_locks}:{mount['mountPath']}"]
        elif volume["emptyDir"].get("medium") == "Memory":
            flags += ["--tmpfs", f"{mount['mountPath']}:size={volume['emptyDir']['sizeLimit'].replace('Mi', 'm')}"]
        else:  # an emptyDir on the node's disk
            flags += ["-v", mount["mountPath"]]
    for env in container["env"]:
        if "value" in env:
            flags += ["-e", f"{env['name']}={env['value']}"]
    limits = container["resources"]["limits"]
    return flags + ["--memory", limits["memory"].replace("Gi", "g"), "--cpus", limits["cpu"]]


@pytest.fixture(scope="module")
def pod(docker_images, tmp_path_factory) -> Iterator[tuple[str, str]]:
    """``(container name, its URL)``: the executor image run as the Deployment's pod."""
    template, container = deployment_container()
    name, port = f"judgebox-k8s-pod-{time.time_ns()}", free_port()
    uid_locks = tmp_path_factory.mktemp("uids")
    subprocess.run(["docker", "run", "-d", "--rm", "--name", name, "-p", f"127.0.0.1:{port}:8080",
                    *docker_flags(template, container, uid_locks), container["image"]],
                   check=True, capture_output=True, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/v1/ping", timeout=2).json() == "pong":
                    break
            except (httpx.HTTPError, ValueError):
                pass
            logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
            assert time.monotonic() < deadline and logs.returncode == 0, \
                f"the pod's executor did not start:\n{logs.stdout}{logs.stderr}"
            time.sleep(0.5)
        yield name, url
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


def test_the_deployments_pod_serves_under_full_isolation(pod):
    name, url = pod
    isolation = httpx.get(f"{url}/health", timeout=10).json()["isolation"]
    assert isolation["isolation"] == "full"
    assert (isolation["pid_namespace"], isolation["network_namespace"], isolation["seccomp"]) == (True, True, True)
    code = ("import socket, errno\n"
            "try:\n"
            "    socket.create_connection(('1.1.1.1', 80), timeout=5)\n"
            "    print('connected')\n"
            "except OSError as e:\n"
            "    print(errno.errorcode.get(e.errno, e.errno))\n"
            "import os\n"
            "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n")
    out = httpx.post(f"{url}/run_code", json={"code": code, "language": "python"}, timeout=60).json()
    assert out["status"] == "Success", out
    error, pids = out["run_result"]["stdout"].splitlines()
    assert error == "ENETUNREACH", "a run's network namespace has a loopback and nothing else"
    assert pids == "[1, 2]", "a run sees its init and itself: a PID namespace of its own"


def test_the_pod_keeps_its_default_route(pod):
    """Pods reach each other through the default route: the entrypoint keeps it under
    JUDGEBOX_KEEP_DEFAULT_ROUTES=1 (compose deletes it; the NetworkPolicy denies egress here)."""
    name, _ = pod
    routes = subprocess.run(["docker", "exec", name, "ip", "-4", "route", "show", "default"],
                            capture_output=True, text=True, check=True).stdout
    assert routes.startswith("default via ")
    logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True, check=True)
    assert "default routes kept (JUDGEBOX_KEEP_DEFAULT_ROUTES=1" in logs.stderr + logs.stdout
