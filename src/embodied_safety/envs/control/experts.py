"""Scripted experts for behaviour-cloning demonstrations, one per control environment.

Each reads the privileged ``info["state"]`` vector (never the image) and returns an action in the env's
action space. ``noise`` (>= 0) adds zero-mean Gaussian noise of that many action half-ranges to every action;
the experts re-plan every step, so noise alone rarely causes a violation. ``hazard`` (in [0, 1]) makes that
fraction of episodes careless about the obstacle (a per-episode coin hashed from the scene, so the functions
stay stateless): the knob for demonstrations with unsafe episodes. Measured success and violation rates are
in ``docs/control_envs.md``.

    action = expert_action("TurtleBotNav", info["state"], rng, noise=0.1, hazard=0.4)

``env_name`` may be a short name (``DubinsVL``, ``TurtleBotNav``, ``FrankaReach``) or any registered id of
their variants. The Dubins expert also accepts a batch of states ``(N, D)`` from :class:`DubinsVLVec`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from . import dubins

# ---------------------------------------------------------------------------------------------- distance fields
_FIELDS: dict[bytes, np.ndarray] = {}


@dataclass(frozen=True)
class _Grid:
    """A square grid over ``[-half, half]^2`` with ``cells`` points a side, blocked within ``wall`` of the edge."""

    half: float
    cells: int
    wall: float

    @property
    def xs(self) -> np.ndarray:
        return np.linspace(-self.half, self.half, self.cells)


def _distance_fields(grid: _Grid, goals: np.ndarray, discs: np.ndarray) -> np.ndarray:
    """Shortest-path distance to ``goals (N, 2)`` over free cells (outside every disc of ``discs (N, K, 3)``
    ``= (x, y, radius)`` and inside the walls): 8-connected relaxation, vectorised over scenes. Returns
    ``(N, G, G)`` indexed ``[row = y, col = x]``, ``inf`` on blocked cells."""
    n, g_ = goals.shape[0], grid.cells
    xs = grid.xs
    gy_, gx_ = np.meshgrid(xs, xs, indexing="ij")
    gap = np.sqrt((gx_[None, :, :, None] - discs[:, None, None, :, 0]) ** 2
                  + (gy_[None, :, :, None] - discs[:, None, None, :, 1]) ** 2) - discs[:, None, None, :, 2]
    free = (gap.min(-1) >= 0) & (np.abs(gx_) <= grid.half - grid.wall) & (np.abs(gy_) <= grid.half - grid.wall)
    dist = np.full((n, g_, g_), np.inf)
    scale = (g_ - 1) / (2 * grid.half)
    gi = np.clip(np.rint((goals[:, 1] + grid.half) * scale).astype(int), 0, g_ - 1)
    gj = np.clip(np.rint((goals[:, 0] + grid.half) * scale).astype(int), 0, g_ - 1)
    dist[np.arange(n), gi, gj] = np.hypot(xs[gj] - goals[:, 0], xs[gi] - goals[:, 1])
    free[np.arange(n), gi, gj] = True
    h = 1.0 / scale
    shifts = [(di, dj, h * math.hypot(di, dj)) for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj]
    pad = np.full((n, g_ + 2, g_ + 2), np.inf)
    for _ in range(4 * g_):
        pad[:, 1:-1, 1:-1] = dist
        best = dist.copy()
        for di, dj, w in shifts:
            np.minimum(best, pad[:, 1 + di:g_ + 1 + di, 1 + dj:g_ + 1 + dj] + w, out=best)
        best[~free] = np.inf
        if np.array_equal(best, dist):
            break
        dist = best
    return dist


def _fields_for(grid: _Grid, goals: np.ndarray, discs: np.ndarray) -> np.ndarray:
    """Cached :func:`_distance_fields`, keyed by the scene (goal and discs)."""
    keys = [repr(grid).encode() + g.tobytes() + dd.tobytes() for g, dd in zip(goals, discs, strict=True)]
    missing = [i for i, key in enumerate(keys) if key not in _FIELDS]
    if missing:
        if len(_FIELDS) > 4096:
            _FIELDS.clear()
        for i, f in zip(missing, _distance_fields(grid, goals[missing], discs[missing]), strict=True):
            _FIELDS[keys[i]] = f
    return np.stack([_FIELDS[key] for key in keys])


def _lookup(grid: _Grid, fields: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Bilinear look-up of ``fields (N, G, G)`` at points ``x, y (N, C)``; blocked cells count as far away."""
    g_ = grid.cells
    f = np.where(np.isfinite(fields), fields, 10.0 * grid.half)
    scale = (g_ - 1) / (2 * grid.half)
    u = np.clip((x + grid.half) * scale, 0, g_ - 1 - 1e-9)
    v = np.clip((y + grid.half) * scale, 0, g_ - 1 - 1e-9)
    j, i = u.astype(int), v.astype(int)
    fu, fv = u - j, v - i
    n = np.arange(f.shape[0])[:, None]
    return ((f[n, i, j] * (1 - fu) + f[n, i, j + 1] * fu) * (1 - fv)
            + (f[n, i + 1, j] * (1 - fu) + f[n, i + 1, j + 1] * fu) * fv)


