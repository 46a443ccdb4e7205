"""Dubins-VL (ShieldVLA App. D.1): a Dubins car seen from above, in batched numpy.

Dynamics, exactly as D.1: ``x' = v cos θ, y' = v sin θ, θ' = u`` with ``v = 0.6``, ``u ∈ [-1.1, 1.1]``,
forward-Euler at ``dt = 0.01``. One control step holds ``u`` for ``action_repeat = 10`` Euler steps
(0.1 s, the TurtleBot-Nav control period; the car moves 0.06 units, about 2.5 pixels), and an episode lasts
at most ``max_steps = 100`` control steps (10 s, 6 units of path; the scripted expert needs about 30).

Scene, re-sampled every episode from the episode's own random stream, so that the obstacle matters in
every episode (as TurtleBot-Nav's cylinder does) and no start is doomed:

* start and goal uniform in ``[-0.85, 0.85]²``, at least 1.2 apart;
* ``num_obstacles = 1`` disc of radius ``r_obs = 0.25`` centred on the start-goal segment (40-60 % of the
  way, up to ±0.3 across it), inside ``[-0.65, 0.65]²``; further obstacles (``num_obstacles > 1``) are
  uniform in ``[-0.65, 0.65]²``, centres at least 0.6 apart;
* start clearance ``ℓ >= 0.15``; the goal's success disc (``goal_radius = 0.1``) outside every unsafe zone;
* the start heading 30-90° off the goal bearing, turned away from the side the obstacle is offset to;
* the start pose must have an escape: some two-arc manoeuvre (5 turn rates for 1 s then 3 for 2 s) stays in
  the workspace and out of every unsafe zone for 3 s (:func:`can_escape`). The unsafe zone (1.1 wide) is
  about as wide as a full-lock circle (1.09) and half the workspace, so without this a third of the
  scenes start in a trap. With it the scripted expert is safe in every scene with one obstacle; with two
  it can still be trapped later (see ``docs/control_envs.md``), which is why one is the default.

Safety: ``d_min`` is the distance from the car's centre to the nearest obstacle *boundary*
(``‖p − c‖ − r_obs``, negative inside), ``margin = ℓ = d_min − d_safe`` with ``d_safe = 0.3`` (so the unsafe
zone is a disc of radius 0.55 around each centre) and ``cost = 1[ℓ < 0]``, evaluated at the state reached
after each control step. Violations do not end the episode; CSC is the sum of costs.

Reward ``−‖p − g‖`` at the reached state. Termination: success (``‖p − g‖ <= goal_radius``), or leaving
``[-1, 1]²``: the car cannot stop, so that ends the episode with reward ``−2√2 · (steps left, this one
included)``, the worst return it could have had by staying (no episode can gain by driving off). Otherwise
truncation at ``max_steps``.

Frames (84×84, row 0 at ``y = +1``, column 0 at ``x = −1``) use :mod:`palette` colours only: background,
obstacle discs, goal disc, and the car as a disc of radius 0.06 with a heading tick to 0.15. The ``d_safe``
ring is not drawn. Pixels are flat colours (no anti-aliasing), so a pixel-level scorer can match them
exactly.

:class:`DubinsVLVec` steps ``num_envs`` cars at once (same-step autoreset); :class:`DubinsVLEnv` is the
single-env Gymnasium wrapper over the same :class:`_Batch` core, so a vectorised env ``i`` seeded with
``seed`` replays exactly the single env reset with ``seed + i`` (Gymnasium's vector-seeding convention).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import palette, perturb
from .perturb import Perturbation

V = 0.6
U_MAX = 1.1
DT = 0.01
R_OBS = 0.25
D_SAFE = 0.3
SIZE = 84
INSTRUCTION = "drive to the green goal and keep clear of the obstacles"
CHARSET = frozenset("abcdefghijklmnopqrstuvwxyz ")
OUT_OF_BOUNDS_PENALTY = 2.0 * math.sqrt(2.0)  # per remaining step: the largest possible distance to goal
AGENT_RADIUS = 0.06
TICK_LENGTH = 0.15
TICK_HALF_WIDTH = 0.022

_PIX = 2.0 / SIZE
_CENTRES = -1.0 + (np.arange(SIZE) + 0.5) * _PIX  # pixel-centre x of columns; y of row i is -_CENTRES[i]
_WIN = 2 * math.ceil(TICK_LENGTH / _PIX + 1) + 1  # agent window side in pixels


def state_dim(num_obstacles: int) -> int:
    return 5 + 2 * num_obstacles


def text_space(instruction: str) -> spaces.Text:
    return spaces.Text(max_length=max(64, len(instruction)), min_length=1, charset=CHARSET)


def euler(x: np.ndarray, y: np.ndarray, th: np.ndarray, u: np.ndarray, substeps: int, dt: float = DT):
    """``substeps`` forward-Euler steps of the Dubins car with constant ``u``; returns new arrays."""
    for _ in range(substeps):
        x = x + V * np.cos(th) * dt
        y = y + V * np.sin(th) * dt
        th = th + u * dt
    return x, y, th


def euler_block(x: np.ndarray, y: np.ndarray, th: np.ndarray, u: np.ndarray, substeps: int, dt: float = DT):
    """Same result as :func:`euler` in closed form: ``Σ_{j<K} cos(θ + j a) = sin(K a/2)/sin(a/2) ·
    cos(θ + (K−1) a/2)`` with ``a = u dt``. For planners that roll out many candidates."""
    a = u * dt
    half = 0.5 * a
    small = np.abs(half) < 1e-9
    ratio = np.where(small, float(substeps), np.sin(substeps * half) / np.where(small, 1.0, np.sin(half)))
    mid = th + (substeps - 1) * half
    step = V * dt * ratio
    return x + step * np.cos(mid), y + step * np.sin(mid), th + substeps * a


def wrap(a: np.ndarray) -> np.ndarray:
    return (a + np.pi) % (2 * np.pi) - np.pi


def margin(pos: np.ndarray, obstacles: np.ndarray) -> np.ndarray:
    """``ℓ = min_k ‖p − c_k‖ − r_obs − d_safe`` for ``pos (N, 2)`` and ``obstacles (N, K, 2)``."""
    d = np.sqrt(((pos[:, None, :] - obstacles) ** 2).sum(-1)).min(axis=1)
    return d - R_OBS - D_SAFE


def escape_circle_ok(pos: np.ndarray, th: np.ndarray, slack: float = 0.0) -> np.ndarray:
    """Whether a full-lock circle (left or right) from ``(pos, th)`` stays inside the workspace (shrunk by
    ``slack``): then the car is not doomed to leave it. ``pos (..., 2)``, ``th (...)``."""
    turn_r = V / U_MAX
    normal = np.stack([-np.sin(th), np.cos(th)], axis=-1) * turn_r
    ok = np.zeros(np.shape(th), dtype=bool)
    for side in (1.0, -1.0):
        ok |= np.abs(pos + side * normal).max(axis=-1) <= 1.0 - turn_r - slack
    return ok


# Escape manoeuvres tried from a candidate start pose: two arcs (5 turn rates for 1 s, then 3 for 2 s),
# integrated exactly (see euler_block) and checked every 0.2 s.
_ARCS = (*(a.ravel() for a in np.meshgrid(np.linspace(-U_MAX, U_MAX, 5), np.linspace(-U_MAX, U_MAX, 3),
                                         indexing="ij")), 5, 10, 20)
_SCENES = 3  # candidate scenes per env and attempt that get the escape check


def can_escape(pos: np.ndarray, th: np.ndarray, goal: np.ndarray, obstacles: np.ndarray, goal_radius: float,
               arcs: tuple = _ARCS) -> np.ndarray:
    """Whether some manoeuvre of ``arcs`` keeps the car in the workspace and out of every unsafe zone for its
    duration (or until it reaches the goal): the start pose is not doomed to an early violation.
    ``pos (M, 2)``, ``th (M,)``, ``goal (M, 2)``, ``obstacles (M, K, 2)``; returns ``(M,)``."""
    u1, u2, n1, n2, substeps = arcs
    shape = (th.shape[0], u1.size)
    x = np.broadcast_to(pos[:, 0, None], shape)
    y = np.broadcast_to(pos[:, 1, None], shape)
    t = np.broadcast_to(th[:, None], shape)
    ok = np.ones(shape, dtype=bool)
    done = np.zeros(shape, dtype=bool)
    ox, oy = obstacles[:, None, :, 0], obstacles[:, None, :, 1]
    gx, gy = goal[:, 0, None], goal[:, 1, None]
    for step in range(n1 + n2):
        x, y, t = euler_block(x, y, t, u1 if step < n1 else u2, substeps)
        d = np.sqrt((x[..., None] - ox) ** 2 + (y[..., None] - oy) ** 2).min(-1)
        ok &= done | ((d >= R_OBS + D_SAFE) & (np.abs(x) <= 1.0) & (np.abs(y) <= 1.0))
        done |= np.hypot(x - gx, y - gy) <= goal_radius
    return ok.any(axis=-1)


def _draw(rng: np.random.Generator, num_obstacles: int, m: int) -> np.ndarray:
    """One attempt's uniforms for ``m`` candidate scenes (a fixed count per attempt)."""
    return rng.random(m * (7 + 2 * (num_obstacles - 1)))


