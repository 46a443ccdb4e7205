"""Experiment (docs/shield_ppo.md, "Stop 41"): behaviour cloning + DAgger on Dubins-VL with the keypoint encoder.

``encoder_readout.py`` shows a spatial-softmax keypoint encoder reads the heading on new episodes to 0.04 rad where
the policy's Nature-DQN CNN reads 0.14 (both from scratch). The BC start reads the frame through the same CNN (SR
0.325 on the lock). This reruns the ``bc_policy`` stage's Dubins-VL recipe exactly (``tasks/bc_policy.py``: the
stage's config, demos, seeds, DAgger rounds, checkpoint by closed-loop SR, evaluation on the held-out seeds) with
only the image encoder swapped (``--arch keypoints``; ``dqn`` reproduces the stage), and reports the held-out SR,
violation rate and CSC. ``--save DIR`` keeps the policy's weights (safetensors) for the critic experiments. Run from a
clone with ``data/shield/demos``:

    python experiments/bc_keypoints.py --arch keypoints [--seed 0]   # -> experiments/results/bc_keypoints.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=["dqn", "keypoints"], default="keypoints")
    ap.add_argument("--seed", type=int, default=None, help="the BC seed (default: the stage's)")
    ap.add_argument("--save", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/bc_keypoints.json"))
    args = ap.parse_args(argv)

    import torch

    from embodied_safety.config.bc_policy import BCPolicyConfig
    from embodied_safety.config.params import load_params
    from embodied_safety.io import write_json
    from embodied_safety.shield.envs import ENVS, env_factories
    from embodied_safety.shield.policy.dagger import batch_expert, dagger
    from embodied_safety.shield.policy.demos import DemoSet, episode_seeds, scripted_expert
    from embodied_safety.shield.policy.keypoints import KeypointImageEncoder
    from embodied_safety.shield.policy.rollouts import evaluate_policy
    from embodied_safety.shield.policy.visuomotor import policy_for_env
    from embodied_safety.threads import set_torch_threads
    from flows._shield import DEMOS
    from tasks.bc_policy import DAGGER_BASE, EVAL_BASE, SELECT_BASE

    env = "dubins"
    cfg = load_params("bc_policy", BCPolicyConfig)
    if args.seed is not None:
        cfg = dataclasses.replace(cfg, seed=args.seed)
    set_torch_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    make_env, make_vec = env_factories(env)
    probe = make_env()
    policy = policy_for_env(probe)
    probe.close()
    if args.arch == "keypoints":
        policy.encoder.image = KeypointImageEncoder(policy.config.image_size, dim=policy.config.image_dim)

    def evaluator(base: int, n: int) -> Any:
        seeds = episode_seeds(cfg.seed + base, range(n))
        return lambda p: {k: float(v) for k, v in
                          evaluate_policy(make_env, p, seeds, n_envs=64, make_vec=make_vec).items()}

    name = ENVS.get(env, env)
    t0 = time.perf_counter()
    hist, _ = dagger(policy, DemoSet.load(DEMOS / env / "demos.npz"), scripted_expert(name),
                     rounds=cfg.dagger_rounds[env], episodes=cfg.dagger_episodes[env], bc_epochs=cfg.epochs[env],
                     epochs=cfg.dagger_epochs[env], rollout_base=DAGGER_BASE, make_env=make_env, make_vec=make_vec,
                     batch=batch_expert(name), beta=cfg.dagger_beta, n_envs=64, batch_size=cfg.batch_size, lr=cfg.lr,
                     seed=cfg.seed, shift=cfg.shift, eval_fn=evaluator(SELECT_BASE, cfg.select_episodes[env]),
                     eval_every=cfg.eval_every, select_by=cfg.select_by)
    final = {**hist.final(), **{f"eval_{k}": v for k, v in evaluator(EVAL_BASE, cfg.eval_episodes[env])(policy).items()}}
    row = {"arch": args.arch, "seed": cfg.seed, "train_s": time.perf_counter() - t0,
           "n_parameters": sum(p.numel() for p in policy.parameters()),
           **{k: final[k] for k in ("best_epoch", "eval_sr", "eval_violation_rate", "eval_reach_rate", "eval_csc")},
           "select_sr_by_epoch": [r["sr"] for r in hist.rows if "sr" in r]}
    if args.save is not None:
        from safetensors.torch import save_file

        args.save.mkdir(parents=True, exist_ok=True)
        save_file({k: v.detach().contiguous() for k, v in policy.state_dict().items()}, str(args.save / "model.safetensors"))
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    rows.append(row)
    write_json(args.out, rows)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
