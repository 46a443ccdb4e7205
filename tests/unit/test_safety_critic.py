"""The HJ safety critic (ShieldVLA Eq. 4, App. A) and the gated policy loss (Eqs. 5-6)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from embodied_safety.shield.rl.critic import (
    CriticConfig,
    CriticTrainer,
    ReplayBuffer,
    SafetyCritic,
    bootstrap_value,
    hj_target,
    load_critic,
    tabular_backup,
    tabular_fixed_point,
)
from embodied_safety.shield.rl.ppo import gae, policy_loss


def chain(margins: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A deterministic one-action chain s0 -> s1 -> ... -> s_last (terminal, absorbing)."""
    s = len(margins)
    p = np.zeros((s, 1, s))
    for i in range(s - 1):
        p[i, 0, i + 1] = 1.0
    p[-1, 0, -1] = 1.0
    terminal = np.zeros(s, dtype=bool)
    terminal[-1] = True
    return np.asarray(margins, dtype=np.float64), p, terminal


def test_two_step_chain_into_a_violation_by_hand() -> None:
    # o0 (ℓ = 1) -> o1 (ℓ = -2, terminal), γ = 0.9: y(o0) = 0.1·1 + 0.9·min(1, -2) = -1.7
    y = hj_target(torch.tensor([1.0]), bootstrap_value(torch.tensor([99.0]), torch.tensor([-2.0]),
                                                        torch.tensor([1.0])), 0.9)
    assert y.item() == pytest.approx(-1.7)
    q, _ = tabular_fixed_point(*chain([1.0, -2.0])[:2], 0.9, chain([1.0, -2.0])[2])
    assert q[:, 0] == pytest.approx([-1.7, -2.0])
    # the paper's literal Eq. (4) would give (1-γ)ℓ(o0) = 0.1 > 0 for the step into the violation
    assert (1 - 0.9) * 1.0 > 0 > q[0, 0]


def test_three_step_chain_by_hand() -> None:
    # ℓ = [2, 1, 0.5], γ = 0.5: Q(s2) = 0.5; Q(s1) = 0.5·1 + 0.5·min(1, 0.5) = 0.75;
    # Q(s0) = 0.5·2 + 0.5·min(2, 0.75) = 1.375
    margins, p, terminal = chain([2.0, 1.0, 0.5])
    q, _ = tabular_fixed_point(margins, p, 0.5, terminal)
    assert q[:, 0] == pytest.approx([1.375, 0.75, 0.5])
    # a time-limit truncation bootstraps from the critic instead of the margin
    boot = bootstrap_value(torch.tensor([0.75, 0.3]), torch.tensor([1.0, 1.0]), torch.tensor([0.0, 0.0]))
    assert boot.tolist() == pytest.approx([0.75, 0.3])


