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


def test_the_tracking_keys_are_namespaced():
    from embodied_safety.shield.rl.ppo import namespaced

    row = namespaced({"pg_loss": 0.1, "critic_loss": 0.2, "approx_kl": 0.01, "sr": 0.5, "dual": 3.0, "env_steps": 64.0})
    assert row == {"losses/pg_loss": 0.1, "losses/critic_loss": 0.2, "losses/approx_kl": 0.01, "charts/sr": 0.5,
                   "charts/dual": 3.0, "charts/env_steps": 64.0}


def test_constrained_loss_is_plain_ppo_for_ppo_and_ppo_lag():
    import torch

    from embodied_safety.shield.rl.ppo import clipped_surrogate, constrained_loss

    torch.manual_seed(0)
    adv, ratio = torch.randn(8), torch.rand(8) + 0.5
    pg = clipped_surrogate(adv, ratio, 0.2)
    for method in ("ppo", "ppo_lag"):
        loss, safety = constrained_loss(PPOConfig(method=method), 4.0, pg, ratio, torch.zeros(8, 2), torch.ones(8),
                                        adv, torch.randn(8), None, None, torch.ones(2))
        assert torch.equal(loss, pg.mean()) and safety is None
    gated = PPOConfig(method="gated", safety_update="advantage")
    cost_adv = torch.randn(8)
    loss, _ = constrained_loss(gated, 2.0, pg, ratio, torch.zeros(8, 2), torch.zeros(8), adv, cost_adv, None, None,
                               torch.ones(2))
    assert torch.allclose(loss, (2.0 * clipped_surrogate(-cost_adv, ratio, 0.2)).mean())  # every sample infeasible
