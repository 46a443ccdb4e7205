"""Behaviour cloning of the visuomotor policy on scripted demonstrations (the BC-initialised π_θ of Alg. 1).

Loss: the negative log-likelihood of the expert action under the policy's own clipped Gaussian
(``-policy.log_prob``, per action dimension), so BC trains the mean *and* the log-std that PPO then
starts from, and bang-bang expert actions on the bounds cost a finite tail-mass term rather than an
infinite tanh-inverse. The mean-squared error of the mean (in half-range units) is logged beside it
because it is the number that is comparable across policies.

Augmentation: a DrQ random shift, and for a policy that declares the square's symmetry (Dubins-VL,
``PolicyConfig.symmetry == "d4"``) a random rotation / mirror of each frame with its turn rate mapped to
match (:func:`dihedral`): 8x the scenes with exact labels.

The held-out split is by episode (frames of one episode are highly correlated, so a frame split
would leak). Training is deterministic for a given seed and starting policy (shuffling and
augmentation draw from seeded generators; CPU kernels are deterministic). The checkpoint restored at
the end is chosen by :func:`selection_key`: ``select_by="nll"`` (the old rule) keeps the epoch with the
lowest validation loss (the last one without a validation split); ``select_by="sr"`` keeps the evaluated
epoch with the highest closed-loop SR of ``eval_fn`` (ties: lower violation rate, then lower validation
loss); ``select_by="sr_1se"`` keeps, among the evaluated epochs within one standard error of the best SR, the one
with the lowest violation rate (:func:`pick_checkpoint`). Both fall back to the NLL rule when no epoch was evaluated.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .demos import DemoSet
from .visuomotor import GaussianPolicy, clipped_gaussian_log_prob

EvalFn = Callable[[GaussianPolicy], dict[str, float]]
Log = Callable[[dict[str, float], int], None]
SELECT_BY = ("nll", "sr", "sr_1se")
SYMMETRIES = ("none", "d4")


def selection_key(row: dict[str, float], select_by: str = "nll") -> tuple[float, ...] | None:
    """Sort key of an epoch row for checkpoint selection (lower is better), ``None`` if not a candidate.

    ``"nll"``: the held-out NLL. ``"sr"`` and ``"sr_1se"``: (-SR, violation rate, held-out NLL) on rows that carry
    the closed-loop evaluation (``sr``), so a tie in SR goes to the safer checkpoint, then the better fit
    (``"sr_1se"`` widens the tie to one standard error: :func:`pick_checkpoint`).
    """
    if select_by not in SELECT_BY:
        raise ValueError(f"select_by must be one of {SELECT_BY}, not {select_by!r}")
    val = float(row.get("val_loss", np.nan))
    val = val if np.isfinite(val) else -float(row["epoch"])  # no split: the latest wins
    if select_by == "nll":
        return (val,)
    if "sr" not in row:
        return None
    return (-float(row["sr"]), float(row.get("violation_rate", 0.0)), val)


def sr_standard_error(row: dict[str, float]) -> float:
    """The binomial standard error of a row's closed-loop SR over its ``episodes`` (0 when it has none)."""
    p, n = float(row["sr"]), float(row.get("episodes", 0.0))
    return math.sqrt(p * (1.0 - p) / n) if n > 0 else 0.0


def pick_checkpoint(rows: list[dict[str, float]], select_by: str = "nll") -> int | None:
    """Index of the row to restore among ``rows`` (``None`` if none is a candidate).

    ``"nll"`` / ``"sr"``: the lowest :func:`selection_key` (the first of equals). ``"sr_1se"``, the one-standard-error
    rule (Breiman et al. 1984) for a safety start: every evaluated row whose SR is within one binomial standard
    error of the best SR is as good on success as the evaluation can tell, and among those the lowest violation
    rate wins (then the higher SR, then the lower held-out NLL). Plain ``"sr"`` lets one episode in a hundred of
    success outweigh any number of violations.
    """
    keys = [selection_key(r, select_by) for r in rows]
    cands = [i for i, k in enumerate(keys) if k is not None]
    if not cands:
        return None
    if select_by != "sr_1se":
        return min(cands, key=lambda i: keys[i])  # type: ignore[arg-type, return-value]
    best = min(cands, key=lambda i: keys[i])  # type: ignore[arg-type, return-value]
    floor = float(rows[best]["sr"]) - sr_standard_error(rows[best])
    pool = [i for i in cands if float(rows[i]["sr"]) >= floor - 1e-12]
    return min(pool, key=lambda i: (float(rows[i].get("violation_rate", 0.0)), keys[i]))  # type: ignore[operator]


