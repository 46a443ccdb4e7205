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

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from ..costs.margins import MarginKind, MarginSource
from ..policy.visuomotor import clipped_gaussian_log_prob, gaussian_entropy
from .critic import CriticConfig, CriticTrainer, FeatureReplay, ReplayBuffer, SafetyCritic, best_of
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
    train_encoder: bool = False
    # gate and dual variable
    delta: float = 0.2
    c_max: float = 3.0
    eta: float = 0.01
    beta_min: float = 0.5
    beta_max: float = 15.0
    beta0: float = 3.0
    lambda0: float = 0.0  # ppo_lag / penalty start (SafeVLA starts its multiplier at 0)
    critic: CriticConfig = field(default_factory=CriticConfig)
    seed: int = 0
    threads: int = 2

    def __post_init__(self) -> None:
        if self.safety_update == "recovery" and self.method != "gated":
            raise ValueError(f"safety_update: recovery is a gated update, not one for method {self.method!r}")

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


def _batched(fn: Callable[[Tensor, list[str]], Tensor], images: Tensor, instructions: list[str],
             size: int = 1024) -> Tensor:
    with torch.no_grad():
        return torch.cat([fn(images[i:i + size], instructions[i:i + size]) for i in range(0, len(images), size)])


def _normalise(x: Tensor) -> Tensor:
    return (x - x.mean()) / (x.std() + 1e-8)


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
        self.ret = np.zeros(n)
        self.unsafe = first_cost > 0
        self.finished: list[tuple[float, float, float, bool, bool]] = []

    def add(self, step: Any, train_cost: np.ndarray, reset_cost: np.ndarray) -> None:
        self.cost += step.reached_cost
        self.train_cost += train_cost
        self.ret += step.reward
        self.unsafe |= step.reached_cost > 0
        for i in np.flatnonzero(step.done):
            self.finished.append((self.ret[i], self.cost[i], self.train_cost[i], bool(step.success[i]),
                                  bool(self.unsafe[i])))
            self.cost[i] = self.train_cost[i] = self.ret[i] = 0.0
            self.unsafe[i] = reset_cost[i] > 0

    def drain(self) -> dict[str, float]:
        rows, self.finished = self.finished, []
        if not rows:
            return {"episodes": 0.0}
        r = np.asarray(rows, dtype=np.float64)
        return {"episodes": float(len(rows)), "return": float(r[:, 0].mean()), "csc": float(r[:, 1].mean()),
                "train_cost": float(r[:, 2].mean()), "reach": float(r[:, 3].mean()),
                "sr": float(np.mean(r[:, 3].astype(bool) & ~r[:, 4].astype(bool)))}


