"""The selective gate of issue 21: the best-candidate HJ target, the gate it gives, the offline check and the
state-based control, all with budgets of seconds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn

from embodied_safety.shield.rl.critic import (
    CriticConfig,
    CriticTrainer,
    FeatureReplay,
    SafetyCritic,
    best_of,
    candidate_actions,
    hj_target,
    nearest_safe,
)


class Identity(nn.Module):
    def forward(self, x: torch.Tensor, instructions: object = None) -> torch.Tensor:
        return x.float()


def test_candidate_actions_are_the_mean_then_axis_grids() -> None:
    c = candidate_actions(torch.tensor([[0.3]]), torch.tensor([-1.1]), torch.tensor([1.1]), 3)
    assert c[0, :, 0].tolist() == pytest.approx([0.3, -1.1, 0.0, 1.1])
    c2 = candidate_actions(torch.tensor([[0.3, 0.1]]), torch.tensor([0.0, -1.0]), torch.tensor([1.0, 1.0]), 3)
    assert torch.allclose(c2[0], torch.tensor([[0.3, 0.1], [0.0, 0.1], [0.5, 0.1], [1.0, 0.1],
                                               [0.3, -1.0], [0.3, 0.0], [0.3, 1.0]]))
    value, best = best_of(torch.tensor([[0.1, 0.5, 0.5, -1.0]]), c)
    assert value.item() == pytest.approx(0.5) and best.tolist()[0] == pytest.approx([-1.1])  # first of the ties
    with pytest.raises(ValueError, match="candidates"):
        CriticConfig(candidates=1)
    with pytest.raises(ValueError, match="target"):
        CriticConfig(target="mean")  # type: ignore[arg-type]


def test_nearest_safe_candidate_is_the_least_restrictive_correction() -> None:
    """The recovery target ``nearest_safe``: among the candidates that clear δ, the one nearest the mean — not the
    safest one; the safest where none clears δ."""
    c = candidate_actions(torch.tensor([[0.3], [0.3], [0.3]]), torch.tensor([-1.1]), torch.tensor([1.1]), 5)
    # candidates: 0.3 (the mean), -1.1, -0.55, 0.0, 0.55, 1.1
    q = torch.tensor([[-0.5, 0.9, 0.4, -0.1, 0.2, 0.8],    # 0.55 clears δ = 0.1 and is nearest; -1.1 is the best
                      [-0.5, 0.9, 0.4, -0.1, 0.05, 0.8],   # 0.55 does not clear 0.1: -0.55 (0.85 away) vs 1.1 (0.8)
                      [-0.5, -0.2, -0.3, -0.1, 0.0, 0.05]])  # none clears δ: the best (1.1)
    assert nearest_safe(q, c, 0.1)[:, 0].tolist() == pytest.approx([0.55, 1.1, 1.1])
    assert best_of(q, c)[1][:, 0].tolist() == pytest.approx([-1.1, -1.1, 1.1])


@pytest.mark.parametrize("twin", [False, True])
def test_candidate_target_is_at_least_the_policy_mean_target(twin: bool) -> None:
    """max over {ā} ∪ grid ≥ the value at ā, for the same (twin: min-over-heads) critic, so y_best ≥ y_D.1."""
    torch.manual_seed(0)
    critic = SafetyCritic(Identity(), 5, [-1.1], [1.1], CriticConfig(hidden=(16,), twin=twin, target="best"))
    f, mean = torch.randn(64, 5), torch.rand(64, 1) * 2.2 - 1.1
    best = critic.next_value(f, mean)
    critic.config = replace(critic.config, target="policy_mean")
    at_mean = critic.next_value(f, mean)
    assert torch.equal(at_mean, critic.q_features(f, mean))
    assert torch.all(best >= at_mean) and torch.any(best > at_mean)
    margin = torch.randn(64)
    assert torch.all(hj_target(margin, best, 0.9) >= hj_target(margin, at_mean, 0.9))


def _two_state_chain(target: str, steps: int = 400) -> tuple[SafetyCritic, torch.Tensor]:
    """s0 (ℓ = 1) -> s1 (ℓ = 0.5) whatever the action; from s1, a > 0 ends in a crash (ℓ = −1, terminal) and
    a < 0 in a safe stop (ℓ = 1, terminal). The policy's mean is +0.5 everywhere (it steers into the crash)."""
    torch.manual_seed(0)
    one_hot = torch.eye(4)
    s0, s1, crash, stop = one_hot
    rows = [(s0, 0.5, 1.0, s1, 0.5, 0.0), (s0, -0.9, 1.0, s1, 0.5, 0.0),
            (s1, 0.5, 0.5, crash, -1.0, 1.0), (s1, -0.9, 0.5, stop, 1.0, 1.0)]
    buf = FeatureReplay(64, 4, 4, 1)
    for s, a, m, s2, m2, term in rows:
        buf.add(feature=s[None], next_feature=s2[None], next_policy_feature=s2[None], action=torch.tensor([[a]]),
                margin=np.array([m]), next_margin=np.array([m2]), terminated=np.array([term]))
    cfg = CriticConfig(gamma=0.5, lr=3e-3, tau=0.1, hidden=(32, 32), batch_size=16, target=target,  # type: ignore[arg-type]
                       candidates=5)
    critic = SafetyCritic(Identity(), 4, [-1.0], [1.0], cfg)
    CriticTrainer(critic).update(buf, lambda f: torch.full((len(f), 1), 0.5), steps=steps)
    return critic, torch.stack([s0, s1])


