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
    compose = yaml.safe_load((REPO / "compose.yaml").read_text())["services"]["executor"]
    pod = _one("Deployment")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == compose["image"] == "judgebox-executor:latest"
    assert set(container["resources"]["limits"]) >= {"cpu", "memory"}
    caps = container["securityContext"]["capabilities"]
    assert caps["drop"] == compose["cap_drop"] == ["ALL"]
    # compose's extra two are used by the entrypoint only (route removal) and dropped before serving
    assert sorted(caps["add"]) == sorted(set(compose["cap_add"]) - {"NET_ADMIN", "SETPCAP"})
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
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
