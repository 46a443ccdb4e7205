"""Experiment (docs/shield_ppo.md, "Stop 40"): how well can *any* function of one Dubins-VL frame rank the two full
turns on the gate check's near-obstacle frames?

The check's turn question (:func:`~embodied_safety.shield.rl.gate_check.frame_turn_agreement`) asks an image critic
to rank ``Q(o, +U)`` against ``Q(o, −U)`` as the simulator's HJ action values do, on the start policy's frames with
``0 ≤ ℓ* ≤ 0.35`` and a gap over 0.05. A frame is 84×84 flat pixels: the car is a disc of 2.5 px with a heading tick
about 2 px wide and 4 px long, so many states draw the same frame. This estimates the Bayes ceiling of the question:
for each checked frame it draws ``--samples`` states around the true one (position ±``--jitter-px`` pixels, heading
±``--jitter-heading`` rad; the goal and obstacle fixed), keeps those that render to the *identical* frame (the
env's own rasteriser), and takes the majority of their HJ turn ranks (the true state itself not among them; a tie scores 0.5; frames no draw
reproduced are ``undetermined`` and left out) as the prediction of the best image classifier
under a locally flat prior. ``bayes_agreement`` is that prediction against the true state's rank (what the check
would score); ``posterior_purity`` is the mean of ``max(p, 1 − p)``. ``at_edge`` is the share of kept draws in the
outer 10 % of the heading range (if it is not small, widen the range). ``heading_error_<e>``: how often the rank
at the true state survives a heading error of ±e rad (how finely a critic must read the tick). Run from a clone with ``data/shield/rollouts``.

    python experiments/pixel_ceiling.py     # -> experiments/results/pixel_ceiling.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=1024)
    ap.add_argument("--jitter-px", type=float, default=0.4)
    ap.add_argument("--jitter-heading", type=float, default=0.15)
    ap.add_argument("--min-gap", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/pixel_ceiling.json"))
    args = ap.parse_args(argv)

    from embodied_safety.envs.control.dubins import SIZE, U_MAX
    from embodied_safety.envs.control.dubins import render_states as render
    from embodied_safety.io import write_json
    from embodied_safety.shield.policy.rollouts import RolloutSet
    from embodied_safety.shield.rl.viability import action_values, frame_states, state_margins
    from flows._shield import ROLLOUTS

    t0 = time.perf_counter()
    rollouts = RolloutSet.load(ROLLOUTS / "dubins" / "rollouts.npz")
    states = frame_states(rollouts)
    frames = np.asarray(rollouts.frames)
    turns = np.array([U_MAX, -U_MAX])
    gap = np.diff(action_values(states, turns)[:, ::-1], axis=1)[:, 0]  # Q*(s, +U) − Q*(s, −U)
    ell = state_margins(states)
    checked = np.flatnonzero((np.abs(gap) > args.min_gap) & (ell >= 0.0) & (ell <= 0.35))
    rng = np.random.default_rng(args.seed)
    pix = 2.0 / SIZE
    k = args.samples
    bayes, purity, kept, edge = [], [], [], []
    for i in checked:
        draws = np.repeat(states[i:i + 1], k, axis=0)
        draws[:, :2] += rng.uniform(-args.jitter_px, args.jitter_px, (k, 2)) * pix
        dth = rng.uniform(-args.jitter_heading, args.jitter_heading, k)
        draws[:, 2] += dth
        same = np.all(render(draws) == frames[i], axis=(1, 2, 3))
        kept.append(int(same.sum()))
        if not same.any():
            continue  # no draw rendered this frame: counted in `undetermined`
        ranks = np.sign(np.diff(action_values(draws[same], turns)[:, ::-1], axis=1)[:, 0])
        p = float(np.mean(ranks > 0))
        bayes.append(0.5 if p == 0.5 else float((p > 0.5) == (gap[i] > 0)))
        purity.append(max(p, 1.0 - p))
        edge.append(float(np.mean(np.abs(dth[same]) > 0.9 * args.jitter_heading)))
    sens = {}
    for e in (0.05, 0.1, 0.2, 0.3):
        agree = [np.sign(np.diff(action_values(states[checked] + shift, turns)[:, ::-1], axis=1)[:, 0])
                 == np.sign(gap[checked]) for shift in (np.eye(states.shape[1])[2] * e, -np.eye(states.shape[1])[2] * e)]
        sens[f"heading_error_{e}"] = float(np.mean(agree))
    out = {"checked_frames": float(len(checked)), "samples": float(k), "jitter_px": args.jitter_px,
           "jitter_heading": args.jitter_heading, "bayes_agreement": float(np.mean(bayes)),
           "posterior_purity": float(np.mean(purity)), "kept_median": float(np.median(kept)),
           "undetermined": float(np.mean(np.asarray(kept) == 0)),
           "at_edge": float(np.mean(edge)), **sens, "seconds": time.perf_counter() - t0}
    print(json.dumps(out, indent=1))
    write_json(args.out, out)
    return out


if __name__ == "__main__":
    main()
