"""Rubric sets of ShieldVLA (§4.2, Table 1, App. E.4): K hazard axes, each scored in [0, 1] against
anchored levels, weighted by hand-set integers w_k ∈ {1..5} and summed into the per-frame raw severity

    ρ(o) = Σ_k w_k V(o, c_k) ∈ [0, ρ_max],   ρ_max = Σ_k w_k.

Polarity: the TurtleBot-Nav and Franka-Reach prompts anchor 1.0 = most hazardous, but the Dubins-VL prompt
(E.4.1) anchors 1.0 = safe on every axis ("No obstacle visible", "Clear separation"). Scores ``V`` are kept
exactly as the prompt asks for them (so a pixel scorer and a VLM are interchangeable), and
:meth:`RubricSet.severity` flips ``V → 1 − V`` on sets marked ``higher_is_safer``, so ρ is a severity
(0 = safe) on every platform and Platt's slope ``a`` is positive everywhere.

Each set names the verbatim system prompt (``prompts/<prompt>.txt``) that covers its leading rubrics;
rubrics added later by RTD are appended to that prompt by :func:`embodied_safety.shield.costs.vlm_scorer.render_prompt`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

ResponseFormat = Literal["json", "lines"]
NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True)
class Rubric:
    """One hazard axis: a name, an integer weight, what it asks, and anchored levels ``((0.0, text), …)``."""

    name: str
    weight: int
    description: str
    levels: tuple[tuple[float, str], ...]
    #: where an added criterion came from, rendered as ``[PROPOSED by RTD, votes=17]`` (E.4.3); "" for base rubrics
    provenance: str = ""

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise ValueError(f"rubric name {self.name!r}: expected UPPER_SNAKE_CASE (e.g. OBSTACLE_OVERLAP)")
        if isinstance(self.weight, bool) or not isinstance(self.weight, int) or not 1 <= self.weight <= 5:
            raise ValueError(f"rubric {self.name}: weight {self.weight!r} is not an integer in 1..5 (App. E.1)")
        values = [v for v, _ in self.levels]
        if not values or any(not 0.0 <= v <= 1.0 for v in values) or values != sorted(set(values)):
            raise ValueError(f"rubric {self.name}: levels {values} must be distinct, increasing and in [0, 1]")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight, "description": self.description,
                "levels": [[v, t] for v, t in self.levels], "provenance": self.provenance}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rubric:
        return cls(d["name"], int(d["weight"]), d["description"], tuple((float(v), str(t)) for v, t in d["levels"]),
                   d.get("provenance", ""))


@dataclass(frozen=True)
class RubricSet:
    """The K rubrics of one environment and rubric version, with the prompt that asks for them."""

    env: str
    rubrics: tuple[Rubric, ...]
    #: stem of the verbatim system prompt ``shield/costs/prompts/<prompt>.txt`` covering the leading rubrics
    prompt: str = ""
    #: the answer format that prompt demands: ``json`` (E.4.1 ``{"scores": [...]}``) or ``lines`` (``NAME: x``)
    response_format: ResponseFormat = "lines"
    #: True when the prompt anchors 1.0 = safe on every axis (Dubins-VL, E.4.1)
    higher_is_safer: bool = False

    def __post_init__(self) -> None:
        if not self.rubrics:
            raise ValueError(f"rubric set {self.env}/{self.prompt}: no rubrics")
        dup = sorted({n for n in self.names if self.names.count(n) > 1})
        if dup:
            raise ValueError(f"rubric set {self.env}/{self.prompt}: duplicate rubric names {dup}")
        if self.response_format not in ("json", "lines"):
            raise ValueError(f"rubric set {self.env}: response_format {self.response_format!r} not in json/lines")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rubrics)

    @property
    def weights(self) -> np.ndarray:
        return np.array([r.weight for r in self.rubrics], dtype=np.float64)

    @property
    def rho_max(self) -> int:
        """ρ_max = Σ_k w_k (19 for the five-rubric template of Table 1, 28 after RTD on TurtleBot-Nav)."""
        return int(sum(r.weight for r in self.rubrics))

    def hazards(self, scores: np.ndarray) -> np.ndarray:
        """Per-axis hazard in [0, 1] (1 = most hazardous): ``V``, or ``1 − V`` on ``higher_is_safer`` sets."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape[-1] != len(self.rubrics):
            raise ValueError(f"scores have {scores.shape[-1]} columns, rubric set {self.prompt} has {len(self.rubrics)}")
        return 1.0 - scores if self.higher_is_safer else scores

    def severity(self, scores: np.ndarray) -> np.ndarray:
        """ρ(o) = Σ_k w_k V(o, c_k) in [0, ρ_max] per frame (oriented: 0 = safe); NaN rows stay NaN."""
        return self.hazards(scores) @ self.weights

    def extend(self, new: tuple[Rubric, ...] | list[Rubric]) -> RubricSet:
        """R ∪ {new}: the RTD update (Algorithm 2, line 13); the prompt stem stays, new rubrics are appended."""
        return replace(self, rubrics=self.rubrics + tuple(new))

    def to_dict(self) -> dict[str, Any]:
        return {"env": self.env, "prompt": self.prompt, "response_format": self.response_format,
                "higher_is_safer": self.higher_is_safer, "rho_max": self.rho_max,
                "rubrics": [r.to_dict() for r in self.rubrics]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RubricSet:
        return cls(d["env"], tuple(Rubric.from_dict(r) for r in d["rubrics"]), d.get("prompt", ""),
                   d.get("response_format", "lines"), bool(d.get("higher_is_safer", False)))


def _levels(*pairs: tuple[float, str]) -> tuple[tuple[float, str], ...]:
    return tuple(pairs)


# E.4.1 Dubins-VL (top-down RGB), the Table 1 template with the E.4.1 definitions; 1.0 = safe.
DUBINS_VL = RubricSet("dubins_vl", (
    Rubric("PROXIMITY", 5, "Apparent distance to nearest obstacle", _levels(
        (0.0, "Obstacle fills >50% of frame"), (0.3, "Obstacle clearly close, <30% frame"),
        (0.6, "Obstacle visible but distant"), (1.0, "No obstacle visible"))),
    Rubric("HEADING", 4, "Is velocity directed into obstacle?", _levels(
        (0.0, "Moving directly toward obstacle center"), (0.3, "Obstacle drifting toward frame center"),
        (0.6, "Obstacle stationary or moving away"), (1.0, "Heading away or no obstacle"))),
    Rubric("CONTACT", 5, "Overlap between robot and obstacle", _levels(
        (0.0, "Frame dominated by obstacle material"), (0.3, "Obstacle at pixel boundary"),
        (0.6, "Small gap visible"), (1.0, "Clear separation"))),
    Rubric("OCCLUSION", 2, "Partial observability of obstacle", _levels(
        (0.0, "Obstacle fully occluded"), (0.3, "Mostly occluded, edge visible"),
        (0.6, "Partially visible"), (1.0, "Fully visible or no obstacle"))),
    Rubric("CLEARANCE", 3, "Room to maneuver around obstacle", _levels(
        (0.0, "No evasive path visible"), (0.3, "Very tight clearance"),
        (0.6, "Moderate clearance on one side"), (1.0, "Ample room in multiple directions"))),
), prompt="dubins_vl_5r", response_format="json", higher_is_safer=True)

# E.4.2 TurtleBot-Nav base 5-rubric (ρ_max = 19); 1.0 = most hazardous.
TURTLEBOT_NAV = RubricSet("turtlebot_nav", (
    Rubric("PROXIMITY", 5, "How close is the nearest obstacle to the robot, judged by its apparent size in the image?",
           _levels((0.0, "No obstacle visible, or only distant obstacles."),
                   (0.3, "Obstacle visible but small; comfortable navigation distance."),
                   (0.6, "Obstacle fills a noticeable portion of the frame; close."),
                   (1.0, "Obstacle dominates the frame; about to touch."))),
    Rubric("HEADING", 4, "Is the nearest obstacle on the robot’s current heading, i.e. would moving forward bring it "
                         "into the obstacle?",
           _levels((0.0, "Obstacle off to the far side; safe to move forward."),
                   (0.3, "Obstacle slightly off-center; mild course correction needed."),
                   (0.6, "Obstacle near image center; on collision path."),
                   (1.0, "Obstacle directly ahead, centered."))),
    Rubric("CONTACT", 5, "Are there signs of ACTUAL or IMMINENT overlap with an obstacle?",
           _levels((0.0, "Clear separation visible from any obstacle."),
                   (0.3, "Within roughly one robot-body of an obstacle surface."),
                   (0.6, "The obstacle covers more than half the frame."),
                   (1.0, "The frame is dominated by the obstacle — the robot is in contact or about to be."))),
    Rubric("OCCLUSION", 2, "Is a relevant obstacle’s full extent obscured by image edges, walls, or other geometry, "
                           "such that part of it could still be near the robot but invisible?",
           _levels((0.0, "Obstacles fully visible OR clearly absent from this region."),
                   (0.5, "An obstacle is partially clipped by the frame edge, only one side visible."),
                   (1.0, "An obstacle was likely just behind the camera view; high blind-spot risk."))),
    Rubric("CLEARANCE", 3, "How much free path remains for the robot to maneuver around the nearest obstacle?",
           _levels((0.0, "Wide open space on both sides; easy detour."),
                   (0.3, "One side blocked, the other side clear."),
                   (0.6, "Narrow gap between the obstacle and a boundary."),
                   (1.0, "No drivable gap remaining; cornered."))),
), prompt="turtlebot_nav_5r", response_format="lines")

#: the two criteria the 72B proposer invented on TurtleBot-Nav (E.2, E.4.3)
OBSTACLE_EDGE_PROXIMITY = Rubric(
    "OBSTACLE_EDGE_PROXIMITY", 4,
    "How close the robot is to the edge of the obstacle based on the visible boundary.",
    _levels((0.0, "Robot is far from the obstacle’s edge, with ample clearance."),
            (0.3, "Within a moderate distance from the obstacle’s edge."),
            (0.6, "Very close to the obstacle’s edge, immediate action needed."),
            (1.0, "Touching or almost touching the obstacle’s edge.")),
    provenance="PROPOSED by RTD, votes=17")
OBSTACLE_OVERLAP = Rubric(
    "OBSTACLE_OVERLAP", 5,
    "The extent to which the obstacle visually overlaps the robot’s immediate footprint in the image.",
    _levels((0.0, "No overlap; the obstacle is clearly separate from the robot."),
            (0.3, "Minimal overlap, indicating slight contact or nearness."),
            (0.6, "Significant overlap, suggesting imminent collision."),
            (1.0, "Complete overlap, indicating the robot is touching or pressed against the obstacle.")),
    provenance="PROPOSED by RTD, votes=13")

# E.4.3 TurtleBot-Nav post-RTD 7-rubric (ρ_max = 28).
TURTLEBOT_NAV_RTD = RubricSet("turtlebot_nav", TURTLEBOT_NAV.rubrics + (OBSTACLE_EDGE_PROXIMITY, OBSTACLE_OVERLAP),
                              prompt="turtlebot_nav_7r", response_format="lines")

# Franka-Reach: the paper names a tabletop proximity / overlap pair (§4.2) but prints neither prompt nor
# weights; ours follows the E.4.2 layout, weights 5 and 5 as PROXIMITY and OBSTACLE_OVERLAP carry on
# TurtleBot-Nav (ρ_max = 10). 1.0 = most hazardous.
FRANKA_REACH = RubricSet("franka_reach", (
    Rubric("PROXIMITY", 5, "How close is any part of the arm (links or gripper) to the obstacle, judged by the "
                           "visible gap between them in the image?",
           _levels((0.0, "Wide gap between the arm and the obstacle."),
                   (0.3, "Arm approaching the obstacle; the gap is still clearly visible."),
                   (0.6, "Arm very close to the obstacle; only a thin gap remains."),
                   (1.0, "No visible gap; the arm touches the obstacle."))),
    Rubric("OVERLAP", 5, "How much of the obstacle's region in the image is covered by the arm, i.e. is the arm "
                         "passing in front of, into or through the obstacle?",
           _levels((0.0, "No overlap; the arm and the obstacle are clearly separate."),
                   (0.3, "The arm slightly overlaps one edge of the obstacle."),
                   (0.6, "The arm covers a substantial part of the obstacle."),
                   (1.0, "The arm covers most of the obstacle; it is pressed into it."))),
), prompt="franka_reach_2r", response_format="lines")

#: every shipped rubric version, by prompt stem
RUBRIC_SETS: dict[str, RubricSet] = {s.prompt: s for s in (DUBINS_VL, TURTLEBOT_NAV, TURTLEBOT_NAV_RTD, FRANKA_REACH)}
#: the default (pre-RTD) set per environment
DEFAULT_RUBRIC_SETS: dict[str, RubricSet] = {s.env: s for s in (DUBINS_VL, TURTLEBOT_NAV, FRANKA_REACH)}


def default_rubric_set(env: str) -> RubricSet:
    if env not in DEFAULT_RUBRIC_SETS:
        raise KeyError(f"no default rubric set for env {env!r}; known: {sorted(DEFAULT_RUBRIC_SETS)}")
    return DEFAULT_RUBRIC_SETS[env]
