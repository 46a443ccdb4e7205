"""DAgger (Ross, Gordon & Bagnell 2011) with the privileged scripted expert: a stronger BC start.

Plain BC on expert demonstrations compounds its errors: the expert almost never leaves its path, so
the states a drifting policy reaches are absent from the data (Dubins-VL: SR about 0.09). DAgger
fixes the data instead of the model. Round 0 is plain BC on the demos (Ross's β₁ = 1: the expert's
own trajectories). Each round ``r = 1..R`` then

1. rolls out the mixture ``π_r = β_r π* + (1 - β_r) π̂`` with ``β_r = beta ** r``: at every step each
   episode executes the expert's action with probability ``β_r``, else the current policy's mean
   (``beta = 0``, the default: the policy alone, Ross's best-working choice);
2. labels *every visited state* with the expert's action (the expert reads ``info["state"]``, the
   policy never does), recording what was executed beside it;
3. aggregates those steps into the demo set and retrains the policy on all of it, warm-started
   from the current weights (:func:`.bc.train_bc`, a fresh optimiser each round).

The checkpoint kept is chosen among the rounds' chosen checkpoints by :func:`.bc.pick_checkpoint` (closed-loop
SR of ``eval_fn`` on held-out seeds by default, ties: lower violation rate, then lower held-out NLL; ``"sr_1se"``:
the lowest violation rate within one standard error of the best SR).

Deterministic for a seed and a starting policy: round ``r`` plays the episode seeds
``episode_seeds(seed + rollout_base, range((r-1)·n, r·n))`` (consecutive, so a vectorised env replays
them); the mixing coin of an episode comes from a generator seeded by its episode seed alone. With
``make_vec`` (``DubinsVLVec``) all episodes of a chunk step in one numpy call and a ``batch`` expert
labels them in one call (the Dubins planner is vectorised over states).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .bc import BCHistory, EvalFn, Log, pick_checkpoint, selection_key, train_bc
from .demos import DemoSet, Expert, MakeEnv, _info_float, _instruction_ids, episode_seeds
from .rollouts import MakeVec, _consecutive_chunks, _row, episode_list, eval_mode
from .visuomotor import GaussianPolicy

BatchExpert = Callable[[np.ndarray], np.ndarray]  # privileged states [N, D] -> expert actions [N, A]


def batch_expert(env_name: str) -> BatchExpert:
    """The scripted expert of ``env_name`` over a batch of states (Dubins-VL: one vectorised planner call)."""
    from ...envs.control.experts import _short, dubins_expert, expert_action

    if _short(env_name) == "DubinsVL":
        return lambda states: np.asarray(dubins_expert(states, None)).reshape(len(states), -1)
    return lambda states: np.stack([np.atleast_1d(expert_action(env_name, s, None)) for s in states])


@dataclass
class _Episode:
    seed: int
    coin: np.random.Generator  # the β-mixture draws of this episode alone
    expert_rng: np.random.Generator
    generator: torch.Generator  # policy sampling when not deterministic
    images: list[np.ndarray] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    labels: list[np.ndarray] = field(default_factory=list)
    executed: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    success: bool = False

    @classmethod
    def start(cls, seed: int) -> _Episode:
        return cls(seed, np.random.default_rng([seed, 5]), np.random.default_rng([seed, 2]),
                   torch.Generator().manual_seed(seed))

    def record(self, image: np.ndarray, text: str, label: np.ndarray, executed: np.ndarray, reward: float,
               info: dict[str, Any]) -> None:
        self.images.append(np.asarray(image, np.uint8))
        self.texts.append(text)
        self.labels.append(np.asarray(label, np.float32))
        self.executed.append(np.asarray(executed, np.float32))
        self.rewards.append(float(reward))
        self.margins.append(_info_float(info, "margin", float("nan")))
        self.costs.append(_info_float(info, "cost", 0.0))
        self.success = self.success or bool(info.get("success", False))


def _mix(policy: GaussianPolicy, eps: Sequence[_Episode], images: np.ndarray, texts: list[str],
         labels: np.ndarray, beta: float, deterministic: bool) -> np.ndarray:
    """The executed actions: the expert's with probability ``beta`` per episode and step, else the policy's."""
    acts, _ = policy.act({"image": images, "instruction": texts}, deterministic=deterministic,
                         generator=[e.generator for e in eps])
    acts_np = acts.detach().cpu().numpy().astype(np.float32).reshape(labels.shape)
    if beta <= 0:
        return acts_np
    use_expert = np.asarray([e.coin.random() < beta for e in eps])
    return np.where(use_expert[:, None], labels.astype(np.float32), acts_np)


def _run_vec(make_vec: MakeVec, policy: GaussianPolicy, expert: Expert, batch: BatchExpert | None,
             seeds: list[int], beta: float, deterministic: bool, n_envs: int,
             max_steps: int | None) -> list[_Episode]:
    done_eps: list[_Episode] = []
    for chunk in _consecutive_chunks(list(enumerate(seeds)), max(1, n_envs)):
        vec = make_vec(len(chunk))
        try:
            obs, info = vec.reset(seed=chunk[0][1])
            eps = [_Episode.start(s) for _, s in chunk]
            live = np.ones(len(chunk), bool)
            zero = np.zeros((len(chunk), *np.shape(policy.action_low)), np.float32)
            while live.any():
                idx = np.flatnonzero(live)
                images = np.asarray(obs["image"])[idx]
                texts = [str(t) for t in np.asarray(obs["instruction"])[idx]]
                if batch is not None:
                    labels = np.asarray(batch(np.asarray(info["state"])[idx]), np.float32)
                else:
                    labels = np.stack([np.asarray(expert(_row(info, j), vec, eps[j].expert_rng), np.float32)
                                       for j in idx])
                labels = labels.reshape(len(idx), -1)
                exe = _mix(policy, [eps[j] for j in idx], images, texts, labels, beta, deterministic)
                full = zero.copy()
                full[idx] = exe
                obs, reward, term, trunc, info = vec.step(full)
                for n, j in enumerate(idx):
                    eps[j].record(images[n], texts[n], labels[n], exe[n], float(reward[j]), _row(info, j))
                    if term[j] or trunc[j] or (max_steps is not None and len(eps[j].labels) >= max_steps):
                        live[j] = False
            done_eps.extend(eps)
        finally:
            vec.close()
    return done_eps


def _run_single(make_env: MakeEnv, policy: GaussianPolicy, expert: Expert, seeds: list[int], beta: float,
                deterministic: bool, n_envs: int, max_steps: int | None) -> list[_Episode]:
    envs = [make_env() for _ in range(max(1, min(n_envs, len(seeds))))]
    done_eps: list[_Episode] = []
    try:
        for start in range(0, len(seeds), len(envs)):
            group = list(zip(envs, seeds[start:start + len(envs)], strict=False))
            eps = [_Episode.start(s) for _, s in group]
            obs, infos = [], []
            for env, s in group:
                o, i = env.reset(seed=s)
                if hasattr(expert, "reset"):
                    expert.reset(env)
                obs.append(o)
                infos.append(i)
            live = [True] * len(group)
            while any(live):
                idx = [k for k, a in enumerate(live) if a]
                images = np.stack([np.asarray(obs[k]["image"], np.uint8) for k in idx])
                texts = [str(obs[k]["instruction"]) for k in idx]
                labels = np.stack([np.asarray(expert(infos[k], group[k][0], eps[k].expert_rng), np.float32)
                                   .reshape(-1) for k in idx])
                exe = _mix(policy, [eps[k] for k in idx], images, texts, labels, beta, deterministic)
                for n, k in enumerate(idx):
                    o, r, term, trunc, info = group[k][0].step(exe[n])
                    eps[k].record(images[n], texts[n], labels[n], exe[n], float(r), info)
                    obs[k], infos[k] = o, info
                    if term or trunc or (max_steps is not None and len(eps[k].labels) >= max_steps):
                        live[k] = False
            done_eps.extend(eps)
    finally:
        for env in envs:
            env.close()
    return done_eps


def collect_dagger(policy: GaussianPolicy, expert: Expert, seeds: Sequence[int], *, make_env: MakeEnv | None = None,
                   make_vec: MakeVec | None = None, batch: BatchExpert | None = None, beta: float = 0.0,
                   deterministic: bool = True, n_envs: int = 64, max_steps: int | None = None) -> DemoSet:
    """One episode per seed of the β-mixture of ``policy`` and ``expert``; every visited state labelled
    with the expert's action (``actions``), the executed one in ``executed``. ``episode_success`` /
    ``episode_unsafe`` are those of the mixture's own episodes (the on-policy SR when ``beta = 0``)."""
    seeds = episode_list(seeds)
    with eval_mode(policy):
        if make_vec is not None:
            eps = _run_vec(make_vec, policy, expert, batch, seeds, beta, deterministic, n_envs, max_steps)
        elif make_env is not None:
            eps = _run_single(make_env, policy, expert, seeds, beta, deterministic, n_envs, max_steps)
        else:
            raise ValueError("give make_env or make_vec")
    instructions, ids = _instruction_ids([t for e in eps for t in e.texts])
    lengths = np.asarray([len(e.labels) for e in eps], np.int32)
    dones = np.concatenate([np.arange(1, n + 1) == n for n in lengths])
    return DemoSet(
        images=np.stack([f for e in eps for f in e.images]), instruction_id=ids, instructions=instructions,
        actions=np.stack([a for e in eps for a in e.labels]).astype(np.float32),
        executed=np.stack([a for e in eps for a in e.executed]).astype(np.float32),
        rewards=np.asarray([x for e in eps for x in e.rewards], np.float32),
        margins=np.asarray([x for e in eps for x in e.margins], np.float32),
        costs=np.asarray([x for e in eps for x in e.costs], np.float32), dones=dones,
        episode=np.repeat(np.arange(len(eps), dtype=np.int32), lengths),
        episode_seeds=np.asarray(seeds, np.int64), episode_success=np.asarray([e.success for e in eps], bool),
        episode_unsafe=np.asarray([any(c > 0 for c in e.costs) for e in eps], bool),
        episode_return=np.asarray([sum(e.rewards) for e in eps], np.float32), episode_length=lengths)


