"""The state-based Dubins control (issue 21, item 4): the same critic, gate and PPO loop on the 7-D state.

No CNN and no rubric scorer: a :class:`~embodied_safety.shield.policy.state.StatePolicy` is behaviour-cloned from the scripted expert
in seconds, its own stochastic rollouts warm a safety critic (App. D's warm-up, :func:`.critic.warm_start`), and
:func:`.ppo.train` runs each method from it with ``obs: state`` on the ground-truth margin ℓ* (the "HJ (GT
cost)" setting) — so what the gate does to cost and success shows in minutes, without the encoder in the way::

    python analysis/state_control.py check            # the offline gate check, both critic targets
    python analysis/state_control.py compare --seeds 0 1 2   # table + data/shield/state_control.json

Runs (:data:`RUNS`): unconstrained PPO, PPO-Lagrangian, the D.1 gate (critic of the current policy) with the
cost-advantage step, and the selective gate (HJ critic, best candidate action) with the cost-advantage step or
the recovery target. Seeds: BC demos ``1_000_000 + i``, start rollouts ``2_000_000 + i``, evaluation
``3_000_000 + i`` (PPO's own episodes are ``10_000·(seed + 1) + …``, :mod:`.ppo`), all disjoint.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch

from ...threads import set_torch_threads
from ..costs.margins import MarginSource
from ..policy.state import StatePolicy, StatePolicyConfig
from ..policy.visuomotor import clipped_gaussian_log_prob
from .critic import CriticConfig, CriticTrainer, ReplayBuffer, SafetyCritic, warm_start
from .exits import cap_exits
from .ppo import PPOConfig, train
from .vecenv import TrainVec

BC_SEED, START_SEED, EVAL_SEED = 1_000_000, 2_000_000, 3_000_000
Target = Literal["policy_mean", "best"]
#: run -> (method, safety update, critic target)
RUNS: dict[str, tuple[str, str, Target]] = {
    "ppo": ("ppo", "advantage", "policy_mean"),
    "ppo_lag": ("ppo_lag", "advantage", "policy_mean"),
    "gated_d1": ("gated", "advantage", "policy_mean"),
    "gated_selective": ("gated", "advantage", "best"),
    "gated_selective_recovery": ("gated", "recovery", "best"),
}


@dataclass(frozen=True)
class StateControlConfig:
    """Budgets of the state-based control; the gate, dual and critic rows are Table 14's Dubins-VL ones with
    ``shield_ppo.cpu``'s overrides (K = 64, τ = 0.02, 30 k replay), as in the image pipeline."""

    seed: int = 0  # BC, start rollouts and warm critics (shared by every run, like the stage's BC policy)
    bc_episodes: int = 24  # expert episodes (few: a weak start, like the image BC policy)
    bc_epochs: int = 30
    bc_noise: float = 0.3  # executed-action noise of the demos, in half-ranges (DART-style)
    start_envs: int = 64  # the start policy's stochastic rollouts: start_envs × start_steps transitions
    start_steps: int = 150
    start_explore: float = 0.0  # fraction of start-rollout steps whose executed action is uniform over the range
    warm_regress: int = 200  # shield_ppo.warmup.regress
    warm_td: int = 3000  # 400 (shield_ppo.warmup) leaves the best-candidate agreement at chance (gate_check)
    total_steps: int = 24_576  # the demo budget: 16 envs × 64 steps × 24 iterations
    num_envs: int = 16
    lr: float = 3e-4
    delta: float = 0.2
    c_max: float = 3.0
    candidates: int = 9
    eval_episodes: int = 200
    threads: int = 1
    # the warm-up replay: cap ℓ at EXIT_MARGIN where the car leaves the workspace, as the image stage does (PPO runs
    # count exits online either way: PPOConfig.exit_is_failure)
    exit_is_failure: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def critic(self, target: Target) -> CriticConfig:
        return CriticConfig(gamma=0.99, lr=3e-4, tau=0.02, hidden=(256, 256), batch_size=256, steps_per_iter=64,
                            buffer_size=30_000, target=target, candidates=self.candidates)


@dataclass
class StartData:
    """The start policy's transitions (replay for the warm-up) and the per-frame ℓ* and simulator cost of ``o``."""

    replay: ReplayBuffer
    states: np.ndarray
    margin: np.ndarray
    unsafe: np.ndarray


