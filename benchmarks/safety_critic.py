"""Benchmark the safety critic's costs in one process, each against its baseline (docs/shield_ppo.md, Throughput):

1. the online TD step: feature replay (encoder frozen after the warm start) against image replay (the encoder
   re-run on every TD step), the same K steps, batch and critic;
2. the BC warm-up (``critic.warm_start``): cached (every buffer frame encoded once, the next action computed once
   per transition) against the uncached path (``cache=False``: every step re-encodes its batch), for a frozen
   critic encoder (TurtleBot-Nav, Franka-Reach) and a fine-tuned one (Dubins-VL);
3. one gated PPO iteration on Dubins-VL (16 envs × 64 steps, K = 64 TD steps on feature replay), env steps/s,
   against the previous ``train_critic`` / ``gate`` (every frame re-encoded by the critic for o and o', by the
   policy for o', and o once more for the gate), with the critic encoder equal to the policy's (a frozen warm
   critic) and different from it (Dubins-VL's fine-tuned warm critic).

    python benchmarks/safety_critic.py [--steps 32] [--batch 256] [--regress 50 --td 100] [--skip-td]

The warm-up is timed at a reduced step count (the per-step cost is constant) and also projected to the stage's
200 + 400 steps.
"""

from __future__ import annotations

import argparse
import copy
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
    warm_start,
)


def td_bench(args: argparse.Namespace, policy: VisuomotorPolicy) -> None:
    rng = np.random.default_rng(0)
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


def warmup_bench(args: argparse.Namespace, policy: VisuomotorPolicy) -> None:
    rng = np.random.default_rng(1)
    n = args.warm_transitions
    frames = rng.integers(0, 255, size=(n + 1, 84, 84, 3), dtype=np.uint8)
    actions = rng.uniform(-1.1, 1.1, size=(n, 1)).astype(np.float32)
    margins = rng.normal(size=n + 1).astype(np.float32)
    terminated = (rng.random(n) < 0.03).astype(np.float32)
    instr = ["drive to the green goal"] * n

    def mean_action(imgs: torch.Tensor, ins: list[str]) -> torch.Tensor:
        with torch.no_grad():
            return policy(imgs, ins)[0]

    print(f"\nBC warm-up on {n} transitions, batch {args.batch}, {args.regress} regression + {args.td} TD steps "
          f"(projected to the stage's 200 + 400):")
    for label, freeze in (("frozen critic encoder (TurtleBot-Nav, Franka-Reach)", True),
                          ("fine-tuned critic encoder (Dubins-VL)", False)):
        seconds, qs = {}, {}
        for cache in (False, True):
            torch.manual_seed(0)
            buf = ReplayBuffer(n, (84, 84, 3), 1, seed=0)
            buf.add(frames[:-1], instr, actions, margins[:-1], frames[1:], margins[1:], terminated)
            critic = SafetyCritic.from_policy(policy, CriticConfig(batch_size=args.batch, freeze_encoder=freeze,
                                                                   hidden=(512, 512)))
            trainer = CriticTrainer(critic)
            t0 = time.perf_counter()
            warm_start(trainer, buf, mean_action, args.regress, args.td, cache=cache)
            seconds[cache] = time.perf_counter() - t0
            with torch.no_grad():
                qs[cache] = critic(torch.from_numpy(frames[:256]), instr[:256], torch.from_numpy(actions[:256]))
        steps = args.regress + args.td
        scale = 600 / steps
        old_600 = seconds[False] * scale
        fixed = _one_off(policy, buf, freeze, mean_action)
        new_600 = fixed + (seconds[True] - fixed) * scale
        print(f"  {label}:")
        print(f"    uncached (every step re-encodes): {seconds[False]:7.1f} s   (baseline; ~{old_600:.0f} s at 600 steps)")
        print(f"    cached:                           {seconds[True]:7.1f} s   {seconds[False] / seconds[True]:5.1f}x faster "
              f"(~{new_600:.0f} s at 600 steps, {old_600 / new_600:.1f}x; one-off encoding {fixed:.1f} s)")
        print(f"    max |Q_uncached - Q_cached| on 256 frames: {float((qs[False] - qs[True]).abs().max()):.2e}")


def _one_off(policy: VisuomotorPolicy, buf: ReplayBuffer, freeze: bool, mean_action: object) -> float:
    """The cached warm-up's fixed cost: a' of every transition, and with a frozen encoder the critic's features of
    o and o'."""
    from embodied_safety.shield.rl.critic import encode_frames

    n, words = buf.size, buf.instructions(np.arange(buf.size))
    t0 = time.perf_counter()
    encode_frames(mean_action, buf.next_image[:n], words)  # type: ignore[arg-type]
    if freeze:
        encode_frames(policy.encoder, buf.image[:n], words)
        encode_frames(policy.encoder, buf.next_image[:n], words)
    return time.perf_counter() - t0