@dataclass
class BCHistory:
    """Per-epoch rows ``{"epoch", "loss", "mse", "val_loss", "val_mse", "seconds", <eval metrics>}``."""

    rows: list[dict[str, float]] = field(default_factory=list)
    best_epoch: int = -1
    select_by: str = "nll"
    rounds: list[dict[str, float]] = field(default_factory=list)  # DAgger: one row per round
    train_episodes: int = 0
    val_episodes: int = 0
    train_steps: int = 0
    seconds: float = 0.0

    def final(self) -> dict[str, float]:
        """The restored (best) epoch's row plus run totals."""
        last = self.rows[-1] if self.rows else {}
        row = next((r for r in self.rows if int(r["epoch"]) == self.best_epoch), last)
        return {**row, "best_epoch": float(self.best_epoch), "select_by_sr": float(self.select_by != "nll"),
                "train_episodes": float(self.train_episodes),
                "val_episodes": float(self.val_episodes), "train_steps": float(self.train_steps),
                "total_seconds": self.seconds}

    def plot(self, path: str | os.PathLike[str], title: str = "behaviour cloning") -> Path:
        """Train / val NLL per epoch; a second panel with the evaluation metrics when there are any."""
        from matplotlib.figure import Figure

        from ...evaluation.plots import save_figure

        metrics = [k for k in ("sr", "violation_rate", "reach_rate") if any(k in r for r in self.rows)]
        panels = 1 + bool(metrics) + bool(self.rounds)
        fig = Figure(figsize=(4.5 * panels, 3.4))
        ax = fig.add_subplot(1, panels, 1)
        epochs = [r["epoch"] for r in self.rows]
        ax.plot(epochs, [r["loss"] for r in self.rows], marker=".", label="train")
        val = [(r["epoch"], r["val_loss"]) for r in self.rows if np.isfinite(r.get("val_loss", np.nan))]
        if val:
            ax.plot(*zip(*val, strict=True), marker=".", label="held-out")
        if self.best_epoch >= 0:
            ax.axvline(self.best_epoch, color="0.6", ls=":", lw=1, label="restored")
        starts = [r["start_epoch"] for r in self.rounds[1:]]
        for x in starts:
            ax.axvline(x, color="C3", ls="--", lw=0.7)
        ax.set_xlabel("epoch")
        ax.set_ylabel("NLL per action dim")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        if metrics:
            ax2 = fig.add_subplot(1, panels, 2)
            for k in metrics:
                pts = [(r["epoch"], r[k]) for r in self.rows if k in r]
                ax2.plot(*zip(*pts, strict=True), marker="o", label=k)
            for x in starts:
                ax2.axvline(x, color="C3", ls="--", lw=0.7)
            ax2.set_xlabel("epoch" + (" (dashed: DAgger rounds)" if starts else ""))
            ax2.set_ylim(-0.02, 1.02)
            ax2.grid(alpha=0.3)
            ax2.legend(fontsize=8)
        round_keys = ("sr", "violation_rate", "rollout_sr", "rollout_violation_rate")
        if self.rounds:
            ax3 = fig.add_subplot(1, panels, panels)
            rx = [r["round"] for r in self.rounds]
            for k in round_keys:  # rollout_*: the episodes collected in rounds >= 1
                pts = [(r["round"], r[k]) for r in self.rounds if k in r]
                if pts:
                    ax3.plot(*zip(*pts, strict=True), marker="o", ls="-" if k in ("sr", "violation_rate") else "--",
                             label=k)
            ax3.set_ylim(-0.02, 1.02)
            ax3.set_xlabel("DAgger round (0 = BC on the demos)")
            ax3.grid(alpha=0.3)
            ax3.legend(fontsize=7, loc="upper left")
            ax4 = ax3.twinx()
            ax4.plot(rx, [r["steps"] for r in self.rounds], color="0.4", ls=":", marker="s", label="steps")
            ax4.set_ylabel("aggregated steps", fontsize=8)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        from ...evaluation.plots import curve_rows, write_plot_data

        write_plot_data(path, [*curve_rows("NLL per action dim", "train", [(r["epoch"], r["loss"]) for r in self.rows]),
                               *curve_rows("NLL per action dim", "held-out", val),
                               *(row for k in metrics for row in curve_rows(
                                   "evaluation", k, [(r["epoch"], r[k]) for r in self.rows if k in r])),
                               *(row for k in (*round_keys, "steps") for row in curve_rows(
                                   "dagger rounds", k, [(r["round"], r[k]) for r in self.rounds if k in r]))])
        return save_figure(fig, path)


