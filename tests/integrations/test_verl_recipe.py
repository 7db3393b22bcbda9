"""``configs/verl/grpo_code_interpreter.yaml``: composed by Hydra over verl's own ``ppo_trainer`` (as
``python -m verl.trainer.main_ppo --config-path configs/verl --config-name grpo_code_interpreter``
does), every key it sets is one verl declares, verl's ``validate_config`` accepts it, and its reward
section loads judgebox's ``compute_score`` through verl's loader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .verl_config import REPO

verl = pytest.importorskip("verl")

RECIPE = REPO / "configs" / "verl" / "grpo_code_interpreter.yaml"
#: Keys verl reads (``config.get``) without declaring them in ppo_trainer.yaml.
UNDECLARED = ("reward.custom_reward_function.reward_kwargs",)


def leaves(tree: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and path not in UNDECLARED:
            out += leaves(value, path + ".")
        else:
            out.append(path)
    return out


def declared(config, dotted: str) -> bool:
    *parents, key = dotted.split(".")
    for part in parents:
        if part not in config.keys():
            return False
        config = config[part]
    return key in config.keys()  # keys(): a mandatory "???" value counts as declared


def compose(config_dir, name: str, *overrides: str):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return hydra_compose(name, overrides=list(overrides))


def test_recipe_keys_are_verls_and_validate_config_accepts_it(live_server: str) -> None:
    import verl.trainer.config as verl_config
    from verl.trainer.main_ppo import validate_config
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.trainer.ppo.utils import need_critic, need_reference_policy

    base = compose(Path(verl_config.__file__).parent, "ppo_trainer")
    mine = {k: v for k, v in yaml.safe_load(RECIPE.read_text()).items() if k not in ("hydra", "defaults")}
    unknown = [k for k in leaves(mine) if k not in UNDECLARED and not declared(base, k)]
    assert unknown == []

    url = f"reward.custom_reward_function.reward_kwargs.sandbox_fusion_url={live_server}/run_code"
    config = compose(RECIPE.parent, RECIPE.stem, url)
    assert config.algorithm.adv_estimator == "grpo"
    assert config.actor_rollout_ref.rollout.multi_turn.tool_config_path == "configs/verl/tool_config.yaml"
    validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))

    score = get_custom_reward_fn(config)  # verl's loader: pkg://judgebox.integrations.verl.reward + reward_kwargs merged
    result = score(data_source="x", solution_str="```python\nprint(input())\n```",
                   ground_truth={"inputs": ["hi\n"], "outputs": ["hi\n"]}, extra_info={})
    assert result["score"] == 1.0 and result["verdict"] == "accepted"
