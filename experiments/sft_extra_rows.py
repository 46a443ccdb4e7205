"""Experiment (docs/training.md, "Stop 29"): does SFT improve when the after-repair / contrast pairs' chosen side
joins the SFT rows? Trains the stage's SFT phase (``safebranch.sft`` of ``params.yaml``) from the bootstrap actor
with and without those rows, per seed, and prints the final checkpoint's test / dev SR, SSR and failure modes.
Needs the outputs of ``dvc repro branches`` (run from the repository root); about 1.5 min per (rows, seed).

    python experiments/sft_extra_rows.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    from embodied_safety.actors.hf import HFActor
    from embodied_safety.config.params import load_params
    from embodied_safety.config.safebranch import SafeBranchConfig
    from embodied_safety.envs.household.env import load_task_dir
    from embodied_safety.rollout.actor_eval import evaluate_actor
    from embodied_safety.rollout.failure_modes import failure_modes
    from embodied_safety.train.safebranch import train_sft
    from embodied_safety.train.study import load_data
    from embodied_safety.train.variants import _chosen

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/sft_extra_rows"))
    args = parser.parse_args()
    cfg = load_params("safebranch", SafeBranchConfig)
    splits = Path("data/household/splits")
    data, extra = load_data(cfg, Path("data/branches/final"), Path("data/rollouts"), splits)
    for seed in args.seeds:
        for rows_name, rows in (("plain", data["sft"]), ("extra", data["sft"] + _chosen(extra))):
            out = args.out / f"{rows_name}_seed{seed}"
            train_sft(Path("models/bootstrap_actor/model"), rows, out, dict(cfg.sft), seed)
            for split in ("test", "dev"):
                _, results = evaluate_actor(load_task_dir(splits / split)[0], HFActor(out, batch_size=64))
                row = {**failure_modes(results), "ssr": sum(r.safe_success for r in results) / len(results)}
                print(json.dumps({"rows": rows_name, "seed": seed, "split": split, **{k: round(v, 3) for k, v in row.items()}}))


if __name__ == "__main__":
    main()