def dagger(policy: GaussianPolicy, demos: DemoSet, expert: Expert, *, rounds: int = 3, episodes: int = 100,
           bc_epochs: int = 20, epochs: int = 5, seed: int = 0, rollout_base: int = 1200,
           make_env: MakeEnv | None = None, make_vec: MakeVec | None = None, batch: BatchExpert | None = None,
           beta: float = 0.0, deterministic: bool = True, n_envs: int = 64, max_steps: int | None = None,
           eval_fn: EvalFn | None = None, eval_every: int = 1, select_by: str = "sr", log: Log | None = None,
           plot_path: str | os.PathLike[str] | None = None, **bc_kw: Any) -> tuple[BCHistory, DemoSet]:
    """Round 0: :func:`.bc.train_bc` on ``demos`` for ``bc_epochs``; rounds 1..``rounds``: collect
    ``episodes`` β-mixture episodes, aggregate their expert-labelled states, retrain ``epochs`` epochs
    warm-started. Returns the history of every epoch (``epoch`` counted across rounds, ``round`` set;
    ``rounds``: one row per round) and the aggregated set; ``policy`` ends at the checkpoint chosen
    across all rounds by ``select_by``. ``bc_kw`` goes to :func:`.bc.train_bc` (batch_size, lr, shift, ...).
    """
    t0 = time.time()
    hist = BCHistory()
    data = demos
    cands: list[tuple[dict[str, float], dict[str, Any]]] = []  # each round's chosen row (epoch across rounds), weights
    sizes: list[tuple[int, int, int]] = []  # each round's (train episodes, validation episodes, train steps)
    offset = 0
    for r in range(rounds + 1):
        tr = time.time()
        info: dict[str, float] = {}
        if r > 0:
            beta_r = beta ** r if beta > 0 else 0.0
            seeds = episode_seeds(seed + rollout_base, range((r - 1) * episodes, r * episodes))
            new = collect_dagger(policy, expert, seeds, make_env=make_env, make_vec=make_vec, batch=batch,
                                 beta=beta_r, deterministic=deterministic, n_envs=n_envs, max_steps=max_steps)
            s = new.summary()
            info = {"beta": beta_r, "rollout_sr": s["safe_success_rate"], "rollout_violation_rate":
                    s["violation_rate"], "rollout_reach_rate": s["success_rate"], "new_steps": float(s["steps"]),
                    "collect_seconds": time.time() - tr}
            data = DemoSet.concat([data, new])

        def round_log(m: dict[str, float], e: int, _o: int = offset) -> None:
            if log is not None:
                log(m, _o + e)

        h = train_bc(policy, data, epochs=bc_epochs if r == 0 else epochs, seed=seed + r, eval_fn=eval_fn,
                     eval_every=eval_every, select_by=select_by, log=round_log, **bc_kw)
        for row in h.rows:
            hist.rows.append({**row, "epoch": row["epoch"] + offset, "round": float(r)})
        chosen = h.final()
        if selection_key(chosen, h.select_by) is not None:
            cands.append(({**chosen, "epoch": float(h.best_epoch + offset)},
                          {k: v.detach().clone() for k, v in policy.state_dict().items()}))
            sizes.append((h.train_episodes, h.val_episodes, h.train_steps))
        hist.select_by = h.select_by
        summary = {"round": float(r), "start_epoch": float(offset + 1), "steps": float(data.n_steps),
                   "episodes": float(data.n_episodes), **info,
                   **{k: chosen[k] for k in ("sr", "violation_rate", "reach_rate", "val_loss") if k in chosen},
                   "best_epoch": float(h.best_epoch + offset), "seconds": time.time() - tr}
        hist.rounds.append(summary)
        if log is not None:
            log({f"dagger/{k}": v for k, v in summary.items() if k != "round"}, r)
        offset += len(h.rows)
    pick = pick_checkpoint([r for r, _ in cands], hist.select_by)
    if pick is not None:
        policy.load_state_dict(cands[pick][1])
        hist.best_epoch = int(cands[pick][0]["epoch"])
        hist.train_episodes, hist.val_episodes, hist.train_steps = sizes[pick]
    policy.eval()
    hist.seconds = time.time() - t0
    if plot_path is not None:
        hist.plot(plot_path, title="behaviour cloning + DAgger")
    return hist, data