def bc_policy(cfg: StateControlConfig) -> StatePolicy:
    """Behaviour cloning (clipped-Gaussian NLL) on the scripted expert's labels along noisy expert episodes."""
    from ...envs.control.dubins import U_MAX, DubinsVLVec
    from ...envs.control.experts import dubins_expert

    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    vec = DubinsVLVec(cfg.bc_episodes, render=False, seed=BC_SEED + cfg.seed * cfg.bc_episodes)
    _, info = vec.reset()
    live = np.ones(cfg.bc_episodes, bool)
    xs, ys = [], []
    while live.any():
        st = info["state"]
        a = dubins_expert(st, rng)[:, 0]
        xs.append(st[live])
        ys.append(a[live])
        executed = np.clip(a + cfg.bc_noise * U_MAX * rng.standard_normal(len(a)), -U_MAX, U_MAX)
        _, _, term, trunc, info = vec.step(executed)
        live &= ~(term | trunc)
    x = torch.as_tensor(np.concatenate(xs), dtype=torch.float32)
    y = torch.as_tensor(np.concatenate(ys), dtype=torch.float32)[:, None]
    policy = StatePolicy(StatePolicyConfig())
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    low, high = torch.as_tensor(policy.action_low), torch.as_tensor(policy.action_high)
    gen = torch.Generator().manual_seed(cfg.seed)
    for _ in range(cfg.bc_epochs):
        for idx in torch.randperm(len(x), generator=gen).split(256):
            mean, log_std = policy(x[idx])
            loss = -clipped_gaussian_log_prob(mean, log_std, y[idx], low, high).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return policy.eval()


def evaluate(policy: StatePolicy, episodes: int, seed: int = EVAL_SEED) -> dict[str, float]:
    """The deterministic policy for one episode per seed ``seed + i``: SR (reach with no violation), CSC, reach."""
    from ...envs.control.dubins import DubinsVLVec

    vec = DubinsVLVec(episodes, render=False, seed=seed)
    _, info = vec.reset()
    live = np.ones(episodes, bool)
    cost, success = np.zeros(episodes), np.zeros(episodes, bool)
    while live.any():
        with torch.no_grad():
            a = policy(torch.as_tensor(info["state"], dtype=torch.float32))[0].numpy()[:, 0]
        _, _, term, trunc, info = vec.step(a)
        cost += live * info["cost"]
        success |= live & info["success"]
        live &= ~(term | trunc)
    return {"sr": float(np.mean(success & (cost == 0))), "csc": float(cost.mean()), "reach": float(success.mean()),
            "violation_rate": float(np.mean(cost > 0))}


def start_rollouts(policy: StatePolicy, cfg: StateControlConfig) -> StartData:
    """The stochastic start policy's transitions ``(o, a, ℓ*(o), o', ℓ*(o'), terminated)``."""
    vec = TrainVec("dubins", cfg.start_envs, seed=START_SEED + cfg.seed * cfg.start_envs, obs="state")
    states, _, margin, cost = vec.reset()
    gen = torch.Generator().manual_seed(cfg.seed)
    low, high = torch.as_tensor(policy.action_low), torch.as_tensor(policy.action_high)
    buf = ReplayBuffer(cfg.start_envs * cfg.start_steps, (states.shape[1],), policy.action_dim, seed=cfg.seed,
                       dtype=np.float32)
    all_s, all_m, all_c = [], [], []
    for _ in range(cfg.start_steps):
        with torch.no_grad():
            mean, log_std = policy(torch.as_tensor(states))
            act = torch.clamp(mean + log_std.exp() * torch.randn(mean.shape, generator=gen), low, high)
            explore = torch.rand(len(act), generator=gen) < cfg.start_explore
            uniform = low + (high - low) * torch.rand(act.shape, generator=gen)
            act = torch.where(explore[:, None], uniform, act).numpy()
        step = vec.step(act.astype(np.float64))
        reached = step.reached_margin
        if cfg.exit_is_failure and step.exited is not None:  # the image stage's replay (runs.warm_start_critic)
            reached = cap_exits(reached, step.exited)
        buf.add(states, [""] * len(states), act, margin, step.reached_images, reached,
                step.terminated.astype(np.float32))
        all_s.append(states)
        all_m.append(margin)
        all_c.append(cost)
        states, margin, cost = step.images, step.margin, step.cost
    return StartData(buf, np.concatenate(all_s), np.concatenate(all_m).astype(np.float32), np.concatenate(all_c))


def warm_critic(policy: StatePolicy, start: StartData, cfg: StateControlConfig, target: Target) -> SafetyCritic:
    """:func:`.critic.warm_start` on the start policy's transitions: regress onto ℓ*, then Eq. (4) TD steps."""
    torch.manual_seed(cfg.seed)
    critic = SafetyCritic.from_policy(policy, cfg.critic(target))
    trainer = CriticTrainer(critic)

    def mean_action(states: Any, instructions: Any) -> torch.Tensor:
        with torch.no_grad():
            return policy(states)[0]

    warm_start(trainer, start.replay, mean_action, cfg.warm_regress, cfg.warm_td)
    return critic.eval()