def ppo_bench(args: argparse.Namespace, policy: VisuomotorPolicy) -> None:
    from embodied_safety.shield.costs.margins import MarginSource
    from embodied_safety.shield.rl import ppo as ppo_mod
    from embodied_safety.shield.rl.ppo import GatedPPO, PPOConfig, advantages

    class OldGatedPPO(GatedPPO):
        """``train_critic`` and ``gate`` as they were: the critic encodes o and o', the policy o', and the gate
        encodes o again."""

        def train_critic(self, ro: ppo_mod.Rollout) -> dict[str, float]:
            critic, buffer = self.critic, self.buffer
            assert critic is not None and isinstance(buffer, FeatureReplay)
            flat_img, flat_r, flat_instr = ro.flat_images(), ro.flat_images(reached=True), ro.flat_instructions()
            n = ro.size
            buffer.add(feature=ppo_mod.batched_features(critic.encoder, flat_img, flat_instr),
                       next_feature=ppo_mod.batched_features(critic.encoder, flat_r, flat_instr),
                       next_policy_feature=ppo_mod.batched_features(self.policy.features, flat_r, flat_instr),
                       action=ro.actions.reshape(n, self.a_dim), margin=ro.ell.reshape(n),
                       next_margin=ro.reached_ell.reshape(n), terminated=ro.terminated.reshape(n))
            assert self.trainer is not None
            return self.trainer.update(buffer, self._policy_mean)

        def gate(self, ro: ppo_mod.Rollout) -> ppo_mod.Gate:
            ro.critic_features = None
            return super().gate(ro)

    print(f"\nOne gated PPO iteration, Dubins-VL, {args.envs} envs × 64 steps, K = {args.k}, feature replay:")
    for label, shared in (("critic encoder = policy encoder (frozen warm critic)", True),
                          ("critic encoder fine-tuned in the warm-up (Dubins-VL)", False)):
        rates, rows = {}, {}
        for cls in (OldGatedPPO, GatedPPO):
            pol = copy.deepcopy(policy)
            ccfg = CriticConfig(batch_size=args.batch, steps_per_iter=args.k, freeze_encoder=True)
            critic = SafetyCritic.from_policy(pol, ccfg)
            if not shared:
                with torch.no_grad():
                    for p in critic.encoder.parameters():
                        p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
            cfg = PPOConfig(method="gated", margin="gt", safety_update="advantage", num_envs=args.envs,
                            rollout_steps=64, total_steps=args.envs * 64 * 2,
                            critic=ccfg, seed=0)
            run = cls(pol, "dubins", MarginSource("gt"), cfg, critic)
            assert run.shared_encoder == shared or cls is OldGatedPPO
            per_it = []
            for _ in range(2):  # the first iteration warms up the process
                t0 = time.perf_counter()
                ro = run.collect()
                ep = run.episodes.drain()
                row = run.train_critic(ro)
                run.update_dual(ep)
                g = run.gate(ro)
                row.update(g.stats)
                row.update(run.update(ro, advantages(ro, g.costs, cfg, run.dual, run.cost_value is not None), g))
                per_it.append(time.perf_counter() - t0)
            run.close()
            rates[cls] = ro.size / per_it[-1]
            rows[cls] = row
        old, new = rates[OldGatedPPO], rates[GatedPPO]
        diff = max(abs(rows[OldGatedPPO][k] - rows[GatedPPO][k]) for k in ("critic_loss", "q_policy_mean", "approx_kl"))
        print(f"  {label}:")
        print(f"    before: {old:7.0f} env steps/s   (baseline)")
        print(f"    after:  {new:7.0f} env steps/s   {new / old:5.2f}x   (max |Δ| of critic_loss, q_policy_mean, "
              f"approx_kl after 2 iterations: {diff:.1e})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=32, help="TD steps timed (TD bench)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--transitions", type=int, default=4096)
    parser.add_argument("--warm-transitions", type=int, default=3799)
    parser.add_argument("--regress", type=int, default=50)
    parser.add_argument("--td", type=int, default=100)
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--k", type=int, default=64, help="K TD steps per PPO iteration (PPO bench)")
    parser.add_argument("--only", choices=("td", "warmup", "ppo"), nargs="*", default=["td", "warmup", "ppo"])
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    policy = VisuomotorPolicy(PolicyConfig(action_low=(-1.1,), action_high=(1.1,))).eval()
    if "td" in args.only:
        td_bench(args, policy)
    if "warmup" in args.only:
        warmup_bench(args, policy)
    if "ppo" in args.only:
        ppo_bench(args, policy)


if __name__ == "__main__":
    main()
