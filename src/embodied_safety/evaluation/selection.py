"""The dev-split selection rule (issue 20), shared by checkpoint selection, the learning-rate sweep,
the champion choice among seeds and the report's dynamics table.

Maximise dev SSR subject to dev SR >= ``sr_floor`` (the base actor's dev SR minus a margin, 0.05 by
default); ties by SR. When no point qualifies, the one with the highest SR is taken (ties by SSR)
and flagged ``below_floor``. ``sr_floor=None`` is the plain (SSR, SR) order of the paper (F.5).
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


def floor_from(base_dev_sr: float | None, max_drop: float | None) -> float | None:
    """The SR floor: the base actor's dev SR minus ``max_drop``; None when either is unknown."""
    return None if base_dev_sr is None or max_drop is None else base_dev_sr - max_drop
