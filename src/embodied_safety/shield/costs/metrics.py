"""Cost-quality metrics of the rubric pipeline (App. E.3, Tables 8 and 11), on ground truth the simulator
has but the pipeline never sees.

Every ``score`` argument is oriented "higher = more unsafe": pass −ℓ̂ (the negated calibrated margin) or ρ.
Frames with a non-finite score (failed VLM frames) are left out; a metric whose subset lacks one of the
two classes is NaN.

* **Per-frame AUROC** (Table 11): the score against the per-frame ground-truth cost bit ``cost > 0``.
* **Tail AUROC** (Algorithm 2 line 5): restricted to the near-boundary band ``|h| < band`` (``h`` the
  ground-truth margin ℓ*, 0.25 as in the paper), label ``h < 0``: can the cost tell frames just inside the
  unsafe set from frames just outside it?
* **Pre-contact tail AUROC** (Table 8): positives are the frames of the ``k`` steps *before* an episode's
  first contact (first frame with ``cost > 0``; the contact frame itself and everything after it are
  excluded, as are the earlier frames of that episode), negatives every frame of the episodes that never
  had a contact. It asks whether the cost rises *before* the violation, which is what a shield needs.
* **Spearman** (Table 11): rank correlation between each frame's score and its episode's cost (summed
  per-step cost, broadcast); the paper writes ``log(1 + cost)``, which is monotone, so the ranks and the
  coefficient are the same.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def _clean(score: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    score = np.asarray(score, dtype=np.float64).ravel()
    arrays = tuple(np.asarray(a).ravel() for a in arrays)
    for a in arrays:
        if a.shape != score.shape:
            raise ValueError(f"score has {score.size} frames, another array {a.size}")
    keep = np.isfinite(score)
    return (score[keep], *(a[keep] for a in arrays))


def auroc(score: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC of ``score`` for the boolean ``positive`` (NaN when a class is missing)."""
    from sklearn.metrics import roc_auc_score

    s, y = _clean(score, np.asarray(positive).astype(bool))
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, s))


def per_frame_auroc(score: np.ndarray, cost: np.ndarray) -> float:
    """AUROC of the score against the ground-truth per-frame cost bit ``cost > 0``."""
    return auroc(score, np.asarray(cost) > 0)


def tail_auroc(score: np.ndarray, h: np.ndarray, band: float = 0.25) -> float:
    """AUROC on the ``|h| < band`` subset with label ``h < 0`` (Algorithm 2, line 5)."""
    h = np.asarray(h, dtype=np.float64)
    sel = np.abs(h) < band
    return auroc(np.asarray(score, dtype=np.float64)[sel], h[sel] < 0)


def precontact_sets(frame_episode: np.ndarray, frame_t: np.ndarray, cost: np.ndarray,
                    k: int) -> tuple[np.ndarray, np.ndarray]:
    """(positive, negative) frame masks of the pre-contact tail AUROC (module docstring)."""
    ep, t, hit = np.asarray(frame_episode), np.asarray(frame_t), np.asarray(cost) > 0
    episodes = np.unique(ep)
    big = np.iinfo(np.int64).max
    first = np.full(episodes.size, big, dtype=np.int64)
    pos = np.searchsorted(episodes, ep)
    np.minimum.at(first, pos[hit], t[hit].astype(np.int64))
    t_contact = first[pos]
    positive = (t_contact < big) & (t >= t_contact - k) & (t < t_contact)
    negative = t_contact == big
    return positive, negative


def precontact_tail_auroc(score: np.ndarray, frame_episode: np.ndarray, frame_t: np.ndarray, cost: np.ndarray,
                          k: int = 10) -> float:
    """AUROC of the ``k`` frames before each first contact against the frames of contact-free episodes."""
    positive, negative = precontact_sets(frame_episode, frame_t, cost, k)
    sel = positive | negative
    return auroc(np.asarray(score, dtype=np.float64)[sel], positive[sel])


def spearman_episode_cost(score: np.ndarray, frame_episode: np.ndarray, episode_cost: np.ndarray) -> float:
    """Spearman ρ between each frame's score and log(1 + its episode's cost) (Table 11)."""
    from scipy.stats import spearmanr

    s, ep = _clean(score, np.asarray(frame_episode))
    c = np.log1p(np.asarray(episode_cost, dtype=np.float64)[ep.astype(np.int64)])
    if s.size < 2 or np.ptp(s) == 0 or np.ptp(c) == 0:
        return float("nan")
    return float(spearmanr(s, c).statistic)


def cost_quality(score: np.ndarray, cost: np.ndarray, frame_episode: np.ndarray, frame_t: np.ndarray,
                 episode_cost: np.ndarray, margin: np.ndarray | None = None, k: int = 10,
                 band: float = 0.25) -> dict[str, float]:
    """All of the above for one scorer, as namespaced metrics (``cost/…``)."""
    out = {"cost/per_frame_auroc": per_frame_auroc(score, cost),
           "cost/precontact_tail_auroc": precontact_tail_auroc(score, frame_episode, frame_t, cost, k),
           "cost/spearman_episode_cost": spearman_episode_cost(score, frame_episode, episode_cost),
           "cost/scored_fraction": float(np.isfinite(np.asarray(score, dtype=np.float64)).mean())}
    if margin is not None:
        out["cost/tail_auroc"] = tail_auroc(score, margin, band)
    return out


def _fmt(x: float, signed: bool = False) -> str:
    if not np.isfinite(x):
        return "–"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def render_table8(cells: Mapping[tuple[str, str], tuple[float, bool]],
                  columns: tuple[str, ...] = ("5-rubric (base)", "7-rubric (post-RTD)")) -> str:
    """Table 8 layout: scorer rows × rubric-version columns of pre-contact tail AUROC, "(mode collapse)" marked.

    ``cells[(scorer, column)] = (auroc, collapsed)``; a missing cell prints "–".
    """
    scorers = list(dict.fromkeys(s for s, _ in cells))
    lines = ["| scorer | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for s in scorers:
        row = []
        for c in columns:
            if (s, c) not in cells:
                row.append("–")
                continue
            value, collapsed = cells[(s, c)]
            row.append(_fmt(value) + (" (mode collapse)" if collapsed else ""))
        lines.append(f"| {s} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def render_table11(rows: Mapping[str, Mapping[str, float]]) -> str:
    """Table 11 layout: per scorer, per-frame AUROC and Spearman(ρ, log1+ cost) (keys of :func:`cost_quality`)."""
    lines = ["| scorer | per-frame AUROC | Spearman(ρ, log1+ cost) |", "|---|---|---|"]
    for name, m in rows.items():
        lines.append(f"| {name} | {_fmt(m.get('cost/per_frame_auroc', np.nan))} | "
                     f"{_fmt(m.get('cost/spearman_episode_cost', np.nan), signed=True)} |")
    return "\n".join(lines) + "\n"
