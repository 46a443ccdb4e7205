"""The offline acceptance check of a warmed safety critic, run before any PPO budget is spent (issue 21).

Two questions, on Dubins-VL, against the simulator:

1. **Is the gate selective?** On the start policy's own rollout frames, the fraction the gate flags,
   ``1[Q_s(o, ā(o)) ≤ δ]``, should be close to the fraction of frames that *should* be flagged. A critic of
   the current policy (App. D.1's target) flags every frame from which that policy fails; the HJ value (App. A's
   max over next actions) flags only frames no continuation recovers from. Leaving Dubins-VL's workspace is a
   failure to the critic (``PPOConfig.exit_is_failure``), so the reference counts it: with the frames' states
   (:mod:`.viability`), ``Q ≤ 0`` is compared with the *unrecoverable* rate (unsafe now, or no escape manoeuvre
   avoids both the unsafe zones and the edge); without them, with the unsafe-frame rate (obstacle only). Since
   every fixed point has ``Q ≤ ℓ``, a perfect critic also flags the frames with ``0 ≤ ℓ ≤ δ``: the flagged
   fraction at δ is compared with that floor (joined with the unrecoverable frames).
2. **Does the critic know the safer action?** On states 0.31–0.65 from the obstacle's edge with random
   headings, the simulator's HJ action values (:func:`.viability.action_values`: a full turn for one control step,
   then the best bang-straight-bang continuation, exits counted) rank the two full turns; where they differ by
   more than ``min_gap``, the critic's ranking ``sign(Q_s(o, +U) − Q_s(o, −U))`` should agree on at least 80 % of
   the states. Beside it, the issue's first reference: the probe's safer turn (0.3 s of turn, then straight,
   worst ``ℓ*`` over 1 s), matched by the sign of the critic's best candidate (``argmax_{a ∈ C(o)} Q_s(o, a)``,
   :func:`.critic.candidate_actions`) and of ``∂Q_s/∂a`` at the policy mean (Eq. 6's direction). The exact HJ values
   agree with that probe on only about three quarters of its states (a different continuation; a best candidate
   of "straight" counts as a miss), so a critic that had learned the HJ value could not reach 80 % there.

``python analysis/state_control.py check`` runs both on the state-based control (a BC start policy,
its rollouts, a critic warmed with each target; ``data/shield/gate_check_state.json``); the ``shield_ppo`` stage
runs :func:`gate_check` on its warmed critics before any run (``data/shield/ppo/<env>/gate_check.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

#: distance from the obstacle's centre of the probe states: 0.31–0.65 from its edge, ℓ* in [0.01, 0.35]
NEAR = (0.56, 0.9)
AGREEMENT_TARGET = 0.8


def near_obstacle_states(n: int, seed: int, render: bool) -> tuple[np.ndarray, np.ndarray | None, str]:
    """``(states [n, 7], frames [n, 84, 84, 3] or None, instruction)``: Dubins-VL scenes with the car moved near
    the obstacle at a random heading."""
    from ...envs.control.dubins import DubinsVLVec

    vec = DubinsVLVec(n, render=render, seed=seed)
    obs, info = vec.reset()
    st = info["state"].copy()
    rng = np.random.default_rng(seed)
    ang, rad = rng.uniform(0, 2 * np.pi, n), rng.uniform(*NEAR, n)
    st[:, 0], st[:, 1] = st[:, 5] + rad * np.cos(ang), st[:, 6] + rad * np.sin(ang)
    st[:, 2] = rng.uniform(-np.pi, np.pi, n)
    vec._b.state[:] = st
    return st, (vec._b.frames() if render else None), str(obs["instruction"][0])


def safer_turn_gap(states: np.ndarray, turn_steps: int = 3, horizon: int = 10, exits: bool = True) -> np.ndarray:
    """``worst ℓ*(full left) − worst ℓ*(full right)`` per state: each turn held ``turn_steps`` control steps,
    then straight, for ``horizon`` steps (0.1 s each); > 0 means turning left (``u > 0``) is safer. ``exits``:
    a turn that leaves the workspace reaches ``EXIT_MARGIN`` there (the critic's failure set)."""
    from ...envs.control.dubins import U_MAX, euler, margin
    from .exits import EXIT_MARGIN

    n = len(states)
    obstacles = states[:, 5:7].reshape(-1, 1, 2)

    def worst(u: float) -> np.ndarray:
        x, y, th = states[:, 0].copy(), states[:, 1].copy(), states[:, 2].copy()
        m = np.full(n, np.inf)
        for k in range(horizon):
            x, y, th = euler(x, y, th, np.full(n, u if k < turn_steps else 0.0), 10)
            m = np.minimum(m, margin(np.stack([x, y], 1), obstacles))
            if exits:
                m = np.where((np.abs(x) > 1.0) | (np.abs(y) > 1.0), np.minimum(m, EXIT_MARGIN), m)
        return m

    return worst(U_MAX) - worst(-U_MAX)


def _obs(states: np.ndarray, frames: np.ndarray | None, obs: str) -> Tensor:
    return torch.as_tensor(states.astype(np.float32) if obs == "state" else frames)


def turn_agreement(critic: Any, policy: Any, obs: Literal["image", "state"] = "image", n: int = 2048,
                   seed: int = 5, min_gap: float = 0.05) -> dict[str, float]:
    """Does the critic know which way to turn? On the probe states, against two simulator references:

    * the probe's safer turn (:func:`safer_turn_gap`, ``|gap| > min_gap``): the sign of the critic's best candidate
      (``best_candidate_agreement``, the issue's wording) and of ``∂Q/∂a`` at the policy mean (Eq. 6's direction);
    * the HJ action values (:func:`.viability.action_values`: each full turn held one control step, the critic's
      action, then the best bang-straight-bang continuation): whether the critic ranks the two full turns as they
      do, ``sign(Q(o, +U) − Q(o, −U))``, where they differ by more than ``min_gap`` (``hj_turn_agreement``, the
      verdict's number), and how often they agree with the probe (``hj_probe_agreement``): the probe's ceiling
      for a critic that learned the HJ value exactly (docs/shield_ppo.md)."""
    from ...envs.control.dubins import U_MAX
    from .viability import action_values

    states, frames, instruction = near_obstacle_states(n, seed, render=obs == "image")
    gap = safer_turn_gap(states)
    q_star = action_values(states, np.array([U_MAX, -U_MAX]))
    hj_gap = q_star[:, 0] - q_star[:, 1]
    o, instr = _obs(states, frames, obs), [instruction] * n
    with torch.no_grad():
        feats, mean = critic.embed(o, instr), policy(o, instr)[0]
        cands = critic.candidates(mean)
        q_c = critic.q_candidates(feats, cands)
        best = cands[torch.arange(n), q_c.argmax(dim=1)].squeeze(-1).numpy()
        turns = torch.tensor([[U_MAX], [-U_MAX]], dtype=mean.dtype).expand(n, 2, 1)
        q_turns = critic.q_candidates(feats, turns).numpy()
    a = mean.clone().requires_grad_(True)
    critic.q_features(feats, a).sum().backward()
    grad = a.grad.squeeze(-1).numpy()
    clear, hj_clear = np.abs(gap) > min_gap, np.abs(hj_gap) > min_gap
    want, hj_want = np.sign(gap[clear]), np.sign(hj_gap[hj_clear])
    both = clear & hj_clear
    return {"best_candidate_agreement": float(np.mean(np.sign(best[clear]) == want)),
            "gradient_agreement": float(np.mean(np.sign(grad[clear]) == want)),
            "states": float(clear.sum()), "best_is_straight": float(np.mean(best[clear] == 0.0)),
            "turn_ranking_agreement": float(np.mean(np.sign(q_turns[clear, 0] - q_turns[clear, 1]) == want)),
            "hj_turn_agreement": float(np.mean(np.sign(q_turns[hj_clear, 0] - q_turns[hj_clear, 1]) == hj_want)),
            "hj_states": float(hj_clear.sum()),
            "hj_probe_agreement": float(np.mean(np.sign(hj_gap[both]) == np.sign(gap[both]))),
            "hj_best_candidate_agreement": float(np.mean(np.sign(best[hj_clear]) == hj_want))}


def infeasible_fractions(critic: Any, policy: Any, observations: Tensor, instructions: Sequence[str],
                         margin: np.ndarray, unsafe: np.ndarray, delta: float, batch: int = 2048,
                         lost: np.ndarray | None = None) -> dict[str, float]:
    """On rollout frames: the gate's flagged fraction ``Q(o, ā) ≤ δ`` (and ``≤ 0``), the frames with no
    safe candidate (``max_C Q ≤ δ``), against the unsafe-frame rate and the ``ℓ ≤ δ`` floor; with ``lost``
    (:func:`.viability.unrecoverable` per frame) also the unrecoverable rate and the floor joined with it."""
    q_mean, q_best = [], []
    with torch.no_grad():
        for i in range(0, len(observations), batch):
            o, instr = observations[i:i + batch], list(instructions[i:i + batch])
            f, mean = critic.embed(o, instr), policy(o, instr)[0]
            q_c = critic.q_candidates(f, critic.candidates(mean))
            q_mean.append(q_c[:, 0])
            q_best.append(q_c.max(dim=1).values)
    qm, qb = torch.cat(q_mean).numpy(), torch.cat(q_best).numpy()
    out = {"infeasible_frac": float(np.mean(qm <= delta)), "infeasible_frac_at_0": float(np.mean(qm <= 0.0)),
           "no_safe_action_frac": float(np.mean(qb <= delta)), "unsafe_frame_rate": float(np.mean(unsafe > 0)),
           "margin_below_delta_rate": float(np.mean(margin <= delta)), "frames": float(len(qm)), "delta": delta}
    if lost is not None:
        lost = np.asarray(lost, bool)
        out |= {"unrecoverable_frame_rate": float(np.mean(lost)),
                "flag_floor_rate": float(np.mean(lost | (margin <= delta))),
                # which frames: Q ≤ 0 on the lost ones (recall) and on the recoverable ones (false flags)
                "lost_flagged_at_0": float(np.mean(qm[lost] <= 0.0)) if lost.any() else float("nan"),
                "recoverable_flagged_at_0": float(np.mean(qm[~lost] <= 0.0)) if (~lost).any() else float("nan")}
    return out


def frame_turn_agreement(critic: Any, observations: Tensor, instructions: Sequence[str], states: np.ndarray,
                         min_gap: float = 0.05, near: tuple[float, float] = (0.0, 0.35),
                         batch: int = 2048) -> dict[str, float]:
    """The turn question on the start policy's own frames (the states the gate will see): how often the critic ranks
    the two full turns as the simulator's HJ action values do, on the frames where those differ by more than
    ``min_gap`` (``frame_turn_agreement``), and on the subset ``near`` the obstacle (``0 ≤ ℓ* ≤ 0.35``, the probe's
    band; ``near_frame_turn_agreement``, the verdict's number when the frames' states are known)."""
    from ...envs.control.dubins import U_MAX
    from .viability import action_values, state_margins

    q_star = action_values(states, np.array([U_MAX, -U_MAX]))
    hj_gap = q_star[:, 0] - q_star[:, 1]
    ranks = []
    with torch.no_grad():
        for i in range(0, len(observations), batch):
            f = critic.embed(observations[i:i + batch], list(instructions[i:i + batch]))
            turns = torch.tensor([[U_MAX], [-U_MAX]], dtype=f.dtype).expand(len(f), 2, 1)
            q = critic.q_candidates(f, turns)
            ranks.append(torch.sign(q[:, 0] - q[:, 1]))
    agree = torch.cat(ranks).numpy() == np.sign(hj_gap)
    ell = state_margins(states)
    clear = np.abs(hj_gap) > min_gap
    close = clear & (ell >= near[0]) & (ell <= near[1])
    return {"frame_turn_agreement": _mean(agree[clear]), "frame_turn_states": float(clear.sum()),
            "near_frame_turn_agreement": _mean(agree[close]), "near_frame_turn_states": float(close.sum())}


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else float("nan")


def gate_check(critic: Any, policy: Any, observations: Tensor, instructions: Sequence[str], margin: np.ndarray,
               unsafe: np.ndarray, delta: float, obs: Literal["image", "state"] = "image", tolerance: float = 0.1,
               probe_states: int = 2048, states: np.ndarray | None = None) -> dict[str, Any]:
    """Both checks and their verdicts. With the frames' Dubins-VL ``states`` (:mod:`.viability`), the reference of
    ``selective`` is the unrecoverable rate (``|P(Q ≤ 0) − reference| ≤ tolerance``, and the flagged fraction at δ
    within ``tolerance`` of ``P(lost or ℓ ≤ δ)``) and ``knows_safer_turn`` asks whether the critic ranks the full
    turns as the simulator's HJ action values do on 80 % of the near-obstacle frames (:func:`frame_turn_agreement`);
    without them, the unsafe rate (floor ``P(ℓ ≤ δ)``) and the same ranking on the probe states
    (``hj_turn_agreement``; :func:`turn_agreement` says why not the probe's turn)."""
    from .viability import unrecoverable

    lost = None if states is None else unrecoverable(states)
    frac = infeasible_fractions(critic, policy, observations, instructions, margin, unsafe, delta, lost=lost)
    turn = turn_agreement(critic, policy, obs, n=probe_states)
    frames = {} if states is None else frame_turn_agreement(critic, observations, instructions, states)
    reference = frac.get("unrecoverable_frame_rate", frac["unsafe_frame_rate"])
    floor = frac.get("flag_floor_rate", frac["margin_below_delta_rate"])
    knows = frames.get("near_frame_turn_agreement", turn["hj_turn_agreement"])
    return {**frac, **turn, **frames, "target": critic.config.target,
            "selective": bool(abs(frac["infeasible_frac_at_0"] - reference) <= tolerance
                              and frac["infeasible_frac"] - floor <= tolerance),
            "knows_safer_turn": bool(knows >= AGREEMENT_TARGET)}


def check_on_rollouts(env: str, critic: Any, policy: Any, rollouts: Any, margin: np.ndarray,
                      delta: float) -> dict[str, Any]:
    """The check the ``shield_ppo`` stage runs on each warm critic, on the BC ``rollouts`` (a ``RolloutSet``) and
    their margins: both checks on Dubins-VL (the probe states are Dubins-VL's; the frames' states are replayed for
    the references, :mod:`.viability`), the infeasible fractions only on the other envs."""
    from .viability import frame_states

    args = (critic, policy, torch.as_tensor(np.asarray(rollouts.frames)), rollouts.frame_instructions(), margin,
            np.asarray(rollouts.cost), delta)
    if env != "dubins":
        return infeasible_fractions(*args)
    return gate_check(*args, obs="image", states=frame_states(rollouts))
