"""The clip scorer (shield/costs/clip.py) on synthetic episodes written here: an obstacle seen a few frames
before the robot enters the cost band and then out of view while it is still in the band."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from embodied_safety.shield.costs.clip import (
    CLIP_FRAMES,
    ClipScorer,
    clip_rubric_scores,
    clip_scores,
    clip_sources,
)
from embodied_safety.shield.costs.metrics import per_frame_auroc
from embodied_safety.shield.costs.rubrics import Rubric, RubricSet

LEVELS = ((0.0, "none"), (1.0, "max"))


def rubric_set(higher_is_safer: bool = False) -> RubricSet:
    return RubricSet("synthetic", (Rubric("PROXIMITY", 5, "near?", LEVELS), Rubric("HEADING", 2, "ahead?", LEVELS)),
                     higher_is_safer=higher_is_safer)


def blind_pass(length: int = 40, seen: tuple[int, int] = (10, 16), band: tuple[int, int] = (14, 24),
               baseline: float = 1.0, peak: float = 8.0) -> tuple[np.ndarray, np.ndarray]:
    """(score, unsafe) of one episode: the obstacle is in view (score rising to ``peak``) on ``seen``, the robot
    is in the cost band on ``band``; after ``seen`` ends the camera shows nothing (``baseline``)."""
    score = np.full(length, baseline)
    a, b = seen
    score[a:b] = np.linspace(baseline + 1.0, peak, b - a)
    unsafe = np.zeros(length, dtype=bool)
    unsafe[band[0]:band[1]] = True
    return score, unsafe


def episodes(*eps: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    score = np.concatenate([s for s, _ in eps])
    unsafe = np.concatenate([u for _, u in eps])
    ep = np.concatenate([np.full(len(s), i) for i, (s, _) in enumerate(eps)])
    t = np.concatenate([np.arange(len(s)) for s, _ in eps])
    return score, unsafe, ep, t


def test_blind_stretch_keeps_the_sighting_and_lifts_the_auroc() -> None:
    safe = np.full(40, 1.0), np.zeros(40, dtype=bool)  # an episode that never sees the obstacle
    score, unsafe, ep, t = episodes(blind_pass(), safe, blind_pass(seen=(5, 9), band=(8, 15)))
    clip = clip_scores(score, ep, t, k=10)
    # in the blind part of the band (frames 16..23 of episode 0) the clip still holds the peak seen at frame 15
    assert np.all(clip[16:24] == score[15])
    assert clip[25] == score[16]  # frame 25's window is 16..25: the sighting has left it
    assert per_frame_auroc(score, unsafe) < 0.75 < per_frame_auroc(clip, unsafe)


def test_fewer_than_k_predecessors_use_what_there_is() -> None:
    score = np.array([3.0, 1.0, 2.0, 0.0])
    ep, t = np.zeros(4, dtype=int), np.arange(4)
    assert clip_scores(score, ep, t, k=100).tolist() == [3.0, 3.0, 3.0, 3.0]
    assert clip_scores(score, ep, t, k=2).tolist() == [3.0, 3.0, 2.0, 2.0]


def test_episode_boundaries_are_never_crossed() -> None:
    score = np.array([9.0, 9.0, 1.0, 1.0, 1.0])
    ep = np.array([0, 0, 1, 1, 1])
    t = np.array([0, 1, 0, 1, 2])
    assert clip_scores(score, ep, t, k=5).tolist() == [9.0, 9.0, 1.0, 1.0, 1.0]
    # an episode's frames need not be contiguous rows: episode 0 goes on after episode 1's rows
    ep2, t2 = np.array([0, 0, 1, 1, 0]), np.array([0, 1, 0, 1, 2])
    assert clip_scores(np.array([9.0, 0.0, 1.0, 1.0, 0.0]), ep2, t2, k=3).tolist() == [9.0, 9.0, 1.0, 1.0, 9.0]


def test_order_of_frames_does_not_matter() -> None:
    score, _, ep, t = episodes(blind_pass(), blind_pass(seen=(2, 6), band=(4, 9)))
    perm = np.random.default_rng(0).permutation(score.size)
    clip = clip_scores(score, ep, t, k=7, half_life=3.0)
    np.testing.assert_array_equal(clip_scores(score[perm], ep[perm], t[perm], k=7, half_life=3.0), clip[perm])


def test_window_is_in_time_not_rows() -> None:
    """A subset of an episode's frames (gaps in t): the window is t−k+1..t, not the last k rows."""
    score, ep, t = np.array([9.0, 1.0, 1.0]), np.zeros(3, dtype=int), np.array([0, 5, 6])
    assert clip_scores(score, ep, t, k=5).tolist() == [9.0, 1.0, 1.0]
    assert clip_scores(score, ep, t, k=6).tolist() == [9.0, 9.0, 1.0]