def train(policy: Any, env: str, margin: MarginSource, cfg: PPOConfig, critic: SafetyCritic | None = None,
          log: Callable[[dict[str, float], int], None] | None = None,
          progress: Callable[[str], None] | None = print) -> TrainResult:
    """Algorithm 1 (``gated``) or a baseline on ``env`` from the (BC-initialised) ``policy``; in place.

    ``critic``: a warm-started safety critic (:func:`.critic.warm_start`); a fresh copy of the policy's
    encoder with a new head otherwise (``gated`` / ``penalty`` only)."""
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    gen = torch.Generator().manual_seed(cfg.seed)
    vec = TrainVec(env, cfg.num_envs, seed=10_000 * (cfg.seed + 1), obs=cfg.obs)
    images, instructions, gt_m, gt_c = vec.reset()
    low = torch.as_tensor(policy.action_low)
    high = torch.as_tensor(policy.action_high)
    a_dim = int(low.numel())
    T, n = cfg.rollout_steps, cfg.num_envs
    uses_critic = cfg.method in USES_CRITIC
    value = mlp(policy.feature_dim)
    cost_value = mlp(policy.feature_dim) if cfg.method == "ppo_lag" or (
        uses_critic and cfg.safety_update not in ("dpg", "recovery")) else None
    value_params = list(value.parameters()) + (list(cost_value.parameters()) if cost_value is not None else [])
    if not cfg.train_encoder:
        policy.encoder.requires_grad_(False)
    pi_params = [p for p in policy.parameters() if p.requires_grad]
    pi_opt = torch.optim.Adam(pi_params, lr=cfg.lr, eps=1e-5)
    v_opt = torch.optim.Adam(value_params, lr=cfg.value_lr, eps=1e-5)
    trainer: CriticTrainer | None = None
    buffer: ReplayBuffer | FeatureReplay | None = None
    if not uses_critic:
        critic = None
    elif critic is None:
        critic = SafetyCritic.from_policy(policy, cfg.critic).eval()
    if critic is not None:
        capacity = min(critic.config.buffer_size, cfg.total_steps + cfg.batch)
        if cfg.critic_replay == "features":
            if cfg.train_encoder:
                raise ValueError("critic_replay: features needs train_encoder: false (replay stores policy features)")
            critic.config = replace(critic.config, freeze_encoder=True)
            critic.encoder.requires_grad_(False)
            buffer = FeatureReplay(capacity, critic.feature_dim, policy.feature_dim, a_dim, seed=cfg.seed)
        else:
            buffer = ReplayBuffer(capacity, images.shape[1:], a_dim, seed=cfg.seed, dtype=images.dtype)
        trainer = CriticTrainer(critic)

    def feats(imgs: Any, instr: list[str]) -> Tensor:
        with torch.no_grad():
            return policy.features(torch.as_tensor(imgs), instr)

    def mean_action(imgs: Tensor, instr: Any) -> Tensor:
        with torch.no_grad():
            return policy(imgs, instr)[0]

    def policy_mean(features: Tensor) -> Tensor:
        with torch.no_grad():
            return policy.from_features(features)[0]

    ell = margin(images, gt_m, gt_c)
    episodes = _Episodes(n, gt_c)
    dual = cfg.beta0 if cfg.method == "gated" else cfg.lambda0
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    steps = 0
    for it in range(1, cfg.iterations + 1):
        t0 = time.perf_counter()
        # ---- rollout (Algorithm 1 line 3)
        buf_img = np.zeros((T, n, *images.shape[1:]), dtype=images.dtype)
        buf_rimg = np.zeros_like(buf_img) if isinstance(buffer, FeatureReplay) else None
        ells, reached_ells = np.zeros((T, n), np.float32), np.zeros((T, n), np.float32)
        buf_instr: list[list[str]] = []
        buf_f = torch.zeros(T, n, policy.feature_dim)
        buf_a = torch.zeros(T, n, a_dim)
        buf_lp = torch.zeros(T, n)
        rew, costs = np.zeros((T, n)), np.zeros((T, n))
        dones, terms = np.zeros((T, n)), np.zeros((T, n))
        values, next_values = np.zeros((T, n)), np.zeros((T, n))
        cvalues, next_cvalues = np.zeros((T, n)), np.zeros((T, n))
        policy.eval()
        f = feats(images, instructions)
        for t in range(T):
            with torch.no_grad():
                mean, log_std = policy.from_features(f)
                noise = torch.randn(mean.shape, generator=gen)
                act = torch.clamp(mean + log_std.exp() * noise, low, high)
                lp = clipped_gaussian_log_prob(mean, log_std, act, low, high)
                values[t] = value(f).squeeze(-1).numpy()
                if cost_value is not None:
                    cvalues[t] = cost_value(f).squeeze(-1).numpy()
            buf_img[t], buf_f[t], buf_a[t], buf_lp[t] = images, f, act, lp
            buf_instr.append(list(instructions))
            step = vec.step(act.numpy().astype(np.float64))
            done = step.done
            reached_ell = margin(step.reached_images, step.reached_margin, step.reached_cost)
            new_ell = margin(step.images, step.margin, step.cost) if done.any() else reached_ell
            train_cost = (reached_ell < 0).astype(np.float64)
            ells[t], reached_ells[t] = ell, reached_ell
            if isinstance(buffer, ReplayBuffer):
                buffer.add(images, instructions, act.numpy(), ell, step.reached_images, reached_ell,
                           step.terminated.astype(np.float32))
            elif buf_rimg is not None:
                buf_rimg[t] = step.reached_images
            f_next = feats(step.images, step.instructions)
            with torch.no_grad():
                v_next = value(f_next).squeeze(-1).numpy()
                cv_next = cost_value(f_next).squeeze(-1).numpy() if cost_value is not None else np.zeros(n)
                if step.truncated.any():  # time limit: bootstrap from the terminal frame, not the reset one
                    idx = np.flatnonzero(step.truncated)
                    fr = feats(step.reached_images[idx], [step.instructions[i] for i in idx])
                    v_next[idx] = value(fr).squeeze(-1).numpy()
                    if cost_value is not None:
                        cv_next[idx] = cost_value(fr).squeeze(-1).numpy()
            rew[t], costs[t] = step.reward, train_cost
            next_values[t] = np.where(step.terminated, 0.0, v_next)
            next_cvalues[t] = np.where(step.terminated, 0.0, cv_next)
            dones[t], terms[t] = done, step.terminated
            episodes.add(step, train_cost, (new_ell < 0).astype(np.float64))
            images, instructions, f, ell = step.images, step.instructions, f_next, new_ell
        steps += T * n
        N = T * n
        ep = episodes.drain()
        row: dict[str, float] = {"iteration": float(it), "env_steps": float(steps), **ep}
        # ---- critic (lines 4-5)
        flat_img = torch.from_numpy(buf_img.reshape(N, *images.shape[1:]))
        flat_instr = [s for row_i in buf_instr for s in row_i]
        if isinstance(buffer, FeatureReplay) and critic is not None and buf_rimg is not None:
            flat_r = torch.from_numpy(buf_rimg.reshape(N, *images.shape[1:]))
            buffer.add(feature=_batched(critic.encoder, flat_img, flat_instr),
                       next_feature=_batched(critic.encoder, flat_r, flat_instr),
                       next_policy_feature=_batched(policy.features, flat_r, flat_instr),
                       action=buf_a.reshape(N, a_dim), margin=ells.reshape(N), next_margin=reached_ells.reshape(N),
                       terminated=terms.reshape(N))
        if trainer is not None and buffer is not None:
            row.update(trainer.update(buffer, policy_mean if isinstance(buffer, FeatureReplay) else mean_action))
        # ---- dual variable (line 6): on the episodes that ended in this iteration
        if cfg.method != "ppo" and ep["episodes"] > 0:
            c_bar = ep["train_cost"]
            if cfg.method == "gated":
                dual = float(np.clip(dual + cfg.eta * (c_bar - cfg.c_max), cfg.beta_min, cfg.beta_max))
            else:
                dual = max(0.0, dual + cfg.eta * (c_bar - cfg.c_max))
        row["dual"] = dual
        # ---- gate (line 7) and critic features of the rollout, once
        flat_f = buf_f.reshape(N, -1)
        crit_f: Tensor | None = None
        gate = torch.ones(N)
        a_star: Tensor | None = None  # the critic's best candidate action per sample (recovery target)
        if critic is not None:
            crit_f = _batched(critic.encoder, flat_img, flat_instr)
            with torch.no_grad():
                mean_old = policy.from_features(flat_f)[0]
                if critic.config.target == "best" or cfg.safety_update == "recovery":
                    cands = critic.candidates(mean_old)
                    q_c = critic.q_candidates(crit_f, cands)  # column 0 is the policy mean
                    q_old = q_c[:, 0]
                    v_best, a_star = best_of(q_c, cands)
                    row["no_safe_action_frac"] = float((v_best <= cfg.delta).float().mean())
                else:
                    q_old = critic.q_features(crit_f, mean_old)
            # ζ = 1[Q_s(o, ā_old) > δ]; with ``target: best`` Q_s is the HJ value (best continuation), so only
            # samples whose action leads somewhere unrecoverable are gated (the selective gate)
            gate = (q_old > cfg.delta).float()
            row["q_policy_mean"] = float(q_old.mean())
            row["infeasible_frac"] = float(1.0 - gate.mean())
            if cfg.method == "penalty" and cfg.safety_update != "dpg":
                costs = torch.relu(-q_old).reshape(T, n).numpy().astype(np.float64)
        # ---- advantages: GAE, truncation bootstrapped into the reward (CleanRL's fix)
        trunc = (dones > 0) & (terms == 0)
        rew_b = rew + cfg.gamma * np.where(trunc, next_values, 0.0)
        adv, ret = gae(rew_b, values, next_values, dones, cfg.gamma, cfg.gae_lambda)
        b_adv = _normalise(torch.as_tensor(adv.reshape(N), dtype=torch.float32))
        b_ret = torch.as_tensor(ret.reshape(N), dtype=torch.float32)
        b_cadv = torch.zeros(N)
        if cost_value is not None:
            cost_b = costs + cfg.gamma * np.where(trunc, next_cvalues, 0.0)
            cadv, cret = gae(cost_b, cvalues, next_cvalues, dones, cfg.gamma, cfg.gae_lambda)
            b_cadv = _normalise(torch.as_tensor(cadv.reshape(N), dtype=torch.float32))
            b_cret = torch.as_tensor(cret.reshape(N), dtype=torch.float32)
            if cfg.method in ("ppo_lag", "penalty"):  # SafeVLA: one surrogate on the mixed advantage
                b_adv = (b_adv - dual * b_cadv) / (1.0 + dual)
        b_a, b_lp = buf_a.reshape(N, a_dim), buf_lp.reshape(N)
        policy.train()
        mb = max(1, N // cfg.minibatches)
        kls, clipfracs, pg_losses, safety_losses = [], [], [], []
        stop = False
        for _ in range(cfg.epochs):
            perm = torch.randperm(N, generator=gen)
            for s0 in range(0, N, mb):
                idx = perm[s0:s0 + mb]
                if cfg.train_encoder:
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
                a_mb = b_adv[idx]
                pg = torch.max(-a_mb * ratio, -a_mb * torch.clamp(ratio, 1 - cfg.clip, 1 + cfg.clip))
                q, pg_safe = None, None
                if cfg.method == "gated" and cfg.safety_update == "recovery" and a_star is not None:
                    scale = (high - low) / 2  # infeasible: pull the mean toward the best candidate, weight β
                    pg_safe = dual * (((mean - a_star[idx]) / scale) ** 2).mean(-1)
                elif cfg.method == "gated" and cfg.safety_update not in ("dpg", "recovery"):
                    if cfg.safety_update == "mixed":  # infeasible: SafeVLA's mixed advantage with λ = β
                        s_mb, weight = (b_adv[idx] - dual * b_cadv[idx]) / (1.0 + dual), 1.0
                    else:  # infeasible: the cost advantage alone, weighted by β
                        s_mb, weight = -b_cadv[idx], dual
                    pg_safe = weight * torch.max(-s_mb * ratio, -s_mb * torch.clamp(ratio, 1 - cfg.clip, 1 + cfg.clip))
                elif cfg.safety_update == "dpg" and critic is not None and crit_f is not None:
                    q = critic.q_features(crit_f[idx], mean)
                loss_pi, safety = policy_loss(cfg.method, pg, q, gate[idx], dual, pg_safe)
                if safety is not None:
                    safety_losses.append(safety)
                pg_losses.append(float(pg.detach().mean()))
                if cfg.ent_coef:
                    loss_pi = loss_pi - cfg.ent_coef * gaussian_entropy(log_std).mean()
                pi_opt.zero_grad(set_to_none=True)
                loss_pi.backward()
                nn.utils.clip_grad_norm_(pi_params, cfg.max_grad_norm)
                pi_opt.step()
                fv = fb.detach()
                v_loss = 0.5 * ((value(fv).squeeze(-1) - b_ret[idx]) ** 2).mean()
                if cost_value is not None:
                    v_loss = v_loss + 0.5 * ((cost_value(fv).squeeze(-1) - b_cret[idx]) ** 2).mean()
                v_opt.zero_grad(set_to_none=True)
                v_loss.backward()
                nn.utils.clip_grad_norm_(value_params, cfg.max_grad_norm)
                v_opt.step()
            if cfg.target_kl is not None and np.mean(kls[-cfg.minibatches:]) > cfg.target_kl:
                stop = True
                break
        policy.eval()
        row.update({"approx_kl": float(np.mean(kls)), "clipfrac": float(np.mean(clipfracs)),
                    "pg_loss": float(np.mean(pg_losses)), "kl_stop": float(stop),
                    "log_std": float(policy.log_std.detach().mean()) if hasattr(policy, "log_std") else np.nan,
                    "seconds": time.perf_counter() - t0, "elapsed": time.perf_counter() - start})
        if safety_losses:
            row["safety_loss"] = float(np.mean(safety_losses))
        history.append(row)
        if log is not None:
            log({k: v for k, v in row.items() if isinstance(v, float) and math.isfinite(v)}, it)
        if progress is not None and (it == 1 or it % 10 == 0 or it == cfg.iterations):
            progress(f"[{cfg.method}/{cfg.margin} seed {cfg.seed}] it {it}/{cfg.iterations} steps {steps} "
                     f"CSC {row.get('csc', float('nan')):.2f} reach {row.get('reach', float('nan')):.2f} "
                     f"SR {row.get('sr', float('nan')):.2f} dual {dual:.2f} "
                     f"infeasible {row.get('infeasible_frac', float('nan')):.2f} ({row['seconds']:.1f} s)")
    vec.close()
    if not cfg.train_encoder:
        policy.encoder.requires_grad_(True)
    return TrainResult(policy, critic, history, cfg)

