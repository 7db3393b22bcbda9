"""``configs/verl/grpo_code_interpreter.yaml`` and its Ray variant ``grpo_code_interpreter_ray.yaml``:
each composed by Hydra over verl's own ``ppo_trainer`` (as ``python -m verl.trainer.main_ppo
--config-path configs/verl --config-name <recipe>`` does), every key it sets is one verl declares,
verl's ``validate_config`` accepts it, and its reward section loads judgebox's ``compute_score``
through verl's loader (scoring a completion through ``judgebox serve``; the Ray variant's
``ray://`` scoring runs on a real cluster in tests/sandbox/test_ray_verl.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

verl = pytest.importorskip("verl")
from omegaconf import OmegaConf  # noqa: E402  (verl's dependency)

from .verl_config import REPO  # noqa: E402

RECIPE = REPO / "configs" / "verl" / "grpo_code_interpreter.yaml"
RAY_RECIPE = REPO / "configs" / "verl" / "grpo_code_interpreter_ray.yaml"
#: What both recipes share (their ``defaults`` entry after ``ppo_trainer``).
COMMON = REPO / "configs" / "verl" / "grpo_code_interpreter_common.yaml"
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


def check_recipe(recipe: Path, *overrides: str):
    """The recipe composed over verl's ``ppo_trainer`` with ``overrides``, after asserting that every
    key its file sets is one verl declares and that verl's ``validate_config`` accepts it."""
    import verl.trainer.config as verl_config
    from verl.trainer.main_ppo import validate_config
    from verl.trainer.ppo.utils import need_critic, need_reference_policy

    base = compose(Path(verl_config.__file__).parent, "ppo_trainer")
    assert yaml.safe_load(recipe.read_text())["defaults"] == ["ppo_trainer", COMMON.stem, "_self_"]
    for path in (recipe, COMMON):
        mine = {k: v for k, v in yaml.safe_load(path.read_text()).items() if k not in ("hydra", "defaults")}
        unknown = [k for k in leaves(mine) if k not in UNDECLARED and not declared(base, k)]
        assert unknown == [], path.name
    config = compose(recipe.parent, recipe.stem, *overrides)
    assert config.algorithm.adv_estimator == "grpo"
    validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    return config


def test_recipe_keys_are_verls_and_validate_config_accepts_it(live_server: str) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn

    url = f"reward.custom_reward_function.reward_kwargs.sandbox_fusion_url={live_server}/run_code"
    config = check_recipe(RECIPE, url)
    assert config.actor_rollout_ref.rollout.multi_turn.tool_config_path == "configs/verl/tool_config.yaml"

    score = get_custom_reward_fn(config)  # verl's loader: pkg://judgebox.integrations.verl.reward + reward_kwargs merged
    result = score(data_source="x", solution_str="```python\nprint(input())\n```",
                   ground_truth={"inputs": ["hi\n"], "outputs": ["hi\n"]}, extra_info={})
    assert result["score"] == 1.0 and result["verdict"] == "accepted"


def test_ray_recipe_is_the_http_recipe_scoring_and_running_tools_through_ray() -> None:
    from verl.tools.tool_registry import initialize_tools_from_config
    from verl.trainer.ppo.reward import get_custom_reward_fn

    config, http = check_recipe(RAY_RECIPE), check_recipe(RECIPE)
    assert config.reward.custom_reward_function.reward_kwargs.sandbox_fusion_url == "ray://"
    assert config.actor_rollout_ref.rollout.multi_turn.tool_config_path == "configs/verl/tool_config_ray.yaml"
    assert config.trainer.experiment_name == "qwen3-4b-mbpp-code-interpreter-ray"
    for section in ("algorithm", "data.train_files", "data.train_batch_size", "critic", "trainer.n_gpus_per_node", "actor_rollout_ref.actor",
                    "actor_rollout_ref.rollout.agent", "actor_rollout_ref.rollout.n",
                    "reward.custom_reward_function.path"):  # the rest is the HTTP recipe's
        assert OmegaConf.select(config, section) == OmegaConf.select(http, section), section
    assert config.reward.custom_reward_function.reward_kwargs.score_mode == "binary"
    assert get_custom_reward_fn(config) is not None  # verl's loader finds judgebox's compute_score

    [tool] = initialize_tools_from_config(str(REPO / config.actor_rollout_ref.rollout.multi_turn.tool_config_path))
    try:  # verl's own tool loader builds the adapter around a code_interpreter bound to ray://
        assert tool.name == "code_interpreter" and tool.inner.settings.sandbox_url == "ray://"
        assert type(tool.inner.client._http).__name__ == "RaySandbox"
    finally:
        tool.inner.close()