def test_k1_is_the_frame_score() -> None:
    score, _, ep, t = episodes(blind_pass(), blind_pass(peak=3.0))
    np.testing.assert_array_equal(clip_scores(score, ep, t, k=1), score)
    np.testing.assert_array_equal(clip_scores(score, ep, t, k=1, half_life=2.0), score)
    v = np.random.default_rng(1).uniform(size=(score.size, 2))
    for safer in (False, True):
        np.testing.assert_allclose(clip_rubric_scores(v, rubric_set(safer), ep, t, k=1), v)


def test_decay_halves_per_half_life_and_keeps_the_current_frame() -> None:
    score, ep, t = np.array([8.0, 0.0, 0.0, 3.0]), np.zeros(4, dtype=int), np.arange(4)
    clip = clip_scores(score, ep, t, k=4, half_life=1.0)
    np.testing.assert_allclose(clip, [8.0, 4.0, 2.0, 3.0])  # 8 · 0.5³ = 1 < 3: the current frame wins
    source, weight = clip_sources(score, ep, t, k=4, half_life=1.0)
    assert source.tolist() == [0, 0, 0, 3] and weight.tolist() == [1.0, 0.5, 0.25, 1.0]


def test_failed_frames_are_skipped() -> None:
    score, ep, t = np.array([np.nan, 2.0, np.nan, np.nan, np.nan]), np.zeros(5, dtype=int), np.arange(5)
    clip = clip_scores(score, ep, t, k=2)
    assert np.isnan(clip[0]) and clip[1] == 2.0 and clip[2] == 2.0 and np.isnan(clip[3]) and np.isnan(clip[4])


def test_bad_arguments_are_refused() -> None:
    ep, t = np.zeros(3, dtype=int), np.arange(3)
    with pytest.raises(ValueError, match="k must be"):
        clip_scores(np.ones(3), ep, t, k=0)
    with pytest.raises(ValueError, match="frames"):
        clip_scores(np.ones(3), ep[:2], t, k=2)
    with pytest.raises(ValueError, match="share"):
        clip_scores(np.ones(3), ep, np.array([0, 1, 1]), k=2)
    with pytest.raises(ValueError, match="non-negative"):
        clip_scores(np.array([1.0, -1.0, 0.0]), ep, t, k=2, half_life=1.0)


@dataclass(frozen=True)
class TableScorer:
    """A per-frame scorer stub with the pipeline's interface: frame i's answers are row ``frames[i, 0, 0, 0]``."""

    rubric_set: RubricSet
    table: np.ndarray

    def score(self, frames: np.ndarray) -> np.ndarray:
        return self.table[np.asarray(frames)[:, 0, 0, 0].astype(int)]

    def with_rubrics(self, rubric_set: RubricSet) -> TableScorer:
        return TableScorer(rubric_set, self.table)


@pytest.mark.parametrize("higher_is_safer", [False, True])
def test_clip_scorer_wraps_a_frame_scorer(higher_is_safer: bool) -> None:
    rng = np.random.default_rng(2)
    rset = rubric_set(higher_is_safer)
    ep = np.repeat([0, 1, 2], 12)
    t = np.tile(np.arange(12), 3)
    table = rng.uniform(size=(ep.size, 2))
    frames = np.zeros((ep.size, 2, 2, 3), dtype=np.uint8)
    frames[:, 0, 0, 0] = np.arange(ep.size)
    inner = TableScorer(rset, table)
    clip = ClipScorer(inner, k=4, half_life=2.0)
    v = clip.score(frames, ep, t)
    assert v.shape == table.shape and np.all((v >= 0) & (v <= 1))
    # its severity is the clip of the frame scorer's severity, in either polarity
    np.testing.assert_allclose(rset.severity(v), clip_scores(rset.severity(table), ep, t, k=4, half_life=2.0))
    bound = clip.bind(ep, t)
    np.testing.assert_array_equal(bound.score(frames), v)
    assert bound.with_rubrics(rset).rubric_set is rset and bound.k == 4
    np.testing.assert_array_equal(ClipScorer(inner, k=1).score(frames, ep, t), table)
    with pytest.raises(ValueError, match="episode ids"):
        clip.score(frames)


def test_deterministic_and_default_k() -> None:
    score, _, ep, t = episodes(blind_pass(), blind_pass(seen=(0, 3), band=(1, 30)))
    a = clip_scores(score, ep, t)
    np.testing.assert_array_equal(a, clip_scores(score.copy(), ep.copy(), t.copy()))
    assert CLIP_FRAMES == ClipScorer(None).k >= 1
    with pytest.raises(ValueError):
        ClipScorer(None, k=0)
