"""Clip scorer: the rubric score of frame t from the frames t−k+1..t of its episode (issue 21, item 5).

Why: a per-frame scorer sees only what the camera sees. TurtleBot-Nav's egocentric camera (90° FOV, 0.1 s
control step) loses the cylinder as the robot turns past it, while the robot is still inside the 0.6 m cost
band: the obstacle that scored high a second ago scores "no obstacle visible" now, and the per-frame AUROC of
ρ against ``cost > 0`` falls below chance. An obstacle that was seen and has not been driven past is still
there, so the clip score is the **maximum over the last ``k`` frames** of the episode, optionally decayed
with the age of the frame (``half_life``: how fast a sighting stops being evidence).

The default ``k`` comes from the geometry, not from the labels: a robot that enters TurtleBot-Nav's cost zone
heading into it sees the cylinder at entry (bearing ≤ 34° at a grazing pass, inside the ±45° view), and on a
straight pass at full speed (1 m/s, 0.1 m a frame) it leaves the zone after at most the longest chord of the
band that misses the cylinder, ``2·√(1.37² − 0.77²) = 2.27 m`` (zone radius 0.6 + 0.17 + 0.6 m, cylinder plus
robot 0.77 m): 23 frames. So within 23 frames of any in-band frame of such a pass there is a frame that saw
the obstacle. Slower passes and a robot pinned against the cylinder stay in the band longer than that; the
window does not cover them. No decay is the default: within the pass time there is no physical reason for
the sighting to fade (a decay is a parameter for scorers whose old answers are less trustworthy).

The trend of the score (rising = approaching) was considered and left out: in the blind stretch the score
*falls* while the robot is in the band, which is the case the clip scorer is for.

Pooling is on the severity ρ (any score oriented "higher = more hazardous"), never across episode
boundaries; a frame with fewer than ``k`` predecessors uses what it has; non-finite scores (failed VLM frames)
are skipped, and a frame is NaN only when every frame of its window is. :class:`ClipScorer` wraps a
per-frame scorer (``score(frames) -> V [N, K]``, the interface ``shield.costs.sources.scorer_for`` returns) and
returns, for each frame, the rubric answers of the frame that set its clip score (decayed), so
``rubric_set.severity`` of its output is exactly :func:`clip_scores` of the per-frame severity.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

#: the longest straight full-speed crossing of TurtleBot-Nav's cost band, in control steps (module docstring)
CLIP_FRAMES = 23


def _check_k(k: int) -> None:
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"clip length k must be an integer >= 1, got {k!r}")


def clip_sources(score: np.ndarray, frame_episode: np.ndarray, frame_t: np.ndarray, k: int = CLIP_FRAMES,
                 half_life: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each frame, ``(source, weight)``: the index of the frame of its window (same episode, time in
    ``(t − k, t]``) with the largest ``score × weight``, ``weight = 0.5^(age / half_life)`` (1 without a
    half-life). Ties go to the most recent frame; a window with no finite score points at the frame itself.

    Frames may come in any order; ``(episode, t)`` pairs must be unique. ``score`` must be non-negative
    where a half-life is set (a decay toward 0 is a decay toward "safe" only for a severity).
    """
    s = np.asarray(score, dtype=np.float64).ravel()
    ep = np.asarray(frame_episode).ravel()
    t = np.asarray(frame_t).astype(np.int64).ravel()
    if not (s.shape == ep.shape == t.shape):
        raise ValueError(f"score, frame_episode, frame_t have {s.size}, {ep.size}, {t.size} frames")
    _check_k(k)
    if half_life is not None and not half_life > 0:
        raise ValueError(f"half_life must be > 0 or None, got {half_life!r}")
    if half_life is not None and np.any(s[np.isfinite(s)] < 0):
        raise ValueError("a decayed clip needs a non-negative severity (decay shrinks toward 0 = safe)")
    n = s.size
    order = np.lexsort((t, ep))
    se, st, ss = ep[order], t[order], s[order]
    if n > 1 and np.any((se[1:] == se[:-1]) & (st[1:] == st[:-1])):
        raise ValueError("two frames share an (episode, t) pair")
    pos = np.arange(n)
    best = np.where(np.isfinite(ss), ss, -np.inf)
    src, weight = pos.copy(), np.ones(n)
    for lag_rows in range(1, int(k)):  # t is unique per episode, so the window is at most k - 1 rows back
        j = np.maximum(pos - lag_rows, 0)
        age = st - st[j]
        ok = (pos >= lag_rows) & (se[j] == se) & (age < k)
        if not ok.any():  # rows further back are older still, or in another episode
            break
        w = np.ones(n) if half_life is None else 0.5 ** (age / half_life)
        v = np.where(ok & np.isfinite(ss[j]), ss[j] * w, -np.inf)
        better = v > best
        best = np.where(better, v, best)
        src = np.where(better, j, src)
        weight = np.where(better, w, weight)
    source, out_w = np.empty(n, dtype=np.int64), np.empty(n)
    source[order], out_w[order] = order[src], weight
    return source, out_w


