"""Pixel rubric scorer: the embedded default backend of the rubric pipeline (§4.2 stage ii without a VLM).

Each rubric axis is one *feature function* of the rendered RGB frame only: palette colours matched with a
per-channel tolerance, then row/column reductions, centroids and pixel distances, vectorised over a batch.
It never reads simulator state. Like the VLM it stands in for, it sees what the camera sees, so it
inherits the frame's blind spots; the +Color shift of §5.5 (obstacle hues it was never told about) and
strong +Light gains defeat its colour matching, which is the failure mode §5.5 probes.

Every feature returns a *hazard* in [0, 1] (1 = most hazardous). The scorer writes ``V = hazard`` on
rubric sets anchored 1.0 = hazardous and ``V = 1 − hazard`` on the Dubins-VL set, whose prompt anchors
1.0 = safe (see :mod:`.rubrics`), so its output is interchangeable with a VLM's answers.

:data:`FEATURE_LIBRARY` is also the pool the RTD pixel proposer (:mod:`.rtd`) draws new criteria from: each
feature carries the rubric it would be proposed as. The rubric → feature mapping of the shipped sets
(:data:`DEFAULT_FEATURES`, also in docs/shield_costs.md):

======================== ================= ================== =============
rubric                   dubins_vl         turtlebot_nav      franka_reach
======================== ================= ================== =============
PROXIMITY                agent_gap         obstacle_fraction  arm_gap
HEADING                  heading_alignment obstacle_centering
CONTACT                  agent_contact     central_coverage
OCCLUSION                edge_clip         edge_clip
CLEARANCE                ray_blocked       lower_blocked
OVERLAP                                                       arm_overlap
OBSTACLE_EDGE_PROXIMITY                    edge_proximity
OBSTACLE_OVERLAP                           footprint_overlap
======================== ================= ================== =============
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache, cached_property
from typing import Any, Literal

import numpy as np

from .rubrics import OBSTACLE_EDGE_PROXIMITY, OBSTACLE_OVERLAP, Rubric, RubricSet

RGB = tuple[int, int, int]
View = Literal["topdown", "ego", "front"]
N_RAYS = 16
F32 = np.float32


@dataclass(frozen=True)
class FrameSpec:
    """What the scorer knows of an environment's renders: palette colours and the camera's view type."""

    env: str
    view: View
    obstacle: tuple[RGB, ...]
    #: the robot's own pixels (the top-down car, the Franka arm); empty for an egocentric camera
    agent: tuple[RGB, ...] = ()
    #: non-obstacle geometry that still blocks a path (TurtleBot walls)
    boundary: tuple[RGB, ...] = ()
    #: per-channel tolerance when matching a palette colour (L∞ in RGB)
    tol: int = 40
    #: pixel gap at which a proximity hazard falls to 0
    near_px: float = 25.0
    #: pixel gap at which a contact hazard falls to 0
    contact_px: float = 3.0

    def __post_init__(self) -> None:
        if not self.obstacle:
            raise ValueError(f"FrameSpec {self.env}: no obstacle colour")
        if len(self.obstacle) + len(self.agent) + len(self.boundary) > 8:
            raise ValueError(f"FrameSpec {self.env}: at most 8 palette colours (one bit each in a uint8 LUT)")


@cache
def frame_spec(env: str) -> FrameSpec:
    """The palette-based spec of one control env (the palette is imported here, not at module import)."""
    from ...envs.control import palette as p

    specs = {
        # 84 px over [-1, 1]^2 = 42 px per unit; near_px = 2 d_safe = 0.6 units, so the hazard is 0.5 at d_safe
        "dubins_vl": FrameSpec("dubins_vl", "topdown", (p.DUBINS_OBSTACLE,), agent=(p.DUBINS_AGENT,), near_px=25.2),
        "turtlebot_nav": FrameSpec("turtlebot_nav", "ego", (p.TURTLEBOT_OBSTACLE,), boundary=(p.TURTLEBOT_WALL,)),
        "franka_reach": FrameSpec("franka_reach", "front", (p.FRANKA_OBSTACLE,), agent=(p.FRANKA_ARM,), near_px=20.0),
    }
    if env not in specs:
        raise KeyError(f"no frame spec for env {env!r}; known: {sorted(specs)}")
    return specs[env]


#: a shaded pixel (palette colour × a light factor in this range, as MuJoCo renders lit surfaces) still matches
SHADE_RANGE = (0.4, 1.1)
#: per-channel tolerance on chromaticity (greys and near-greys of the palettes are >= 31 apart there)
CHROMA_TOL = 24


def channel_max(rgb: np.ndarray) -> np.ndarray:
    """Each pixel's brightest channel, ``rgb.max(axis=-1)``: numpy reduces a length-3 innermost axis element by
    element, two elementwise maxima are 26x faster on a batch of 84x84 frames (the plain max takes 18 % of the
    shield_ppo stage) and give the same values."""
    rgb = np.asarray(rgb)
    if rgb.shape[-1] != 3:
        return rgb.max(axis=-1)
    return np.maximum(np.maximum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def chromaticity(rgb: np.ndarray) -> np.ndarray:
    """Each pixel scaled so its brightest channel is 255 (uint8): a shaded surface keeps one chromaticity."""
    rgb = np.asarray(rgb)
    peak = channel_max(rgb)[..., None].astype(np.uint16)
    return (rgb.astype(np.uint16) * 255 // np.maximum(peak, 1)).astype(np.uint8)


def _lut(colours: list[RGB], tol: int, transform: Any = np.asarray) -> np.ndarray:
    lut = np.zeros((3, 256), dtype=np.uint8)
    for i, rgb in enumerate(colours):
        for ch, v in enumerate(transform(np.asarray(rgb, dtype=np.uint8))):
            lut[ch, max(0, int(v) - tol): min(255, int(v) + tol) + 1] |= np.uint8(1 << i)
    return lut


def _gather(lut: np.ndarray, frames: np.ndarray) -> np.ndarray:
    bits = lut[0][frames[..., 0]]
    bits &= lut[1][frames[..., 1]]
    bits &= lut[2][frames[..., 2]]
    return bits


def classify(frames: np.ndarray, spec: FrameSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(obstacle, agent, boundary) masks [N, H, W]: one bit per palette colour in three 256-entry channel LUTs,
    so a batch is classified with a few gathers whatever the number of colours. A pixel matches a colour when
    its RGB is within ``spec.tol`` per channel, or when it is that colour shaded: its chromaticity within
    :data:`CHROMA_TOL` and its brightness within :data:`SHADE_RANGE` of the colour's (MuJoCo frames)."""
    colours = [*spec.obstacle, *spec.agent, *spec.boundary]
    bits = _gather(_lut(colours, spec.tol), frames)
    shaded = _gather(_lut(colours, CHROMA_TOL, chromaticity), chromaticity(frames))
    peak = channel_max(frames).astype(np.float32)
    for i, rgb in enumerate(colours):
        lo, hi = (f * max(rgb) for f in SHADE_RANGE)
        shaded &= ~np.where((peak < lo) | (peak > hi), np.uint8(1 << i), np.uint8(0))
    bits |= shaded
    n_obs, n_agent = len(spec.obstacle), len(spec.agent)
    groups = (range(0, n_obs), range(n_obs, n_obs + n_agent), range(n_obs + n_agent, len(colours)))
    obstacle, agent, boundary = ((bits & np.uint8(sum(1 << i for i in g))) != 0 for g in groups)
    return obstacle, agent, boundary


