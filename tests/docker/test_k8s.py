"""configs/k8s: the executor's Kubernetes manifests are valid and say what compose.yaml says.

Validated offline and strictly (unknown fields are errors) against the Kubernetes JSON schemas that the
``kubernetes-validate`` package ships, for the oldest and newest API versions we support.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate")

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "configs" / "k8s"
VERSIONS = ("1.27", "1.33")


def _documents() -> list[dict]:
    """The built-in Kubernetes resources (the KubeRay RayCluster is tested in test_k8s_raycluster.py)."""
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d and not d["apiVersion"].startswith("ray.io/")]
    return docs


def _one(kind: str) -> dict:
    found = [d for d in _documents() if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind} in configs/k8s, found {len(found)}"
    return found[0]


def test_manifests_are_the_four_resources_of_the_executor():
    kinds = sorted(d["kind"] for d in _documents())
    assert kinds == ["Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "Service"]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_validates_strictly_against_the_kubernetes_schema(version):
    for doc in _documents():
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_rejects_a_misspelt_field():
    """Guards the test above: a typo in a container spec must fail strict validation."""
    bad = copy.deepcopy(_one("Deployment"))
    bad["spec"]["template"]["spec"]["containers"][0]["resource"] = {"limits": {"memory": "1Gi"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, VERSIONS[-1], strict=True)


def test_deployment_limits_resources_and_runs_the_compose_image_with_the_same_capabilities():
    """The pod runs what compose runs: full isolation with the same capabilities, no seccomp or
    AppArmor profile of the runtime (judgebox applies its own per program), a read-only root, the uid
    pool's locks shared by the node's executor pods; only the default routes stay (pods need them)."""
    compose = yaml.safe_load((REPO / "compose.yaml").read_text())["services"]["executor"]
    template = _one("Deployment")["spec"]["template"]
    pod = template["spec"]
    (container,) = pod["containers"]
    assert container["image"] == compose["image"] == "judgebox-executor:latest"
    assert set(container["resources"]["limits"]) >= {"cpu", "memory"}
    security = container["securityContext"]
    assert security["capabilities"]["drop"] == compose["cap_drop"] == ["ALL"]
    assert sorted(security["capabilities"]["add"]) == sorted(compose["cap_add"])
    assert security["allowPrivilegeEscalation"] is False and "no-new-privileges:true" in compose["security_opt"]
    assert security["privileged"] is False and "privileged" not in compose
    assert security["seccompProfile"] == {"type": "Unconfined"} and "seccomp=unconfined" in compose["security_opt"]
    assert template["metadata"]["annotations"]["container.apparmor.security.beta.kubernetes.io/executor"] == \
        "unconfined" and "apparmor=unconfined" in compose["security_opt"]
    assert security["readOnlyRootFilesystem"] is True and compose["read_only"] is True
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["JUDGEBOX_ISOLATION"] == "full" == compose["environment"]["JUDGEBOX_ISOLATION"].split(":-")[1].rstrip("}")
    assert env["JUDGEBOX_KEEP_DEFAULT_ROUTES"] == "1"
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    tmpfs = {entry.split(":")[0] for entry in compose["tmpfs"]}
    assert tmpfs <= set(mounts), "every folder compose writes on a tmpfs is writable in the pod"
    assert volumes[mounts[env["JUDGEBOX_UID_LOCK_DIR"]]]["hostPath"]["path"] == env["JUDGEBOX_UID_LOCK_DIR"] == \
        compose["environment"]["JUDGEBOX_UID_LOCK_DIR"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/v1/ping"
    assert pod["automountServiceAccountToken"] is False


def test_service_hpa_and_networkpolicy_target_the_executor_pods():
    deployment = _one("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    selected = lambda selector: all(labels.get(k) == v for k, v in selector.items())  # noqa: E731
    assert selected(_one("Service")["spec"]["selector"])
    assert _one("Service")["spec"]["ports"][0]["port"] == 8080
    target = _one("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    policy = _one("NetworkPolicy")["spec"]
    assert selected(policy["podSelector"]["matchLabels"])
    assert "Egress" in policy["policyTypes"] and policy["egress"] == [], "egress must be denied"