def clip_scores(score: np.ndarray, frame_episode: np.ndarray, frame_t: np.ndarray, k: int = CLIP_FRAMES,
                half_life: float | None = None) -> np.ndarray:
    """The clip score of every frame: the (decayed) maximum of ``score`` over its episode's last ``k`` frames.
    ``k = 1`` returns ``score`` itself (as float64)."""
    s = np.asarray(score, dtype=np.float64).ravel()
    source, weight = clip_sources(s, frame_episode, frame_t, k, half_life)
    return s[source] * weight


def clip_rubric_scores(scores: np.ndarray, rubric_set: Any, frame_episode: np.ndarray, frame_t: np.ndarray,
                       k: int = CLIP_FRAMES, half_life: float | None = None) -> np.ndarray:
    """Per-frame rubric answers ``V [N, K]`` (the set's own polarity) → clip answers ``V [N, K]``: each row is
    the row of the frame that set the clip severity, its hazards scaled by the decay weight, so
    ``rubric_set.severity(result) == clip_scores(rubric_set.severity(scores), ...)``."""
    hazards = rubric_set.hazards(np.asarray(scores, dtype=np.float64))
    source, weight = clip_sources(hazards @ rubric_set.weights, frame_episode, frame_t, k, half_life)
    clipped = hazards[source] * weight[:, None]
    return 1.0 - clipped if rubric_set.higher_is_safer else clipped


@dataclass(frozen=True, eq=False)
class ClipScorer:
    """A per-frame rubric scorer seen through a clip of the last ``k`` frames of each episode.

    ``score(frames, frame_episode, frame_t)`` scores the frames with the wrapped scorer, then pools them with
    :func:`clip_rubric_scores`. To hand it to code that calls ``score(frames)`` (the ``Scorer`` protocol of
    :mod:`.rtd`, :func:`.margins.rubric_margin`), :meth:`bind` the frames' episode ids and time indices first;
    an unbound ``score(frames)`` is refused, because frames of unknown episodes cannot be put in time order.
    """

    scorer: Any
    k: int = CLIP_FRAMES
    half_life: float | None = None
    frame_episode: np.ndarray | None = field(default=None, repr=False)
    frame_t: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_k(self.k)

    @property
    def rubric_set(self) -> Any:
        return self.scorer.rubric_set

    def bind(self, frame_episode: np.ndarray, frame_t: np.ndarray) -> ClipScorer:
        """The same clip scorer with the episode ids / time indices of the frames its ``score`` will get."""
        return replace(self, frame_episode=np.asarray(frame_episode), frame_t=np.asarray(frame_t))

    def with_rubrics(self, rubric_set: Any) -> ClipScorer:
        return replace(self, scorer=self.scorer.with_rubrics(rubric_set))

    def score(self, frames: np.ndarray, frame_episode: np.ndarray | None = None,
              frame_t: np.ndarray | None = None) -> np.ndarray:
        """Clip answers ``V [N, K]`` in the rubric set's polarity (see :func:`clip_rubric_scores`)."""
        ep = self.frame_episode if frame_episode is None else frame_episode
        t = self.frame_t if frame_t is None else frame_t
        if ep is None or t is None:
            raise ValueError("ClipScorer.score needs the frames' episode ids and time indices (pass them or bind())")
        return clip_rubric_scores(self.scorer.score(frames), self.rubric_set, ep, t, self.k, self.half_life)
