"""configs/k8s/raycluster.yaml: the sandbox fleet on KubeRay, validated offline.

The RayCluster is checked with ``jsonschema`` against ``configs/k8s/schema/raycluster.schema.json``
(judgebox's own schema of KubeRay's documented fields: unknown fields are errors), each pod template
against Kubernetes' Pod schema (``kubernetes-validate``, strict), and for what judgebox needs of it:
a head without executors, a sandbox group advertising ``judgebox_executor`` (what ``judgebox ray up
--resource`` looks for), full isolation on the sandbox pods, the metrics port on every node.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "configs" / "k8s" / "raycluster.yaml"
SCHEMA = REPO / "configs" / "k8s" / "schema" / "raycluster.schema.json"


def raycluster() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def errors(doc: dict) -> list[str]:
    """Every schema violation of ``doc``, as ``path: message``."""
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    found = jsonschema.Draft202012Validator(schema).iter_errors(doc)
    return sorted(f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in found)


def test_the_raycluster_validates_against_the_kuberay_schema():
    assert errors(raycluster()) == []


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["spec"]["workerGroupSpecs"][0].pop("groupName"),
     "spec.workerGroupSpecs.0: 'groupName' is a required property"),
    (lambda d: d["spec"].pop("headGroupSpec"), "spec: 'headGroupSpec' is a required property"),
    (lambda d: d["spec"]["workerGroupSpecs"][0].update(replica=2),
     "spec.workerGroupSpecs.0: Additional properties are not allowed ('replica' was unexpected)"),
    (lambda d: d["spec"]["headGroupSpec"]["rayStartParams"].update({"num-cpus": 0}),
     "spec.headGroupSpec.rayStartParams.num-cpus: 0 is not of type 'string'"),
])
def test_a_broken_raycluster_fails_naming_the_field(edit, message):
    """Guards the test above: a missing required field, a misspelt one, a non-string ray start
    parameter each fail with a message naming the field."""
    doc = copy.deepcopy(raycluster())
    edit(doc)
    assert message in errors(doc)


def test_every_pod_template_is_a_valid_kubernetes_pod():
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    spec = raycluster()["spec"]
    for template in [spec["headGroupSpec"]["template"], *(g["template"] for g in spec["workerGroupSpecs"])]:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", **template.get("metadata", {})},
               "spec": template["spec"]}
        kubernetes_validate.validate(pod, "1.33", strict=True)


def test_the_head_runs_no_executor_and_the_sandbox_group_advertises_judgebox_executor():
    spec = raycluster()["spec"]
    head = spec["headGroupSpec"]["rayStartParams"]
    assert head["num-cpus"] == "0" and "resources" not in head
    [group] = spec["workerGroupSpecs"]
    resources = json.loads(json.loads(group["rayStartParams"]["resources"]))  # KubeRay passes it quoted to ray start
    assert resources == {"judgebox_executor": 1}
    assert 1 <= group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    assert spec["enableInTreeAutoscaling"] is True  # pending executors become sandbox pods


def test_the_sandbox_pods_get_full_isolation_and_the_head_stays_unprivileged():
    spec = raycluster()["spec"]
    [worker] = spec["workerGroupSpecs"][0]["template"]["spec"]["containers"]
    assert worker["securityContext"] == {"runAsUser": 0, "privileged": True}
    assert {"name": "JUDGEBOX_ISOLATION", "value": "full"} in worker["env"]
    assert spec["workerGroupSpecs"][0]["template"]["spec"]["automountServiceAccountToken"] is False
    [head] = spec["headGroupSpec"]["template"]["spec"]["containers"]
    assert head["securityContext"]["allowPrivilegeEscalation"] is False
    assert head["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert "privileged" not in head["securityContext"]


def test_the_image_is_the_executor_image_with_ray_and_every_node_exports_metrics():
    spec = raycluster()["spec"]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
    dockerfile = (REPO / "docker" / "executor.Dockerfile").read_text()
    assert "ARG EXTRAS" in dockerfile and "wget" in dockerfile  # judgebox[ray]; KubeRay's probes use wget
    for group in groups:
        [container] = group["template"]["spec"]["containers"]
        assert container["image"] == "judgebox-executor:ray"
        port = {p["name"]: p["containerPort"] for p in container["ports"]}["metrics"]
        assert group["rayStartParams"]["metrics-export-port"] == str(port)
    extra = re.search(r"^ray = (\[.*\])$", (REPO / "pyproject.toml").read_text(), re.M)  # the ray extra
    assert extra and json.loads(extra.group(1)) == ["ray[default]>=2.40"] and tuple(map(int, spec["rayVersion"].split("."))) >= (2, 40)