def random_mdp(seed: int, s: int = 7, a: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.random((s, a, s)) ** 3
    p /= p.sum(-1, keepdims=True)
    return rng.normal(size=s), p


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_operator_is_a_gamma_contraction_with_a_unique_fixed_point(seed: int) -> None:
    """Proposition 1: ‖TQ1 − TQ2‖∞ ≤ γ‖Q1 − Q2‖∞, and backups from any start reach the same Q* = T Q*."""
    margins, p = random_mdp(seed)
    gamma = 0.9
    rng = np.random.default_rng(seed + 100)
    for _ in range(20):
        q1, q2 = rng.normal(size=(2, *p.shape[:2])) * 5
        lhs = np.abs(tabular_backup(q1, margins, p, gamma) - tabular_backup(q2, margins, p, gamma)).max()
        assert lhs <= gamma * np.abs(q1 - q2).max() + 1e-12
    q_star, iters = tabular_fixed_point(margins, p, gamma)
    assert np.abs(tabular_backup(q_star, margins, p, gamma) - q_star).max() < 1e-9
    assert np.all(q_star <= margins[:, None] + 1e-9)  # Q ≤ ℓ: the warm start's upper bound
    q = rng.normal(size=p.shape[:2]) * 50  # another start converges to the same point
    for _ in range(iters + 200):
        q = tabular_backup(q, margins, p, gamma)
    assert np.abs(q - q_star).max() < 1e-6


class PixelEncoder(nn.Module):
    """A tiny encoder for tests: the mean colour of the frame."""

    def forward(self, images: torch.Tensor, instructions: list[str]) -> torch.Tensor:
        return images.float().mean(dim=(1, 2)) / 255.0


def test_critic_training_reaches_the_hand_computed_chain_values() -> None:
    """The whole TD path (replay, target net, Polyak, Eq. 4) on the three-step chain of the test above."""
    torch.manual_seed(0)
    colours = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255]], dtype=np.uint8)
    frames = np.broadcast_to(colours[:, None, None, :], (3, 4, 4, 3)).copy()
    cfg = CriticConfig(gamma=0.5, lr=3e-3, tau=0.05, hidden=(32, 32), batch_size=32, steps_per_iter=1)
    critic = SafetyCritic(PixelEncoder(), 3, [-1.0], [1.0], cfg)
    buf = ReplayBuffer(64, (4, 4, 3), 1)
    margins = np.array([2.0, 1.0, 0.5], dtype=np.float32)
    buf.add(frames[:2], ["go", "go"], np.zeros((2, 1)), margins[:2], frames[1:], margins[1:],
            np.array([0.0, 1.0], dtype=np.float32))
    trainer = CriticTrainer(critic)
    zero = lambda images, instr: torch.zeros(len(images), 1)  # noqa: E731
    trainer.update(buf, zero, steps=1500)
    with torch.no_grad():
        q = critic(torch.from_numpy(frames[:2]), ["go", "go"], torch.zeros(2, 1))
    assert q.tolist() == pytest.approx([1.375, 0.75], abs=0.05)


def test_twin_critic_takes_the_pessimistic_head_and_saves(tmp_path) -> None:
    from embodied_safety.shield.policy.visuomotor import PolicyConfig, VisuomotorPolicy

    policy = VisuomotorPolicy(PolicyConfig(action_low=(-1.0,), action_high=(1.0,), image_size=(36, 36)))
    critic = SafetyCritic.from_policy(policy, CriticConfig(twin=True, hidden=(16,), freeze_encoder=True))
    images = torch.zeros(2, 36, 36, 3, dtype=torch.uint8)
    f = critic.embed(images, ["a", "b"])
    assert not f.requires_grad  # frozen encoder
    both = critic.q_all(f, torch.zeros(2, 1))
    assert both.shape == (2, 2)
    assert torch.equal(critic.q_features(f, torch.zeros(2, 1)), both.min(0).values)
    critic.save(tmp_path / "c")
    again = load_critic(tmp_path / "c", policy.config)
    assert torch.allclose(again(images, ["a", "b"], torch.zeros(2, 1)), critic(images, ["a", "b"], torch.zeros(2, 1)))


def test_gated_loss_routes_each_sample_to_exactly_one_term() -> None:
    """ζ = 1: the PPO surrogate's gradient, untouched by β; ζ = 0: −β ∇Q only (Eq. 5, §4.1 "decoupling")."""
    mean = torch.tensor([0.3, -0.2], requires_grad=True)
    pg = mean * torch.tensor([2.0, 5.0])  # stands in for a surrogate that depends on the policy
    q = -(mean - 1.0) ** 2  # Q(o, ā): safest at ā = 1
    loss, _ = policy_loss("gated", pg, q, torch.tensor([1.0, 0.0]), dual=4.0)
    (grad,) = torch.autograd.grad(loss, mean)
    # sample 0 (feasible): d(pg0)/dm / 2 = 1.0; sample 1 (infeasible): β·2(m−1) / 2 = 4·(−2.4)/2
    assert grad.tolist() == pytest.approx([1.0, -4.8])
    pen, _ = policy_loss("penalty", pg.detach(), torch.tensor([0.5, -1.5]), torch.ones(2), dual=2.0)
    assert pen.item() == pytest.approx(pg.detach().mean().item() + 2.0 * 0.75)
    plain, safety = policy_loss("ppo", pg, None, torch.ones(2), dual=9.0)
    assert plain.item() == pytest.approx(pg.mean().item()) and safety is None