@dataclass
class AgentGeometry:
    """Top-down agent seen in the frame: centroid, radius sqrt(area/π), heading (centroid → its farthest
    pixel, the heading tick) and the nearest obstacle pixel, from one squared-distance grid."""

    cy: np.ndarray
    cx: np.ndarray
    radius: np.ndarray
    gap: np.ndarray  # pixels from the agent's rim to the nearest obstacle pixel (≥ 0; +inf without both)
    heading_cos: np.ndarray  # cos(heading, direction to the nearest obstacle pixel); 0 without both


class Masks:
    """Colour masks of a batch and the geometry several features share (each computed once, on demand)."""

    def __init__(self, frames: np.ndarray, spec: FrameSpec) -> None:
        self.spec = spec
        self.obstacle, self.agent, self.boundary = classify(frames, spec)
        self.n, self.h, self.w = self.obstacle.shape

    @cached_property
    def has_obstacle(self) -> np.ndarray:
        return self.obstacle.reshape(self.n, -1).any(axis=1)

    @cached_property
    def has_agent(self) -> np.ndarray:
        return self.agent.reshape(self.n, -1).any(axis=1)

    @cached_property
    def obstacle_rows(self) -> np.ndarray:
        return self.obstacle.any(axis=2)

    @cached_property
    def obstacle_bbox(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(y0, y1, x0, x1), inclusive, per frame; meaningless where there is no obstacle."""
        rows, cols = self.obstacle_rows, self.obstacle.any(axis=1)
        return (rows.argmax(axis=1), self.h - 1 - rows[:, ::-1].argmax(axis=1),
                cols.argmax(axis=1), self.w - 1 - cols[:, ::-1].argmax(axis=1))

    @cached_property
    def agent_geometry(self) -> AgentGeometry:
        area = np.count_nonzero(self.agent.reshape(self.n, -1), axis=1).astype(F32)
        ys, xs = np.arange(self.h, dtype=F32), np.arange(self.w, dtype=F32)
        cy = (self.agent.sum(axis=2, dtype=F32) @ ys) / np.maximum(area, F32(1))
        cx = (self.agent.sum(axis=1, dtype=F32) @ xs) / np.maximum(area, F32(1))
        d2 = ((ys[None, :] - cy[:, None]) ** 2)[:, :, None] + ((xs[None, :] - cx[:, None]) ** 2)[:, None, :]
        near = np.where(self.obstacle, d2, F32(np.inf)).reshape(self.n, -1).argmin(axis=1)
        far = np.where(self.agent, d2, F32(-1)).reshape(self.n, -1).argmax(axis=1)
        radius = np.sqrt(area / F32(np.pi))
        valid = self.has_agent & self.has_obstacle
        dist = np.sqrt(d2.reshape(self.n, -1)[np.arange(self.n), near])
        gap = np.where(valid, np.maximum(dist - radius, 0.0), np.inf)
        oy, ox = near // self.w - cy, near % self.w - cx
        hy, hx = far // self.w - cy, far % self.w - cx
        norm = np.hypot(oy, ox) * np.hypot(hy, hx)
        cos = np.where(valid & (norm > 0), (oy * hy + ox * hx) / np.maximum(norm, 1e-9), 0.0)
        return AgentGeometry(cy, cx, radius, gap, cos)


# --- feature functions: Masks -> hazard [N] in [0, 1] -----------------------------------------------


def obstacle_fraction(m: Masks) -> np.ndarray:
    """Obstacle pixels / frame pixels, saturating at half the frame (E.4.2 PROXIMITY: apparent size)."""
    return np.clip(m.obstacle.mean(axis=(1, 2)) / 0.5, 0.0, 1.0)


def obstacle_centering(m: Masks) -> np.ndarray:
    """1 − |obstacle centroid column − image centre| / half-width, 0 with no obstacle (ego HEADING)."""
    count = np.maximum(np.count_nonzero(m.obstacle.reshape(m.n, -1), axis=1), 1)
    cx = (m.obstacle.sum(axis=1, dtype=F32) @ np.arange(m.w, dtype=F32)) / count
    half = (m.w - 1) / 2
    return np.where(m.has_obstacle, 1.0 - np.abs(cx - half) / half, 0.0)


def central_coverage(m: Masks) -> np.ndarray:
    """Obstacle share of the central window (middle half of rows and of columns): frame domination (CONTACT)."""
    return m.obstacle[:, m.h // 4: m.h - m.h // 4, m.w // 4: m.w - m.w // 4].mean(axis=(1, 2))


def edge_clip(m: Masks) -> np.ndarray:
    """Obstacle cut by the image border: 0.5 for any border contact plus up to 0.5 with the share of the border
    it covers (OCCLUSION: "partially clipped by the frame edge" is 0.5)."""
    o = m.obstacle
    border = (o[:, 0, :].sum(1) + o[:, -1, :].sum(1) + o[:, 1:-1, 0].sum(1) + o[:, 1:-1, -1].sum(1)).astype(F32)
    share = border / (2 * m.w + 2 * (m.h - 2))
    return np.where(border > 0, 0.5 + 0.5 * np.clip(4 * share, 0.0, 1.0), 0.0)


def lower_blocked(m: Masks) -> np.ndarray:
    """1 − (longest run of free columns in the lower half) / width; obstacles and walls block (ego CLEARANCE)."""
    lower = slice(m.h // 2, m.h)
    blocked = m.obstacle[:, lower].any(axis=1) | m.boundary[:, lower].any(axis=1)
    idx = np.arange(m.w)
    last_blocked = np.maximum.accumulate(np.where(blocked, idx, -1), axis=1)
    return 1.0 - (idx - last_blocked).max(axis=1) / m.w


def edge_proximity(m: Masks) -> np.ndarray:
    """How far below the horizon (mid-row) the obstacle's lowest visible pixel lies, i.e. where it meets the
    floor: a depth cue independent of apparent size (OBSTACLE_EDGE_PROXIMITY, E.4.3)."""
    bottom = m.h - 1 - m.obstacle_rows[:, ::-1].argmax(axis=1)
    half = m.h / 2
    return np.where(m.has_obstacle, np.clip((bottom + 1 - half) / half, 0.0, 1.0), 0.0)


def footprint_overlap(m: Masks) -> np.ndarray:
    """Obstacle share of the robot's footprint window: bottom quarter, middle half of the columns
    (OBSTACLE_OVERLAP, E.4.3)."""
    return m.obstacle[:, m.h - m.h // 4:, m.w // 4: m.w - m.w // 4].mean(axis=(1, 2))


def agent_gap(m: Masks) -> np.ndarray:
    """1 − gap / near_px, with the gap in pixels from the agent's rim to the nearest obstacle pixel (top-down)."""
    return np.clip(1.0 - m.agent_geometry.gap / m.spec.near_px, 0.0, 1.0)


def agent_contact(m: Masks) -> np.ndarray:
    """1 − gap / contact_px: 1 when the agent touches an obstacle, 0 a few pixels away (top-down CONTACT)."""
    return np.clip(1.0 - m.agent_geometry.gap / m.spec.contact_px, 0.0, 1.0)


def heading_alignment(m: Masks) -> np.ndarray:
    """max(0, cos) of the angle between the heading (centroid → heading tick) and the nearest obstacle pixel."""
    return np.clip(m.agent_geometry.heading_cos, 0.0, 1.0)


def ray_blocked(m: Masks) -> np.ndarray:
    """Share of 16 rays of length near_px from the agent's rim that hit an obstacle or leave the frame
    (top-down CLEARANCE; the image edge is the workspace edge, and leaving it ends a Dubins-VL episode)."""
    g = m.agent_geometry
    theta = np.linspace(0.0, 2 * np.pi, N_RAYS, endpoint=False, dtype=F32)
    s = g.radius[:, None, None] + np.arange(1, int(m.spec.near_px) + 1, dtype=F32)[None, None, :]
    ys = np.rint(g.cy[:, None, None] + s * np.sin(theta)[None, :, None]).astype(np.int32)
    xs = np.rint(g.cx[:, None, None] + s * np.cos(theta)[None, :, None]).astype(np.int32)
    outside = (ys < 0) | (ys >= m.h) | (xs < 0) | (xs >= m.w)
    hit = m.obstacle[np.arange(m.n)[:, None, None], np.clip(ys, 0, m.h - 1), np.clip(xs, 0, m.w - 1)]
    return np.where(m.has_agent, (hit | outside).any(axis=2).mean(axis=1), 0.0)


def arm_gap(m: Masks) -> np.ndarray:
    """1 − gap / near_px, with the gap from the nearest arm pixel to the obstacle's bounding box (front view:
    the arm is elongated, so a centroid distance would mean nothing)."""
    y0, y1, x0, x1 = m.obstacle_bbox
    ys, xs = np.arange(m.h), np.arange(m.w)
    dy = np.maximum(np.maximum(y0[:, None] - ys[None, :], ys[None, :] - y1[:, None]), 0).astype(F32)
    dx = np.maximum(np.maximum(x0[:, None] - xs[None, :], xs[None, :] - x1[:, None]), 0).astype(F32)
    d2 = (dy**2)[:, :, None] + (dx**2)[:, None, :]
    gap = np.sqrt(np.where(m.agent, d2, F32(np.inf)).reshape(m.n, -1).min(axis=1))
    return np.where(m.has_obstacle & m.has_agent, np.clip(1.0 - gap / m.spec.near_px, 0.0, 1.0), 0.0)


def arm_overlap(m: Masks) -> np.ndarray:
    """Arm pixels inside the obstacle's bounding box / box area, saturating at half the box (front OVERLAP)."""
    y0, y1, x0, x1 = m.obstacle_bbox
    ys, xs = np.arange(m.h), np.arange(m.w)
    in_rows = (ys[None, :] >= y0[:, None]) & (ys[None, :] <= y1[:, None])
    in_cols = (xs[None, :] >= x0[:, None]) & (xs[None, :] <= x1[:, None])
    covered = (m.agent.sum(axis=2, where=in_cols[:, None, :]) * in_rows).sum(axis=1)
    area = np.maximum((y1 - y0 + 1) * (x1 - x0 + 1), 1)
    return np.where(m.has_obstacle, np.clip(covered / area / 0.5, 0.0, 1.0), 0.0)


@dataclass(frozen=True)
class Feature:
    """A frame → hazard function, the views it means something on, and the rubric RTD proposes it as."""

    name: str
    fn: Callable[[Masks], np.ndarray]
    views: tuple[View, ...]
    rubric: Rubric

    @property
    def description(self) -> str:
        return " ".join((self.fn.__doc__ or "").split())


def _rubric(name: str, weight: int, description: str, *levels: str) -> Rubric:
    """A hazard-polarity rubric (0.0 = safe, 1.0 = most hazardous) with the 0.0/0.3/0.6/1.0 anchors."""
    return Rubric(name, weight, description, tuple(zip((0.0, 0.3, 0.6, 1.0), levels, strict=True)))


FEATURE_LIBRARY: dict[str, Feature] = {f.name: f for f in (
    Feature("obstacle_fraction", obstacle_fraction, ("ego", "front"), _rubric(
        "OBSTACLE_AREA", 4, "How much of the frame the obstacle covers.", "No obstacle visible.",
        "Obstacle small in the frame.", "Obstacle covers a noticeable part of the frame.",
        "Obstacle covers half of the frame or more.")),
    Feature("obstacle_centering", obstacle_centering, ("ego",), _rubric(
        "OBSTACLE_CENTERING", 3, "How close to the centre column of the image the obstacle lies.",
        "No obstacle, or at the far image edge.", "Obstacle off to one side.", "Obstacle near the centre.",
        "Obstacle exactly centred.")),
    Feature("central_coverage", central_coverage, ("ego", "front"), _rubric(
        "CENTRAL_COVERAGE", 4, "How much of the central region of the frame the obstacle fills.",
        "Central region free of obstacle.", "Obstacle enters the central region.",
        "Obstacle fills much of the central region.", "Central region entirely obstacle.")),
    Feature("edge_clip", edge_clip, ("ego", "topdown", "front"), _rubric(
        "EDGE_CLIPPING", 2, "Whether an obstacle is cut off by the image border, so part of it is unseen.",
        "Obstacle fully inside the frame, or none.", "Obstacle touches the border.",
        "Obstacle clearly clipped by the border.", "Obstacle largely outside the frame.")),
    Feature("lower_blocked", lower_blocked, ("ego",), _rubric(
        "LOWER_BLOCKAGE", 3, "How little free floor width remains in the lower half of the frame.",
        "Floor free across the whole width.", "Part of the floor width blocked.",
        "Only a narrow free gap remains.", "No free gap across the floor.")),
    Feature("edge_proximity", edge_proximity, ("ego",), replace(OBSTACLE_EDGE_PROXIMITY, provenance="")),
    Feature("footprint_overlap", footprint_overlap, ("ego",), replace(OBSTACLE_OVERLAP, provenance="")),
    Feature("agent_gap", agent_gap, ("topdown",), _rubric(
        "AGENT_GAP", 5, "How small the gap between the robot and the nearest obstacle is.",
        "Robot far from every obstacle.", "Moderate gap to the nearest obstacle.",
        "Small gap to the nearest obstacle.", "No gap: the robot is at the obstacle.")),
    Feature("agent_contact", agent_contact, ("topdown",), _rubric(
        "AGENT_CONTACT", 5, "Whether the robot touches an obstacle.", "Clear separation.",
        "A few pixels apart.", "Almost touching.", "Touching or overlapping.")),
    Feature("heading_alignment", heading_alignment, ("topdown",), _rubric(
        "HEADING_ALIGNMENT", 4, "Whether the robot's heading points at the nearest obstacle.",
        "Heading away from the nearest obstacle, or none.", "Heading roughly sideways to it.",
        "Heading mostly toward it.", "Heading straight at it.")),
    Feature("ray_blocked", ray_blocked, ("topdown",), _rubric(
        "RAY_BLOCKAGE", 3, "How many directions around the robot are blocked within a short distance.",
        "Free in every direction.", "A few directions blocked.", "Most directions blocked.",
        "Every direction blocked.")),
    Feature("arm_gap", arm_gap, ("front",), _rubric(
        "ARM_GAP", 5, "How small the gap between the arm and the obstacle is.", "Wide gap.",
        "Gap still clearly visible.", "Thin gap.", "No gap.")),
    Feature("arm_overlap", arm_overlap, ("front",), _rubric(
        "ARM_OVERLAP", 5, "How much of the obstacle's region the arm covers.", "No overlap.",
        "Arm on one edge of the obstacle.", "Arm covers much of the obstacle.", "Arm covers the obstacle.")),
)}

#: the rubric → feature mapping of each env's shipped rubric sets (the table in the module docstring)
DEFAULT_FEATURES: dict[str, dict[str, str]] = {
    "dubins_vl": {"PROXIMITY": "agent_gap", "HEADING": "heading_alignment", "CONTACT": "agent_contact",
                  "OCCLUSION": "edge_clip", "CLEARANCE": "ray_blocked"},
    "turtlebot_nav": {"PROXIMITY": "obstacle_fraction", "HEADING": "obstacle_centering",
                      "CONTACT": "central_coverage", "OCCLUSION": "edge_clip", "CLEARANCE": "lower_blocked",
                      "OBSTACLE_EDGE_PROXIMITY": "edge_proximity", "OBSTACLE_OVERLAP": "footprint_overlap"},
    "franka_reach": {"PROXIMITY": "arm_gap", "OVERLAP": "arm_overlap"},
}


def as_batch(frames: np.ndarray) -> np.ndarray:
    """Validate rendered frames: uint8 [N, H, W, 3] (a single [H, W, 3] frame becomes a batch of one)."""
    frames = np.asarray(frames)
    if frames.ndim == 3:
        frames = frames[None]
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be uint8 [N, H, W, 3] RGB renders; got {frames.dtype} {frames.shape}")
    return frames


def feature_hazards(frames: np.ndarray, spec: FrameSpec, names: list[str] | tuple[str, ...],
                    batch_size: int = 256) -> np.ndarray:
    """Hazards [N, F] in [0, 1] of the named library features, in batches of ``batch_size`` frames."""
    frames = as_batch(frames)
    unknown = [n for n in names if n not in FEATURE_LIBRARY]
    if unknown:
        raise KeyError(f"unknown pixel features {unknown}; library: {sorted(FEATURE_LIBRARY)}")
    out = np.empty((len(frames), len(names)), dtype=np.float64)
    for start in range(0, len(frames), batch_size):
        masks = Masks(frames[start:start + batch_size], spec)
        for j, name in enumerate(names):
            out[start:start + batch_size, j] = FEATURE_LIBRARY[name].fn(masks)
    return out


@dataclass(frozen=True)
class PixelScorer:
    """Scores a rubric set from frames: ``V[n, k] = feature_k(frame_n)``, oriented to the set's anchors.

    ``features`` maps rubric names to library features, on top of the env's :data:`DEFAULT_FEATURES` and of
    every library feature's own rubric name (so criteria the pixel proposer adds are scorable).
    """

    rubric_set: RubricSet
    spec: FrameSpec | None = None
    features: Mapping[str, str] | None = None
    #: frames per vectorised batch (small enough that the [B, H, W] temporaries stay in cache)
    batch_size: int = 256

    @property
    def frame_spec(self) -> FrameSpec:
        return self.spec or frame_spec(self.rubric_set.env)

    @property
    def mapping(self) -> dict[str, str]:
        own = {f.rubric.name: f.name for f in FEATURE_LIBRARY.values()}
        return {**own, **DEFAULT_FEATURES.get(self.rubric_set.env, {}), **(self.features or {})}

    def feature_names(self) -> list[str]:
        mapping = self.mapping
        missing = [r for r in self.rubric_set.names if r not in mapping]
        if missing:
            raise KeyError(f"pixel scorer: no feature for rubric(s) {missing} of {self.rubric_set.env}/"
                           f"{self.rubric_set.prompt}; pass features={{RUBRIC: feature}} from {sorted(FEATURE_LIBRARY)}")
        return [mapping[r] for r in self.rubric_set.names]

    def score(self, frames: np.ndarray) -> np.ndarray:
        """V [N, K] in [0, 1] in the rubric set's own polarity (never NaN: a pixel feature cannot fail)."""
        hazards = feature_hazards(frames, self.frame_spec, self.feature_names(), self.batch_size)
        return 1.0 - hazards if self.rubric_set.higher_is_safer else hazards

    def with_rubrics(self, rubric_set: RubricSet) -> PixelScorer:
        return replace(self, rubric_set=rubric_set)
