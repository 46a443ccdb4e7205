"""Benchmark the online safety-critic update: feature replay (encoder frozen after the warm start) against image
replay (the encoder re-run on every TD step), the same K steps, batch and critic, in one process.

    python benchmarks/safety_critic.py [--steps 32] [--batch 256]

Prints ms per TD step for both and the speed-up; the feature replay is what makes K = 64 online steps per PPO
iteration affordable on a CPU (docs/shield_ppo.md).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from embodied_safety.shield.policy.visuomotor import PolicyConfig, VisuomotorPolicy
from embodied_safety.shield.rl.critic import (
    CriticConfig,
    CriticTrainer,
    FeatureReplay,
    ReplayBuffer,
    SafetyCritic,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--transitions", type=int, default=4096)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    policy = VisuomotorPolicy(PolicyConfig(action_low=(-1.1,), action_high=(1.1,))).eval()
    n = args.transitions
    frames = rng.integers(0, 255, size=(n, 84, 84, 3), dtype=np.uint8)
    actions = rng.uniform(-1.1, 1.1, size=(n, 1)).astype(np.float32)
    margins = rng.normal(size=n).astype(np.float32)
    terminated = (rng.random(n) < 0.03).astype(np.float32)
    instr = ["drive to the green goal"] * n

    cfg = CriticConfig(batch_size=args.batch, steps_per_iter=args.steps)
    images = ReplayBuffer(n, (84, 84, 3), 1)
    images.add(frames, instr, actions, margins, np.roll(frames, -1, 0), np.roll(margins, -1), terminated)
    critic_img = SafetyCritic.from_policy(policy, cfg)
    trainer_img = CriticTrainer(critic_img)

    def mean_action(imgs: torch.Tensor, ins: list[str]) -> torch.Tensor:
        with torch.no_grad():
            return policy(imgs, ins)[0]

    critic_feat = SafetyCritic.from_policy(policy, CriticConfig(batch_size=args.batch, steps_per_iter=args.steps,
                                                                freeze_encoder=True))
    trainer_feat = CriticTrainer(critic_feat)
    with torch.no_grad():
        t0 = time.perf_counter()
        f = torch.cat([critic_feat.encoder(torch.from_numpy(frames[i:i + 1024]), instr[i:i + 1024])
                       for i in range(0, n, 1024)])
        pf = torch.cat([policy.features(torch.from_numpy(frames[i:i + 1024]), instr[i:i + 1024])
                        for i in range(0, n, 1024)])
        encode_s = time.perf_counter() - t0
    feats = FeatureReplay(n, critic_feat.feature_dim, policy.feature_dim, 1)
    feats.add(feature=f, next_feature=torch.roll(f, -1, 0), next_policy_feature=torch.roll(pf, -1, 0),
              action=actions, margin=margins, next_margin=np.roll(margins, -1), terminated=terminated)

    def policy_mean(features: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return policy.from_features(features)[0]

    trainer_img.update(images, mean_action, steps=2)  # warm up both paths
    trainer_feat.update(feats, policy_mean, steps=2)
    t0 = time.perf_counter()
    trainer_img.update(images, mean_action)
    img_ms = (time.perf_counter() - t0) / args.steps * 1e3
    t0 = time.perf_counter()
    trainer_feat.update(feats, policy_mean)
    feat_ms = (time.perf_counter() - t0) / args.steps * 1e3
    print(f"TD step, batch {args.batch}, K = {args.steps}:")
    print(f"  image replay (encoder in the loop): {img_ms:8.2f} ms/step   (baseline)")
    print(f"  feature replay (frozen encoder):    {feat_ms:8.2f} ms/step   {img_ms / feat_ms:6.1f}x faster")
    print(f"  one-off encoding of the {n} transitions for feature replay: {encode_s * 1e3:.0f} ms "
          f"({encode_s / n * 1e6:.0f} us per transition, paid once per rollout)")


if __name__ == "__main__":
    main()
