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

from collections.abc import Callable
from typing import Any

import numpy as np

from .exits import exit_mask

#: a margin of Dubins-VL states, ``[N, 5 + 2K] -> [N]`` (the simulator's, or a frame scorer's of their renders)
StateMargin = Callable[[np.ndarray], np.ndarray]


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
    replayed = state_margins(states)
    recorded = np.asarray(rollouts.margin, dtype=np.float64)
    if not np.allclose(replayed, recorded, atol=1e-4, equal_nan=False):
        worst = int(np.argmax(np.abs(replayed - recorded)))
        raise ValueError(f"replaying the rollouts' actions does not reproduce frame {worst}'s margin "
                         f"({replayed[worst]:.5f} vs {recorded[worst]:.5f}): not Dubins-VL episodes of these seeds")
    return states


def state_margins(states: np.ndarray) -> np.ndarray:
    from ...envs.control.dubins import margin

    return margin(states[:, :2], states[:, 5:].reshape(len(states), -1, 2))


def rendered_margin(source: Any, chunk: int = 4096) -> StateMargin:
    """The margin a frame scorer reads off the frames Dubins-VL renders in the given states, ``chunk`` states at a
    time: ``source`` is a :class:`~embodied_safety.shield.costs.margins.MarginSource` (``rubric``: the rubric
    scorer and its Platt scalars); it is given the frames only (NaN for the simulator's margin and cost)."""
    from ...envs.control.dubins import render_states

    def ell(states: np.ndarray) -> np.ndarray:
        parts = [np.zeros(0)]
        for i in range(0, len(states), chunk):
            part = states[i:i + chunk]
            blank = np.full(len(part), np.nan)
            parts.append(np.asarray(source(render_states(part), blank, blank), dtype=np.float64))
        return np.concatenate(parts)

    return ell


def tree_value(states: np.ndarray, goal_radius: float = 0.1, segment: int = 5, depth: int = 6,
               rates: tuple[float, ...] | None = None, chunk: int = 1024, floor: float = -np.inf,
               ell: StateMargin | None = None, check_every: int = 1) -> np.ndarray:
    """Per state: the best, over every sequence of ``depth`` turn-rate segments (each rate of ``rates``, default
    ``(−U, 0, U)``: Dubins paths are bang-straight-bang, held ``segment`` control steps of 0.1 s), of the worst
    margin along the path (``min_k ℓ(s_k)``, an exit from the workspace counting :data:`.exits.EXIT_MARGIN`); a
    path that reaches the goal ends there. The finite-horizon, undiscounted HJ value of the state under this
    control library (App. A's ``max_a min(ℓ, V)``): ``≥ 0`` exactly when some branch escapes. At most
    ``len(rates) ** depth`` branches per state (729 for 3 s), ``chunk`` states at a time; branches whose worst
    margin falls below ``floor`` are pruned (a state with none left gets ``−inf``: only "below ``floor``" is known).

    ``ell`` replaces the simulator's margin by another margin of the branch's states (:func:`rendered_margin`: the
    rubric margin of the frame the state renders; the search then reads no simulator margin, only the dynamics, the
    workspace's edge and the goal), read every ``check_every`` control steps (an exit is checked every step)."""
    if len(states) > chunk:
        return np.concatenate([tree_value(states[i:i + chunk], goal_radius, segment, depth, rates, chunk, floor,
                                          ell, check_every) for i in range(0, len(states), chunk)])
    from ...envs.control.dubins import U_MAX, euler_block, margin
    from .exits import cap_exits

    rates = (-U_MAX, 0.0, U_MAX) if rates is None else rates
    n, k = len(states), len(rates)
    obstacles = states[:, 5:].reshape(n, -1, 2)
    owner = np.arange(n)
    x, y, th = states[:, 0].copy(), states[:, 1].copy(), states[:, 2].copy()
    worst, done = np.full(n, np.inf), np.zeros(n, dtype=bool)
    for _ in range(depth):
        owner, x, y, th, worst, done = (np.repeat(v, k) for v in (owner, x, y, th, worst, done))
        u = np.tile(np.asarray(rates, dtype=np.float64), len(owner) // k)
        for t in range(1, segment + 1):
            x, y, th = euler_block(x, y, th, u, 10)
            out = (np.abs(x) > 1.0) | (np.abs(y) > 1.0)
            if ell is None:
                now = margin(np.stack([x, y], 1), obstacles[owner])
            elif t % check_every == 0:
                branch = states[owner]
                branch[:, 0], branch[:, 1], branch[:, 2] = x, y, th
                now = ell(branch)
            else:
                now = np.full(len(x), np.inf)
            step = cap_exits(now, out)
            worst = np.where(done, worst, np.minimum(worst, step))
            done |= np.hypot(x - states[owner, 3], y - states[owner, 4]) <= goal_radius
        keep = worst >= floor
        owner, x, y, th, worst, done = (v[keep] for v in (owner, x, y, th, worst, done))
    best = np.full(n, -np.inf)
    np.maximum.at(best, owner, worst)
    return best


def escapes(states: np.ndarray, goal_radius: float = 0.1, segment: int = 5, depth: int = 6,
            rates: tuple[float, ...] | None = None) -> np.ndarray:
    """Per state: some branch of :func:`tree_value`'s search keeps the car inside the workspace and out of every
    unsafe zone for ``depth · segment`` steps, or reaches the goal first."""
    return tree_value(states, goal_radius, segment, depth, rates, floor=0.0) >= 0.0


def action_values(states: np.ndarray, actions: np.ndarray, goal_radius: float = 0.1, segment: int = 5,
                  depth: int = 5, ell: StateMargin | None = None, check_every: int = 1) -> np.ndarray:
    """``[N, A]`` simulator action values ``Q*(s, u) = min(ℓ(s'), V(s'))``: each turn rate of ``actions`` held
    for one control step (0.1 s, the critic's action), then :func:`tree_value` from the state it leads to. The
    HJ critic's target for the same action (App. A) over a finite horizon and this control library; ``ell`` and
    ``check_every``: another margin of the states, as in :func:`tree_value`."""
    from ...envs.control.dubins import euler_block
    from .exits import cap_exits

    out = np.zeros((len(states), len(actions)))
    for j, u in enumerate(np.asarray(actions, dtype=np.float64)):
        nxt = states.copy()
        nxt[:, 0], nxt[:, 1], nxt[:, 2] = euler_block(states[:, 0], states[:, 1], states[:, 2],
                                                      np.full(len(states), u), 10)
        now = cap_exits(state_margins(nxt) if ell is None else ell(nxt),
                        (np.abs(nxt[:, 0]) > 1.0) | (np.abs(nxt[:, 1]) > 1.0))
        out[:, j] = np.minimum(now, tree_value(nxt, goal_radius, segment, depth, ell=ell, check_every=check_every))
    return out


def unrecoverable(states: np.ndarray, goal_radius: float = 0.1) -> np.ndarray:
    """Per state: unsafe now, or no segment sequence of :func:`escapes` avoids an unsafe zone and the
    workspace's edge for 3 s (or until the goal is reached)."""
    return (state_margins(states) < 0) | ~escapes(states, goal_radius)


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
