"""Stage ``safebranch``: SFT warm-up then BranchPO on the final branch pairs, over several seeds.

Evaluates the base actor, SFT-only and SafeBranch (SFT -> BranchPO) critic-free on the ID test
split and both OOD splits (IS-Bench SR / SSR / SRec) and writes the paper's Table 2 layout with
mean +- std over seeds to ``models/safebranch/table2.md`` and ``models/safebranch_metrics.json``.
Every training run is an MLflow run.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.actors.hf import HFActor
from embodied_safety.config import SafeBranchConfig, load_params
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.evaluation.actor_eval import evaluate_actor
from embodied_safety.io import atomic_write_text, read_jsonl, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.train.safebranch import train_branchpo, train_sft
from tasks.tracking import log_metrics, mlflow_run, tracking_config

BASE = Path("models/bootstrap_actor/model")
PAIRS = Path("data/branches/final")
SPLITS = Path("data/household/splits")
OUT = Path("models/safebranch")
METRICS = Path("models/safebranch_metrics.json")
HEAD = ("sr", "ssr", "srec")


@task(name="train-sft", cache_policy=NO_CACHE, log_prints=False)
def sft_task(base: Path, rows: list[dict], out: Path, sft: dict, seed: int) -> dict[str, float]:
    return train_sft(base, rows, out, sft, seed)


@task(name="train-branchpo", cache_policy=NO_CACHE, log_prints=False)
def branchpo_task(sft_dir: Path, pairs: list[dict], out: Path, dpo: dict, seed: int) -> dict[str, float]:
    return train_branchpo(sft_dir, pairs, out, dpo, seed)


@task(name="evaluate-actor", cache_policy=NO_CACHE)
def eval_task(model: Path, splits: Path, names: tuple[str, ...]) -> dict[str, float]:
    actor = HFActor(model, batch_size=64)
    out: dict[str, float] = {}
    for name in names:
        m, _ = evaluate_actor(load_task_dir(splits / name)[0], actor)
        out.update({f"{name}/{k}": float(m[f"eval/{k}"]) for k in HEAD})
    return out


def table2(rows: dict[str, list[dict[str, float]]], splits: tuple[str, ...]) -> str:
    header = "| method | " + " | ".join(f"{s} {k.upper()}" for s in splits for k in HEAD) + " |"
    lines = [header, "|" + "---|" * (1 + len(splits) * len(HEAD))]
    for method, runs in rows.items():
        cells = []
        for s in splits:
            for k in HEAD:
                vals = [r[f"{s}/{k}"] for r in runs]
                sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
                cells.append(f"{statistics.mean(vals):.3f} ± {sd:.3f}")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@flow(name="safebranch", log_prints=True)
def safebranch(cfg: SafeBranchConfig = SafeBranchConfig(), base: Path = BASE, pairs_dir: Path = PAIRS,
               splits: Path = SPLITS, out: Path = OUT, metrics_path: Path = METRICS) -> dict[str, float]:
    pairs = read_jsonl(pairs_dir / "pairs.jsonl")
    sft_rows = read_jsonl(pairs_dir / "sft.jsonl") + read_jsonl(pairs_dir / "replay.jsonl")
    rows: dict[str, list[dict[str, float]]] = {"Base (bootstrap actor)": [eval_task(base, splits, cfg.eval_splits)]}
    rows["SFT-only"], rows["SafeBranch (SFT -> BranchPO)"] = [], []
    track = tracking_config(cfg.tracking)
    for seed in cfg.seeds:
        with mlflow_run(track, f"safebranch-seed{seed}", params={**dataclasses.asdict(cfg), "seed": seed}):
            m = sft_task(base, sft_rows, out / f"seed{seed}" / "sft", cfg.sft, seed)
            m.update(branchpo_task(out / f"seed{seed}" / "sft", pairs, out / f"seed{seed}" / "branchpo", cfg.branchpo, seed))
            sft_eval = eval_task(out / f"seed{seed}" / "sft", splits, cfg.eval_splits)
            sb_eval = eval_task(out / f"seed{seed}" / "branchpo", splits, cfg.eval_splits)
            log_metrics({**m, **{f"sft/{k}": v for k, v in sft_eval.items()}, **{f"safebranch/{k}": v for k, v in sb_eval.items()}})
        rows["SFT-only"].append(sft_eval)
        rows["SafeBranch (SFT -> BranchPO)"].append(sb_eval)
        print(f"seed {seed}: SFT test SR {sft_eval['test/sr']:.3f} SSR {sft_eval['test/ssr']:.3f}; "
              f"SafeBranch test SR {sb_eval['test/sr']:.3f} SSR {sb_eval['test/ssr']:.3f}")
    text = table2(rows, cfg.eval_splits)
    atomic_write_text(out / "table2.md", "# Table 2 (mean ± std over seeds "
                      f"{list(cfg.seeds)}; critic-free, T = 0)\n\n" + text)
    metrics: dict[str, float] = {}
    for method, key in (("Base (bootstrap actor)", "base"), ("SFT-only", "sft"), ("SafeBranch (SFT -> BranchPO)", "safebranch")):
        for s in cfg.eval_splits:
            for k in HEAD:
                metrics[f"eval/{key}/{s}/{k}"] = statistics.mean(r[f"{s}/{k}"] for r in rows[method])
    for s in cfg.eval_splits:
        metrics[f"eval/ssr_lift/{s}"] = metrics[f"eval/safebranch/{s}/ssr"] - metrics[f"eval/base/{s}/ssr"]
        metrics[f"eval/sr_drop/{s}"] = metrics[f"eval/base/{s}/sr"] - metrics[f"eval/safebranch/{s}/sr"]
    write_manifest(out, cfg, inputs=[pairs_dir, base])
    write_json(metrics_path, metrics)
    print(text)
    return metrics


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args(argv)
    safebranch(load_params("safebranch", SafeBranchConfig, args.params))


if __name__ == "__main__":
    main()