def test_gae_cuts_at_episode_ends() -> None:
    r = np.array([[1.0], [1.0], [1.0]])
    v = np.zeros((3, 1))
    adv, ret = gae(r, v, np.ones((3, 1)), np.array([[0.0], [1.0], [0.0]]), gamma=0.5, lam=1.0)
    # t=2: δ = 1 + 0.5·1 = 1.5; t=1 (done): δ = 1, no trace; t=0: δ = 1.5, plus γλ·adv1 = 0.5 -> 2.0
    assert adv[:, 0].tolist() == pytest.approx([2.0, 1.0, 1.5])
    assert np.array_equal(adv, ret)


@pytest.mark.parametrize("freeze,twin,target", [(True, False, "policy_mean"), (True, True, "best"),
                                                (False, False, "policy_mean")])
def test_cached_warm_start_matches_the_uncached_one(freeze: bool, twin: bool, target: str) -> None:
    """The warm-up on cached features / next actions draws the same batches and lands on the same critic as
    re-encoding every batch (issue 21: speed), up to float rounding."""
    from embodied_safety.shield.policy.visuomotor import PolicyConfig, VisuomotorPolicy
    from embodied_safety.shield.rl.critic import warm_start

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    policy = VisuomotorPolicy(PolicyConfig(action_low=(-1.0, -0.5), action_high=(1.0, 0.5), image_size=(36, 36),
                                           conv_channels=(8, 8, 8), image_dim=32, text_dim=8)).eval()
    n = 48
    frames = rng.integers(0, 255, size=(n + 1, 36, 36, 3), dtype=np.uint8)
    instr = [f"go {i % 3}" for i in range(n)]
    cfg = CriticConfig(hidden=(16, 16), batch_size=16, freeze_encoder=freeze, twin=twin, target=target,  # type: ignore[arg-type]
                       candidates=3, lr=3e-3, tau=0.05)

    def mean_action(images: torch.Tensor, instructions: list[str]) -> torch.Tensor:
        with torch.no_grad():
            return policy(images, instructions)[0]

    actions = rng.uniform(-0.5, 0.5, size=(n, 2)).astype(np.float32)
    margins = rng.normal(size=n).astype(np.float32)
    terminated = (rng.random(n) < 0.2).astype(np.float32)
    critics = []
    for cache in (False, True):
        torch.manual_seed(1)
        buf = ReplayBuffer(n, (36, 36, 3), 2, seed=3)
        buf.add(frames[:-1], instr, actions, margins, frames[1:], np.roll(margins, -1), terminated)
        critic = SafetyCritic.from_policy(policy, cfg)
        trainer = CriticTrainer(critic)
        rows = warm_start(trainer, buf, mean_action, regress_steps=50, td_steps=100, cache=cache)
        assert [r["step"] for r in rows] == [50.0, 100.0, 150.0] and trainer.updates == 100
        critics.append((critic, rows, buf.rng.integers(0, 1 << 30)))
    (old, old_rows, old_next), (new, new_rows, new_next) = critics
    assert old_next == new_next  # the same number of draws from the buffer's generator
    held = torch.from_numpy(rng.integers(0, 255, size=(32, 36, 36, 3), dtype=np.uint8))
    words, acts = [f"go {i % 3}" for i in range(32)], torch.from_numpy(rng.uniform(-1, 1, (32, 2)).astype(np.float32))
    with torch.no_grad():
        q_old, q_new = old(held, words, acts), new(held, words, acts)
    assert float(q_old.abs().max()) > 0.05  # trained to something
    assert float((q_old - q_new).abs().max()) < 1e-3
    assert new_rows[-1]["critic_loss"] == pytest.approx(old_rows[-1]["critic_loss"], rel=1e-3, abs=1e-5)
