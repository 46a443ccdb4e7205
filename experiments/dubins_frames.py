"""What the Dubins-VL critic experiments share: the BC policy, its rollout frames with their replayed simulator states,
the stage's critic config, and a held-out fifth of the episodes. Run from a clone with ``data/shield/rollouts``."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass
class DubinsFrames:
    policy: Any
    rollouts: Any
    states: np.ndarray  # [N, 7] simulator states of the frames (viability.frame_states)
    frames: Any  # uint8 tensor [N, 84, 84, 3]
    words: list[str]
    critic_config: Any  # the stage's Dubins-VL critic config (the ground-truth-margin run's), encoder frozen or not
    test: np.ndarray  # mask of the frames of the held-out episodes


def load(seed: int, frozen: bool = False) -> DubinsFrames:
    """Pins the stage's threads, loads everything and draws the held-out fifth of the episodes from ``seed``."""
    import torch

    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.policy.rollouts import RolloutSet
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import ppo_config
    from embodied_safety.shield.rl.viability import frame_states
    from embodied_safety.threads import pin_stage_threads
    from flows._shield import BC, ROLLOUTS

    pin_stage_threads()
    rollouts = RolloutSet.load(ROLLOUTS / "dubins" / "rollouts.npz")
    ccfg = dataclasses.replace(ppo_config(load_params("shield_ppo", ShieldPPOConfig), "dubins", "gated_gt", 0).critic,
                               freeze_encoder=frozen)
    ep = np.asarray(rollouts.frame_episode)
    rng = np.random.default_rng(seed)
    test = np.isin(ep, rng.choice(ep.max() + 1, size=(ep.max() + 1) // 5, replace=False))
    return DubinsFrames(load_policy(BC / "dubins"), rollouts, frame_states(rollouts),
                        torch.as_tensor(np.asarray(rollouts.frames)), rollouts.frame_instructions(), ccfg, test)


def with_jittered(states: np.ndarray, frames: Any, words: list[str], train_idx: np.ndarray, n: int,
                  seed: int) -> tuple[Any, list[str], np.ndarray, np.ndarray]:
    """The training set grown by ``n`` jittered states (the stage's
    :func:`~embodied_safety.shield.rl.state_aux.jittered_states`: position σ 0.05, heading σ 0.3 rad, half of them
    from frames with ℓ ≤ 0.5) rendered by Dubins-VL's rasteriser: (frames, words, training indices, states of every
    frame); the new frames come after the rollout frames (``n = 0``: as given)."""
    import torch

    from embodied_safety.envs.control.dubins import render_states
    from embodied_safety.shield.rl.state_aux import jittered_states

    if not n:
        return frames, list(words), train_idx, states
    extra, src = jittered_states(states, train_idx, n, seed)
    return (torch.cat([frames, torch.as_tensor(render_states(extra))]), [*words, *(words[k] for k in src)],
            np.concatenate([train_idx, len(states) + np.arange(len(src))]), np.concatenate([states, extra]))


def centred(frames: Any, states: np.ndarray, outside: tuple[int, int, int] = (0, 0, 0)) -> Any:
    """Each 84×84 frame shifted so the car's pixel is at the centre (what lies outside the workspace drawn
    ``outside``): the same scene in car-relative coordinates, so the heading tick is always read by the same
    weights. The car's pixel comes from the state here; a deployed critic would find it by its colour."""
    import torch

    from embodied_safety.envs.control.dubins import SIZE

    n = len(states)
    pix = 2.0 / SIZE
    col = np.floor((states[:, 0] + 1.0) / pix).astype(np.int64)
    row = np.floor((1.0 - states[:, 1]) / pix).astype(np.int64)
    canvas = torch.empty((n, 2 * SIZE, 2 * SIZE, 3), dtype=torch.uint8)
    canvas[:] = torch.tensor(outside, dtype=torch.uint8)
    canvas[:, SIZE // 2:SIZE // 2 + SIZE, SIZE // 2:SIZE // 2 + SIZE] = torch.as_tensor(frames)
    r0 = np.clip(row, 0, SIZE - 1)  # the window's top-left on the canvas: row - SIZE/2 + SIZE/2
    c0 = np.clip(col, 0, SIZE - 1)
    idx_r = torch.as_tensor(r0[:, None] + np.arange(SIZE))  # [n, SIZE]
    idx_c = torch.as_tensor(c0[:, None] + np.arange(SIZE))
    out = canvas[torch.arange(n)[:, None, None], idx_r[:, :, None], idx_c[:, None, :]]
    return out


def more_episodes(policy: Any, n: int, base: int = 90_001) -> tuple[np.ndarray, Any, list[str]]:
    """``n`` new BC rollouts (stochastic, as the rollouts stage; scenes from seeds of ``base``, none of the stage's):
    their frames' states, frames and instructions, to train on beside the stage's rollouts."""
    import torch

    from embodied_safety.envs.control.dubins import DubinsVLVec
    from embodied_safety.shield.policy.demos import episode_seeds
    from embodied_safety.shield.policy.rollouts import collect_rollouts
    from embodied_safety.shield.rl.viability import frame_states

    rs = collect_rollouts(None, policy, seeds=episode_seeds(base, range(n)), n_envs=64,
                          make_vec=lambda k: DubinsVLVec(k, render=True))
    return frame_states(rs), torch.as_tensor(np.asarray(rs.frames)), rs.frame_instructions()


def split_checks(critic: Any, policy: Any, frames: Any, words: list[str], states: np.ndarray, rollouts: Any,
                 test: np.ndarray, lost: np.ndarray) -> dict[str, float]:
    """The check's numbers on the rollout frames of the training episodes (``train_*``) and the held-out ones
    (``test_*``): the turn agreement (``gate_check.frame_turn_agreement``), the fraction flagged at δ = 0 and the
    unrecoverable-frame rate (``lost``: ``viability.unrecoverable`` of ``states``)."""
    from embodied_safety.shield.rl.gate_check import frame_turn_agreement, infeasible_fractions

    margin, cost = np.asarray(rollouts.margin), np.asarray(rollouts.cost)
    row: dict[str, float] = {}
    for name, mask in (("train", ~test), ("test", test)):
        idx = np.flatnonzero(mask)
        res = frame_turn_agreement(critic, frames[idx], [words[k] for k in idx], states[idx])
        flags = infeasible_fractions(critic, policy, frames[idx], [words[k] for k in idx], margin[idx], cost[idx],
                                     delta=0.0, lost=lost[idx])
        row |= {f"{name}_{k}": v for k, v in res.items()}
        row |= {f"{name}_flagged_at_0": flags["infeasible_frac_at_0"],
                f"{name}_unrecoverable": flags["unrecoverable_frame_rate"]}
    return row
