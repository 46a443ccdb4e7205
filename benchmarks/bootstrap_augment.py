"""Measure train-time augmentation of the bootstrap actor on ID and OOD splits (issue 20, item 5).

One run = the ``bootstrap_actor`` stage's data, training and critic-free T = 0 evaluation (no MLflow,
no registry) with ``params.yaml``'s ``bootstrap_actor`` section plus ``--set`` overrides, evaluated
on test, ood_objectshift and ood_taskshift. ``--table`` prints the runs collected so far.

    python benchmarks/bootstrap_augment.py --name base --seed 0 --set augment_extra_objects=0
    python benchmarks/bootstrap_augment.py --name extra1 --seed 0 --set augment_extra_objects=1
    python benchmarks/bootstrap_augment.py --name rename1 --seed 0 --set augment_extra_objects=0 --set augment_rename_targets=1
    python benchmarks/bootstrap_augment.py --name lexicon2 --seed 0 --set augment_extra_objects=1 --lexicon 2
    python benchmarks/bootstrap_augment.py --name proxy --seed 0     # params.yaml: proxy_names on; both numbers

(``params.yaml`` turns ``augment_extra_objects`` on, so every variant sets both fields it compares.)
    python benchmarks/bootstrap_augment.py --table
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # flows/ lives at the repo root

SPLITS = ("test", "ood_objectshift", "ood_taskshift")
OUT = Path("benchmarks/results/bootstrap_augment")


def run(name: str, seed: int, overrides: dict[str, object], splits_root: Path, out: Path, params: str,
        threads: int = 2, lexicon: int = 0, keep: Path | None = None) -> dict:
    from embodied_safety.actors.bootstrap import TrainSettings, train_bootstrap_actor
    from embodied_safety.actors.bootstrap_data import DataSettings, bootstrap_examples
    from embodied_safety.actors.hf import HFActor
    from embodied_safety.config.bootstrap_actor import BootstrapActorConfig
    from embodied_safety.config.params import load_params
    from embodied_safety.config.shared import ModelShape
    from embodied_safety.envs.household.env import load_task_dir
    from embodied_safety.envs.household.suite.augment import AugmentSettings, augment_tasks, held_out
    from flows.bootstrap_actor import ood_with_and_without_proxies

    cfg = dataclasses.replace(load_params("bootstrap_actor", BootstrapActorConfig, params), seed=seed, **overrides)
    train_tasks, _ = load_task_dir(splits_root / "train")
    augmented, counts = augment_tasks(train_tasks, AugmentSettings(
        cfg.augment_extra_objects, cfg.augment_extra_max, cfg.augment_rename_targets, cfg.seed))
    data = DataSettings(cfg.drop_prob, cfg.patterns, cfg.seed, "compact", cfg.observation, cfg.renamed_fraction,
                        cfg.recovery, rename_exclude=held_out() if cfg.renamed_fraction else frozenset())
    examples = bootstrap_examples([*train_tasks, *augmented], data)
    if lexicon:  # embodied_safety.actors.lexicon: the catalog's names, task-free (an experiment, not in the stage)
        from embodied_safety.actors.lexicon import lexicon_examples

        examples += lexicon_examples(lexicon, cfg.seed)
    shape = ModelShape(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(ModelShape)})
    print(f"[{name} seed {seed}] {len(examples)} examples, {len(train_tasks)} + {len(augmented)} tasks, {counts}",
          flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bootstrap_augment_"))
    try:
        metrics = train_bootstrap_actor(examples, tmp / "model", shape, TrainSettings(sft=cfg.sft, seed=cfg.seed, threads=threads),
                                        proxy_names=cfg.proxy_names)
        actor = HFActor(tmp / "model")
        t0 = time.time()  # with proxy names (actors/proxy.py) and without: the bootstrap stage's own evaluation
        metrics.update(ood_with_and_without_proxies(actor, tmp / "model", splits_root,
                                                    dataclasses.replace(cfg, ood_splits=SPLITS)))
        for split in SPLITS:
            print(f"[{name} seed {seed}] {split}: SR {metrics[f'{split}/sr']:.3f} SSR {metrics[f'{split}/ssr']:.3f}"
                  + (f" (without proxy names {metrics[f'{split}/plain_sr']:.3f})" if f"{split}/plain_sr" in metrics
                     else ""), flush=True)
        print(f"[{name} seed {seed}] evaluated in {time.time() - t0:.0f} s", flush=True)
        if keep is not None:  # the trained actor, for failure dumps (rollout.failure_modes)
            shutil.copytree(tmp / "model", keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    row = {"name": name, "seed": seed, "overrides": {**overrides, **({"lexicon": lexicon} if lexicon else {})},
           "augment": counts, "metrics": metrics}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}__seed{seed}.json").write_text(json.dumps(row, indent=2, sort_keys=True))
    return row


def table(out: Path) -> str:
    groups: dict[str, list[dict]] = defaultdict(list)
    for f in sorted(out.glob("*.json")):
        row = json.loads(f.read_text())
        groups[row["name"]].append(row)
    lines = ["| variant | seeds | params | train min | " + " | ".join(f"{s} SR / SSR" for s in SPLITS) + " |",
             "|---|---|---|---|" + "---|" * len(SPLITS)]
    for name, rows in groups.items():
        m = [r["metrics"] for r in rows]

        def cell(key: str, ms: list[dict] = m) -> str:
            vals = [x[key] for x in ms if key in x]
            return f"{statistics.mean(vals):.3f}" if vals else "-"
        splits = " | ".join(f"{cell(f'{s}/sr')} / {cell(f'{s}/ssr')}" for s in SPLITS)
        mins = statistics.mean(x["train/seconds"] for x in m) / 60
        lines.append(f"| {name} | {','.join(str(r['seed']) for r in rows)} | {m[0]['train/params'] / 1e6:.2f} M "
                     f"| {mins:.1f} | {splits} |")
    return "\n".join(lines) + "\n\n" + paired(groups) + "\n\n" + proxy_gain(groups)


def proxy_gain(groups: dict[str, list[dict]]) -> str:
    """Per variant trained with proxy names: SR with them minus SR without, the same actor, paired over seeds."""
    from embodied_safety.evaluation.stats import t_interval

    lines = ["| variant: proxy names - plain | seeds | " + " | ".join(f"{s} ΔSR" for s in SPLITS) + " |",
             "|---|---|" + "---|" * len(SPLITS)]
    for name, rows in groups.items():
        rows = [r for r in rows if f"{SPLITS[0]}/plain_sr" in r["metrics"]]
        if not rows:
            continue

        def cell(split: str, rows: list[dict] = rows) -> str:
            mean, half = t_interval([r["metrics"][f"{split}/sr"] - r["metrics"][f"{split}/plain_sr"] for r in rows])
            return f"{mean:+.3f}" + ("" if half != half else f" [{mean - half:+.3f}, {mean + half:+.3f}]")
        lines.append(f"| {name} | {','.join(str(r['seed']) for r in rows)} | "
                     + " | ".join(cell(s) for s in SPLITS) + " |")
    return "\n".join(lines)


def paired(groups: dict[str, list[dict]], base: str = "base") -> str:
    """Each variant minus ``base`` on the seeds both ran: mean difference and 95 % Student-t interval over seeds."""
    from embodied_safety.evaluation.stats import t_interval

    ref = {r["seed"]: r["metrics"] for r in groups.get(base, [])}
    lines = [f"| variant - {base} | seeds | " + " | ".join(f"{s} ΔSR / ΔSSR" for s in SPLITS) + " |",
             "|---|---|" + "---|" * len(SPLITS)]
    for name, rows in groups.items():
        seeds = sorted(r["seed"] for r in rows if r["seed"] in ref)
        if name == base or not seeds:
            continue
        mine = {r["seed"]: r["metrics"] for r in rows}

        def cell(key: str, mine: dict = mine, seeds: list = seeds) -> str:
            mean, half = t_interval([mine[s][key] - ref[s][key] for s in seeds])
            return f"{mean:+.3f}" + ("" if half != half else f" [{mean - half:+.3f}, {mean + half:+.3f}]")
        lines.append(f"| {name} | {','.join(map(str, seeds))} | "
                     + " | ".join(f"{cell(f'{s}/sr')} / {cell(f'{s}/ssr')}" for s in SPLITS) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="base")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="a BootstrapActorConfig field (YAML value), repeatable")
    parser.add_argument("--splits", type=Path, default=Path("data/household/splits"))
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (1 on a shared machine)")
    parser.add_argument("--lexicon", type=int, default=0, metavar="N",
                        help="add N lexical rows per catalog category (embodied_safety.actors.lexicon)")
    parser.add_argument("--keep", type=Path, help="copy the trained actor here")
    parser.add_argument("--table", action="store_true", help="print the table of the runs in --out")
    args = parser.parse_args()
    if args.table:
        print(table(args.out))
        return
    overrides = {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in args.set)}
    run(args.name, args.seed, overrides, args.splits, args.out, args.params, args.threads, args.lexicon, args.keep)


if __name__ == "__main__":
    main()
