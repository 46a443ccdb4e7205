"""Content keys survive a new option: a config enters a key as its non-default fields plus the key schema
(tasks/store.py::config_key), so a field added with a default that keeps the old behaviour changes no stored key."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from embodied_safety.shield.rl.critic import CriticConfig
from embodied_safety.shield.rl.ppo import PPOConfig
from tasks.store import KEY_SCHEMA, config_key, content_key

#: the defaults of every config class that enters a stored key, with the schema they were recorded under
SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "key_defaults.json"
KEYED = (PPOConfig, CriticConfig)


def _defaults(cls: type) -> dict[str, str]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = repr(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = repr(f.default_factory())
    return out


def _with_new_field(cls: type, name: str, default: object) -> type:
    """``cls`` as it would read with one more field (same class name, every existing field as it is)."""
    fields = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, [*fields, (name, type(default), dataclasses.field(default=default))],
                                      frozen=True)


def test_adding_a_field_at_its_default_leaves_the_key_unchanged():
    critic = CriticConfig(hidden=(64, 64), target="best")
    ppo = PPOConfig(method="gated", margin="rubric", kl_start=1.0, total_steps=24576, critic=critic, seed=3)
    key = content_key({"ppo": config_key(ppo), "critic": config_key(critic)})

    NewPPO = _with_new_field(PPOConfig, "anchor_schedule", "linear")
    NewCritic = _with_new_field(CriticConfig, "spectral_norm", False)
    critic2 = NewCritic(hidden=(64, 64), target="best")
    same = NewPPO(method="gated", margin="rubric", kl_start=1.0, total_steps=24576, critic=critic2, seed=3)
    assert content_key({"ppo": config_key(same), "critic": config_key(critic2)}) == key
    # setting the new option is a new key; so is any other change, nested ones included
    assert config_key(NewPPO(**{**dataclasses.asdict(same), "critic": critic2, "anchor_schedule": "cosine"})) \
        != config_key(same)
    assert config_key(dataclasses.replace(ppo, kl_floor=0.25)) != config_key(ppo)
    assert config_key(dataclasses.replace(ppo, critic=dataclasses.replace(critic, tau=0.5))) != config_key(ppo)


def test_a_value_equal_to_the_default_is_the_same_key_as_leaving_it_out():
    assert config_key(PPOConfig(kl_floor=0.0)) == config_key(PPOConfig())
    assert config_key(PPOConfig())["set"] == {}


def test_keyed_defaults_change_only_with_a_schema_bump():
    """A changed default changes what an absent field means: the recorded defaults hold until KEY_SCHEMA is bumped
    (then rewrite the snapshot). New fields may be added without a bump."""
    recorded = json.loads(SNAPSHOT.read_text())
    if recorded["schema"] != KEY_SCHEMA:
        return  # bumped: every key changed on purpose; the snapshot is rewritten with the bump
    for cls in KEYED:
        now = _defaults(cls)
        changed = {k: (v, now.get(k)) for k, v in recorded["defaults"][cls.__name__].items() if now.get(k) != v}
        assert not changed, f"{cls.__name__} defaults changed {changed}: bump tasks.store.KEY_SCHEMA and rewrite {SNAPSHOT}"
