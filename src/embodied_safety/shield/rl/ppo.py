"""Feasibility-gated PPO with an online HJ safety critic (ShieldVLA Algorithm 1, Eqs. 5–7), and its baselines.

One readable CleanRL-style loop serves every method, so they share env interactions, evaluation and code:

* ``ppo`` — unconstrained PPO (clipped surrogate, GAE, approx-KL early stop) on task reward;
* ``ppo_lag`` — the SafeVLA-style PPO-Lagrangian baseline: a cost value head, cost GAE, the surrogate on
  ``(A_r − λ A_c) / (1 + λ)``, and dual ascent ``λ ← max(0, λ + η(c̄ − c_max))``;
* ``gated`` — ShieldVLA: per sample, the PPO surrogate where ``Q_s(o, ā) > δ`` and ``−β Q_s(o, ā_θ(o))``
  elsewhere (the gate is computed once per iteration from the pre-update policy mean, stop-gradient;
  Algorithm 1 line 7), ``β ← clip(β + η(c̄ − c_max), β_min, β_max)`` (Eq. 7);
  with the critic's ``target: best`` (App. A's max over next actions) the same test is the *selective* gate:
  it flags only samples whose action leads somewhere no continuation recovers from;
* ``penalty`` — Table 5's ablation: the same critic as a penalty everywhere,
  ``L_reward + λ E[max(0, −Q_s(o, ā_θ(o)))]``, λ by the same dual ascent.

``gated`` and ``penalty`` train the critic on the shared replay buffer (K steps per iteration, Algorithm 1
lines 3–5); every method sees the same training cost ``c = 1[ℓ < 0]`` from the margin source
(:mod:`embodied_safety.shield.costs.margins`), and ``c̄`` is the mean per-episode training cost of the episodes that ended in the
iteration. Evaluation and the training curves' CSC read the simulator's cost.

With ``train_encoder = False`` (the CPU default) the policy's encoder is frozen: features are computed once
per rollout and PPO updates the action head and log-std (the paper fine-tunes the Dubins-VL encoder and
LoRA-tunes the large VLAs; ``train_encoder = True`` back-propagates into the encoder at ~5× the cost).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from ...threads import set_torch_threads
from ..costs.margins import MarginKind, MarginSource
from ..policy.visuomotor import clipped_gaussian_log_prob, gaussian_entropy
from .critic import (
    CriticConfig,
    CriticTrainer,
    FeatureReplay,
    ReplayBuffer,
    SafetyCritic,
    best_of,
    nearest_safe,
)
from .exits import cap_exits
from .vecenv import TrainVec

Method = Literal["ppo", "ppo_lag", "gated", "penalty"]
METHODS: tuple[str, ...] = ("ppo", "ppo_lag", "gated", "penalty")
USES_CRITIC = frozenset({"gated", "penalty"})


@dataclass(frozen=True)
class PPOConfig:
    """Table 14 (policy, gate and dual rows) plus the loop's budget; the critic rows live in ``critic``."""

    method: Method = "gated"
    margin: MarginKind = "rubric"
    #: how infeasible samples improve safety: ``dpg`` = Eq. 6, ``−β Q_s(o, ā_θ(o))`` through the critic's action
    #: gradient (the paper); ``advantage`` = the clipped surrogate of the on-policy cost advantage (ours, see
    #: docs/shield_ppo.md: on CPU budgets the critic's action gradient has the wrong sign half the time);
    #: ``recovery`` = ``β‖(ā_θ(o) − a*(o))/scale‖²``, the mean pulled toward the critic's best candidate action
    safety_update: Literal["dpg", "advantage", "mixed", "recovery"] = "dpg"
    #: ``recovery``'s a*: ``best`` = the candidate with the highest Q_s (the issue's wording); ``nearest_safe`` = the
    #: candidate nearest the policy mean among those with Q_s > δ (a least-restrictive safety filter's correction;
    #: the best one where none clears δ). With the oracle critic the ``best`` target costs SR (docs/shield_ppo.md)
    recovery_target: Literal["best", "nearest_safe"] = "best"
    #: ``recovery``'s weight; None: β, the cost dual. With the oracle critic a fixed 0.2 keeps the start's SR
    #: where β (2.5-3) loses 0.03-0.12 of it (docs/shield_ppo.md)
    recovery_weight: float | None = None
    #: what the policy and critic see: ``image`` (frame + instruction) or ``state`` (Dubins-VL's 7-D state, the
    #: state-based control of :mod:`.state_control`)
    obs: Literal["image", "state"] = "image"
    #: ``features``: after the warm start the critic's encoder is frozen and replay holds features, so the K
    #: online TD steps are MLP steps (K can then be large enough for the critic to track the policy on a CPU);
    #: ``images``: replay holds frames and the encoder keeps training (the paper's Dubins-VL setting)
    critic_replay: Literal["features", "images"] = "features"
    total_steps: int = 65_536
    num_envs: int = 16
    rollout_steps: int = 64  # N per env per iteration
    epochs: int = 4  # E
    minibatches: int = 4
    lr: float = 1e-4
    value_lr: float = 1e-3
    gamma: float = 0.99  # reward discount
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.0
    target_kl: float | None = 0.05
    max_grad_norm: float = 0.5
    #: the first ``value_warmup`` iterations fit only the value heads on the start policy's returns (no policy,
    #: dual or critic-gate update); they count toward ``total_steps``. A value head from scratch makes the first
    #: advantages noise, and the first update then unlearns much of the (imitation) start (docs/shield_ppo.md)
    value_warmup: int = 0
    #: weight of ``KL(π_start ‖ π_θ)`` per sample, decayed linearly to 0 over the policy iterations (issue 21:
    #: "optional decaying KL toward the start policy"); 0 = off
    kl_start: float = 0.0
    #: the KL anchor's weight never falls below ``kl_floor · kl_start`` (0 = the plain linear decay to 0). Long runs
    #: lose success in their last quarter as the anchor fades; the floor tests whether the decay causes it
    #: (docs/shield_ppo.md, "The KL anchor floor")
    kl_floor: float = 0.0
    #: leaving the workspace (Dubins-VL) counts as entering the failure set: the reached margin is capped at
    #: ``-1`` (the critic learns exits are unrecoverable) and the training cost of the exit is the number of
    #: steps it cut off, as the env's reward penalty does. Without it an exit is the cheapest way to stop
    #: accruing cost, and cost-driven updates teach the car to drive off the map (docs/shield_ppo.md)
    exit_is_failure: bool = True
    #: with ``exit_is_failure``, the training cost of an exit per step it cut off: 1 = every step cut off counts as a
    #: violating step (the env's reward penalty); a rate such as the start's unsafe-step rate prices an exit at what
    #: the steps it cut off would have cost on average, so the cost signal is about obstacles, not about staying
    #: on the map (docs/shield_ppo.md). The critic's margin cap is the same either way
    exit_price: float = 1.0
    #: the episode cost c̄ the dual variable ascends on (Eq. 7): ``train`` = the training cost, an exit priced at the
    #: steps it cut off (leaving the workspace is entering the failure set, so the start's exits violate the budget
    #: and β / λ climb to their caps on Dubins-VL: c̄ ≈ 50-60 against c_max = 3); ``margin`` = the steps whose
    #: reached margin is below zero only (obstacle cost; the duals then settle near β 5-6, λ 3). Ten seeds of each
    #: at the demo budget: no difference in SR or CSC (docs/shield_ppo.md)
    dual_cost: Literal["margin", "train"] = "train"
    #: Algorithm 1 lines 4-5: the critic's K TD steps on its replay every iteration; False keeps the warm critic as
    #: it was warmed (the oracle reference: TD with the policy-mean target would pull it back to the current
    #: policy's safety value)
    online_td: bool = True
    train_encoder: bool = False
    # gate and dual variable
    delta: float = 0.2
    c_max: float = 3.0
    eta: float = 0.01
    beta_min: float = 0.5
    beta_max: float = 15.0
    beta0: float = 3.0
    lambda0: float = 0.0  # ppo_lag / penalty start (SafeVLA starts its multiplier at 0)
    #: the cap of λ (``ppo_lag`` / ``penalty``), as OmniSafe's ``Lagrange(lagrangian_upper_bound=...)``; None = no cap
    #: (λ then only grows while c̄ > c_max: 99.7 after 1 M Dubins-VL steps). β (``gated``) is capped by ``beta_max``
    lagrangian_upper_bound: float | None = None
    critic: CriticConfig = field(default_factory=CriticConfig)
    seed: int = 0
    threads: int = 2

    def __post_init__(self) -> None:
        if self.safety_update == "recovery" and self.method != "gated":
            raise ValueError(f"safety_update: recovery is a gated update, not one for method {self.method!r}")
        if self.exit_price < 0:
            raise ValueError(f"exit_price {self.exit_price}: expected >= 0")
        if self.dual_cost not in ("margin", "train"):
            raise ValueError(f"dual_cost {self.dual_cost!r}: expected margin | train")
        if self.recovery_weight is not None and self.recovery_weight < 0:
            raise ValueError(f"recovery_weight {self.recovery_weight}: expected >= 0 (or None: β)")
        if self.recovery_target not in ("best", "nearest_safe"):
            raise ValueError(f"recovery_target {self.recovery_target!r}: expected best | nearest_safe")

    @property
    def batch(self) -> int:
        return self.num_envs * self.rollout_steps

    @property
    def iterations(self) -> int:
        return max(1, math.ceil(self.total_steps / self.batch))


