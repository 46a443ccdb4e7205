"""Which rollout frames are lost whatever the car does next: the simulator's reference for the gate check (issue 21).

The offline gate check (:mod:`.gate_check`) asks whether the critic flags about as many frames as *should* be
flagged. Three references, from the weakest to the one an HJ critic should match:

* ``unsafe_frame_rate``: frames whose state is in an unsafe zone now (``cost > 0``; the obstacle only).
* ``failure_bound_frame_rate``: frames from which the *start policy's own* continuation fails: a cost later in
  its episode, or an exit at its end (Dubins-VL's car leaves the workspace; the critic counts that as a failure,
  ``PPOConfig.exit_is_failure``). A critic of the current policy (App. D.1's target) converges towards it.
* ``unrecoverable_frame_rate``: frames that are unsafe now, or from which *no* sequence of six 0.5 s segments of
  full left, straight or full right (:func:`escapes`; Dubins' optimal paths are of this bang-straight-bang kind)
  keeps the car inside the workspace and out of every unsafe zone for 3 s or until it reaches the goal. The HJ
  value (App. A, a max over next actions) flags these. Not a bound either way: the search is finite (a state it
  calls lost may have an escape between its switching times) and 3 s is shorter than the critic's horizon
  (``γ = 0.99``: a state it calls recoverable may be lost later).

The rollouts store images, not states, so :func:`frame_states` replays each episode's recorded actions from its
seed in the single env (the vectorised env replays the same episode per seed) and checks the replayed margins
against the recorded ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .exits import exit_mask


def frame_states(rollouts: Any, num_obstacles: int = 1) -> np.ndarray:
    """``[N, 5 + 2K]`` Dubins-VL states of the rollout frames, in frame order, by replaying each episode's
    actions from its seed. Raises if a replayed margin differs from the recorded one (different episodes)."""
    from ...envs.control.dubins import DubinsVLEnv

    env = DubinsVLEnv(num_obstacles=num_obstacles)
    ep = np.asarray(rollouts.frame_episode)
    actions = np.asarray(rollouts.actions)
    states = np.zeros((len(ep), 5 + 2 * num_obstacles))
    for e, seed in enumerate(np.asarray(rollouts.episode_seeds)):
        idx = np.flatnonzero(ep == e)
        _, info = env.reset(seed=int(seed))
        states[idx[0]] = info["state"]
        for prev, cur in zip(idx[:-1], idx[1:], strict=True):
            states[cur] = env.step(actions[prev])[4]["state"]
    replayed = _margins(states)
    recorded = np.asarray(rollouts.margin, dtype=np.float64)
    if not np.allclose(replayed, recorded, atol=1e-4, equal_nan=False):
        worst = int(np.argmax(np.abs(replayed - recorded)))
        raise ValueError(f"replaying the rollouts' actions does not reproduce frame {worst}'s margin "
                         f"({replayed[worst]:.5f} vs {recorded[worst]:.5f}): not Dubins-VL episodes of these seeds")
    return states


def _margins(states: np.ndarray) -> np.ndarray:
    from ...envs.control.dubins import margin

    return margin(states[:, :2], states[:, 5:].reshape(len(states), -1, 2))


def escapes(states: np.ndarray, goal_radius: float = 0.1, segment: int = 5, depth: int = 6,
            rates: tuple[float, ...] | None = None) -> np.ndarray:
    """Per state: some sequence of ``depth`` turn-rate segments (each rate of ``rates``, default ``(−U, 0, U)``:
    Dubins paths are bang-straight-bang, held ``segment`` control steps of 0.1 s) keeps the car inside the
    workspace and out of every unsafe zone for ``depth · segment`` steps, or reaches the goal first. A tree search,
    pruned as branches fail: at most ``len(rates) ** depth`` branches per state (729 for 3 s)."""
    from ...envs.control.dubins import D_SAFE, R_OBS, U_MAX, euler_block

    rates = (-U_MAX, 0.0, U_MAX) if rates is None else rates
    n = len(states)
    obstacles = states[:, 5:].reshape(n, -1, 2)
    ok = np.zeros(n, dtype=bool)
    owner = np.arange(n)
    x, y, th = states[:, 0].copy(), states[:, 1].copy(), states[:, 2].copy()
    for level in range(depth):
        k = len(rates)
        owner, x, y, th = np.repeat(owner, k), np.repeat(x, k), np.repeat(y, k), np.repeat(th, k)
        u = np.tile(np.asarray(rates, dtype=np.float64), len(owner) // k)
        alive = np.ones(len(owner), dtype=bool)
        for _ in range(segment):
            x, y, th = euler_block(x, y, th, u, 10)
            d = np.sqrt(((np.stack([x, y], 1)[:, None, :] - obstacles[owner]) ** 2).sum(-1)).min(axis=1)
            alive &= (d >= R_OBS + D_SAFE) & (np.abs(x) <= 1.0) & (np.abs(y) <= 1.0)
            goal = alive & (np.hypot(x - states[owner, 3], y - states[owner, 4]) <= goal_radius)
            ok[owner[goal]] = True
            alive &= ~goal
        keep = alive & ~ok[owner]  # a state already saved needs no more branches
        if level == depth - 1:
            ok[owner[keep]] = True
        owner, x, y, th = owner[keep], x[keep], y[keep], th[keep]
    return ok


def unrecoverable(states: np.ndarray, goal_radius: float = 0.1) -> np.ndarray:
    """Per state: unsafe now, or no segment sequence of :func:`escapes` avoids an unsafe zone and the
    workspace's edge for 3 s (or until the goal is reached)."""
    return (_margins(states) < 0) | ~escapes(states, goal_radius)


def failure_bound(rollouts: Any, max_steps: int) -> np.ndarray:
    """Per frame: the start policy's own continuation fails from it (a cost at this frame or later in its
    episode, or an exit at the episode's end)."""
    ep, t = np.asarray(rollouts.frame_episode), np.asarray(rollouts.frame_t)
    cost = np.asarray(rollouts.cost) > 0
    exits = exit_mask(rollouts.episode_success, rollouts.episode_length, max_steps)
    last_cost = np.full(len(exits), -1)
    np.maximum.at(last_cost, ep[cost], t[cost])
    return exits[ep] | (t <= last_cost[ep])


def references(rollouts: Any, max_steps: int, states: np.ndarray | None = None) -> dict[str, float]:
    """The three reference rates of the module docstring (``states`` replayed when not given) and the exit rate."""
    states = frame_states(rollouts) if states is None else states
    exits = exit_mask(rollouts.episode_success, rollouts.episode_length, max_steps)
    return {"unsafe_frame_rate": float(np.mean(np.asarray(rollouts.cost) > 0)),
            "failure_bound_frame_rate": float(failure_bound(rollouts, max_steps).mean()),
            "unrecoverable_frame_rate": float(unrecoverable(states).mean()),
            "exit_episode_rate": float(exits.mean())}
