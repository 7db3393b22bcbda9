"""verl's own trainer config (``verl/trainer/config/ppo_trainer.yaml``), composed by Hydra with the
command-line overrides a user writes, then migrated by verl as ``main_ppo`` does."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def ppo_config(*overrides: str):
    """The composed ``ppo_trainer`` config with ``overrides`` (``key=value`` strings)."""
    import verl.trainer.config as verl_config
    from hydra import compose, initialize_config_dir
    from verl.experimental.reward_loop import migrate_legacy_reward_impl

    with initialize_config_dir(config_dir=str(Path(verl_config.__file__).parent), version_base=None):
        return migrate_legacy_reward_impl(compose("ppo_trainer", overrides=list(overrides)))