def test_selective_gate_flags_fewer_samples_than_the_d1_gate() -> None:
    """By hand (γ = 0.5): Q(s1, +) = 0.25 + 0.5·min(0.5, −1) = −0.25, Q(s1, −) = 0.25 + 0.5·min(0.5, 1) = 0.5.
    D.1 bootstraps s0 from the policy's +0.5 at s1: Q(s0, ā) = 0.5 + 0.5·min(1, −0.25) = 0.375, so the D.1 gate
    (δ = 0.55) flags s0 as well as s1; the HJ target sees the escape: Q(s0, ā) = 0.5 + 0.5·min(1, 0.5) = 0.75,
    and flags only s1, the state whose action leads somewhere unrecoverable."""
    delta = 0.55
    mean = torch.full((2, 1), 0.5)
    q = {}
    for target in ("policy_mean", "best"):
        critic, states = _two_state_chain(target)
        with torch.no_grad():
            q[target] = critic.q_features(states, mean)
    assert q["policy_mean"].tolist() == pytest.approx([0.375, -0.25], abs=0.05)
    assert q["best"].tolist() == pytest.approx([0.75, -0.25], abs=0.06)
    flagged = {t: (v <= delta).tolist() for t, v in q.items()}
    assert flagged == {"policy_mean": [True, True], "best": [False, True]}


def test_gate_check_runs_on_a_tiny_state_setup() -> None:
    from embodied_safety.shield.rl import state_control as sc
    from embodied_safety.shield.rl.gate_check import gate_check
    from embodied_safety.shield.rl.viability import unrecoverable

    cfg = sc.StateControlConfig(bc_episodes=4, bc_epochs=1, start_envs=8, start_steps=16, warm_regress=5,
                                warm_td=5, eval_episodes=8)
    policy = sc.bc_policy(cfg)
    start = sc.start_rollouts(policy, cfg)
    assert start.states.shape == (128, 7) and start.replay.size == 128
    critic = sc.warm_critic(policy, start, cfg, "best")
    lost = unrecoverable(start.states.astype(np.float64))
    res = gate_check(critic, policy, torch.as_tensor(start.states), [""] * 128, start.margin, start.unsafe, 0.2,
                     obs="state", probe_states=64, states=start.states.astype(np.float64))
    for k in ("infeasible_frac", "infeasible_frac_at_0", "unsafe_frame_rate", "margin_below_delta_rate",
              "best_candidate_agreement", "gradient_agreement", "unrecoverable_frame_rate", "flag_floor_rate",
              "turn_ranking_agreement", "hj_turn_agreement", "hj_probe_agreement"):
        assert 0.0 <= res[k] <= 1.0
    assert 0 < res["hj_states"] <= 64 and res["frame_turn_states"] >= res["near_frame_turn_states"]
    near = res["near_frame_turn_agreement"]  # the verdict's number (NaN when no frame is near the obstacle)
    assert res["knows_safer_turn"] == (near >= 0.8) and (np.isnan(near) or 0.0 <= near <= 1.0)
    assert res["unrecoverable_frame_rate"] == lost.mean() and res["flag_floor_rate"] >= lost.mean()
    assert res["infeasible_frac_at_0"] <= res["infeasible_frac"] and res["target"] == "best"
    assert isinstance(res["selective"], bool) and isinstance(res["knows_safer_turn"], bool)


def test_state_control_can_treat_leaving_the_workspace_as_a_failure_like_the_image_stage() -> None:
    from embodied_safety.shield.rl import state_control as sc
    from embodied_safety.shield.rl.exits import EXIT_MARGIN

    kw = dict(bc_episodes=4, bc_epochs=1, start_envs=16, start_steps=60, start_explore=0.5)
    policy = sc.bc_policy(sc.StateControlConfig(**kw))
    plain = sc.start_rollouts(policy, sc.StateControlConfig(**kw)).replay
    capped = sc.start_rollouts(policy, sc.StateControlConfig(**kw, exit_is_failure=True)).replay
    n = plain.size
    np.testing.assert_array_equal(plain.image[:n], capped.image[:n])  # the same transitions
    changed = plain.next_margin[:n] != capped.next_margin[:n]
    assert changed.any(), "no start episode left the workspace: the test needs an exit"
    assert np.all(capped.next_margin[:n][changed] == EXIT_MARGIN) and np.all(plain.next_margin[:n][changed] > EXIT_MARGIN)
    assert np.all(capped.terminated[:n][changed] == 1.0)  # an exit ends its episode


