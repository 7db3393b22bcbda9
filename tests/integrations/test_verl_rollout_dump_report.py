"""``judgebox report`` on verl's own rollout dump: verl 0.9.1's ``RayPPOTrainer._write_generations``
(what ``trainer.rollout_data_dir`` writes) with the reward extras of judgebox's ``compute_score``. The
page groups samples by prompt, takes each verdict from the extras (an infrastructure failure labelled
apart from a wrong answer) and shows the decoded response text (verl's dump has no response_mask)."""

from __future__ import annotations

import json

import pytest

from judgebox.cli import main
from judgebox.report.build import overview
from judgebox.report.records import read_records
from tests.report.browser import go, opened

pytest.importorskip("verl")
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

PROMPT = "Read t pairs a b; print a // b, or -1 when b is 0."
TESTS = json.dumps({"inputs": ["2\n7 2\n5 0\n"], "outputs": ["3\n-1\n"]})
RIGHT = "```python\nt=int(input())\nfor _ in range(t):\n    a,b=map(int,input().split())\n    print(a//b if b else -1)\n```"
WRONG = RIGHT.replace("else -1", "else 0")


def test_verls_rollout_dump_of_judgebox_scores_reads_as_a_report(tmp_path):
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    from judgebox.integrations.verl import compute_score

    outputs = [RIGHT, WRONG, RIGHT]
    results = [compute_score("apps", o, TESTS) for o in outputs[:2]]
    results.append(compute_score("apps", outputs[2], "not json"))  # unusable tests: test_data_error
    extras = {k: [r[k] for r in results] for k in results[0] if k != "score"}
    RayPPOTrainer._write_generations([PROMPT] * 3, outputs, [TESTS] * 3, [r["score"] for r in results], extras,
                                     str(tmp_path / "dump"), 7)
    dump = tmp_path / "dump" / "7.jsonl"
    records = read_records(dump)
    assert records.kind == "verl" and len(records.rows) == 3
    view = overview(records, None)
    assert view["verdicts"] == {"accepted": 1, "wrong_answer": 1, "test_data_error": 1}
    assert view["unscorable"] == {"test_data_error": 1} and view["steps"] == {7: 3}

    assert main(["report", str(dump), "--out", str(tmp_path / "verl.html")]) == 0
    with opened(tmp_path / "verl.html") as page:
        assert page.inner_text("[data-card=problems] .v") == "1"  # one prompt, three samples
        go(page, "p/0", "#problem .sample")
        labels = page.locator("#problem .sample .infra-label").all_inner_texts()
        assert labels == ["test data error: the dataset's tests are unusable, not the solution's fault"]
        page.click("#problem .sample[data-sample='1'] a.open-trajectory")
        page.wait_for_selector("#trajectory pre.output")
        assert page.inner_text("#trajectory pre.output") == WRONG
        assert page.locator("#trajectory .tokens").count() == 0  # no token ids in verl's dump
