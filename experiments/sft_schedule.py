"""Experiment (docs/training.md, "Stop 38"): where does the SFT phase lose the base actor's task success, and does a
longer or gentler schedule, or a larger replay, keep it? Trains the stage's SFT phase (``safebranch.sft`` of
``params.yaml`` with ``--set`` overrides) from the bootstrap actor on the SFT-only rows (chosen side + golden replay)
or the golden replay alone, per seed, and appends the final checkpoint's SR / SSR on each split to ``--out``
(one JSON line per (name, seed, split)). Needs the outputs of ``dvc repro branches`` (run from the repository root
of a checkout with data); about 3 min per (config, seed) at 3 epochs on one core.

    python experiments/sft_schedule.py --name e6 --set num_train_epochs=6 --seeds 0 1 2
    python experiments/sft_schedule.py --table
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import yaml

SPLITS = ("test", "ood_objectshift", "ood_taskshift", "dev")


def table(path: Path) -> None:
    """Mean SR / SSR per (name, rows, split) over seeds, and each config minus ``default`` paired per seed."""
    from embodied_safety.evaluation.stats import t_interval

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by: dict[tuple[str, str], dict[int, dict[str, dict]]] = {}
    for r in rows:
        by.setdefault((r["name"], r["rows"]), {}).setdefault(r["seed"], {})[r["split"]] = r
    print("| config | rows | seeds | " + " | ".join(f"{s} SR / SSR" for s in SPLITS) + " |")
    for (name, kind), seeds in sorted(by.items()):
        cells = []
        for split in SPLITS:
            sr = [v[split]["sr"] for v in seeds.values() if split in v]
            ssr = [v[split]["ssr"] for v in seeds.values() if split in v]
            cells.append(f"{sum(sr) / len(sr):.3f} / {sum(ssr) / len(ssr):.3f}" if sr else "-")
        print(f"| {name} | {kind} | {','.join(map(str, sorted(seeds)))} | " + " | ".join(cells) + " |")
    print("\n| config - default | rows | seeds | " + " | ".join(f"{s} ΔSR / ΔSSR" for s in SPLITS) + " |")
    for (name, kind), seeds in sorted(by.items()):
        base = by.get(("default", kind))
        if name == "default" or base is None:
            continue
        common = sorted(set(seeds) & set(base))
        cells = []
        for split in SPLITS:
            both = [s for s in common if split in seeds[s] and split in base[s]]
            if not both:
                cells.append("-")
                continue
            parts = []
            for key in ("sr", "ssr"):
                diffs = [seeds[s][split][key] - base[s][split][key] for s in both]
                m, half = t_interval(diffs)
                parts.append(f"{m:+.3f} [{m - half:+.3f}, {m + half:+.3f}]" if len(diffs) > 1 else f"{m:+.3f}")
            cells.append(" / ".join(parts))
        print(f"| {name} | {kind} | {','.join(map(str, common))} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="default")
    parser.add_argument("--set", action="append", default=[], help="safebranch.sft field=value (YAML value)")
    parser.add_argument("--replay-extra", type=int, default=None, help="safebranch.replay_extra_objects")
    parser.add_argument("--rows", choices=("sft", "golden"), default="sft")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("/tmp/sft_schedule"))
    parser.add_argument("--out", type=Path, default=Path("experiments/results/sft_schedule.jsonl"))
    parser.add_argument("--table", action="store_true", help="print the tables of --out and stop")
    args = parser.parse_args()
    if args.table:
        table(args.out)
        return

    import dataclasses

    import torch

    from embodied_safety.actors.hf import HFActor
    from embodied_safety.config.params import load_params
    from embodied_safety.config.safebranch import SafeBranchConfig
    from embodied_safety.envs.household.env import load_task_dir
    from embodied_safety.rollout.actor_eval import evaluate_actor
    from embodied_safety.train.safebranch import train_sft
    from embodied_safety.train.study import load_data

    torch.set_num_threads(args.threads)
    cfg = load_params("safebranch", SafeBranchConfig)
    if args.replay_extra is not None:
        cfg = dataclasses.replace(cfg, replay_extra_objects=args.replay_extra)
    sft = dict(cfg.sft)
    for item in args.set:
        key, value = item.split("=", 1)
        sft[key] = yaml.safe_load(value)
    splits = Path("data/household/splits")
    data, _ = load_data(cfg, Path("data/branches/final"), Path("data/rollouts"), splits)
    rows = data[args.rows if args.rows == "sft" else "golden"]
    tasks = {s: load_task_dir(splits / s)[0] for s in SPLITS}
    for seed in args.seeds:
        out = args.work / f"{args.name}_{args.rows}_seed{seed}"
        t0 = time.time()
        train_sft(Path("models/bootstrap_actor/model"), rows, out, sft, seed)
        minutes = (time.time() - t0) / 60
        actor = HFActor(out, batch_size=64)
        for split in SPLITS:
            _, results = evaluate_actor(tasks[split], actor)
            line = {"name": args.name, "rows": args.rows, "seed": seed, "split": split, "examples": len(rows),
                    "sft": {k: sft[k] for k in ("num_train_epochs", "learning_rate")},
                    "replay_extra_objects": cfg.replay_extra_objects, "train_min": round(minutes, 2),
                    "sr": sum(r.success for r in results) / len(results),
                    "ssr": sum(r.safe_success for r in results) / len(results)}
            print(json.dumps(line), flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with args.out.open("a") as f:
                f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
