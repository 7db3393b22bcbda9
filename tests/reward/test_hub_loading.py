"""A manifest with ``hub`` reads the official hub dataset when no local file is found: the rows go
through the same loader as a local file's. Here no hub is reachable, so the real ``datasets`` library
loads a folder of our own rows (the call that reads a hub id reads a local folder the same way), and
an unreachable hub is an error naming the local files, the hub dataset and why."""

import json
import subprocess
import sys

import pytest
import yaml

from judgebox.reward.loaders import get_manifest, load_dataset
from tests.fixtures.rows_bigcodebench import ROWS
from tests.fixtures.rows_multilang import CRUXEVAL


def manifests_with_hub(tmp_path, monkeypatch, hub: dict) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    for name in ("cruxeval-output", "bigcodebench-complete"):
        data = get_manifest(name).model_dump(exclude_none=True)
        (folder / f"{name}.yaml").write_text(yaml.safe_dump({**data, "hub": hub.get(name, hub)}))
    monkeypatch.setenv("JUDGEBOX_DATASETS_DIR", str(folder))
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.cache/... copies either
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing here reaches the hub: fail fast, never hang


def test_rows_come_from_the_hub_dataset_when_no_local_file_is_found(tmp_path, monkeypatch):
    if not hasattr(pytest.importorskip("datasets"), "load_dataset"):  # the repository's datasets/ folder
        pytest.skip("the datasets library is not installed")
    for name, rows in (("crux", CRUXEVAL), ("bcb", ROWS)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifests_with_hub(tmp_path, monkeypatch, {"cruxeval-output": {"path": str(tmp_path / "crux"), "split": "train"},
                                               "bigcodebench-complete": {"path": str(tmp_path / "bcb"), "split": "train"}})
    crux, manifest = load_dataset("cruxeval-output")
    assert manifest.locate() is None
    assert [(p.task_id, p.gold) for p in crux] == [(r["id"], r["output"]) for r in CRUXEVAL]
    bcb, _ = load_dataset("bigcodebench-complete")
    assert [p.spec.prefix for p in bcb] == [r["code_prompt"] + "\n    pass\n" + r["complete_prompt"] for r in ROWS]
    assert bcb[0].spec.run_timeout == 240 and bcb[0].spec.libraries == ["pandas"]


def test_an_unreachable_hub_is_an_error_naming_the_files_the_hub_dataset_and_why(tmp_path, monkeypatch):
    """In a process of its own: the hub library reads HF_HUB_OFFLINE when it is imported (offline, it
    fails at once instead of waiting for a network that is not there)."""
    manifests_with_hub(tmp_path, monkeypatch, {"path": "cruxeval-org/cruxeval", "split": "test"})
    proc = subprocess.run([sys.executable, "-c", "from judgebox.reward.loaders import load_dataset\n"
                           "load_dataset('cruxeval-output')"], capture_output=True, text=True, timeout=300)
    message = proc.stderr.strip().splitlines()[-1]
    assert message.startswith("FileNotFoundError: dataset 'cruxeval-output' not found locally (looked for "
                              "cruxeval.jsonl, cruxeval/cruxeval.jsonl), and the hub dataset cruxeval-org/cruxeval "
                              "(split test) "), message
    assert ("could not be loaded (ConnectionError: Couldn't reach 'cruxeval-org/cruxeval' on the Hub "
            "(OfflineModeIsEnabled))" in message) or ('needs the datasets library (pip install "judgebox[hub]")' in message)
    assert message.endswith(get_manifest("cruxeval-output").how_to_get)  # $JUDGEBOX_DATA_DIR spelt out


def test_every_hub_source_of_the_shipped_manifests_is_well_formed():
    from judgebox.reward.loaders import list_manifests

    hubs = {m.name: m.hub for m in list_manifests() if m.hub}
    assert {"bigcodebench-complete", "bigcodebench-instruct", "cruxeval-input", "cruxeval-output",
            "multipl-e-rb", "humaneval-x-cpp", "mbxp-perl"} <= set(hubs)
    assert str(hubs["multipl-e-rb"]) == "nuprl/MultiPL-E/humaneval-rb (split test)"
    assert str(hubs["bigcodebench-instruct"]) == "bigcode/bigcodebench (split v0.1.4)"
