"""The constrained update's multiplier (:class:`Lagrange`) and its bound."""

from __future__ import annotations

import dataclasses

import numpy as np

from embodied_safety.shield.rl.ppo import Lagrange, PPOConfig


def test_the_multiplier_ascends_on_excess_cost_and_stays_in_its_bounds():
    lam = Lagrange(0.0, lr=0.5, cost_limit=3.0)
    assert lam.update(1.0) == 0.0  # below the limit: stays at the floor
    assert lam.update(13.0) == 5.0 and lam.update(13.0) == 10.0  # unbounded by default
    capped = Lagrange(0.0, lr=0.5, cost_limit=3.0, upper=4.0)
    assert [capped.update(13.0) for _ in range(3)] == [4.0, 4.0, 4.0]


def test_gated_uses_the_beta_box_and_ppo_lag_the_optional_upper_bound():
    beta = Lagrange.for_config(PPOConfig(method="gated"))
    assert (beta.value, beta.lower, beta.upper) == (3.0, 0.5, 15.0)
    lam = Lagrange.for_config(PPOConfig(method="ppo_lag", lagrangian_upper_bound=20.0))
    assert (lam.value, lam.lower, lam.upper) == (0.0, 0.0, 20.0)
    assert Lagrange.for_config(PPOConfig(method="ppo_lag")).upper is None


def test_the_step_is_the_papers_clipped_dual_ascent():
    cfg = PPOConfig(method="gated")
    beta = Lagrange.for_config(cfg)
    value = cfg.beta0
    for c in np.random.default_rng(0).uniform(0, 40, 50):
        value = float(np.clip(value + cfg.eta * (c - cfg.c_max), cfg.beta_min, cfg.beta_max))
        assert beta.update(float(c)) == value


def test_the_bound_is_a_config_field_with_a_default():
    field = {f.name: f for f in dataclasses.fields(PPOConfig)}["lagrangian_upper_bound"]
    assert field.default is None
