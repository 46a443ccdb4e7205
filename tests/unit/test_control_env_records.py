"""One record per control env (config/control_envs.py): its names, its Gymnasium id, its per-env defaults."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest

import embodied_safety.envs.control  # noqa: F401  (registers the ids)
from embodied_safety.config import control_envs
from embodied_safety.config.bc_policy import BCPolicyConfig
from embodied_safety.config.control_envs import CONTROL_ENVS, ENV_KEYS, ControlEnv, control_env, display_name
from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.config.shield_demos import ShieldDemosConfig
from embodied_safety.config.shield_ppo import ShieldPPOConfig
from embodied_safety.config.shield_rollouts import ShieldRolloutsConfig
from embodied_safety.shield.envs import env_name, gym_id, rubric_env
from embodied_safety.shield.rl.runs import max_steps

CONFIGS = {"shield_demos": ShieldDemosConfig, "shield_rollouts": ShieldRolloutsConfig, "bc_policy": BCPolicyConfig,
           "rubric_label": RubricLabelConfig, "shield_ppo": ShieldPPOConfig}


@pytest.mark.parametrize("env", CONTROL_ENVS, ids=lambda e: e.key)
def test_every_spelling_is_one_env(env: ControlEnv) -> None:
    for spelling in env.spellings:
        assert control_env(spelling) is env
        assert (env_name(spelling), rubric_env(spelling), gym_id(spelling)) == (env.name, env.rubric_env, env.gym_id)
    assert display_name(env.key) == env.display and max_steps(env.key) == env.max_steps


@pytest.mark.parametrize("env", CONTROL_ENVS, ids=lambda e: e.key)
def test_the_record_registers_the_env(env: ControlEnv) -> None:
    spec = gym.spec(env.gym_id)
    assert spec.entry_point == env.entry_point
    assert gym.spec(env.gym_id.replace("-v0", "-Color-v0")).entry_point == env.entry_point


def test_unknown_names_pass_through():
    assert control_env("embodied_safety/DubinsVL-Color-v0") is None
    assert display_name("cartpole") == "cartpole" and gym_id("Other") == "embodied_safety/Other-v0"


def test_every_per_env_field_takes_its_defaults_from_the_records():
    fields = {(section, f.name) for section, cls in CONFIGS.items() for f in dataclasses.fields(cls)
              if any(f"{section}.{f.name}" in e.defaults for e in CONTROL_ENVS)}
    assert len(fields) == 12
    for section, name in fields:
        value = getattr(CONFIGS[section](), name)
        assert value == {e.key: e.defaults[f"{section}.{name}"] for e in CONTROL_ENVS}, (section, name)
    for section, cls in CONFIGS.items():
        assert cls().envs == ENV_KEYS, section


def test_a_new_record_is_a_new_env_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    dubins = CONTROL_ENVS[0]
    extra = dataclasses.replace(dubins, key="dubins2", name="DubinsTwo", display="Dubins-2", rubric_env="dubins_vl")
    monkeypatch.setattr(control_envs, "CONTROL_ENVS", (*CONTROL_ENVS, extra))
    assert BCPolicyConfig().epochs["dubins2"] == dubins.defaults["bc_policy.epochs"]
    assert display_name("DubinsTwo") == "Dubins-2" and gym_id("dubins2") == "embodied_safety/DubinsTwo-v0"