def mlp(width: int, hidden: int = 256) -> nn.Module:
    return nn.Sequential(nn.Linear(width, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, 1))


def gae(rewards: np.ndarray, values: np.ndarray, next_values: np.ndarray, dones: np.ndarray, gamma: float,
        lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns [T, n]; ``next_values[t]`` is V(o_{t+1}) (0 where terminated, the truncation
    value already folded into ``rewards``), ``dones[t]`` cuts the trace."""
    adv = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1])
    for t in range(rewards.shape[0] - 1, -1, -1):
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_values[t] * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values


def batched_features(fn: Callable[[Tensor, list[str]], Tensor], images: Tensor, instructions: list[str],
             size: int = 1024) -> Tensor:
    with torch.no_grad():
        return torch.cat([fn(images[i:i + size], instructions[i:i + size]) for i in range(0, len(images), size)])


def _on(device: torch.device, array: np.ndarray) -> Tensor:
    """A numpy mask or index array as a tensor on ``device`` (indexing a tensor there)."""
    return torch.from_numpy(array).to(device)


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    """``a`` and ``b`` are the same architecture with bitwise-equal parameters and buffers."""
    sa, sb = a.state_dict(), b.state_dict()
    return type(a) is type(b) and sa.keys() == sb.keys() and all(
        sa[k].shape == sb[k].shape and torch.equal(sa[k], sb[k]) for k in sa)


def _normalise(x: Tensor) -> Tensor:
    return (x - x.mean()) / (x.std() + 1e-8)


def gaussian_kl(mean0: Tensor, log_std0: Tensor, mean: Tensor, log_std: Tensor) -> Tensor:
    """Mean over samples of ``KL(N(mean0, σ0) ‖ N(mean, σ))``, summed over action dims (the unclipped
    Gaussians; the clipping is the same map for both, so this is the anchor's natural distance)."""
    var0, var = (2 * log_std0).exp(), (2 * log_std).exp()
    kl = log_std - log_std0 + (var0 + (mean0 - mean) ** 2) / (2 * var) - 0.5
    return kl.sum(-1).mean()


@dataclass
class Lagrange:
    """A cost constraint's multiplier by dual ascent on the mean episode cost (Eq. 7; OmniSafe's ``Lagrange``):
    ``m ← clip(m + lr·(c̄ − cost_limit), lower, upper)``. β of ``gated`` is one in [β_min, β_max]; λ of ``ppo_lag`` /
    ``penalty`` one in [0, ``lagrangian_upper_bound``]."""

    value: float
    lr: float
    cost_limit: float
    lower: float = 0.0
    upper: float | None = None

    @classmethod
    def for_config(cls, cfg: PPOConfig) -> Lagrange:
        if cfg.method == "gated":
            return cls(cfg.beta0, cfg.eta, cfg.c_max, cfg.beta_min, cfg.beta_max)
        return cls(cfg.lambda0, cfg.eta, cfg.c_max, 0.0, cfg.lagrangian_upper_bound)

    def update(self, mean_cost: float) -> float:
        value = max(self.lower, self.value + self.lr * (mean_cost - self.cost_limit))
        self.value = float(value if self.upper is None else min(value, self.upper))
        return self.value


def clipped_surrogate(adv: Tensor, ratio: Tensor, clip: float) -> Tensor:
    """PPO's per-sample clipped surrogate loss ``max(−A·r, −A·clip(r, 1 ± ε))``."""
    return torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - clip, 1 + clip))


