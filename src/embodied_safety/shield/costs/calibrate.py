"""Platt calibration of the raw severity against the per-episode safety bit (§4.2 stage iii, Algorithm 2 line 3).

The per-episode label ``y = 1`` ("something unsafe happened in this rollout") is broadcast to every frame
of the episode as a weak per-frame label, and one class-balanced logistic regression

    P(y = 1 | ρ) = σ(a ρ + b)

is fitted over the (ρ, y) pairs. The calibrated margin is ℓ̂(o) = −(a ρ(o) + b): positive where the frame
looks like a safe episode's (P(unsafe) < ½), negative where it looks like an unsafe one's, and it is what the
HJ safety critic reads in place of ℓ(o). With ρ oriented as a severity (:mod:`.rubrics`), ``a > 0``.

Choices: ``class_weight="balanced"`` (as the paper says: violation rates are far from ½, and without it the
ℓ̂ = 0 boundary drifts toward the majority class); scikit-learn's default L2 strength ``C = 1`` so ``a``
stays finite when the scores separate the classes perfectly (the pixel scorer often does). Frames whose
scoring failed (NaN ρ) are left out of the fit. Because of the balancing, σ(aρ + b) is calibrated to a ½
prior, not to the empirical violation rate; the reliability diagram draws both frequencies.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...evaluation.plots import save_figure
from ...io import read_json, write_json


@dataclass(frozen=True)
class PlattCalibration:
    """The two Platt scalars: P(unsafe | ρ) = σ(a ρ + b), ℓ̂ = −(a ρ + b)."""

    a: float
    b: float

    def logit(self, rho: np.ndarray) -> np.ndarray:
        return self.a * np.asarray(rho, dtype=np.float64) + self.b

    def p_unsafe(self, rho: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logit(rho)))

    def margin(self, rho: np.ndarray) -> np.ndarray:
        """ℓ̂(o) = −(a ρ(o) + b): > 0 on frames that look safe, < 0 on frames that look unsafe."""
        return -self.logit(rho)

    @property
    def threshold(self) -> float:
        """The severity at which ℓ̂ = 0 (P(unsafe) = ½)."""
        return -self.b / self.a if self.a else float("inf")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PlattCalibration:
        d = json.loads(text)
        return cls(float(d["a"]), float(d["b"]))

    def save(self, path: str | os.PathLike[str]) -> Path:
        return write_json(path, asdict(self))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PlattCalibration:
        d = read_json(path)
        return cls(float(d["a"]), float(d["b"]))


def broadcast_episode_bits(frame_episode: np.ndarray, episode_unsafe: np.ndarray) -> np.ndarray:
    """The per-frame weak label: each frame gets its episode's safety bit (``frame_episode`` indexes episodes)."""
    return np.asarray(episode_unsafe)[np.asarray(frame_episode)].astype(bool)


