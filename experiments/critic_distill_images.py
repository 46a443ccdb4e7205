"""Experiment (docs/shield_ppo.md, "Stop 39"): can the image critic represent which way to turn, given exact labels?

The warm image critics rank the two full turns at chance on the start policy's own near-obstacle frames
(:func:`~embodied_safety.shield.rl.gate_check.frame_turn_agreement`), with either margin and either target. This
separates the two possible causes. It regresses the stage's Dubins-VL critic (architecture, encoder initialised from
the BC policy, the CPU critic config) straight onto the simulator's HJ action values
(:func:`~embodied_safety.shield.rl.viability.action_values`) of the BC rollouts' frames for the critic's 9-point
action grid (no TD), on 80 % of the episodes, and checks the ranking on the other 20 %. If a critic with exact
labels cannot rank the turns on held-out frames, the images (or the encoder) are the limit; if it can, the TD
warm-up's data and targets are. Needs the ShieldVLA part-1 outputs (``dvc repro rollouts``): run from a clone that has
them. ``--frozen``: the BC policy's encoder frozen (features computed once), else fine-tuned as the stage does.
Stop 40 (the same file): ``--extra N`` jittered rendered states, ``--episodes N`` new BC rollouts, ``--centred``
car-centred frames (``dubins_frames.py``); the held-out frames are always the stage's own.

    python experiments/critic_distill_images.py --steps 3000 [--frozen]   # -> experiments/results/critic_distill_images.json
    python experiments/critic_distill_images.py --steps 500 1500 3000 --episodes 768
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
    ap.add_argument("--steps", type=int, nargs="+", default=[3000], help="regression steps (checkpoints)")
    ap.add_argument("--frozen", action="store_true")
    ap.add_argument("--d4", action="store_true", help="train on the 8 symmetric images of each frame (frozen only): "
                    "Q(g·o, g·a) = Q(o, a), a mirror negating the turn rate (bc.dihedral's map)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=0, help="train also on this many new BC rollouts (new scenes; "
                    "dubins_frames.more_episodes), labelled by the simulator")
    ap.add_argument("--centred", action="store_true", help="car-centred frames (dubins_frames.centred)")
    ap.add_argument("--extra", type=int, default=0, help="extra training states: training frames' states jittered "
                    "(position σ 0.05, heading σ 0.3 rad; half of them from frames with ℓ ≤ 0.5), rendered and labelled "
                    "by the simulator like the rest")
    ap.add_argument("--out", type=Path, default=Path("experiments/results/critic_distill_images.json"))
    args = ap.parse_args(argv)

    import torch
    from dubins_frames import load, split_checks, with_jittered

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.io import write_json
    from embodied_safety.shield.policy.bc import dihedral_map
    from embodied_safety.shield.rl.critic import CriticTrainer, SafetyCritic
    from embodied_safety.shield.rl.viability import action_values, unrecoverable

    data = load(args.seed, frozen=args.frozen)
    policy, rollouts, states, frames, words, ccfg = (data.policy, data.rollouts, data.states, data.frames,
                                                      list(data.words), data.critic_config)
    grid = np.linspace(-U_MAX, U_MAX, ccfg.candidates)
    t0 = time.perf_counter()
    labels = torch.as_tensor(action_values(states, grid), dtype=torch.float32)  # [N, 9]
    label_s = time.perf_counter() - t0
    test = data.test
    frames, words, train_idx, all_states = with_jittered(states, frames, words, np.flatnonzero(~test), args.extra,
                                                         args.seed)
    if args.extra:
        labels = torch.cat([labels, torch.as_tensor(action_values(all_states[len(states):], grid), dtype=torch.float32)])
        label_s = time.perf_counter() - t0
    if args.episodes:
        from dubins_frames import more_episodes

        new_states, new_frames, new_words = more_episodes(policy, args.episodes)
        labels = torch.cat([labels, torch.as_tensor(action_values(new_states, grid), dtype=torch.float32)])
        train_idx = np.concatenate([train_idx, len(frames) + np.arange(len(new_states))])
        frames = torch.cat([frames, new_frames])
        words = [*words, *new_words]
        all_states = np.concatenate([all_states, new_states])
        label_s = time.perf_counter() - t0
    if args.centred:
        from dubins_frames import centred

        frames = torch.cat([centred(frames[i:i + 4096], all_states[i:i + 4096]) for i in range(0, len(frames), 4096)])
    torch.manual_seed(args.seed)
    critic = SafetyCritic.from_policy(policy, ccfg)
    trainer = CriticTrainer(critic)
    feats = None
    maps = range(8) if args.d4 else range(1)
    if args.frozen:
        with torch.no_grad():
            feats = torch.stack([torch.cat([critic.embed(dihedral_map(frames[i:i + 1024], k), words[i:i + 1024])
                                            for i in range(0, len(frames), 1024)]) for k in maps])  # [G, N, F]
    gen = np.random.default_rng(args.seed + 1)
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    lost = unrecoverable(states)
    done, t0 = 0, time.perf_counter()
    for stop in sorted(args.steps):
        critic.train()
        for _ in range(stop - done):
            i = gen.choice(train_idx, ccfg.batch_size)
            j = gen.integers(0, len(grid), ccfg.batch_size)
            g = gen.integers(0, len(maps), ccfg.batch_size)
            f = feats[g, i] if feats is not None else critic.embed(frames[i], [words[k] for k in i])
            turn = np.where(g >= 4, -grid[j], grid[j])  # a mirror turns the other way
            loss, _ = trainer.fit(f, torch.as_tensor(turn[:, None], dtype=torch.float32), labels[i, j])
            trainer.step(loss, target=False)
        done = stop
        critic.eval()
        row: dict[str, Any] = {"frozen": args.frozen, "d4": args.d4, "extra": args.extra, "episodes": args.episodes, "centred": args.centred, "steps": stop, "seed": args.seed, "label_s": label_s,
                               "train_s": time.perf_counter() - t0, "loss": float(loss.detach())}
        row |= split_checks(critic, policy, frames, words, states, rollouts, test, lost)
        rows.append(row)
        write_json(args.out, rows)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