def constrained_loss(cfg: PPOConfig, dual: float, pg: Tensor, ratio: Tensor, mean: Tensor, gate: Tensor,
                     adv: Tensor, cost_adv: Tensor | None, a_star: Tensor | None,
                     q_of: Callable[[Tensor], Tensor] | None, scale: Tensor) -> tuple[Tensor, float | None]:
    """The policy loss of a minibatch with the method's safety term, given PPO's per-sample surrogate ``pg``
    (:func:`clipped_surrogate`); returns (loss, the safety term for the logs). What the infeasible (ζ = 0)
    samples train on, for ``gated``: the recovery pull ``w·‖(ā − a*)/scale‖²`` toward the best candidate
    (``recovery``, w = ``recovery_weight`` or β), SafeVLA's mixed advantage ``(A_r − βA_c)/(1+β)`` (``mixed``), the
    cost advantage weighted by β (``advantage``), or ``−β·Q_s(o, ā)`` (``dpg``, via ``q_of``); ``penalty`` adds
    ``λ·max(0, −Q_s)``; ``ppo`` / ``ppo_lag`` are plain PPO (λ is in their advantage)."""
    q, pg_safe = None, None
    if cfg.method == "gated" and cfg.safety_update == "recovery" and a_star is not None:
        weight = dual if cfg.recovery_weight is None else cfg.recovery_weight
        pg_safe = weight * (((mean - a_star) / scale) ** 2).mean(-1)
    elif cfg.method == "gated" and cfg.safety_update not in ("dpg", "recovery"):
        assert cost_adv is not None
        if cfg.safety_update == "mixed":
            s_adv, weight = (adv - dual * cost_adv) / (1.0 + dual), 1.0
        else:
            s_adv, weight = -cost_adv, dual
        pg_safe = weight * clipped_surrogate(s_adv, ratio, cfg.clip)
    elif cfg.safety_update == "dpg" and q_of is not None:
        q = q_of(mean)
    return policy_loss(cfg.method, pg, q, gate, dual, pg_safe)


def policy_loss(method: str, pg: Tensor, q: Tensor | None, gate: Tensor, dual: float,
                pg_safe: Tensor | None = None) -> tuple[Tensor, float | None]:
    """The per-minibatch policy loss of each method from the per-sample clipped surrogate ``pg`` and
    ``q = Q_s(o, ā_θ(o))`` (differentiable in the policy mean); returns (loss, safety term for the logs).

    ``gated`` (Eq. 5–6): ``mean(ζ·pg + β(1−ζ)(−q))`` — ζ = 1 samples give exactly PPO's gradient, ζ = 0
    samples exactly ``−β ∇_a Q_s ∇_θ ā``; with ``pg_safe`` (a clipped surrogate already weighted:
    ``β·surr(−A_c)`` for ``advantage``, ``surr((A_r − βA_c)/(1+β))`` for ``mixed``) the ζ = 0 term is
    ``pg_safe`` instead. ``penalty``:
    ``mean(pg) + λ·mean(max(0, −q))`` (with ``advantage`` the penalty is already in ``pg``)."""
    if method == "gated":
        unsafe = 1.0 - gate
        safe_term = pg_safe if pg_safe is not None else dual * -q  # type: ignore[operator]
        assert safe_term is not None
        loss = (gate * pg + unsafe * safe_term).mean()
        return loss, float((unsafe * safe_term.detach()).sum() / max(float(unsafe.sum()), 1.0))
    if method == "penalty" and q is None:
        return pg.mean(), None
    if method == "penalty":
        assert q is not None
        pen = torch.relu(-q).mean()
        return pg.mean() + dual * pen, float(pen.detach())
    return pg.mean(), None


#: the training log's optimisation terms; everything else an iteration logs is a chart (:func:`namespaced`)
LOSS_KEYS = frozenset({"pg_loss", "safety_loss", "critic_loss", "pose_loss", "approx_kl", "clipfrac", "kl_stop",
                       "kl_start", "kl_weight", "log_std"})


def namespaced(row: dict[str, float]) -> dict[str, float]:
    """An iteration's log row with tracking keys in two namespaces (CleanRL's layout): ``losses/<k>`` for the
    optimisation terms (:data:`LOSS_KEYS`, the policy and critic losses, KL, clip fraction), ``charts/<k>`` for the
    rest (episode SR, reach, CSC, the dual, the gate's rates, env steps, seconds). The history keeps plain keys."""
    return {f"{'losses' if k in LOSS_KEYS else 'charts'}/{k}": v for k, v in row.items()}