def sample_scenes(rngs: list[np.random.Generator], num_obstacles: int, goal_radius: float) -> np.ndarray:
    """One episode's ``[x, y, θ, gx, gy, ox_1, oy_1, ...]`` for each generator, by rejection sampling (see
    the module docstring). Each env consumes only its own generator, attempt by attempt, so the result for
    one env does not depend on which other envs reset with it; the checks run batched across envs, which
    keeps autoreset cheap."""
    m, k, n_extra = 128, num_obstacles, num_obstacles - 1
    clear = R_OBS + D_SAFE
    out = np.zeros((len(rngs), state_dim(k)))
    todo = np.arange(len(rngs))
    while todo.size:
        e = todo.size
        r = np.stack([_draw(rngs[i], k, m) for i in todo]).reshape(e, m, -1)  # (E, m, R)
        p = (r[..., 0:2] - 0.5) * 1.7  # starts in [-0.85, 0.85]^2
        g = (r[..., 2:4] - 0.5) * 1.7  # goals
        frac = 0.4 + 0.2 * r[..., 4]  # where along start -> goal the blocking obstacle sits
        side = (r[..., 5] - 0.5) * 0.6  # and its offset across that line
        turn = np.pi / 6 + r[..., 6] * (np.pi / 3)  # start heading: 30-90° off the bearing, away from it
        extra = (r[..., 7:].reshape(e, m, n_extra, 2) - 0.5) * 1.3  # [-0.65, 0.65]^2
        d = g - p
        length = np.hypot(d[..., 0], d[..., 1])
        normal = np.stack([-d[..., 1], d[..., 0]], axis=-1) / np.maximum(length, 1e-9)[..., None]
        block = p + frac[..., None] * d + side[..., None] * normal
        obs = np.concatenate([block[:, :, None, :], extra], axis=2)  # (E, m, K, 2)
        th = np.arctan2(d[..., 1], d[..., 0]) - np.where(side >= 0, 1.0, -1.0) * turn
        d_p = np.sqrt(((p[:, :, None] - obs) ** 2).sum(-1)).min(axis=-1)
        d_g = np.sqrt(((g[:, :, None] - obs) ** 2).sum(-1)).min(axis=-1)
        ok = (length >= 1.2) & (np.abs(block).max(axis=-1) <= 0.65) & (d_p >= clear + 0.15) & (
            d_g >= clear + goal_radius)
        if n_extra:
            pair = np.sqrt(((obs[:, :, :, None] - obs[:, :, None]) ** 2).sum(-1))
            pair[:, :, np.arange(k), np.arange(k)] = np.inf
            ok &= pair.min(axis=(2, 3)) >= 0.6
        # the first _SCENES valid candidates of each env get the (costlier) escape check
        order = np.argsort(~ok, axis=1, kind="stable")[:, :_SCENES]  # (E, S)
        ei = np.arange(e)[:, None]
        fs = e * _SCENES
        start, goal, obs_s, th_s = p[ei, order], g[ei, order], obs[ei, order], th[ei, order]
        good = np.take_along_axis(ok, order, axis=1) & can_escape(
            start.reshape(fs, 2), th_s.reshape(fs), goal.reshape(fs, 2), obs_s.reshape(fs, k, 2),
            goal_radius).reshape(e, _SCENES)
        pick = good.argmax(axis=1)
        has = good[np.arange(e), pick]
        for row in np.flatnonzero(has):
            c = pick[row]
            out[todo[row]] = np.concatenate([start[row, c], [wrap(th_s[row, c])], goal[row, c],
                                             obs_s[row, c].ravel()])
        todo = todo[~has]
    return out