def split_episodes(n_episodes: int, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, val) episode indices; at least one of each when there are two or more episodes."""
    order = np.random.default_rng([seed, 2]).permutation(n_episodes)
    n_val = 0
    if n_episodes >= 2 and val_fraction > 0:
        n_val = min(n_episodes - 1, max(1, round(val_fraction * n_episodes)))
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def random_shift(images: Tensor, pad: int, generator: torch.Generator) -> Tensor:
    """DrQ-style augmentation: shift each uint8 frame by up to ``pad`` pixels, repeating edge pixels
    (the same as replicate-padding then cropping, done as one integer gather)."""
    if pad <= 0:
        return images
    b, h, w, _ = images.shape
    dy = torch.randint(-pad, pad + 1, (b, 1), generator=generator)
    dx = torch.randint(-pad, pad + 1, (b, 1), generator=generator)
    rows = (torch.arange(h)[None] + dy).clamp_(0, h - 1)  # [B, H]
    cols = (torch.arange(w)[None] + dx).clamp_(0, w - 1)  # [B, W]
    return images[torch.arange(b)[:, None, None], rows[:, :, None], cols[:, None, :]]


def dihedral(images: Tensor, actions: Tensor, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """Each uint8 frame [B, H, H, 3] mapped by a random element of the square's symmetry group D4 (4 rotations,
    each with or without a mirror), its action mapped the same way: unchanged by a rotation, negated by a mirror.

    Exact for a top-down view of a square workspace centred in the frame whose scene distribution, dynamics and
    expert are invariant under D4 and whose action is a planar turn rate (a pseudo-scalar), i.e. Dubins-VL: the
    rotated frame is the frame of the rotated state (pixel centres map onto pixel centres) and the expert turns
    the same way there (the opposite way in the mirror image). Unlike a shift it keeps the walls at the frame
    border, and it multiplies the scenes the policy sees by 8.
    """
    if images.shape[1] != images.shape[2]:
        raise ValueError(f"D4 needs square frames, got {tuple(images.shape)}")
    g = torch.randint(0, 8, (images.shape[0],), generator=generator)
    out, acts = torch.empty_like(images), actions.clone()
    for k in range(8):
        sel = torch.nonzero(g == k).squeeze(1)
        if len(sel) == 0:
            continue
        out[sel] = dihedral_map(images[sel], k)
        if k >= 4:  # a mirror: the car turns the other way
            acts[sel] = -acts[sel]
    return out, acts


def dihedral_map(images: Tensor, k: int) -> Tensor:
    """Frames [B, H, H, C] mapped by element ``k`` of D4: ``k % 4`` quarter turns, after mirroring the columns
    (x -> -x) when ``k ≥ 4`` (then a turn rate changes sign)."""
    return torch.rot90(images.flip(2) if k >= 4 else images, k % 4, dims=(1, 2))


def policy_symmetry(policy: GaussianPolicy) -> str:
    """The symmetry a policy declares (``config.symmetry``; ``"none"`` when it declares none)."""
    return str(getattr(getattr(policy, "config", None), "symmetry", "none"))


def _batches(idx: np.ndarray, batch_size: int) -> list[np.ndarray]:
    return [idx[i:i + batch_size] for i in range(0, len(idx), batch_size)]


def _loss(policy: GaussianPolicy, demos: DemoSet, idx: np.ndarray, images: Tensor,
          target: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """(NLL per action dim, MSE of the mean in half-range units) over the batch, from one forward pass
    (the NLL is ``-policy.log_prob``: every :class:`GaussianPolicy` uses the clipped Gaussian). ``target``:
    the (augmented) expert actions, ``demos.actions[idx]`` by default."""
    if target is None:
        target = torch.as_tensor(demos.actions[idx])
    target = target.to(policy.device)
    mean, log_std = policy(images, demos.step_instructions(idx))
    low = torch.as_tensor(policy.action_low, device=policy.device)
    high = torch.as_tensor(policy.action_high, device=policy.device)
    nll = -clipped_gaussian_log_prob(mean, log_std, target, low, high).mean() / target.shape[-1]
    mse = ((2 * (mean - target) / (high - low)) ** 2).mean()
    return nll, mse


def _evaluate_loss(policy: GaussianPolicy, demos: DemoSet, idx: np.ndarray,
                   batch_size: int) -> tuple[float, float]:
    if len(idx) == 0:
        return float("nan"), float("nan")
    tot_nll = tot_mse = 0.0
    with torch.no_grad():
        for b in _batches(idx, batch_size):
            nll, mse = _loss(policy, demos, b, torch.from_numpy(demos.images[b]).to(policy.device))
            tot_nll += float(nll) * len(b)
            tot_mse += float(mse) * len(b)
    return tot_nll / len(idx), tot_mse / len(idx)


def keep_candidate(cands: list[tuple[dict[str, float], dict[str, Any]]], row: dict[str, float], policy: torch.nn.Module,
                   select_by: str) -> list[tuple[dict[str, float], dict[str, Any]]]:
    """``cands`` with ``row`` and a copy of ``policy``'s weights added if the row is a candidate. Under ``"nll"`` every
    epoch is one, so only the best so far is kept (one copy in memory); the SR rules keep every evaluated row."""
    key = selection_key(row, select_by)
    if key is None or (select_by == "nll" and cands and not key < selection_key(cands[0][0], select_by)):  # type: ignore[operator]
        return cands
    state = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    return [(row, state)] if select_by == "nll" else [*cands, (row, state)]


def train_bc(policy: GaussianPolicy, demos: DemoSet, epochs: int = 20, batch_size: int = 64, lr: float = 3e-4,
             seed: int = 0, eval_fn: EvalFn | None = None, val_fraction: float = 0.1, eval_every: int = 1,
             shift: int = 4, weight_decay: float = 0.0, keep_best: bool = True, log: Log | None = None,
             plot_path: str | os.PathLike[str] | None = None, select_by: str = "nll",
             symmetry: str | None = None) -> BCHistory:
    """Fit ``policy`` (in place) to ``demos``; returns the per-epoch history.

    ``eval_fn(policy)`` (e.g. :func:`.rollouts.eval_fn`) runs after every ``eval_every`` epochs and
    after the last; its metrics join the epoch row. ``shift`` > 0 adds DrQ random-shift augmentation
    of that many pixels. ``symmetry="d4"`` maps each training frame and its action by a random element of
    the square's symmetry group (:func:`dihedral`); ``None`` takes the policy's own declaration
    (:func:`policy_symmetry`: ``PolicyConfig.symmetry``, ``"d4"`` for Dubins-VL). ``keep_best`` keeps an
    in-memory copy of the best state (lowest held-out NLL) or of every evaluated one (``select_by="sr"`` /
    ``"sr_1se"``) and restores the one :func:`pick_checkpoint` chooses; turn it off for a backbone too big to copy.
    ``log(metrics, epoch)`` receives each row (MLflow-style).
    """
    t0 = time.time()
    train_eps, val_eps = split_episodes(demos.n_episodes, val_fraction, seed)
    train_idx = np.flatnonzero(np.isin(demos.episode, train_eps))
    val_idx = np.flatnonzero(np.isin(demos.episode, val_eps))
    if len(train_idx) == 0:
        raise ValueError("no training steps")
    rng = np.random.default_rng([seed, 3])
    gen = torch.Generator().manual_seed(seed)
    symmetry = policy_symmetry(policy) if symmetry is None else symmetry
    if symmetry not in SYMMETRIES:
        raise ValueError(f"symmetry must be one of {SYMMETRIES}, not {symmetry!r}")
    if symmetry == "d4" and not np.allclose(policy.action_low, -policy.action_high):
        raise ValueError("symmetry d4 negates actions: the action bounds must be symmetric")
    sym_gen = torch.Generator().manual_seed(seed + 7919)  # its own stream: the shifts do not change with it
    # foreach: one multi-tensor update; on CPU torch defaults to a Python loop over the tensors. Two Dubins-VL BC epochs
    # on 2 cores: 7.6 s -> 6.9 s, the same weights to the last bit
    opt = torch.optim.Adam(list(policy.parameters()), lr=lr, weight_decay=weight_decay, foreach=True)
    if select_by != "nll" and eval_fn is None:
        select_by = "nll"  # nothing to rank by SR
    selection_key({"epoch": 0.0}, select_by)  # validates the name
    hist = BCHistory(train_episodes=len(train_eps), val_episodes=len(val_eps), train_steps=len(train_idx),
                     select_by=select_by)
    cands: list[tuple[dict[str, float], dict[str, Any]]] = []  # (row, weights) of the checkpoints to choose from
    for epoch in range(1, epochs + 1):
        te = time.time()
        policy.train()
        tot_nll = tot_mse = 0.0
        for b in _batches(rng.permutation(train_idx), batch_size):
            images, target = torch.from_numpy(demos.images[b]), torch.as_tensor(demos.actions[b])
            if symmetry == "d4":
                images, target = dihedral(images, target, sym_gen)
            images = random_shift(images, shift, gen).to(policy.device)
            nll, mse = _loss(policy, demos, b, images, target)
            opt.zero_grad(set_to_none=True)
            nll.backward()
            opt.step()
            tot_nll += float(nll.detach()) * len(b)
            tot_mse += float(mse.detach()) * len(b)
        policy.eval()
        val_nll, val_mse = _evaluate_loss(policy, demos, val_idx, max(batch_size, 256))
        row = {"epoch": float(epoch), "loss": tot_nll / len(train_idx), "mse": tot_mse / len(train_idx),
               "val_loss": val_nll, "val_mse": val_mse, "seconds": time.time() - te}
        if eval_fn is not None and (epoch % eval_every == 0 or epoch == epochs):
            row.update({k: float(v) for k, v in eval_fn(policy).items()})
        hist.rows.append(row)
        if log is not None:
            log({f"bc/{k}": v for k, v in row.items() if k != "epoch"}, epoch)
        if not keep_best:
            hist.best_epoch = epoch
        else:
            cands = keep_candidate(cands, row, policy, select_by)
    if cands:
        row, state = cands[pick_checkpoint([r for r, _ in cands], select_by)]  # type: ignore[index]
        policy.load_state_dict(state)
        hist.best_epoch = int(row["epoch"])
    policy.eval()
    hist.seconds = time.time() - t0
    if plot_path is not None:
        hist.plot(plot_path)
    return hist
