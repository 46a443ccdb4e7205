"""The dev-split selection rule (issue 20), shared by checkpoint selection, the learning-rate sweep,
the champion choice among seeds and the report's dynamics table.

Maximise dev SSR subject to dev SR >= ``sr_floor`` (the base actor's dev SR minus a margin, 0.05 by
default); ties by SR. When no point qualifies, the one with the highest SR is taken (ties by SSR)
and flagged ``below_floor``. ``sr_floor=None`` is the plain (SSR, SR) order of the paper (F.5).

Checkpoints along one training run (:func:`not_worse`, used by ``train.common.Selector``) are compared with their
dev-split noise: a later checkpoint whose per-task outcomes are not significantly worse than the best one's
(one-sided exact McNemar test on the tasks where the two differ, ``ALPHA``) is a tie, and ties go to the later
checkpoint, the one further along the learning-rate schedule. Measured (docs/training.md): on 41 dev
tasks the checkpoints of the last third of an SFT run differ by one or two tasks while test SR still rises to the
end, so "strictly better on dev" picked an earlier, worse checkpoint (test SR 0.583 against 0.681 at the end).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

P = TypeVar("P", bound=Mapping[str, float])


def qualifies(point: Mapping[str, float], sr_floor: float | None) -> bool:
    return sr_floor is None or point.get("sr", 0.0) >= sr_floor - 1e-9


def rank(point: Mapping[str, float], sr_floor: float | None) -> tuple[int, float, float]:
    """Sort key (larger is better): qualifying points by (SSR, SR), all of them above the rest,
    which are ordered by (SR, SSR)."""
    ssr, sr = point.get("ssr", 0.0), point.get("sr", 0.0)
    return (1, ssr, sr) if qualifies(point, sr_floor) else (0, sr, ssr)


def select(points: Sequence[P], sr_floor: float | None) -> tuple[P | None, bool]:
    """(the selected point, whether it is below the floor); (None, False) for no points."""
    if not points:
        return None, False
    best = max(points, key=lambda p: rank(p, sr_floor))
    return best, not qualifies(best, sr_floor)


ALPHA = 0.05  # one-sided: "the best is better than this checkpoint" needs p < ALPHA
#: an evaluator may add this key to its metrics: {"sr": [0/1 per dev task], "ssr": [...]} (same task order each time)
OUTCOMES = "outcomes"
Outcomes = Mapping[str, Sequence[int]]


def metrics_only(evaluated: Mapping[str, object]) -> dict[str, float]:
    """An evaluator's metrics without its per-task ``OUTCOMES``."""
    return {k: float(v) for k, v in evaluated.items() if k != OUTCOMES}  # type: ignore[arg-type]


def mcnemar_p(wins: int, losses: int) -> float:
    """One-sided exact McNemar p-value that A beats B, given the tasks only A solves (``wins``) and only B solves
    (``losses``): P(X >= wins) for X ~ Binomial(wins + losses, 1/2); 1.0 when they never differ."""
    from math import comb

    n = wins + losses
    return 1.0 if n == 0 else sum(comb(n, k) for k in range(wins, n + 1)) / 2 ** n


def not_worse(point: Mapping[str, float], outcomes: Outcomes | None, best: Mapping[str, float],
              best_outcomes: Outcomes | None, sr_floor: float | None, alpha: float = ALPHA) -> bool:
    """Is ``point`` a tie with ``best`` (the top point by :func:`rank`) given the dev split's noise?

    Both on the same side of the floor, and ``best`` not significantly better on the metric that side ranks by
    (SSR above the floor, SR below it) by a paired one-sided exact McNemar test over the dev tasks. Without
    per-task outcomes only an equal rank is a tie."""
    if qualifies(point, sr_floor) != qualifies(best, sr_floor):
        return False
    if not outcomes or not best_outcomes:
        return rank(point, sr_floor) == rank(best, sr_floor)
    key = "ssr" if qualifies(best, sr_floor) else "sr"
    a, b = best_outcomes[key], outcomes[key]
    if len(a) != len(b):
        raise ValueError(f"per-task outcomes of different lengths: {len(a)} and {len(b)}")
    wins = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    losses = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return mcnemar_p(wins, losses) >= alpha


def pick_checkpoint(points: Sequence[tuple[Mapping[str, float], Outcomes | None]],
                    sr_floor: float | None, alpha: float = ALPHA) -> tuple[int, int]:
    """(the kept index, the top index) over one run's checkpoints in training order, each ``(metrics, per-task
    outcomes or None)``: the top by :func:`rank` (the first of equals), and the latest checkpoint that is
    :func:`not_worse` than it. Only ever the newest point or the previous choice, so it can be applied online."""
    if not points:
        raise ValueError("no checkpoints to pick from")
    top = max(range(len(points)), key=lambda i: rank(points[i][0], sr_floor))
    best, best_out = points[top]
    kept = max(i for i, (p, out) in enumerate(points) if i == top or not_worse(p, out, best, best_out, sr_floor, alpha))
    return kept, top


def floor_from(base_dev_sr: float | None, max_drop: float | None) -> float | None:
    """The SR floor: the base actor's dev SR minus ``max_drop``; None when either is unknown."""
    return None if base_dev_sr is None or max_drop is None else base_dev_sr - max_drop