# ---------------------------------------------------------------------------------------------- Dubins-VL
_DUBINS_GRID = _Grid(1.0, 41, 0.03)  # 0.05 per cell
_U_GRID = np.linspace(-dubins.U_MAX, dubins.U_MAX, 9)
_U_LATER = np.linspace(-dubins.U_MAX, dubins.U_MAX, 5)
_SEGS = (5, 10, 15)  # control steps of the three arcs of each candidate (3 s of look-ahead: a U-turn fits)


def careless(scene: np.ndarray, hazard: float) -> np.ndarray:
    """Per-episode coin, stateless: whether each row of ``scene (N, D)`` (the constant part of an episode's
    state) hashes (BLAKE2b, so the same in every process) below ``hazard``. Same scene, same answer, at
    every step of the episode."""
    if hazard <= 0:
        return np.zeros(scene.shape[0], dtype=bool)
    coins = [int.from_bytes(hashlib.blake2b(np.ascontiguousarray(row, dtype=np.float64).tobytes(),
                                            digest_size=8).digest(), "little") / float(1 << 64) for row in scene]
    return np.asarray(coins) < hazard


def _tie_break(score: np.ndarray, u1: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per row of ``score (N, C)``, the candidate to take among those tied at the minimum plan score (over half the
    expert's states have several first turn rates with exactly the same plan: the score is a step function of
    the look-ahead). ``argmin`` alone took the lowest, i.e. the hardest right turn among equals, a one-sided rule
    the square's mirror symmetry does not have and a label a network cannot fit. Here: the gentlest first turn
    (smallest ``|u1|``), and between a left and a right turn of the same rate the one toward the goal's side
    (the sign of heading x goal direction; exactly ahead: left). Equivariant under the square's rotations and
    mirrors (a mirror negates the chosen turn rate), and unchanged where the minimum is unique."""
    tied = score <= score.min(axis=1, keepdims=True) + 1e-9
    x, y, th, gx, gy = (s[:, i:i + 1] for i in range(5))
    side = np.sign(np.cos(th) * (gy - y) - np.sin(th) * (gx - x))  # +1: goal to the left
    side = np.where(side == 0, 1.0, side)
    # lexicographic: |u1| first, then the turn toward the goal side (u1 * side > 0 preferred)
    key = np.abs(u1)[None, :] * 100.0 - np.sign(u1)[None, :] * side
    return np.where(tied, key, np.inf).argmin(axis=1)


def dubins_expert(state: np.ndarray, rng: np.random.Generator, noise: float = 0.0, buffer: float = 0.05,
                  goal_radius: float = 0.1, action_repeat: int = 10, hazard: float = 0.0) -> np.ndarray:
    """Two-arc look-ahead planner: try 49 (first arc, second arc) turn-rate pairs over 2 s, discard those
    that come within ``buffer`` of an unsafe zone or leave the workspace, and take the first turn rate of
    the one that reaches (or ends closest to) the goal soonest. ``buffer < 0`` lets it cut corners.

    ``state``: ``(D,)`` or ``(N, D)``; returns ``(1,)`` or ``(N, 1)`` turn rates.
    """
    s = np.atleast_2d(np.asarray(state, dtype=np.float64))
    n = s.shape[0]
    k = (s.shape[1] - 5) // 2
    u1, u2, u3 = (a.ravel() for a in np.meshgrid(_U_GRID, _U_LATER, _U_LATER, indexing="ij"))  # (C,)
    c = u1.size
    x = np.repeat(s[:, 0:1], c, axis=1)
    y = np.repeat(s[:, 1:2], c, axis=1)
    th = np.repeat(s[:, 2:3], c, axis=1)
    gx, gy = s[:, 3:4], s[:, 4:5]
    obs = s[:, 5:].reshape(n, 1, k, 2)
    min_margin = np.full((n, c), np.inf)
    out = np.zeros((n, c), dtype=bool)
    reach_t = np.full((n, c), np.inf)
    for t in range(sum(_SEGS)):
        u = u1 if t < _SEGS[0] else u2 if t < _SEGS[0] + _SEGS[1] else u3
        x, y, th = dubins.euler_block(x, y, th, u, action_repeat)
        live = ~np.isfinite(reach_t)  # the episode ends on reaching: nothing after it counts
        d_obs = np.sqrt((x[..., None] - obs[..., 0]) ** 2 + (y[..., None] - obs[..., 1]) ** 2).min(-1)
        min_margin = np.where(live, np.minimum(min_margin, d_obs - dubins.R_OBS - dubins.D_SAFE), min_margin)
        out |= live & ((np.abs(x) > 0.97) | (np.abs(y) > 0.97))
        reached = live & ~out & (np.hypot(x - gx, y - gy) <= 0.95 * goal_radius)
        reach_t = np.where(reached, t, reach_t)
    live = ~np.isfinite(reach_t)
    # at the end of the look-ahead a full-lock circle should still fit in the workspace (else it may be doomed)
    cornered = live & ~dubins.escape_circle_ok(np.stack([x, y], -1), th, slack=0.03)
    # cost-to-go from the end of the look-ahead: shortest path around the unsafe zones and inside the walls,
    # plus a penalty for ending up facing away from that path
    rho = dubins.R_OBS + dubins.D_SAFE + buffer
    discs = np.concatenate([s[:, 5:].reshape(n, k, 2), np.full((n, k, 1), rho)], axis=2)
    fields = _fields_for(_DUBINS_GRID, s[:, 3:5], discs)
    final = _lookup(_DUBINS_GRID, fields, x, y)
    ahead = _lookup(_DUBINS_GRID, fields, x + 0.1 * np.cos(th), y + 0.1 * np.sin(th))
    final = final + 0.5 * np.clip(ahead - final + 0.1, 0.0, 0.2)
    lax = careless(s[:, 3:], hazard)[:, None]  # these episodes ignore the obstacles altogether
    final = np.where(lax, np.hypot(x - gx, y - gy), final)
    score = np.where(live, 1.0 + final, reach_t * 0.01)
    # leaving the workspace (ends the episode) > entering an unsafe zone (deeper is worse) > being cornered
    unsafe = (min_margin < buffer) & ~lax
    score = score + 300.0 * out + np.where(unsafe, 100.0 + (buffer - min_margin) * 100.0, 0.0) + 20.0 * cornered
    act = u1[_tie_break(score, u1, s)]
    if noise > 0:
        act = act + rng.normal(0.0, noise * dubins.U_MAX, size=act.shape)
    act = np.clip(act, -dubins.U_MAX, dubins.U_MAX)[:, None]
    return act[0] if np.ndim(state) == 1 else act


# ---------------------------------------------------------------------------------------------- dispatch
def _short(env_name: str) -> str:
    name = env_name.split("/")[-1]
    for short in ("DubinsVL", "TurtleBotNav", "FrankaReach"):
        if name.startswith(short):
            return short
    raise ValueError(f"no expert for {env_name!r}")


def expert_action(env_name: str, state: np.ndarray, rng: np.random.Generator | None, noise: float = 0.0,
                  hazard: float = 0.0) -> np.ndarray:
    """The scripted expert's action for ``env_name`` (short name or registered id) at privileged ``state``.
    ``rng`` is only needed with ``noise > 0``."""
    short = _short(env_name)
    if short == "DubinsVL":
        return dubins_expert(state, rng, noise, hazard=hazard)
    if short == "TurtleBotNav":
        return turtlebot_expert(state, rng, noise, hazard=hazard)
    return franka_expert(state, rng, noise, hazard=hazard)



# ---------------------------------------------------------------------------------------------- TurtleBot
_TB_GRID = _Grid(3.2, 65, 0.17 + 0.08)  # 0.1 m per cell, robot centre kept 0.25 m off the walls
_TB_ZONE = 0.6 + 0.17 + 0.6  # robot-centre distance to the cylinder axis at margin 0
_TB_BALL = 0.2 + 0.17 + 0.12  # keep off the other ball
_TB_DIRS = np.linspace(-np.pi, np.pi, 48, endpoint=False)


def turtlebot_expert(state: np.ndarray, rng: np.random.Generator, noise: float = 0.0, buffer: float = 0.2,
                     hazard: float = 0.0) -> np.ndarray:
    """Follow the shortest path to the target ball around the cost zone inflated by ``buffer`` and the other
    ball (a distance field on a 0.1 m grid, cached per scene): aim 0.4 m ahead along the steepest descent,
    ``ω = 3·err``, ``v = cos(err)`` (turn in place when facing away). ``hazard``: the fraction of episodes in
    which it only keeps off the cylinder itself (0.08 m), not the 0.6 m cost band."""
    from .turtlebot import V_MAX, W_MAX

    s = np.asarray(state, dtype=np.float64)
    p, yaw = s[:2], s[2]
    lax = bool(careless(s[None, 3:], hazard)[0])
    rho = (0.6 + 0.17 + 0.08) if lax else _TB_ZONE + buffer
    discs = np.array([[[s[5], s[6], rho], [s[7], s[8], _TB_BALL]]])
    field = _fields_for(_TB_GRID, s[None, 3:5], discs)
    ring = _lookup(_TB_GRID, field, (p[0] + 0.4 * np.cos(_TB_DIRS))[None], (p[1] + 0.4 * np.sin(_TB_DIRS))[None])[0]
    if np.hypot(*(s[3:5] - p)) < 0.45:
        heading = math.atan2(s[4] - p[1], s[3] - p[0])
    else:
        heading = float(_TB_DIRS[int(ring.argmin())])
    err = math.atan2(math.sin(heading - yaw), math.cos(heading - yaw))
    w = float(np.clip(3.0 * err, -W_MAX, W_MAX))
    v = float(np.clip(math.cos(err), 0.0, V_MAX)) if abs(err) < math.pi / 2 else 0.0
    act = np.array([v, w])
    if noise > 0:
        act = act + rng.normal(0.0, noise, 2) * np.array([V_MAX / 2, W_MAX])
    return np.clip(act, [0.0, -W_MAX], [V_MAX, W_MAX]).astype(np.float32)


# ---------------------------------------------------------------------------------------------- Franka
_FR_CLEAR = 0.08 + 0.13  # horizontal end-effector distance to the cylinder axis that keeps the hand clear
_FR_OVER = 0.55 + 0.1  # end-effector height that clears the cylinder top with the whole arm above it


def franka_expert(state: np.ndarray, rng: np.random.Generator | None, noise: float = 0.0,
                  hazard: float = 0.0) -> np.ndarray:
    """Over-the-top waypoints on the privileged state: while the horizontal path from the end effector to
    the target passes within 0.21 m of the cylinder axis, rise to 0.65 m, then cross at that height; once
    the path is clear, go straight for the target. Full speed (1 cm/step) toward the waypoint, no rotation
    (the IK holds the hand pointing down), gripper 0. ``hazard``: the fraction of episodes that go straight."""
    s = np.asarray(state, dtype=np.float64)
    ee, target, cyl = s[0:3], s[3:6], s[6:8]
    lax = bool(careless(s[None, 3:8], hazard)[0])
    d = target[:2] - ee[:2]
    t = float(np.clip(np.dot(cyl - ee[:2], d) / max(float(np.dot(d, d)), 1e-12), 0.0, 1.0))
    blocked = not lax and float(np.hypot(*(ee[:2] + t * d - cyl))) < _FR_CLEAR
    if blocked and ee[2] < _FR_OVER - 0.02:
        waypoint = np.array([ee[0], ee[1], _FR_OVER])
    elif blocked:
        waypoint = np.array([target[0], target[1], _FR_OVER])
    else:
        waypoint = target
    act = np.zeros(7)
    act[:3] = np.clip((waypoint - ee) / 0.01, -1.0, 1.0)
    if noise > 0 and rng is not None:
        act[:6] += rng.normal(0.0, noise, 6) * np.array([1, 1, 1, 0.2, 0.2, 0.2])
    return np.clip(act, -1.0, 1.0).astype(np.float32)
