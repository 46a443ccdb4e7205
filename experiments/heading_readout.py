"""Experiment (docs/shield_ppo.md, "Stop 40"): how precisely does the critic's encoder read the car's heading?

``pixel_ceiling.py`` shows that the HJ ranking of the two full turns on the gate check's near-obstacle frames flips
under small heading errors (it survives ±0.05 rad in 80 % of the frames, ±0.1 rad in 65 %), while the frame itself
pins the heading down (the Bayes ceiling of the ranking is about 0.94). This measures what the image critic's
architecture makes of it: the critic's encoder (the BC policy's, as ``SafetyCritic.from_policy`` copies it) with a
new MLP head regressed onto the true heading ``(cos θ, sin θ)`` of the BC rollout frames (80 % of the episodes),
either on frozen BC features or fine-tuned as the stage does, and the angular error on the held-out 20 %.

    python experiments/heading_readout.py --steps 3000 [--frozen]   # -> experiments/results/heading_readout.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[3000])
    ap.add_argument("--frozen", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--centred", action="store_true", help="car-centred frames (dubins_frames.centred)")
    ap.add_argument("--extra", type=int, default=0, help="extra training frames: training states jittered "
                    "(dubins_frames.with_jittered), rendered")
    ap.add_argument("--out", type=Path, default=Path("experiments/results/heading_readout.json"))
    args = ap.parse_args(argv)

    import torch
    from dubins_frames import load, with_jittered
    from torch import nn

    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.critic import SafetyCritic
    from embodied_safety.shield.rl.state_aux import pose_targets
    from embodied_safety.shield.rl.viability import state_margins

    torch.manual_seed(args.seed)
    data = load(args.seed, frozen=args.frozen)
    states, frames, words, ccfg, test = data.states, data.frames, data.words, data.critic_config, data.test
    critic = SafetyCritic.from_policy(data.policy, ccfg)
    near = (state_margins(states) >= 0.0) & (state_margins(states) <= 0.35)
    frames, words, train_idx, all_states = with_jittered(states, frames, words, np.flatnonzero(~test), args.extra,
                                                         args.seed)
    target = pose_targets(all_states)[:, :2]  # (cos θ, sin θ)

    def embed(idx: np.ndarray) -> Any:
        return critic.embed(frames[idx], [words[k] for k in idx])

    if args.centred:
        from dubins_frames import centred

        frames = torch.cat([centred(frames[i:i + 4096], all_states[i:i + 4096]) for i in range(0, len(frames), 4096)])
    with torch.no_grad():
        width = embed(train_idx[:2]).shape[1]
        feats = torch.cat([embed(np.arange(i, min(i + 1024, len(frames)))) for i in range(0, len(frames), 1024)]) \
            if args.frozen else None
    head = nn.Sequential(nn.Linear(width, 256), nn.ReLU(), nn.Linear(256, 2))
    params = list(head.parameters()) + ([] if args.frozen else [p for p in critic.encoder.parameters() if p.requires_grad])
    opt = torch.optim.Adam(params, lr=ccfg.lr)
    gen = np.random.default_rng(args.seed + 1)
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    done, t0 = 0, time.perf_counter()
    for stop in sorted(args.steps):
        for _ in range(stop - done):
            i = gen.choice(train_idx, ccfg.batch_size)
            f = feats[i] if feats is not None else embed(i)
            loss = ((head(f) - target[i]) ** 2).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        done = stop
        with torch.no_grad():
            n = len(states)  # the rollout frames (the extra ones only train)
            pred = torch.cat([head(feats[i:min(i + 1024, n)] if feats is not None else embed(np.arange(i, min(i + 1024, n))))
                              for i in range(0, n, 1024)]).numpy()
        err = np.abs(np.angle(np.exp(1j * (np.arctan2(pred[:, 1], pred[:, 0]) - states[:, 2]))))
        row: dict[str, Any] = {"frozen": args.frozen, "extra": args.extra, "centred": args.centred, "steps": stop, "seed": args.seed,
                               "train_s": time.perf_counter() - t0, "loss": float(loss.detach())}
        for name, mask in (("train", ~test), ("test", test), ("test_near", test & near)):
            e = err[mask]
            row |= {f"{name}_median_rad": float(np.median(e)), f"{name}_within_0.05": float(np.mean(e <= 0.05)),
                    f"{name}_within_0.1": float(np.mean(e <= 0.1)), f"{name}_frames": float(mask.sum())}
        rows.append(row)
        write_json(args.out, rows)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