def ppo_config(cfg: StateControlConfig, run: str, seed: int) -> PPOConfig:
    method, update, target = RUNS[run]
    return PPOConfig(method=method, margin="gt", safety_update=update, obs="state",  # type: ignore[arg-type]
                     critic_replay="images", train_encoder=True, total_steps=cfg.total_steps,
                     num_envs=cfg.num_envs, lr=cfg.lr, delta=cfg.delta, c_max=cfg.c_max,
                     critic=cfg.critic(target), seed=seed, threads=cfg.threads)


def run_one(run: str, seed: int, policy: StatePolicy, critics: dict[str, SafetyCritic],
            cfg: StateControlConfig) -> dict[str, Any]:
    """Train ``run`` from a copy of the start policy (and of the warmed critic of its target), evaluate it."""
    pcfg = ppo_config(cfg, run, seed)
    critic = copy.deepcopy(critics[pcfg.critic.target]) if pcfg.method == "gated" else None
    res = train(copy.deepcopy(policy), "dubins", MarginSource("gt"), pcfg, critic=critic, progress=None)
    hist = res.history
    infeasible = [r["infeasible_frac"] for r in hist if "infeasible_frac" in r]
    return {"run": run, "seed": seed, "eval": evaluate(res.policy, cfg.eval_episodes),
            "infeasible_frac": float(np.mean(infeasible)) if infeasible else None,
            "train_csc_last5": float(np.nanmean([r.get("csc", np.nan) for r in hist[-5:]])),
            "seconds": float(sum(r["seconds"] for r in hist))}


def compare(cfg: StateControlConfig, runs: Sequence[str], seeds: Sequence[int]) -> dict[str, Any]:
    """One start policy and one warm critic per target, then every (run, seed)."""
    set_torch_threads(cfg.threads)
    t0 = time.perf_counter()
    policy = bc_policy(cfg)
    start = start_rollouts(policy, cfg)
    targets = sorted({RUNS[r][2] for r in runs if RUNS[r][0] == "gated"})
    critics = {t: warm_critic(policy, start, cfg, t) for t in targets}  # type: ignore[arg-type]
    out: dict[str, Any] = {"config": cfg.as_dict(), "start": evaluate(policy, cfg.eval_episodes),
                           "start_unsafe_frame_rate": float(np.mean(start.unsafe > 0)), "rows": []}
    print(f"start policy: {out['start']}, unsafe frames {out['start_unsafe_frame_rate']:.3f} "
          f"({time.perf_counter() - t0:.0f} s)")
    for seed in seeds:
        for run in runs:
            row = run_one(run, seed, policy, critics, cfg)
            out["rows"].append(row)
            print(f"{run} seed {seed}: SR {row['eval']['sr']:.3f} CSC {row['eval']['csc']:.2f} "
                  f"reach {row['eval']['reach']:.3f} infeasible {row['infeasible_frac']} ({row['seconds']:.0f} s)")
    return out


def table(out: dict[str, Any]) -> str:
    """Mean ± std over seeds per run."""
    lines = ["| run | SR | CSC | reach | infeasible frac (mean over iterations) | seeds |", "|---|---|---|---|---|---|",
             f"| start (BC) | {out['start']['sr']:.3f} | {out['start']['csc']:.2f} | {out['start']['reach']:.3f} | – | – |"]
    for run in dict.fromkeys(r["run"] for r in out["rows"]):
        rows = [r for r in out["rows"] if r["run"] == run]

        def cell(key: str, digits: int, rows: list[dict[str, Any]] = rows) -> str:
            v = np.array([r["eval"][key] for r in rows])
            return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}"

        inf = [r["infeasible_frac"] for r in rows if r["infeasible_frac"] is not None]
        lines.append(f"| {run} | {cell('sr', 3)} | {cell('csc', 2)} | {cell('reach', 3)} | "
                     f"{np.mean(inf):.3f} | {len(rows)} |" if inf else
                     f"| {run} | {cell('sr', 3)} | {cell('csc', 2)} | {cell('reach', 3)} | – | {len(rows)} |")
    return "\n".join(lines)


def check(cfg: StateControlConfig) -> dict[str, Any]:
    """:func:`.gate_check.gate_check` of a critic warmed with each target on the start policy's rollouts."""
    from .gate_check import gate_check

    set_torch_threads(cfg.threads)
    policy = bc_policy(cfg)
    start = start_rollouts(policy, cfg)
    out: dict[str, Any] = {"config": cfg.as_dict(), "start_policy": evaluate(policy, cfg.eval_episodes)}
    for target in ("policy_mean", "best"):
        critic = warm_critic(policy, start, cfg, target)  # type: ignore[arg-type]
        out[target] = gate_check(critic, policy, torch.as_tensor(start.states), [""] * len(start.states),
                                 start.margin, start.unsafe, cfg.delta, obs="state",
                                 states=start.states.astype(np.float64))
        print(f"target {target}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                for k, v in out[target].items()))
    return out