@pytest.mark.parametrize("run", ["gated_selective_recovery", "ppo_lag"])
def test_state_control_runs_one_iteration(run: str) -> None:
    from embodied_safety.shield.rl import state_control as sc

    cfg = sc.StateControlConfig(bc_episodes=4, bc_epochs=1, start_envs=8, start_steps=16, warm_regress=5,
                                warm_td=5, total_steps=64, num_envs=4, eval_episodes=8)
    policy = sc.bc_policy(cfg)
    critics = {"best": sc.warm_critic(policy, sc.start_rollouts(policy, cfg), cfg, "best")}
    pcfg = sc.ppo_config(cfg, run, 0)
    assert pcfg.obs == "state" and pcfg.iterations == 1
    before = [p.detach().clone() for p in policy.parameters()]
    row = sc.run_one(run, 0, policy, critics, cfg)
    assert 0.0 <= row["eval"]["sr"] <= 1.0 and row["eval"]["csc"] >= 0.0
    assert all(torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))  # trained a copy
    if run == "gated_selective_recovery":
        assert row["infeasible_frac"] is not None and 0.0 <= row["infeasible_frac"] <= 1.0
    else:
        assert row["infeasible_frac"] is None


def test_recovery_needs_the_gated_method() -> None:
    from embodied_safety.shield.rl.ppo import PPOConfig

    with pytest.raises(ValueError, match="recovery"):
        PPOConfig(method="ppo_lag", safety_update="recovery")


def test_train_vec_state_observations_keep_the_terminal_state() -> None:
    from embodied_safety.shield.rl.vecenv import TrainVec

    vec = TrainVec("dubins", 4, seed=3, obs="state")
    states, _, margin, _ = vec.reset()
    assert states.shape == (4, 7) and states.dtype == np.float32
    seen = False
    for _ in range(110):
        step = vec.step(np.full(4, 1.1))
        live = ~step.done
        assert np.array_equal(step.images[live], step.reached_images[live])
        if step.done.any():
            seen = True
            d = np.flatnonzero(step.done)
            assert not np.array_equal(step.images[d], step.reached_images[d])
    assert seen
    with pytest.raises(ValueError, match="Dubins-VL only"):
        TrainVec("turtlebot", 1, seed=0, obs="state")


def test_flow_maps_the_gate_to_the_critic_target() -> None:
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.rl.runs import ppo_config

    cfg = ShieldPPOConfig(hyper={"dubins": {"critic_hidden": [8]}}, gate="d1")
    assert ppo_config(cfg, "dubins", "gated", 0).critic.target == "policy_mean"
    assert ppo_config(cfg, "dubins", "gated_selective", 0).critic.target == "best"
    rec = ppo_config(cfg, "dubins", "gated_selective_recovery", 0)
    assert rec.safety_update == "recovery" and rec.critic.target == "best"
    assert ppo_config(replace(cfg, gate="selective"), "dubins", "gated", 0).critic.target == "best"


def test_exit_mask_is_an_early_end_without_success():
    """An episode exits when it ends before the step limit and did not succeed; a success or a timeout does not."""
    from embodied_safety.shield.rl.exits import exit_mask

    got = exit_mask(success=[False, True, False, False], length=[40, 40, 100, 99], max_steps=100)
    assert got.tolist() == [True, False, False, True]


class _SimulatorCritic:
    """A "critic" on Dubins-VL states whose Q is the simulator's HJ action value (``viability.action_values``), or
    its negation: the turn ranking must then agree everywhere, or nowhere."""

    def __init__(self, sign: float) -> None:
        self.sign = sign

    def embed(self, states: torch.Tensor, instructions: object) -> torch.Tensor:
        return states.double()

    def q_candidates(self, feature: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        from embodied_safety.shield.rl.viability import action_values

        rates = candidates[0, :, 0].numpy()
        return torch.as_tensor(self.sign * action_values(feature.numpy(), rates))


def test_frame_turn_agreement_is_one_for_the_simulator_and_zero_for_its_negation() -> None:
    from embodied_safety.shield.rl.gate_check import frame_turn_agreement

    rng = np.random.default_rng(3)
    n = 400
    obstacle = rng.uniform(-0.4, 0.4, (n, 2))
    ang, rad = rng.uniform(0, 2 * np.pi, n), rng.uniform(0.56, 0.9, n)  # 0.01-0.35 from the unsafe zone
    states = np.column_stack([obstacle[:, 0] + rad * np.cos(ang), obstacle[:, 1] + rad * np.sin(ang),
                              rng.uniform(-np.pi, np.pi, n), rng.uniform(-0.9, 0.9, (n, 2)), obstacle])
    obs = torch.as_tensor(states)
    exact = frame_turn_agreement(_SimulatorCritic(1.0), obs, [""] * n, states)
    negated = frame_turn_agreement(_SimulatorCritic(-1.0), obs, [""] * n, states)
    assert exact["frame_turn_states"] > 50 and exact["near_frame_turn_states"] > 0
    assert exact["frame_turn_agreement"] == 1.0 and exact["near_frame_turn_agreement"] == 1.0
    assert negated["frame_turn_agreement"] == 0.0
