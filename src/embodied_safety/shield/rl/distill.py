"""The oracle reference critic on Dubins-VL: ``Q_s`` regressed onto the simulator's HJ action values (issue 21).

The offline gate check asks the warm critic to rank the two full turns as the simulator does on the start policy's
near-obstacle frames. No critic trained by Eq. (4)'s TD from a margin has passed it ("Stop 39"-"Stop 42" in
docs/shield_ppo.md); the same critic regressed straight onto exact labels — the simulator's
:func:`.viability.action_values` of the critic's candidate grid — with the keypoint encoder and the pose regression
reached 0.81 ± 0.03 on held-out frames ("Stop 41"). That regression is this warm-up, so the study has a gated run
whose critic *is* right on the start policy's frames (``gated_oracle`` in :data:`.runs.RUNS`): the upper reference
that says what the gate does with a correct critic, beside ``gated_gt`` (the same TD recipe as ShieldVLA's, on the
simulator's margin). It reads the simulator's state of every frame, so it is a reference, never a method.

The training set is the BC rollouts' frames (states replayed by :func:`.viability.frame_states`) plus
``pose_aux_states`` jittered rendered states (:func:`.state_aux.jittered_states`), every one labelled for the whole
grid; a step draws ``batch_size`` (frame, grid action) pairs. ``pose_aux > 0`` adds the pose regression of
:mod:`.state_aux` on the same batch's features. After the warm-up the target critic is a copy, and PPO's online TD
steps go on from it as from any warm critic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

LOG_EVERY = 50


def distill_set(rollouts: Any, states: np.ndarray, extra: int, grid: np.ndarray, seed: int = 0,
                pool: np.ndarray | None = None) -> tuple[torch.Tensor, list[str], np.ndarray, torch.Tensor, np.ndarray]:
    """The frames (uint8 ``[N, H, W, 3]``), instructions, states and ``[N, len(grid)]`` action-value labels: the
    rollouts' frames, then ``extra`` jittered states of the frames ``pool`` indexes (default: all), rendered by
    Dubins-VL's rasteriser; and the training indices (``pool``, then every jittered one)."""
    from ...envs.control.dubins import render_states
    from .state_aux import jittered_states
    from .viability import action_values

    pool = np.arange(len(states)) if pool is None else np.asarray(pool)
    words = rollouts.frame_instructions()
    more, src = jittered_states(states, pool, extra, seed=seed)
    frames = torch.as_tensor(np.asarray(rollouts.frames))
    if len(more):
        frames = torch.cat([frames, torch.as_tensor(render_states(more))])
    all_states = np.concatenate([states, more])
    labels = torch.as_tensor(action_values(all_states, grid), dtype=torch.float32)
    train = np.concatenate([pool, len(states) + np.arange(len(more))])
    return frames, [*words, *(words[k] for k in src)], all_states, labels, train


def action_grid(policy: Any, candidates: int) -> np.ndarray:
    """The critic's grid of ``candidates`` turn rates over the policy's action range (one action dimension)."""
    low, high = np.asarray(policy.action_low, dtype=np.float64), np.asarray(policy.action_high, dtype=np.float64)
    if low.shape != (1,):
        raise ValueError(f"the distilled critic's grid is one turn rate: action shape {low.shape}")
    return np.linspace(low[0], high[0], candidates)


def distill_warm_start(env: str, policy: Any, rollouts: Any, critic_cfg: Any, steps: int, seed: int = 0,
                       log: Callable[[dict[str, float], int], None] | None = None) -> tuple[Any, dict[str, Any]]:
    """A critic (``critic_cfg``'s encoder choice) regressed for ``steps`` steps onto the simulator's action values
    of the BC ``rollouts``' frames and ``critic_cfg.pose_aux_states`` jittered states; returns it and what its
    ``critic.json`` records. Dubins-VL only (its frames' states can be replayed)."""
    from .viability import frame_states

    if env != "dubins":
        raise ValueError(f"the distilled (oracle) critic reads the simulator's action values: Dubins-VL only, not {env!r}")
    if steps <= 0:
        raise ValueError(f"the distilled critic needs shield_ppo.warmup.distill > 0 steps, got {steps}")
    t0 = time.perf_counter()
    grid = action_grid(policy, critic_cfg.candidates)
    data = distill_set(rollouts, frame_states(rollouts), critic_cfg.pose_aux_states, grid, seed)
    label_s = time.perf_counter() - t0
    critic, rows = distill(policy, critic_cfg, grid, *data, steps=steps, seed=seed, log=log)
    return critic, {"warmup": rows[-1:], "transitions": len(data[0]), "label_seconds": label_s,
                    "seconds": time.perf_counter() - t0}


def distill(policy: Any, critic_cfg: Any, grid: np.ndarray, frames: torch.Tensor, words: list[str], states: np.ndarray,
            labels: torch.Tensor, train: np.ndarray, steps: int, seed: int = 0,
            log: Callable[[dict[str, float], int], None] | None = None) -> tuple[Any, list[dict[str, float]]]:
    """``steps`` regression steps of a new critic (:meth:`.critic.SafetyCritic.from_policy`) onto ``labels`` on
    (frame of ``train``, grid action) pairs, with the pose regression when ``critic_cfg.pose_aux > 0``; returns the
    critic (its target a copy) and a loss row every :data:`LOG_EVERY` steps."""
    from .critic import CriticTrainer, SafetyCritic
    from .state_aux import PoseAux, pose_targets

    critic = SafetyCritic.from_policy(policy, critic_cfg)
    trainer = CriticTrainer(critic)
    dev = critic.device
    poses = pose_targets(states).to(dev)
    aux = None
    if critic_cfg.pose_aux > 0:  # the pose of the batch's own frames (they already include the jittered states)
        aux = PoseAux(critic.feature_dim, critic_cfg.pose_aux, frames[:0], [], poses[:0], batch=0, lr=critic_cfg.lr,
                      seed=seed).to(dev)
    actions = torch.as_tensor(grid[:, None], dtype=torch.float32, device=dev)
    labels = labels.to(dev)
    rng = np.random.default_rng(seed + 1)
    rows: list[dict[str, float]] = []
    critic.train()
    for step in range(1, steps + 1):
        i = rng.choice(train, critic_cfg.batch_size)
        j = rng.integers(0, len(grid), critic_cfg.batch_size)
        ti, tj = torch.from_numpy(i).to(dev), torch.from_numpy(j).to(dev)
        f = critic.embed(frames[i].to(dev), [words[k] for k in i])
        loss, stats = trainer.fit(f, actions[tj], labels[ti, tj])
        if aux is not None:
            pose = aux.loss(critic.encoder, f, poses[ti])
            loss, stats = loss + pose, {**stats, "pose_loss": float(pose.detach())}
        trainer.step(loss, target=False)
        if aux is not None:
            aux.step()
        if step % LOG_EVERY == 0 or step == steps:
            rows.append({"phase": 2.0, "step": float(step), **{k: v for k, v in stats.items()
                                                               if k in ("critic_loss", "pose_loss")}})
            if log is not None:
                log(rows[-1], step)
    trainer.target.load_state_dict(critic.state_dict())
    critic.eval()
    return critic, rows
