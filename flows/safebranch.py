"""Stage ``safebranch``: every training variant of SafeBranch Tables 2 / 4 / 13 over seeds, with a
small learning-rate sweep, dev-split checkpoint selection, MLflow runs, registry versions and a
champion promotion at the end.

1. Sweep (first seed): each phase (SFT, BranchPO, trajectory DPO) at each learning rate in
   ``sweep``; the dev split picks a rate per phase by (SSR, SR) of the selected checkpoint.
2. Every variant at every seed with the picked rates; a variant's checkpoint is the one its dev
   curve selects (App. F.5). Chains share prefixes: SafeBranch starts from SFT-only's checkpoint.
3. Critic-free evaluation of the base actor and every variant on ``eval_splits`` (SR, SSR, SRec,
   per-risk SRec) into ``models/safebranch/results.json`` (the report stage renders Tables 2 / 13 / 16
   and the sweep table from it), figures beside it; every run an MLflow run; every trained actor a
   version of ``registered_model``.
4. The SafeBranch seed with the best dev result is offered to the champion rule (``flows.promote``).

Selection everywhere (checkpoints, sweep picks, the champion candidate) is ``evaluation.selection``: max
dev SSR subject to dev SR >= the base actor's dev SR - ``max_dev_sr_drop``. Per-task paired
bootstrap intervals (SafeBranch vs SFT-only and vs the golden-replay control) go to ``results.json``.
Data, runs and figures: :mod:`embodied_safety.train.study`; tasks and the ``Trainer``: ``tasks/safebranch.py``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from prefect import flow

from embodied_safety.actors.hf import HFActor
from embodied_safety.config.promote import PromoteConfig
from embodied_safety.config.safebranch import SafeBranchConfig
from embodied_safety.evaluation.selection import floor_from, metrics_only, rank
from embodied_safety.io import replace_dir, scratch_dir, without_run_facts, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.train.study import (
    dev_evaluator,
    load_data,
    paired_comparisons,
    study_figures,
    summary_metrics,
    summed_risks,
)
from embodied_safety.train.variants import lrs_for
from flows._stage import Plot, Stage
from flows.promote import promote, tag_base_dev
from tasks.safebranch import Trainer, eval_task
from tasks.tracking import log_artifacts, log_metrics, mlflow_run

BASE = Path("models/bootstrap_actor/model")
PAIRS = Path("data/branches/final")
ROLLOUTS = Path("data/rollouts")
SPLITS = Path("data/household/splits")
OUT = Path("models/safebranch")
METRICS = Path("models/safebranch_metrics.json")


@flow(name="safebranch", log_prints=True)
def safebranch(cfg: SafeBranchConfig = SafeBranchConfig(), base: Path = BASE, pairs_dir: Path = PAIRS,
               rollouts: Path = ROLLOUTS, splits: Path = SPLITS, out: Path = OUT, metrics_path: Path = METRICS,
               promote_cfg: PromoteConfig | None = PromoteConfig()) -> dict[str, float]:
    data, extra = load_data(cfg, pairs_dir, rollouts, splits)
    print("data: " + ", ".join(f"{k} {len(v)}" for k, v in data.items())
          + f"; extra BranchPO pairs {len(extra)} ({', '.join(cfg.branchpo_pairs) or 'none'})")
    base_dev = metrics_only(dev_evaluator(splits / cfg.dev_split)(HFActor(base, batch_size=64)))
    sr_floor = floor_from(base_dev["sr"], cfg.max_dev_sr_drop)
    print(f"base dev SR {base_dev['sr']:.3f} SSR {base_dev['ssr']:.3f}; selection floor dev SR >= "
          + (f"{sr_floor:.3f}" if sr_floor is not None else "none"))
    final, out = out, scratch_dir(out)  # every output is written here and published whole at the end
    trainer = Trainer(cfg, base, data, splits, out, sr_floor)
    lrs, sweep_runs = trainer.sweep(cfg.seeds[0])
    runs = [trainer.run(v, seed, lrs_for(v, lrs), register=True) for seed in cfg.seeds for v in cfg.variants]
    base_eval, base_risks, base_tasks = eval_task(base, splits, cfg.eval_splits)
    for r in runs:
        print(f"{r.variant} seed {r.seed}: dev SSR {r.dev.get('ssr', 0):.3f} SR {r.dev.get('sr', 0):.3f}; test SR "
              f"{r.eval['test/sr']:.3f} SSR {r.eval['test/ssr']:.3f} (version {r.version})")
    figures = study_figures(out, runs, sweep_runs, summed_risks([r for r in runs if r.variant == "safebranch"],
                                                                cfg.eval_splits))
    paired = paired_comparisons(runs, cfg.eval_splits, cfg.paired_bootstrap, cfg.seeds[0])
    results = {"learning_rates": lrs, "runs": [r.to_json() for r in runs], "sweep": [r.to_json() for r in sweep_runs],
               "base": base_eval, "base_tasks": base_tasks, "base_dev": base_dev, "sr_floor": sr_floor,
               "paired": paired, "base_risks": base_risks, "seeds": list(cfg.seeds), "dev_split": cfg.dev_split,
               "eval_splits": list(cfg.eval_splits), "scale": cfg.scale}
    metrics = summary_metrics(lrs, base_eval, runs, cfg.eval_splits, paired)
    # the runs name their model dirs under the scratch folder: results.json names them where they are published
    results = json.loads(json.dumps(without_run_facts(results), default=str).replace(str(out), str(final)))
    write_json(out / "results.json", results)
    with mlflow_run(trainer.track, "safebranch-report", params={**dataclasses.asdict(cfg), "picked_lrs": lrs}):
        log_metrics(metrics)
        log_artifacts([out / "results.json", *figures])
    candidates = [r for r in runs if r.variant == "safebranch" and r.version]
    if promote_cfg and candidates:
        best = max(candidates, key=lambda r: rank(r.dev, sr_floor))
        tag_base_dev(promote_cfg, base_dev)
        decision = promote(promote_cfg, version=best.version, base_dev=base_dev)
        print(f"promotion of {cfg.registered_model} v{best.version} (SafeBranch seed {best.seed}): {decision['reason']}")
    write_manifest(out, cfg, inputs=[pairs_dir, base])
    replace_dir(out, final)
    write_json(metrics_path, metrics)
    print(f"{final / 'results.json'} written; the report stage renders its tables (python -m flows.report)")
    return metrics


STAGE = Stage("safebranch", safebranch, config=SafeBranchConfig, params=("safebranch", "promote"),
              sections={"promote_cfg": ("promote", PromoteConfig)},
              inputs={"pairs_dir": str(PAIRS), "rollouts": str(ROLLOUTS), "splits": str(SPLITS),
                      "bootstrap_actor": str(BASE.parent)},
              outs=(str(OUT),), metrics=str(METRICS),
              plots=(*(Plot(f"{OUT}/{n}.png", x_label=x) for n, x in (("dev_curves", "step"), ("training_curves", "step"),
                                                                     ("sweep_curves", "epoch"))),
                     *(Plot(f"{OUT}/per_risk_{n}.png", "bars", y_label="triggered conditions")
                       for n in ("test", "ood_objectshift", "ood_taskshift"))))
main = STAGE.main

if __name__ == "__main__":
    main()