def _finite(rho: np.ndarray, unsafe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rho, unsafe = np.asarray(rho, dtype=np.float64).ravel(), np.asarray(unsafe).astype(bool).ravel()
    if rho.shape != unsafe.shape:
        raise ValueError(f"rho has {rho.shape[0]} frames, the labels {unsafe.shape[0]}")
    keep = np.isfinite(rho)
    return rho[keep], unsafe[keep]


def fit_platt(rho: np.ndarray, unsafe: np.ndarray, C: float = 1.0) -> PlattCalibration:
    """Class-balanced logistic regression of the broadcast episode bit on ρ (NaN ρ = failed frames, skipped)."""
    from sklearn.linear_model import LogisticRegression

    x, y = _finite(rho, unsafe)
    if y.all() or not y.any():
        raise ValueError(f"Platt calibration needs safe and unsafe frames; got {int(y.sum())} unsafe of {y.size} "
                         "scored frames (collect more episodes or check the episode labels)")
    model = LogisticRegression(C=C, class_weight="balanced").fit(x[:, None], y)
    return PlattCalibration(float(model.coef_[0, 0]), float(model.intercept_[0]))


def balanced_weights(unsafe: np.ndarray) -> np.ndarray:
    """scikit-learn's "balanced" sample weights n / (2 n_class): both classes weigh n/2 in total."""
    y = np.asarray(unsafe).astype(bool)
    n, n1 = y.size, int(y.sum())
    return np.where(y, n / (2 * max(n1, 1)), n / (2 * max(n - n1, 1)))


def reliability(cal: PlattCalibration, rho: np.ndarray, unsafe: np.ndarray, bins: int = 10) -> dict[str, Any]:
    """Per-bin mean predicted P(unsafe), observed unsafe rate (raw and class-balanced), counts; and the ECEs."""
    x, y = _finite(rho, unsafe)
    p = cal.p_unsafe(x)
    w = balanced_weights(y)
    idx = np.minimum((p * bins).astype(int), bins - 1)
    rows = []
    for k in range(bins):
        sel = idx == k
        if sel.any():
            rows.append({"bin": k, "n": int(sel.sum()), "p_mean": float(p[sel].mean()),
                         "observed": float(y[sel].mean()),
                         "observed_balanced": float((w[sel] * y[sel]).sum() / w[sel].sum())})
    n = max(len(x), 1)
    ece = sum(r["n"] / n * abs(r["p_mean"] - r["observed"]) for r in rows)
    ece_bal = sum(r["n"] / n * abs(r["p_mean"] - r["observed_balanced"]) for r in rows)
    return {"bins": rows, "ece": float(ece), "ece_balanced": float(ece_bal)}


def calibration_metrics(cal: PlattCalibration, rho: np.ndarray, unsafe: np.ndarray) -> dict[str, float]:
    """Namespaced metrics of a fit: the scalars, the ℓ̂ = 0 threshold, balanced accuracy, AUROC, ECEs."""
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    x, y = _finite(rho, unsafe)
    rel = reliability(cal, x, y)
    out = {"calib/a": cal.a, "calib/b": cal.b, "calib/threshold_rho": cal.threshold, "calib/frames": float(x.size),
           "calib/unsafe_frames": float(y.sum()), "calib/ece": rel["ece"], "calib/ece_balanced": rel["ece_balanced"]}
    if 0 < y.sum() < y.size:
        out["calib/balanced_accuracy"] = float(balanced_accuracy_score(y, cal.margin(x) < 0))
        out["calib/auroc"] = float(roc_auc_score(y, -cal.margin(x)))
    return out


def plot_reliability(cal: PlattCalibration, rho: np.ndarray, unsafe: np.ndarray, path: str | os.PathLike[str],
                     title: str = "Platt calibration", bins: int = 10) -> Path:
    """Reliability diagram (left) and ρ histograms per episode label with the ℓ̂ = 0 threshold (right)."""
    from matplotlib.figure import Figure  # the OO API: no pyplot global state

    x, y = _finite(rho, unsafe)
    rel = reliability(cal, x, y, bins)
    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot(1, 2, 1)
    ax.plot([0, 1], [0, 1], color="#9e9e9e", lw=1, ls="--", label="ideal")
    pm = [r["p_mean"] for r in rel["bins"]]
    ax.plot(pm, [r["observed_balanced"] for r in rel["bins"]], marker="o", color="#1565c0",
            label=f"class-balanced (ECE {rel['ece_balanced']:.3f})")
    ax.plot(pm, [r["observed"] for r in rel["bins"]], marker=".", color="#ef6c00", alpha=0.8,
            label=f"raw frequency (ECE {rel['ece']:.3f})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted P(unsafe | ρ)")
    ax.set_ylabel("observed unsafe-episode rate")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"a = {cal.a:.3f}, b = {cal.b:.3f}", fontsize=9)
    ax2 = fig.add_subplot(1, 2, 2)
    edges = np.linspace(min(x.min(initial=0.0), 0.0), max(x.max(initial=1.0), 1e-6), 30)
    ax2.hist(x[~y], bins=edges, alpha=0.6, color="#2e7d32", label="safe episodes", density=True)
    ax2.hist(x[y], bins=edges, alpha=0.6, color="#c62828", label="unsafe episodes", density=True)
    if np.isfinite(cal.threshold):
        ax2.axvline(cal.threshold, color="k", lw=1, label="ℓ̂ = 0")
    ax2.set_xlabel("raw severity ρ")
    ax2.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    from ...evaluation.plots import curve_rows, write_plot_data

    write_plot_data(path, [*curve_rows("reliability", "ideal", [(0.0, 0.0), (1.0, 1.0)]),
                           *curve_rows("reliability", "class-balanced", list(zip(pm, [r["observed_balanced"] for r in rel["bins"]], strict=True))),
                           *curve_rows("reliability", "raw frequency", list(zip(pm, [r["observed"] for r in rel["bins"]], strict=True)))])
    return save_figure(fig, path, dpi=110)