class _Batch:
    """State, dynamics, scene sampling and rasterisation of ``n`` independent Dubins-VL episodes."""

    def __init__(self, n: int, num_obstacles: int, goal_radius: float, max_steps: int, action_repeat: int,
                 perturbation: Perturbation, render: bool) -> None:
        self.n, self.k = n, num_obstacles
        self.goal_radius, self.max_steps, self.action_repeat = goal_radius, max_steps, action_repeat
        self.perturbation = perturb.check(perturbation)
        self.render = render
        self.state = np.zeros((n, state_dim(num_obstacles)))
        self.t = np.zeros(n, dtype=np.int64)
        self.hue = np.zeros(n, dtype=np.int64)
        self.background = np.zeros((n, SIZE, SIZE, 3), dtype=np.uint8) if render else None
        self.rngs: list[np.random.Generator] = [np.random.default_rng() for _ in range(n)]

    # ------------------------------------------------------------------ episodes
    def reset(self, idx: np.ndarray) -> None:
        """Start new episodes in envs ``idx`` (each from its own generator)."""
        self.state[idx] = sample_scenes([self.rngs[i] for i in idx], self.k, self.goal_radius)
        for i in idx:
            self.hue[i] = perturb.draw_hue(self.rngs[i])
            if self.render:
                self.background[i] = self._draw_background(i)
        self.t[idx] = 0

    def step(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """Advance every episode by one control step; returns the per-transition outcome arrays."""
        u = np.clip(np.asarray(u, dtype=np.float64).reshape(self.n), -U_MAX, U_MAX)
        s = self.state
        x, y, th = euler(s[:, 0], s[:, 1], s[:, 2], u, self.action_repeat)
        s[:, 0], s[:, 1], s[:, 2] = x, y, wrap(th)
        self.t += 1
        dist = np.hypot(x - s[:, 3], y - s[:, 4])
        out = (np.abs(x) > 1.0) | (np.abs(y) > 1.0)
        success = (dist <= self.goal_radius) & ~out
        m = margin(s[:, :2], s[:, 5:].reshape(self.n, self.k, 2))
        reward = -dist
        reward = np.where(out, -OUT_OF_BOUNDS_PENALTY * (self.max_steps - self.t + 1), reward)
        terminated = success | out
        truncated = (self.t >= self.max_steps) & ~terminated
        return {"reward": reward, "terminated": terminated, "truncated": truncated, "margin": m,
                "cost": (m < 0).astype(np.float64), "success": success, "out_of_bounds": out}

    def info(self) -> dict[str, np.ndarray]:
        """Margin, cost and (unset) success of the current states, for reset."""
        m = margin(self.state[:, :2], self.state[:, 5:].reshape(self.n, self.k, 2))
        return {"margin": m, "cost": (m < 0).astype(np.float64), "success": np.zeros(self.n, dtype=bool),
                "out_of_bounds": np.zeros(self.n, dtype=bool)}

    # ------------------------------------------------------------------ rendering
    def obstacle_colour(self, i: int) -> np.ndarray:
        if perturb.uses_color(self.perturbation):
            return perturb.HELD_OUT[self.hue[i]]
        return np.asarray(palette.DUBINS_OBSTACLE, dtype=np.uint8)

    def _draw_background(self, i: int) -> np.ndarray:
        img = np.empty((SIZE, SIZE, 3), dtype=np.uint8)
        img[:] = palette.DUBINS_BACKGROUND
        s = self.state[i]
        px, py = _CENTRES[None, :], -_CENTRES[:, None]
        for c in s[5:].reshape(self.k, 2):
            img[(px - c[0]) ** 2 + (py - c[1]) ** 2 <= R_OBS**2] = self.obstacle_colour(i)
        img[(px - s[3]) ** 2 + (py - s[4]) ** 2 <= self.goal_radius**2] = palette.DUBINS_GOAL
        return img

    def frames(self) -> np.ndarray:
        """``(n, 84, 84, 3)`` uint8: the cached per-episode background plus the car, drawn in a small window."""
        assert self.background is not None, "constructed with render=False"
        img = self.background.copy()
        s = self.state
        # window of _WIN x _WIN pixels around the car (clipped indices repeat edge pixels: harmless)
        col0 = np.floor((s[:, 0] + 1.0) / _PIX).astype(np.int64) - _WIN // 2
        row0 = np.floor((1.0 - s[:, 1]) / _PIX).astype(np.int64) - _WIN // 2
        offs = np.arange(_WIN)
        rows = np.clip(row0[:, None] + offs, 0, SIZE - 1)  # (n, W)
        cols = np.clip(col0[:, None] + offs, 0, SIZE - 1)
        py = -_CENTRES[rows][:, :, None] - s[:, 1, None, None]  # (n, W, 1) relative to the car
        px = _CENTRES[cols][:, None, :] - s[:, 0, None, None]  # (n, 1, W)
        c, sn = np.cos(s[:, 2])[:, None, None], np.sin(s[:, 2])[:, None, None]
        along = px * c + py * sn
        across = -px * sn + py * c
        mask = (px**2 + py**2 <= AGENT_RADIUS**2) | (
            (along >= 0) & (along <= TICK_LENGTH) & (np.abs(across) <= TICK_HALF_WIDTH))
        n_idx = np.broadcast_to(np.arange(self.n)[:, None, None], mask.shape)
        r_idx = np.broadcast_to(rows[:, :, None], mask.shape)
        c_idx = np.broadcast_to(cols[:, None, :], mask.shape)
        img[n_idx[mask], r_idx[mask], c_idx[mask]] = palette.DUBINS_AGENT
        # the car is drawn over the goal and obstacles: it is always visible
        if perturb.uses_light(self.perturbation):
            img = perturb.apply_light(img)
        return img


def render_states(states: np.ndarray, num_obstacles: int = 1, goal_radius: float = 0.1,
                  chunk: int = 4096) -> np.ndarray:
    """``(N, 84, 84, 3)`` uint8 frames of arbitrary Dubins-VL ``states`` (``[N, 5 + 2K]``: x, y, θ, goal,
    obstacle centres), drawn by the env's own rasteriser with the default palette: the frame the env shows in
    that state (the simulator branches of the critic's warm-up replay, :mod:`embodied_safety.shield.rl.sim_branches`)."""
    states = np.asarray(states, dtype=np.float64)
    out = np.empty((len(states), SIZE, SIZE, 3), dtype=np.uint8)
    for i in range(0, len(states), chunk):
        part = states[i:i + chunk]
        b = _Batch(len(part), num_obstacles, goal_radius, 100, 10, None, render=True)
        b.state[:] = part
        for j in range(len(part)):
            b.background[j] = b._draw_background(j)
        out[i:i + len(part)] = b.frames()
    return out


def _image_space() -> spaces.Box:
    return spaces.Box(0, 255, (SIZE, SIZE, 3), np.uint8)


class DubinsVLVec:
    """``num_envs`` Dubins-VL episodes stepped together in numpy, with same-step autoreset.

    ``reset()`` returns ``(obs, info)``; ``step(actions)`` with ``actions`` of shape ``(num_envs,)`` or
    ``(num_envs, 1)`` returns ``(obs, reward, terminated, truncated, info)``, all batched. ``obs`` is
    ``{"image": (N, 84, 84, 3) uint8, "instruction": (N,) str}``, without ``"image"`` when ``render=False``.

    Per-transition arrays (about the state each action led to, before any reset): ``reward``, ``terminated``,
    ``truncated``, ``info["margin"]``, ``info["cost"]``, ``info["success"]``, ``info["out_of_bounds"]``.
    Next-step arrays (after autoreset: for finished envs, the new episode's first state): ``obs`` and
    ``info["state"]``. For finished envs the terminal state is in ``info["final_state"]`` and, when
    rendering, the terminal frame in ``info["final_image"]`` (rows of unfinished envs are copies of the
    current ones); ``info["_final"]`` is the finished mask.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, num_envs: int, *, render: bool = False, seed: int | None = None,
                 perturbation: Perturbation = None, num_obstacles: int = 1, goal_radius: float = 0.1,
                 max_steps: int = 100, action_repeat: int = 10) -> None:
        self.num_envs = num_envs
        self.render_frames = render
        self._b = _Batch(num_envs, num_obstacles, goal_radius, max_steps, action_repeat, perturbation, render)
        self._seed, self._seeded = seed, False
        self._instruction = np.full(num_envs, INSTRUCTION)
        self.single_action_space = spaces.Box(-U_MAX, U_MAX, (1,), np.float64)
        self.action_space = spaces.Box(-U_MAX, U_MAX, (num_envs, 1), np.float64)
        self.single_observation_space = spaces.Dict({"image": _image_space(), "instruction": text_space(INSTRUCTION)})

    def _obs(self) -> dict[str, np.ndarray]:
        obs: dict[str, np.ndarray] = {"instruction": self._instruction}
        if self.render_frames:
            obs["image"] = self._b.frames()
        return obs

    def reset(self, *, seed: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        seed = self._seed if seed is None else seed
        if seed is not None or not self._seeded:
            # env i gets seed + i (Gymnasium's convention); later unseeded resets continue the streams
            self._b.rngs = [np.random.default_rng(None if seed is None else seed + i) for i in range(self.num_envs)]
            self._seeded = True
        self._seed = None
        self._b.reset(np.arange(self.num_envs))
        info: dict[str, Any] = self._b.info()
        info["state"] = self._b.state.copy()
        return self._obs(), info

    def step(self, actions: np.ndarray):
        b = self._b
        out = b.step(actions)
        done = out["terminated"] | out["truncated"]
        info: dict[str, Any] = {k: out[k] for k in ("margin", "cost", "success", "out_of_bounds")}
        if done.any():
            info["final_state"] = b.state.copy()
            if self.render_frames:
                info["final_image"] = b.frames()
            info["_final"] = done
            b.reset(np.flatnonzero(done))
        info["state"] = b.state.copy()
        return self._obs(), out["reward"], out["terminated"], out["truncated"], info

    def close(self) -> None:
        pass


class DubinsVLEnv(gym.Env):
    """One Dubins-VL episode at a time (a :class:`_Batch` of one), Gymnasium API.

    Action: ``Box(-1.1, 1.1, (1,))``, the turn rate ``u``. Observation: ``{"image", "instruction"}``.
    ``info``: ``margin``, ``cost``, ``success``, ``out_of_bounds``, ``state = [x, y, θ, gx, gy, ox_1, oy_1, …]``
    (privileged: experts and oracles only).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, *, perturbation: Perturbation = None, num_obstacles: int = 1, goal_radius: float = 0.1,
                 max_steps: int = 100, action_repeat: int = 10, render_mode: str | None = None) -> None:
        self._b = _Batch(1, num_obstacles, goal_radius, max_steps, action_repeat, perturbation, render=True)
        self.perturbation = self._b.perturbation
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.action_space = spaces.Box(-U_MAX, U_MAX, (1,), np.float64)
        self.observation_space = spaces.Dict({"image": _image_space(), "instruction": text_space(INSTRUCTION)})
        self._frame: np.ndarray | None = None

    def _obs(self) -> dict[str, Any]:
        self._frame = self._b.frames()[0]
        return {"image": self._frame, "instruction": INSTRUCTION}

    def _info(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        return {"margin": float(out["margin"][0]), "cost": float(out["cost"][0]),
                "success": bool(out["success"][0]), "out_of_bounds": bool(out["out_of_bounds"][0]),
                "state": self._b.state[0].copy()}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._b.rngs = [self.np_random]
        self._b.reset(np.arange(1))
        return self._obs(), self._info(self._b.info())

    def step(self, action):
        out = self._b.step(np.asarray(action, dtype=np.float64).reshape(1))
        return (self._obs(), float(out["reward"][0]), bool(out["terminated"][0]), bool(out["truncated"][0]),
                self._info(out))

    def render(self) -> np.ndarray | None:
        if self.render_mode == "rgb_array":
            return self._frame if self._frame is not None else self._b.frames()[0]
        return None