@dataclass
class TrainResult:
    policy: Any
    critic: SafetyCritic | None
    history: list[dict[str, float]]
    config: PPOConfig

    def final(self, last: int = 5) -> dict[str, float]:
        rows = self.history[-last:]
        keys = {k for r in rows for k in r}
        return {k: float(np.nanmean([r.get(k, np.nan) for r in rows])) for k in sorted(keys)}


class _Episodes:
    """Per-slot running sums of the simulator's cost, reach and the training cost, for curves and c̄."""

    def __init__(self, n: int, first_cost: np.ndarray) -> None:
        self.cost = np.zeros(n)
        self.train_cost = np.zeros(n)
        self.margin_cost = np.zeros(n)
        self.ret = np.zeros(n)
        self.unsafe = first_cost > 0
        self.finished: list[tuple[float, float, float, float, bool, bool]] = []

    def add(self, step: Any, train_cost: np.ndarray, margin_cost: np.ndarray, reset_cost: np.ndarray) -> None:
        self.cost += step.reached_cost
        self.train_cost += train_cost
        self.margin_cost += margin_cost
        self.ret += step.reward
        self.unsafe |= step.reached_cost > 0
        for i in np.flatnonzero(step.done):
            self.finished.append((self.ret[i], self.cost[i], self.train_cost[i], self.margin_cost[i],
                                  bool(step.success[i]), bool(self.unsafe[i])))
            self.cost[i] = self.train_cost[i] = self.margin_cost[i] = self.ret[i] = 0.0
            self.unsafe[i] = reset_cost[i] > 0

    def drain(self) -> dict[str, float]:
        rows, self.finished = self.finished, []
        if not rows:
            return {"episodes": 0.0}
        r = np.asarray(rows, dtype=np.float64)
        return {"episodes": float(len(rows)), "return": float(r[:, 0].mean()), "csc": float(r[:, 1].mean()),
                "train_cost": float(r[:, 2].mean()), "margin_cost": float(r[:, 3].mean()), "reach": float(r[:, 4].mean()),
                "sr": float(np.mean(r[:, 4].astype(bool) & ~r[:, 5].astype(bool)))}


@dataclass
class Rollout:
    """One iteration's on-policy batch (Algorithm 1 line 3): ``T`` steps of ``n`` envs, ``[T, n, ...]`` arrays.

    ``costs`` is the training cost ``1[ℓ(o_{t+1}) < 0]`` from the margin source; ``next_values[t]`` is
    ``V(o_{t+1})`` (0 where terminated; at a time limit, of the terminal frame, not the reset one);
    ``reached_images`` and ``reached_features`` (feature replay only) are the frames each step reached, before any
    reset, and the policy's features of them (with the instruction of the episode they end); ``critic_features``
    the frozen critic encoder's features of ``images``, set by :meth:`GatedPPO.train_critic` for the gate."""

    images: np.ndarray
    reached_images: np.ndarray | None
    instructions: list[list[str]]
    features: Tensor
    actions: Tensor
    log_probs: Tensor
    ell: np.ndarray
    reached_ell: np.ndarray
    rewards: np.ndarray
    costs: np.ndarray
    dones: np.ndarray
    terminated: np.ndarray
    values: np.ndarray
    next_values: np.ndarray
    cost_values: np.ndarray
    next_cost_values: np.ndarray
    reached_features: Tensor | None = None
    critic_features: Tensor | None = None

    @property
    def size(self) -> int:
        return int(self.rewards.size)

    def flat_images(self, reached: bool = False) -> Tensor:
        """Every frame (or reached frame) of the rollout, flat ``[T·n, ...]``, on the policy's device."""
        src = self.reached_images if reached else self.images
        assert src is not None
        return torch.from_numpy(src.reshape(self.size, *src.shape[2:])).to(self.features.device)

    def flat_instructions(self) -> list[str]:
        return [s for row in self.instructions for s in row]


@dataclass
class Advantages:
    """Normalised reward advantages (mixed with the cost ones for ``ppo_lag`` / ``penalty``), value targets,
    and the cost ones when there is a cost value head; flat ``[T·n]``."""

    adv: Tensor
    ret: Tensor
    cost_adv: Tensor
    cost_ret: Tensor | None


def advantages(ro: Rollout, costs: np.ndarray, cfg: PPOConfig, dual: float, with_cost: bool) -> Advantages:
    """GAE of the reward (and of ``costs`` when ``with_cost``), a truncation's value bootstrapped into the reward
    (CleanRL's fix); SafeVLA's mixed advantage ``(A_r − λ A_c) / (1 + λ)`` for ``ppo_lag`` and ``penalty``."""
    n, dev = ro.size, ro.features.device
    trunc = (ro.dones > 0) & (ro.terminated == 0)
    rew_b = ro.rewards + cfg.gamma * np.where(trunc, ro.next_values, 0.0)
    adv, ret = gae(rew_b, ro.values, ro.next_values, ro.dones, cfg.gamma, cfg.gae_lambda)
    b_adv = _normalise(torch.as_tensor(adv.reshape(n), dtype=torch.float32, device=dev))
    b_ret = torch.as_tensor(ret.reshape(n), dtype=torch.float32, device=dev)
    b_cadv, b_cret = torch.zeros(n, device=dev), None
    if with_cost:
        cost_b = costs + cfg.gamma * np.where(trunc, ro.next_cost_values, 0.0)
        cadv, cret = gae(cost_b, ro.cost_values, ro.next_cost_values, ro.dones, cfg.gamma, cfg.gae_lambda)
        b_cadv = _normalise(torch.as_tensor(cadv.reshape(n), dtype=torch.float32, device=dev))
        b_cret = torch.as_tensor(cret.reshape(n), dtype=torch.float32, device=dev)
        if cfg.method in ("ppo_lag", "penalty"):  # SafeVLA: one surrogate on the mixed advantage
            b_adv = (b_adv - dual * b_cadv) / (1.0 + dual)
    return Advantages(b_adv, b_ret, b_cadv, b_cret)


