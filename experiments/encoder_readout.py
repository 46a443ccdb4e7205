"""Experiment (docs/shield_ppo.md, "Stop 41"): does a keypoint encoder read the car's heading where the DQN one fails?

Stop 40 found the Dubins-VL critic's encoder (the BC policy's Nature-DQN CNN: three strided convolutions, then a
fully connected layer over the *flattened* map) reads the heading to ~0.3 rad on held-out episodes while fitting its
own frames to 0.03: a fully connected layer over positions must learn the tick's orientation separately at every
place in the frame, and on a rollout the heading is a function of the place. A spatial-softmax head (Levine et al.
2016, "End-to-end training of deep visuomotor policies"; robomimic's default) replaces the flatten: each channel
becomes the expected (x, y) of its activation — a keypoint, read by the same weights wherever the car is — plus the
channel's global max (``shield/policy/keypoints.py``). This trains both encoders **from scratch** on the same frames and targets and reports the
held-out error:

* ``--target heading``: regress (cos θ, sin θ) of the frame's state; held-out median angular error;
* ``--target q``: the exact-label critic of ``critic_distill_images.py`` (the stage's critic head and config, the
  simulator's HJ action values of the 9-point grid) on the new encoder; held-out near-obstacle turn agreement
  (``gate_check.frame_turn_agreement``, the check's number). ``--aux W`` adds W × the heading/position regression.

``--extra N`` adds N jittered rendered training states (``dubins_frames.with_jittered``), which decorrelate heading from
place. Run from a clone with ``data/shield/rollouts``:

    python experiments/encoder_readout.py --arch keypoints --target heading --steps 1000 3000 --extra 30000
    # -> experiments/results/encoder_readout.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn


class FreshEncoder(nn.Module):
    """The policy encoder's interface ((frames, instructions) -> features) over a fresh image encoder and text bag."""

    def __init__(self, arch: str, config: Any) -> None:
        super().__init__()
        from embodied_safety.shield.policy.keypoints import KeypointImageEncoder
        from embodied_safety.shield.policy.visuomotor import ImageEncoder, InstructionEncoder

        self.image = (KeypointImageEncoder(config.image_size, dim=config.image_dim) if arch == "keypoints"
                      else ImageEncoder(config.image_size, config.conv_channels, config.image_dim))
        self.text = InstructionEncoder(config.text_buckets, config.text_dim)
        self.dim = config.image_dim + config.text_dim

    def forward(self, images: Tensor, instructions: list[str]) -> Tensor:
        return torch.cat([self.image(images), self.text(list(instructions))], dim=-1)


def heading_error(pred: np.ndarray, states: np.ndarray) -> np.ndarray:
    return np.abs(np.angle(np.exp(1j * (np.arctan2(pred[:, 1], pred[:, 0]) - states[:, 2]))))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=["dqn", "keypoints"], default="keypoints")
    ap.add_argument("--target", choices=["heading", "q"], default="heading")
    ap.add_argument("--aux", type=float, default=0.0, help="--target q: weight of the heading/position regression")
    ap.add_argument("--steps", type=int, nargs="+", default=[3000])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extra", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/encoder_readout.json"))
    args = ap.parse_args(argv)

    from dubins_frames import load, with_jittered

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.critic import CriticTrainer, SafetyCritic
    from embodied_safety.shield.rl.gate_check import frame_turn_agreement
    from embodied_safety.shield.rl.state_aux import pose_targets
    from embodied_safety.shield.rl.viability import action_values, state_margins

    torch.manual_seed(args.seed)
    data = load(args.seed)
    states, frames, words, ccfg, test = data.states, data.frames, list(data.words), data.critic_config, data.test
    frames, words, train_idx, all_states = with_jittered(states, frames, words, np.flatnonzero(~test), args.extra,
                                                         args.seed)
    aux_y = pose_targets(all_states)
    encoder = FreshEncoder(args.arch, data.policy.config)
    aux_head = nn.Sequential(nn.Linear(encoder.dim, 256), nn.ReLU(), nn.Linear(256, 4))
    critic = trainer = labels = grid = None
    if args.target == "q":
        grid = np.linspace(-U_MAX, U_MAX, ccfg.candidates)
        labels = torch.as_tensor(action_values(all_states, grid), dtype=torch.float32)
        critic = SafetyCritic(encoder, encoder.dim, data.policy.action_low, data.policy.action_high, ccfg)
        trainer = CriticTrainer(critic)
        opt = torch.optim.Adam(aux_head.parameters(), lr=args.lr)
    else:
        opt = torch.optim.Adam([*encoder.parameters(), *aux_head.parameters()], lr=args.lr)
    near = (state_margins(states) >= 0.0) & (state_margins(states) <= 0.35)
    gen = np.random.default_rng(args.seed + 1)
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    done, t0, loss = 0, time.perf_counter(), torch.zeros(())
    for stop in sorted(args.steps):
        encoder.train()
        for _ in range(stop - done):
            i = gen.choice(train_idx, args.batch)
            f = encoder(frames[i], [words[k] for k in i])
            aux = ((aux_head(f) - aux_y[i]) ** 2).sum(dim=1).mean()
            if critic is not None:
                j = gen.integers(0, len(grid), args.batch)
                loss, _ = trainer.fit(f, torch.as_tensor(grid[j, None], dtype=torch.float32), labels[i, j])
                if args.aux:
                    loss = loss + args.aux * aux
                opt.zero_grad()
                trainer.step(loss, target=False)  # steps the critic's optimiser (encoder + heads)
                opt.step()
            else:
                loss = aux
                opt.zero_grad()
                loss.backward()
                opt.step()
        done = stop
        encoder.eval()
        n = len(states)
        row: dict[str, Any] = {"arch": args.arch, "target": args.target, "aux": args.aux, "extra": args.extra,
                               "steps": stop, "seed": args.seed, "batch": args.batch, "lr": args.lr,
                               "train_s": time.perf_counter() - t0, "loss": float(loss.detach())}
        with torch.no_grad():
            pred = torch.cat([aux_head(encoder(frames[i:min(i + 1024, n)], words[i:min(i + 1024, n)]))
                              for i in range(0, n, 1024)]).numpy()
        err = heading_error(pred, states)
        for name, mask in (("train", ~test), ("test", test), ("test_near", test & near)):
            row |= {f"{name}_heading_median_rad": float(np.median(err[mask])),
                    f"{name}_heading_within_0.05": float(np.mean(err[mask] <= 0.05))}
        if critic is not None:
            for name, mask in (("train", ~test), ("test", test)):
                idx = np.flatnonzero(mask)
                res = frame_turn_agreement(critic, frames[idx], [words[k] for k in idx], states[idx])
                row |= {f"{name}_{k}": v for k, v in res.items()}
        rows.append(row)
        write_json(args.out, rows)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
