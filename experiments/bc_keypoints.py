"""Experiment (docs/shield_ppo.md, "Stop 41"): behaviour cloning + DAgger on Dubins-VL with the keypoint encoder.

``encoder_readout.py`` shows a spatial-softmax keypoint encoder reads the heading on new episodes to 0.04 rad where
the policy's Nature-DQN CNN reads 0.14 (both from scratch). The BC start reads the frame through the same CNN (SR
0.325 on the lock). This reruns the ``bc_policy`` stage's Dubins-VL recipe exactly (``shield.policy.start.fit_start``:
the stage's config, demos, seeds, DAgger rounds, checkpoint by closed-loop SR, evaluation on the held-out seeds) with
only the image encoder swapped (``--arch keypoints``; ``dqn`` reproduces the stage) or ``--set`` config values
changed, and reports the held-out SR, violation rate and CSC. ``--save DIR`` keeps the policy's weights (safetensors) for the critic experiments. Run from a
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

from ppo_variants import parse_override


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=["dqn", "keypoints"], default="keypoints")
    ap.add_argument("--seed", type=int, default=None, help="the BC seed (default: the stage's)")
    ap.add_argument("--save", type=Path, default=None)
    ap.add_argument("--eval-candidates", action="store_true", help="also evaluate every checkpoint the selection "
                    "sees on the held-out episodes (a diagnostic of the selection rule; it chooses nothing)")
    ap.add_argument("--set", action="append", default=[], help="key=value over the stage's BCPolicyConfig (JSON "
                    "values; a per-env field sets the Dubins-VL entry), e.g. dagger_rounds=5 select_by=sr_1se")
    ap.add_argument("--out", type=Path, default=Path("experiments/results/bc_keypoints.json"))
    args = ap.parse_args(argv)

    from embodied_safety.threads import pin_stage_threads

    pin_stage_threads()  # the stage's threads and CPU kernels, before torch computes anything
    import torch

    from embodied_safety.config.bc_policy import BCPolicyConfig
    from embodied_safety.config.params import load_params
    from embodied_safety.io import write_json
    from embodied_safety.shield.policy.demos import DemoSet
    from embodied_safety.shield.policy.keypoints import KeypointImageEncoder
    from embodied_safety.shield.policy.start import EVAL_BASE, evaluator, fit_start, new_policy
    from embodied_safety.threads import set_torch_threads
    from flows._shield import DEMOS

    env = "dubins"
    cfg = load_params("bc_policy", BCPolicyConfig)
    over = dict(parse_override(o) for o in args.set)
    cfg = dataclasses.replace(cfg, **{k: ({**getattr(cfg, k), env: v} if isinstance(getattr(cfg, k), dict) else v)
                                      for k, v in over.items()})
    if args.seed is not None:
        cfg = dataclasses.replace(cfg, seed=args.seed)
    set_torch_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    policy = new_policy(env)
    if args.arch == "keypoints":
        policy.encoder.image = KeypointImageEncoder(policy.config.image_size, dim=policy.config.image_dim)
    held_out = evaluator(env, cfg.seed, EVAL_BASE, cfg.eval_episodes[env])
    candidates: list[dict[str, float]] = []

    def log(m: dict[str, float], epoch: int) -> None:  # a diagnostic: never used to choose
        if args.eval_candidates and "bc/sr" in m:
            ev = held_out(policy)
            candidates.append({"epoch": float(epoch), "select_sr": m["bc/sr"],
                               "select_violation_rate": m["bc/violation_rate"], "eval_sr": ev["sr"],
                               "eval_violation_rate": ev["violation_rate"], "eval_csc": ev["csc"]})

    t0 = time.perf_counter()
    hist, final = fit_start(env, DemoSet.load(DEMOS / env / "demos.npz"), cfg, policy, log=log)
    row = {"arch": args.arch, "seed": cfg.seed, "overrides": over, "train_s": time.perf_counter() - t0,
           "n_parameters": sum(p.numel() for p in policy.parameters()),
           **{k: final[k] for k in ("best_epoch", "eval_sr", "eval_violation_rate", "eval_reach_rate", "eval_csc")},
           "select_sr_by_epoch": [r["sr"] for r in hist.rows if "sr" in r],
           "select_violation_by_epoch": [r["violation_rate"] for r in hist.rows if "sr" in r],
           "candidates": candidates}
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