@dataclass
class Gate:
    """ζ per sample (1: the PPO surrogate, 0: the safety step), the critic's features of the rollout, the best
    candidate action (the ``recovery`` target), the training costs the advantages use, and what is logged."""

    gate: Tensor
    critic_features: Tensor | None
    a_star: Tensor | None
    costs: np.ndarray
    stats: dict[str, float]


class GatedPPO:
    """The state of one training run: the policy and its value heads, optimisers, the safety critic with its
    replay, the dual variable (β or λ) and the env with its current observation. :func:`train` calls, per
    iteration, :meth:`collect`, :meth:`train_critic`, :meth:`update_dual`, :meth:`gate`, :func:`advantages` and
    :meth:`update`.

    Devices: the networks (value heads, the critic, the start-policy copy) and the rollout's tensors live on the
    policy's device (``policy.device``: load or move the policy there first); envs, the margin source, replay
    and the random generator stay on the CPU, so a run draws the same noise and minibatches on any device."""

    def __init__(self, policy: Any, env: str, margin: MarginSource, cfg: PPOConfig,
                 critic: SafetyCritic | None = None) -> None:
        torch.manual_seed(cfg.seed)
        set_torch_threads(cfg.threads)
        self.policy, self.margin, self.cfg = policy, margin, cfg
        self.device = dev = torch.device(policy.device)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.vec = TrainVec(env, cfg.num_envs, seed=10_000 * (cfg.seed + 1), obs=cfg.obs)
        self.images, self.instructions, gt_m, gt_c = self.vec.reset()
        self.low = torch.as_tensor(policy.action_low, device=dev)
        self.high = torch.as_tensor(policy.action_high, device=dev)
        self.a_dim = int(self.low.numel())
        uses_critic = cfg.method in USES_CRITIC
        self.value = mlp(policy.feature_dim).to(dev)  # initialised on the CPU: the same weights on any device
        self.cost_value = mlp(policy.feature_dim).to(dev) if cfg.method == "ppo_lag" or (
            uses_critic and cfg.safety_update not in ("dpg", "recovery")) else None
        self.value_params = list(self.value.parameters()) + (
            list(self.cost_value.parameters()) if self.cost_value is not None else [])
        if not cfg.train_encoder:
            policy.encoder.requires_grad_(False)
        self.pi_params = [p for p in policy.parameters() if p.requires_grad]
        self.pi_opt = torch.optim.Adam(self.pi_params, lr=cfg.lr, eps=1e-5, foreach=True)  # as shield/policy/bc.py
        #: a frozen copy of the start policy for the KL anchor (``kl_start``); its weight this iteration
        self.start_policy = copy.deepcopy(policy).eval().requires_grad_(False) if cfg.kl_start > 0 else None
        self.kl_weight = cfg.kl_start
        self.v_opt = torch.optim.Adam(self.value_params, lr=cfg.value_lr, eps=1e-5, foreach=True)
        self.trainer: CriticTrainer | None = None
        #: the (frozen) critic encoder has the (frozen) policy encoder's weights: the critic reads the policy's
        #: features (TurtleBot-Nav / Franka-Reach, whose warm-up freezes it), one CNN pass per frame
        self.shared_encoder = False
        self.buffer: ReplayBuffer | FeatureReplay | None = None
        if not uses_critic:
            critic = None
        elif critic is None:
            critic = SafetyCritic.from_policy(policy, cfg.critic).eval()
        else:
            critic = critic.to(dev)  # a stored warm critic loads on the CPU
        self.critic = critic
        if critic is not None and cfg.online_td:  # without online TD the critic stays as given: no replay, no trainer
            capacity = min(critic.config.buffer_size, cfg.total_steps + cfg.batch)
            if cfg.critic_replay == "features":
                if cfg.train_encoder:
                    raise ValueError("critic_replay: features needs train_encoder: false (replay stores policy features)")
                critic.config = replace(critic.config, freeze_encoder=True)
                critic.encoder.requires_grad_(False)
                self.buffer = FeatureReplay(capacity, critic.feature_dim, policy.feature_dim, self.a_dim, seed=cfg.seed)
                self.shared_encoder = same_weights(critic.encoder, policy.encoder)
            else:
                self.buffer = ReplayBuffer(capacity, self.images.shape[1:], self.a_dim, seed=cfg.seed,
                                           dtype=self.images.dtype)
            self.trainer = CriticTrainer(critic)
        self.ell = margin(self.images, gt_m, gt_c)
        self.episodes = _Episodes(cfg.num_envs, gt_c)
        self.multiplier = Lagrange.for_config(cfg)
        self.steps = 0

    def _features(self, imgs: Any, instr: list[str]) -> Tensor:
        with torch.no_grad():
            return self.policy.features(torch.as_tensor(imgs, device=self.device), instr)

    def _mean_action(self, imgs: Tensor, instr: Any) -> Tensor:
        with torch.no_grad():
            return self.policy(imgs, instr)[0]

    def _policy_mean(self, features: Tensor) -> Tensor:
        with torch.no_grad():
            return self.policy.from_features(features)[0]

    def collect(self) -> Rollout:
        """``rollout_steps`` steps of every env with the stochastic policy (line 3); image replay is filled as
        it goes, the episode sums as episodes end."""
        cfg, policy, margin, value, cost_value = self.cfg, self.policy, self.margin, self.value, self.cost_value
        T, n, shape = cfg.rollout_steps, cfg.num_envs, self.images.shape[1:]
        images, instructions, ell = self.images, self.instructions, self.ell
        buf_img = np.zeros((T, n, *shape), dtype=images.dtype)
        feature_replay, dev = isinstance(self.buffer, FeatureReplay), self.device
        ro = Rollout(images=buf_img, reached_images=np.zeros_like(buf_img) if feature_replay else None,
                     instructions=[], features=torch.zeros(T, n, policy.feature_dim, device=dev),
                     actions=torch.zeros(T, n, self.a_dim, device=dev), log_probs=torch.zeros(T, n, device=dev),
                     ell=np.zeros((T, n), np.float32), reached_ell=np.zeros((T, n), np.float32),
                     rewards=np.zeros((T, n)), costs=np.zeros((T, n)), dones=np.zeros((T, n)), terminated=np.zeros((T, n)),
                     values=np.zeros((T, n)), next_values=np.zeros((T, n)), cost_values=np.zeros((T, n)),
                     next_cost_values=np.zeros((T, n)),
                     reached_features=torch.zeros(T, n, policy.feature_dim, device=dev) if feature_replay else None)
        policy.eval()
        f = self._features(images, instructions)
        for t in range(T):
            with torch.no_grad():
                mean, log_std = policy.from_features(f)
                noise = torch.randn(mean.shape, generator=self.gen).to(dev)  # drawn on the CPU generator
                act = torch.clamp(mean + log_std.exp() * noise, self.low, self.high)
                lp = clipped_gaussian_log_prob(mean, log_std, act, self.low, self.high)
                ro.values[t] = value(f).squeeze(-1).cpu().numpy()
                if cost_value is not None:
                    ro.cost_values[t] = cost_value(f).squeeze(-1).cpu().numpy()
            ro.images[t], ro.features[t], ro.actions[t], ro.log_probs[t] = images, f, act, lp
            ro.instructions.append(list(instructions))
            act_np = act.cpu().numpy()
            step = self.vec.step(act_np.astype(np.float64))
            done = step.done
            reached_ell = margin(step.reached_images, step.reached_margin, step.reached_cost)
            new_ell = margin(step.images, step.margin, step.cost) if done.any() else reached_ell
            train_cost = margin_cost = (reached_ell < 0).astype(np.float64)
            if cfg.exit_is_failure and step.exited is not None and step.exited.any():
                assert step.steps_cut is not None
                reached_ell = cap_exits(reached_ell, step.exited)
                train_cost = np.where(step.exited, cfg.exit_price * step.steps_cut, train_cost)
            ro.ell[t], ro.reached_ell[t] = ell, reached_ell
            if isinstance(self.buffer, ReplayBuffer):
                self.buffer.add(images, instructions, act_np, ell, step.reached_images, reached_ell,
                                step.terminated.astype(np.float32))
            elif ro.reached_images is not None:
                ro.reached_images[t] = step.reached_images
            f_next = self._features(step.images, step.instructions)
            if ro.reached_features is not None:  # o' = the next o unless the episode ended (then: the final frame)
                ro.reached_features[t] = f_next
                if done.any():
                    idx = np.flatnonzero(done)
                    ro.reached_features[t, _on(dev, idx)] = self._features(step.reached_images[idx],
                                                                           [instructions[i] for i in idx])
            with torch.no_grad():
                v_next = value(f_next).squeeze(-1).cpu().numpy()
                cv_next = cost_value(f_next).squeeze(-1).cpu().numpy() if cost_value is not None else np.zeros(n)
                if step.truncated.any():  # time limit: bootstrap from the terminal frame, not the reset one
                    idx = np.flatnonzero(step.truncated)
                    fr = self._features(step.reached_images[idx], [step.instructions[i] for i in idx])
                    v_next[idx] = value(fr).squeeze(-1).cpu().numpy()
                    if cost_value is not None:
                        cv_next[idx] = cost_value(fr).squeeze(-1).cpu().numpy()
            ro.rewards[t], ro.costs[t] = step.reward, train_cost
            ro.next_values[t] = np.where(step.terminated, 0.0, v_next)
            ro.next_cost_values[t] = np.where(step.terminated, 0.0, cv_next)
            ro.dones[t], ro.terminated[t] = done, step.terminated
            self.episodes.add(step, train_cost, margin_cost, (new_ell < 0).astype(np.float64))
            images, instructions, f, ell = step.images, step.instructions, f_next, new_ell
        self.images, self.instructions, self.ell = images, instructions, ell
        self.steps += T * n
        return ro

    def train_critic(self, ro: Rollout) -> dict[str, float]:
        """Lines 4-5: the rollout into the critic's replay (feature replay: encoded once here), then its K TD
        steps; the trainer's logs."""
        critic, buffer = self.critic, self.buffer
        if not self.cfg.online_td:
            return {}
        if isinstance(buffer, FeatureReplay) and critic is not None and ro.reached_features is not None:
            n = ro.size
            ro.critic_features, next_feature = self._critic_features(ro)
            buffer.add(feature=ro.critic_features, next_feature=next_feature,
                       next_policy_feature=ro.reached_features.reshape(n, -1), action=ro.actions.reshape(n, self.a_dim), margin=ro.ell.reshape(n),
                       next_margin=ro.reached_ell.reshape(n), terminated=ro.terminated.reshape(n))
        if self.trainer is not None and buffer is not None:
            return self.trainer.update(buffer, self._policy_mean if isinstance(buffer, FeatureReplay) else self._mean_action)
        return {}

    def _critic_features(self, ro: Rollout) -> tuple[Tensor, Tensor]:
        """The frozen critic encoder's features of every ``o`` and ``o'`` of the rollout: the policy's (already
        computed) when the two encoders are the same weights; otherwise each frame encoded once (``o'_t`` is
        ``o_{t+1}`` unless the step ended an episode or is the rollout's last)."""
        assert self.critic is not None and ro.reached_features is not None and ro.reached_images is not None
        n = ro.size
        if self.shared_encoder:
            return ro.features.reshape(n, -1), ro.reached_features.reshape(n, -1)
        T, envs, dev = *ro.rewards.shape, self.device
        instr = ro.flat_instructions()
        feat = batched_features(self.critic.encoder, ro.flat_images(), instr)
        same = np.zeros((T, envs), dtype=bool)
        same[:-1] = ro.dones[:-1] == 0
        nxt = torch.zeros(T, envs, feat.shape[-1], device=dev)
        shifted = feat.reshape(T, envs, -1)[1:]
        nxt[:-1][_on(dev, same[:-1])] = shifted[_on(dev, same[:-1])]
        rest = _on(dev, np.flatnonzero(~same.reshape(-1)))
        nxt = nxt.reshape(n, -1)
        nxt[rest] = batched_features(self.critic.encoder, ro.flat_images(reached=True)[rest], [instr[i] for i in rest.tolist()])
        return feat, nxt

    @property
    def dual(self) -> float:
        """β (``gated``) or λ (``ppo_lag`` / ``penalty``): :attr:`multiplier`'s value."""
        return self.multiplier.value

    @dual.setter
    def dual(self, value: float) -> None:
        self.multiplier.value = float(value)

    def update_dual(self, ep: dict[str, float]) -> float:
        """Line 6 (Eq. 7): :class:`Lagrange`'s step on the mean episode cost c̄ (``dual_cost``) of the episodes that
        ended in this iteration; unchanged when none did (and for ``ppo``)."""
        cfg = self.cfg
        if cfg.method != "ppo" and ep["episodes"] > 0:
            self.multiplier.update(ep["margin_cost" if cfg.dual_cost == "margin" else "train_cost"])
        return self.dual

    def gate(self, ro: Rollout) -> Gate:
        """Line 7, once per iteration from the pre-update policy mean (stop-gradient): ζ = 1[Q_s(o, ā_old) > δ].
        With ``target: best`` Q_s is the HJ value (best continuation), so only samples whose action leads
        somewhere unrecoverable are gated (the selective gate). ``penalty`` with a cost-advantage update trains
        on ``max(0, −Q_s)`` as its cost."""
        cfg, critic, n = self.cfg, self.critic, ro.size
        out = Gate(torch.ones(n, device=self.device), None, None, ro.costs, {})
        if critic is None:
            return out
        crit_f = ro.critic_features  # feature replay: the frozen encoder's, from train_critic
        if crit_f is None:
            crit_f = batched_features(critic.encoder, ro.flat_images(), ro.flat_instructions())
        out.critic_features = crit_f
        with torch.no_grad():
            mean_old = self.policy.from_features(ro.features.reshape(n, -1))[0]
            if critic.config.target == "best" or cfg.safety_update == "recovery":
                cands = critic.candidates(mean_old)
                q_c = critic.q_candidates(crit_f, cands)  # column 0 is the policy mean
                q_old = q_c[:, 0]
                v_best, out.a_star = best_of(q_c, cands)
                if cfg.recovery_target == "nearest_safe":
                    out.a_star = nearest_safe(q_c, cands, cfg.delta)
                out.stats["no_safe_action_frac"] = float((v_best <= cfg.delta).float().mean())
            else:
                q_old = critic.q_features(crit_f, mean_old)
        out.gate = (q_old > cfg.delta).float()
        out.stats["q_policy_mean"] = float(q_old.mean())
        out.stats["infeasible_frac"] = float(1.0 - out.gate.mean())
        if cfg.method == "penalty" and cfg.safety_update != "dpg":
            out.costs = torch.relu(-q_old).reshape(ro.costs.shape).cpu().numpy().astype(np.float64)
        return out

    def update(self, ro: Rollout, adv: Advantages, gate: Gate, policy_step: bool = True) -> dict[str, float]:
        """``epochs`` passes of minibatch steps on the policy (each method's loss, :func:`policy_loss`) and the
        value heads, stopped early when the approximate KL passes ``target_kl``; the logs. ``policy_step=False``
        (the value warm-up) steps only the value heads."""
        cfg, policy, critic, dual = self.cfg, self.policy, self.critic, self.dual
        low, high, n = self.low, self.high, ro.size
        flat_img, flat_instr = ro.flat_images() if cfg.train_encoder else None, ro.flat_instructions()
        flat_f = ro.features.reshape(n, -1)
        b_a, b_lp = ro.actions.reshape(n, self.a_dim), ro.log_probs.reshape(n)
        b_adv, b_ret, b_cadv, b_cret = adv.adv, adv.ret, adv.cost_adv, adv.cost_ret
        crit_f, a_star = gate.critic_features, gate.a_star
        policy.train()
        mb = max(1, n // cfg.minibatches)
        kls, clipfracs, pg_losses, safety_losses, kl_start = [], [], [], [], []  # type: ignore[var-annotated]
        stop = False
        for _ in range(cfg.epochs):
            perm = torch.randperm(n, generator=self.gen).to(self.device)  # drawn on the CPU generator
            for s0 in range(0, n, mb):
                idx = perm[s0:s0 + mb]
                if flat_img is not None:  # train_encoder
                    fb = policy.features(flat_img[idx], [flat_instr[i] for i in idx.tolist()])
                else:
                    fb = flat_f[idx]
                mean, log_std = policy.from_features(fb)
                new_lp = clipped_gaussian_log_prob(mean, log_std, b_a[idx], low, high)
                log_ratio = new_lp - b_lp[idx]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    kls.append(float(((ratio - 1) - log_ratio).mean()))
                    clipfracs.append(float(((ratio - 1.0).abs() > cfg.clip).float().mean()))
                pg = clipped_surrogate(b_adv[idx], ratio, cfg.clip)
                q_of = None if critic is None or crit_f is None else partial(critic.q_features, crit_f[idx])
                loss_pi, safety = constrained_loss(
                    cfg, dual, pg, ratio, mean, gate.gate[idx], b_adv[idx], None if b_cadv is None else b_cadv[idx],
                    None if a_star is None else a_star[idx], q_of, (high - low) / 2)
                if safety is not None:
                    safety_losses.append(safety)
                pg_losses.append(float(pg.detach().mean()))
                if cfg.ent_coef:
                    loss_pi = loss_pi - cfg.ent_coef * gaussian_entropy(log_std).mean()
                if policy_step and self.start_policy is not None and self.kl_weight > 0:
                    with torch.no_grad():
                        mean0, log_std0 = self.start_policy.from_features(fb)
                    kl = gaussian_kl(mean0, log_std0, mean, log_std)
                    kl_start.append(float(kl.detach()))
                    loss_pi = loss_pi + self.kl_weight * kl
                if policy_step:
                    self.pi_opt.zero_grad(set_to_none=True)
                    loss_pi.backward()
                    nn.utils.clip_grad_norm_(self.pi_params, cfg.max_grad_norm)
                    self.pi_opt.step()
                fv = fb.detach()
                v_loss = 0.5 * ((self.value(fv).squeeze(-1) - b_ret[idx]) ** 2).mean()
                if self.cost_value is not None:
                    assert b_cret is not None
                    v_loss = v_loss + 0.5 * ((self.cost_value(fv).squeeze(-1) - b_cret[idx]) ** 2).mean()
                self.v_opt.zero_grad(set_to_none=True)
                v_loss.backward()
                nn.utils.clip_grad_norm_(self.value_params, cfg.max_grad_norm)
                self.v_opt.step()
            if policy_step and cfg.target_kl is not None and np.mean(kls[-cfg.minibatches:]) > cfg.target_kl:
                stop = True
                break
        policy.eval()
        row = {"approx_kl": float(np.mean(kls)), "clipfrac": float(np.mean(clipfracs)),
               "pg_loss": float(np.mean(pg_losses)), "kl_stop": float(stop),
               "log_std": float(policy.log_std.detach().mean()) if hasattr(policy, "log_std") else np.nan}
        if safety_losses:
            row["safety_loss"] = float(np.mean(safety_losses))
        if kl_start:
            row.update(kl_start=float(np.mean(kl_start)), kl_weight=float(self.kl_weight))
        return row

    def close(self) -> None:
        self.vec.close()
        if not self.cfg.train_encoder:
            self.policy.encoder.requires_grad_(True)


def train(policy: Any, env: str, margin: MarginSource, cfg: PPOConfig, critic: SafetyCritic | None = None,
          log: Callable[[dict[str, float], int], None] | None = None,
          progress: Callable[[str], None] | None = print, time_budget: float | None = None) -> TrainResult:
    """Algorithm 1 (``gated``) or a baseline on ``env`` from the (BC-initialised) ``policy``; in place, on the
    policy's device (:class:`GatedPPO`).

    ``critic``: a warm-started safety critic (:func:`.critic.warm_start`); a fresh copy of the policy's
    encoder with a new head otherwise (``gated`` / ``penalty`` only). ``time_budget``: stop after the first
    iteration that ends that many seconds (or more) after the start; ``history[-1]["env_steps"]`` is then the
    number of env steps reached."""
    run = GatedPPO(policy, env, margin, cfg, critic)
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    for it in range(1, cfg.iterations + 1):
        t0 = time.perf_counter()
        ro = run.collect()
        ep = run.episodes.drain()
        row: dict[str, float] = {"iteration": float(it), "env_steps": float(run.steps), **ep}
        row.update(run.train_critic(ro))
        warming = it <= cfg.value_warmup
        row["dual"] = run.dual if warming else run.update_dual(ep)
        gate = run.gate(ro)
        row.update(gate.stats)
        adv = advantages(ro, gate.costs, cfg, run.dual, run.cost_value is not None)
        policy_its = max(1, cfg.iterations - cfg.value_warmup)
        decay = 1.0 - (it - cfg.value_warmup - 1) / policy_its
        run.kl_weight = 0.0 if warming else cfg.kl_start * max(cfg.kl_floor, decay)
        stats = run.update(ro, adv, gate, policy_step=not warming)
        row["value_warmup"] = float(warming)
        safety = stats.pop("safety_loss", None)
        row.update(stats)
        row.update({"seconds": time.perf_counter() - t0, "elapsed": time.perf_counter() - start})
        if safety is not None:
            row["safety_loss"] = safety
        history.append(row)
        if log is not None:
            log(namespaced({k: v for k, v in row.items() if isinstance(v, float) and math.isfinite(v)}), it)
        last = it == cfg.iterations or (time_budget is not None and row["elapsed"] >= time_budget)
        if progress is not None and (it == 1 or it % 10 == 0 or last):
            progress(f"[{cfg.method}/{cfg.margin} seed {cfg.seed}] it {it}/{cfg.iterations} steps {run.steps} "
                     f"CSC {row.get('csc', float('nan')):.2f} reach {row.get('reach', float('nan')):.2f} "
                     f"SR {row.get('sr', float('nan')):.2f} dual {run.dual:.2f} "
                     f"infeasible {row.get('infeasible_frac', float('nan')):.2f} ({row['seconds']:.1f} s, "
                     f"{cfg.batch / row['seconds']:.0f} steps/s)")
        if last:
            break
    run.close()
    return TrainResult(run.policy, run.critic, history, cfg)
