"""The oracle reference critic on Dubins-VL: ``Q_s`` regressed onto the simulator's HJ action values (issue 21).

The offline gate check asks the warm critic to rank the two full turns as the simulator does on the start policy's
near-obstacle frames. No critic trained by Eq. (4)'s TD from a margin has passed it (docs/shield_ppo.md); the same
critic regressed straight onto exact labels — the simulator's :func:`.viability.action_values` of the critic's
candidate grid — with the keypoint encoder and the pose regression reached 0.81 ± 0.03 on held-out frames. That
regression is this warm-up, so the study has a gated run whose critic *is* right on the start policy's frames
(``gated_oracle`` in :data:`.runs.RUNS`): the upper reference that says what the gate does with a correct critic,
beside ``gated_gt`` (the same TD recipe as ShieldVLA's, on the simulator's margin). It reads the simulator's state
of every frame, so it is a reference, never a method.

**The rubric-search critic** (``gated_search``) is the same regression with ShieldVLA's own signal in the
labels: the search runs in the simulator (its dynamics, the workspace's edge, the goal) but every margin along it is
the *rubric* margin of the frame the branch state renders (:func:`.viability.rendered_margin`: the rubric scorer and
its Platt scalars), read at each segment's end, :data:`RUBRIC_SEARCH`'s shorter tree, on :data:`RUBRIC_COLUMNS`
random grid actions per state (each label costs ~40 rendered, scored frames). No simulator margin or cost enters a
label; the frames' states are used, as the pose regression and the BC experts use them.

The training set is the BC rollouts' frames (states replayed by :func:`.viability.frame_states`) plus
``pose_aux_states`` jittered rendered states (:func:`.state_aux.jittered_states`), every one labelled for the whole
grid; a step draws ``batch_size`` (frame, grid action) pairs. ``pose_aux > 0`` adds the pose regression of
:mod:`.state_aux` on the same batch's features. After the warm-up the target critic is a copy, and PPO's online TD
steps go on from it as from any warm critic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

LOG_EVERY = 50
#: the rubric labels' search (:func:`.viability.action_values`'s keywords): three 0.5 s segments after the action
#: (1.6 s), the rubric margin read at each segment's end. On the demo start's near-obstacle frames these labels rank
#: the full turns as the exact HJ values do on 0.82 of the frames (depth 4: 0.92 on 300, at 3× the frames;
#: docs/shield_ppo.md)
RUBRIC_SEARCH = {"depth": 3, "check_every": 5}
#: grid actions labelled per state by the rubric search (random, without replacement; the others are not trained on)
RUBRIC_COLUMNS = 3
LABEL_CHUNK = 2048


def label_values(states: np.ndarray, grid: np.ndarray, ell: Any = None, columns: int | None = None,
                 seed: int = 0, workers: int | None = None) -> np.ndarray:
    """``[N, len(grid)]`` labels: the simulator's exact action values of every grid action (``ell`` None), or the
    search values with the state margin ``ell`` (:data:`RUBRIC_SEARCH`) of ``columns`` random grid actions per
    state, NaN elsewhere. The search runs on ``workers`` threads (default: ``OMP_NUM_THREADS``, else the stage's
    thread count): rendering and scoring are numpy array loops that release the GIL, so two threads label about 1.7×
    faster than one, with the same labels (``benchmarks/rubric_labels.py``). Progress is printed every
    :data:`LABEL_CHUNK` states."""
    from ...threads import STAGE_THREADS, thread_cap
    from .viability import action_values

    if ell is None:
        return action_values(states, grid)
    k = len(grid) if columns is None else min(columns, len(grid))
    pick = np.argsort(np.random.default_rng(seed + 2).random((len(states), len(grid))), axis=1)[:, :k]
    out = np.full((len(states), len(grid)), np.nan)
    n = max(1, workers or thread_cap() or STAGE_THREADS)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(n) as pool:
        for start in range(0, len(states), LABEL_CHUNK):
            rows = np.arange(start, min(start + LABEL_CHUNK, len(states)))
            jobs = [(j, part) for j in range(len(grid))
                    for part in np.array_split(rows[(pick[rows] == j).any(axis=1)], n) if len(part)]
            done = pool.map(lambda job: action_values(states[job[1]], grid[job[0]:job[0] + 1], ell=ell,
                                                      **RUBRIC_SEARCH)[:, 0], jobs)
            for (j, part), values in zip(jobs, done, strict=True):
                out[part, j] = values
            print(f"rubric-search labels: {rows[-1] + 1}/{len(states)} states, {time.perf_counter() - t0:.0f} s",
                  flush=True)
    return out


def distill_set(rollouts: Any, states: np.ndarray, extra: int, grid: np.ndarray, seed: int = 0,
                pool: np.ndarray | None = None, ell: Any = None,
                columns: int | None = None) -> tuple[torch.Tensor, list[str], np.ndarray, torch.Tensor, np.ndarray]:
    """The frames (uint8 ``[N, H, W, 3]``), instructions, states and ``[N, len(grid)]`` action-value labels
    (:func:`label_values`, ``ell`` / ``columns``): the rollouts' frames, then ``extra`` jittered states of the
    frames ``pool`` indexes (default: all), rendered by Dubins-VL's rasteriser; and the training indices (``pool``,
    then every jittered one)."""
    from ...envs.control.dubins import render_states
    from .state_aux import jittered_states

    pool = np.arange(len(states)) if pool is None else np.asarray(pool)
    words = rollouts.frame_instructions()
    more, src = jittered_states(states, pool, extra, seed=seed)
    frames = torch.as_tensor(np.asarray(rollouts.frames))
    if len(more):
        frames = torch.cat([frames, torch.as_tensor(render_states(more))])
    all_states = np.concatenate([states, more])
    labels = torch.as_tensor(label_values(all_states, grid, ell, columns, seed), dtype=torch.float32)
    train = np.concatenate([pool, len(states) + np.arange(len(more))])
    return frames, [*words, *(words[k] for k in src)], all_states, labels, train


def action_grid(policy: Any, candidates: int) -> np.ndarray:
    """The critic's grid of ``candidates`` turn rates over the policy's action range (one action dimension)."""
    low, high = np.asarray(policy.action_low, dtype=np.float64), np.asarray(policy.action_high, dtype=np.float64)
    if low.shape != (1,):
        raise ValueError(f"the distilled critic's grid is one turn rate: action shape {low.shape}")
    return np.linspace(low[0], high[0], candidates)


def distill_warm_start(env: str, policy: Any, rollouts: Any, critic_cfg: Any, steps: int, seed: int = 0,
                       log: Callable[[dict[str, float], int], None] | None = None,
                       source: Any = None) -> tuple[Any, dict[str, Any]]:
    """A critic (``critic_cfg``'s encoder choice) regressed for ``steps`` steps onto action values of the BC
    ``rollouts``' frames and ``critic_cfg.pose_aux_states`` jittered states: the simulator's exact ones (``source``
    None or the ``gt`` margin), or the rubric search's (a ``rubric`` :class:`~embodied_safety.shield.costs.margins.
    MarginSource`: :data:`RUBRIC_SEARCH`, :data:`RUBRIC_COLUMNS`); returns it and what its ``critic.json`` records.
    Dubins-VL only (its frames' states can be replayed)."""
    from .viability import frame_states, rendered_margin

    if env != "dubins":
        raise ValueError(f"the distilled (oracle) critic reads the simulator's action values: Dubins-VL only, not {env!r}")
    if steps <= 0:
        raise ValueError(f"the distilled critic needs shield_ppo.warmup.distill > 0 steps, got {steps}")
    kind = "gt" if source is None else source.kind
    if kind not in ("gt", "rubric"):
        raise ValueError(f"the distilled critic's labels come from the gt or rubric margin, not {kind!r}")
    t0 = time.perf_counter()
    grid = action_grid(policy, critic_cfg.candidates)
    ell, columns = (rendered_margin(source), RUBRIC_COLUMNS) if kind == "rubric" else (None, None)
    data = distill_set(rollouts, frame_states(rollouts), critic_cfg.pose_aux_states, grid, seed, ell=ell,
                       columns=columns)
    label_s = time.perf_counter() - t0
    critic, rows = distill(policy, critic_cfg, grid, *data, steps=steps, seed=seed, log=log)
    return critic, {"warmup": rows[-1:], "transitions": len(data[0]), "labels": kind,
                    "labelled_pairs": int(torch.isfinite(data[3]).sum()), "label_seconds": label_s,
                    "seconds": time.perf_counter() - t0}


def distill(policy: Any, critic_cfg: Any, grid: np.ndarray, frames: torch.Tensor, words: list[str], states: np.ndarray,
            labels: torch.Tensor, train: np.ndarray, steps: int, seed: int = 0,
            log: Callable[[dict[str, float], int], None] | None = None) -> tuple[Any, list[dict[str, float]]]:
    """``steps`` regression steps of a new critic (:meth:`.critic.SafetyCritic.from_policy`) onto ``labels`` on
    (frame of ``train``, grid action) pairs — a labelled (finite) grid action of the frame, uniformly — with the pose
    regression when ``critic_cfg.pose_aux > 0``; returns the critic (its target a copy) and a loss row every
    :data:`LOG_EVERY` steps."""
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
    finite = torch.isfinite(labels).numpy()
    if not finite[train].any(axis=1).all():
        raise ValueError("distill: a training frame has no labelled grid action")
    # per frame, its labelled grid columns first (a stable sort keeps their order) and how many there are
    cols, counts = np.argsort(~finite, axis=1, kind="stable"), finite.sum(axis=1)
    labels = labels.to(dev)
    rng = np.random.default_rng(seed + 1)
    rows: list[dict[str, float]] = []
    critic.train()
    for step in range(1, steps + 1):
        i = rng.choice(train, critic_cfg.batch_size)
        if finite.all():
            j = rng.integers(0, len(grid), critic_cfg.batch_size)
        else:
            j = cols[i, (rng.random(critic_cfg.batch_size) * counts[i]).astype(np.int64)]
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
