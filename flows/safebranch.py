"""Stage ``safebranch``: every training variant of SafeBranch Tables 2 / 4 / 13 over seeds, with a
small learning-rate sweep, dev-split checkpoint selection, MLflow runs, registry versions and a
champion promotion at the end.

1. Sweep (first seed): each phase (SFT, BranchPO, trajectory DPO) at each learning rate in
   ``sweep``; the dev split picks a rate per phase by (SSR, SR) of the selected checkpoint.
2. Every variant at every seed with the picked rates; a variant's checkpoint is the one its dev
   curve selects (App. F.5). Chains share prefixes: SafeBranch starts from SFT-only's checkpoint.
3. Critic-free evaluation of the base actor and every variant on ``eval_splits`` (SR, SSR, SRec,
   per-risk SRec); Table 2 / 13 / 16 and the sweep table in ``models/safebranch/*.md``, plots
   beside them; every run an MLflow run; every trained actor a version of ``registered_model``.
4. The SafeBranch seed with the best dev result is offered to the champion rule (``flows.promote``).

Selection everywhere (checkpoints, sweep picks, the champion candidate) is ``evaluation.selection``: max
dev SSR subject to dev SR >= the base actor's dev SR - ``max_dev_sr_drop``. Per-task paired
bootstrap intervals (SafeBranch vs SFT-only and vs the golden-replay control) go to ``paired.md``
and ``results.json``.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.actors.hf import HFActor
from embodied_safety.branch.golden import extra_pairs, golden_replay
from embodied_safety.config import PromoteConfig, SafeBranchConfig
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.evaluation.household_metrics import per_risk_counts
from embodied_safety.evaluation.plots import plot_per_risk, plot_series
from embodied_safety.evaluation.report import paired_table
from embodied_safety.evaluation.selection import floor_from, rank
from embodied_safety.evaluation.stats import compare, per_task
from embodied_safety.io import atomic_write_text, read_json, read_jsonl, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.records import RawBranch, Trajectory
from embodied_safety.rollout.actor_eval import evaluate_actor
from embodied_safety.train.common import TrainResult
from embodied_safety.train.safebranch import train_branchpo, train_sft
from embodied_safety.train.trajectory_dpo import train_trajectory_dpo, trajectory_pairs
from embodied_safety.train.variants import LABELS, RECIPES, SWEEPS, Kind, Phase, chain_key, datasets, lrs_for
from flows._stage import Plot, Stage
from flows.promote import promote, tag_base_dev
from tasks.progress import ProgressArtifact
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, register_model_dir, tracking_config

BASE = Path("models/bootstrap_actor/model")
PAIRS = Path("data/branches/final")
ROLLOUTS = Path("data/rollouts")
SPLITS = Path("data/household/splits")
OUT = Path("models/safebranch")
METRICS = Path("models/safebranch_metrics.json")
HEAD = ("sr", "ssr", "srec")
PAIRED = (("safebranch", "sft_only"), ("safebranch", "golden_replay_only"), ("sft_only", "golden_replay_only"))
TRAINERS = {"sft": train_sft, "branchpo": train_branchpo, "trajectory_dpo": train_trajectory_dpo}


def _dev_evaluator(dev_dir: Path) -> Any:
    tasks = load_task_dir(dev_dir)[0]

    def evaluate(actor: HFActor) -> dict[str, float]:
        m, _ = evaluate_actor(tasks, actor)
        return {k: float(m[f"eval/{k}"]) for k in HEAD}

    return evaluate


@task(name="train-phase", cache_policy=NO_CACHE, log_prints=False)
def phase_task(start: Path, phase: Phase, data: list[dict], out: Path, params: dict, seed: int,
               peft: dict | None, dev_dir: Path, eval_every: int,
               sr_floor: float | None = None) -> tuple[TrainResult, list[tuple[dict, int]]]:
    """One training phase with dev-split checkpoint selection; returns the result and its per-step log."""
    history: list[tuple[dict, int]] = []
    result = TRAINERS[phase.kind](start, data, out, params, seed, log=lambda m, s: history.append((m, s)), peft=peft,
                                  evaluate=_dev_evaluator(dev_dir), eval_every=eval_every, sr_floor=sr_floor)
    return result, history


@task(name="evaluate-actor", cache_policy=NO_CACHE)
def eval_task(model: Path, splits: Path, names: tuple[str, ...]) -> tuple[dict[str, float], dict[str, dict], dict[str, dict]]:
    """Critic-free SR / SSR / SRec per split, per-risk (satisfied, triggered) counts, per-task outcomes."""
    actor = HFActor(model, batch_size=64)
    out: dict[str, float] = {}
    risks: dict[str, dict] = {}
    tasks: dict[str, dict] = {}
    for name in names:
        m, results = evaluate_actor(load_task_dir(splits / name)[0], actor)
        out.update({f"{name}/{k}": float(m[f"eval/{k}"]) for k in HEAD})
        risks[name] = {r: list(c) for r, c in per_risk_counts(results).items()}
        tasks[name] = per_task(results)
    return out, risks, tasks


@dataclasses.dataclass
class Run:
    """One trained variant at one seed (or one sweep point)."""

    variant: str
    seed: int
    lrs: dict[str, float]
    model: Path
    phases: list[dict[str, Any]]  # per phase: metrics and dev curve
    eval: dict[str, float] = dataclasses.field(default_factory=dict)
    risks: dict[str, dict] = dataclasses.field(default_factory=dict)
    tasks: dict[str, dict] = dataclasses.field(default_factory=dict)  # split -> task -> {"sr", "ssr"}
    version: str | None = None
    sweep_key: str = ""  # set on sweep points

    @property
    def dev(self) -> dict[str, float]:
        """The selected checkpoint's dev point (the last phase's)."""
        last = self.phases[-1]["metrics"]
        return {k: last[f"{p}/best_{k}"] for p in ("sft_dev", "dpo_dev") for k in HEAD if f"{p}/best_{k}" in last}


class Trainer:
    """Trains phase chains once per (seed, chain) and turns a variant into a tracked, registered ``Run``."""

    def __init__(self, cfg: SafeBranchConfig, base: Path, data: dict[str, list[dict]], splits: Path, out: Path,
                 sr_floor: float | None = None) -> None:
        self.cfg, self.base, self.data, self.splits, self.out, self.sr_floor = cfg, base, data, splits, out, sr_floor
        self.done: dict[tuple[int, str], tuple[Path, dict[str, Any]]] = {}
        self.evals: dict[Path, tuple[dict[str, float], dict[str, dict], dict[str, dict]]] = {}  # sweep point = variant chain
        self.track = tracking_config(cfg.tracking)

    def params(self, kind: Kind, lr: float) -> dict[str, Any]:
        return {**getattr(self.cfg, kind), "learning_rate": lr}

    def chain(self, phases: tuple[Phase, ...], lrs: dict[str, float], seed: int) -> tuple[Path, list[dict[str, Any]]]:
        start, infos = self.base, []
        bar = ProgressArtifact(len(phases), f"safebranch phases seed{seed} {chain_key(phases, lrs)}")
        for i in range(len(phases)):
            bar.set(i)
            key = chain_key(phases[:i + 1], lrs)
            if (seed, key) not in self.done:
                p = phases[i]
                out = self.out / f"seed{seed}" / key
                params = self.params(p.kind, lrs[p.kind])
                batch = int(params.get("per_device_train_batch_size", 8))
                steps = int(params.get("max_steps", 0)) or -(-len(self.data[p.data]) // batch) * int(params.get("num_train_epochs", 1))
                every = max(self.cfg.eval_every.get(p.kind, 10), -(-steps // self.cfg.max_dev_evals))
                result, history = phase_task(start, p, self.data[p.data], out, params, seed, self.cfg.peft,
                                             self.splits / self.cfg.dev_split, every, self.sr_floor)
                self.done[(seed, key)] = (out, {"kind": p.kind, "data": p.data, "lr": lrs[p.kind],
                                                "steps_per_epoch": -(-len(self.data[p.data]) // batch),
                                                "metrics": result.metrics, "curve": result.curve, "history": history})
            start, info = self.done[(seed, key)]
            infos.append(info)
        bar.set(len(phases))
        return start, infos

    def run(self, variant: str, seed: int, lrs: dict[str, float], register: bool, tag: str = "") -> Run:
        name = f"{tag}{variant}-seed{seed}"
        params = {"variant": variant, "seed": seed, "learning_rates": lrs, "peft": self.cfg.peft,
                  **{p.kind: self.params(p.kind, lrs[p.kind]) for p in RECIPES[variant]}}
        with mlflow_run(self.track, name, params=params):  # opened before training: the run's duration is real
            model, infos = self.chain(RECIPES[variant], lrs, seed)
            run = Run(variant, seed, dict(lrs), model, infos)
            if model not in self.evals:
                self.evals[model] = eval_task(model, self.splits, self.cfg.eval_splits)
            run.eval, run.risks, run.tasks = self.evals[model]
            log_run_figures(run, name)
            for info in infos:
                for metrics, step in info["history"]:
                    log_metrics(metrics, step)
                log_metrics(info["metrics"])
            log_metrics({f"eval/{k}": v for k, v in run.eval.items()})
            log_metrics({f"dev/selected_{k}": v for k, v in run.dev.items()})
            if register:
                run.version = register_model_dir(self.cfg.registered_model, model, tags={
                    "variant": variant, "seed": str(seed), **{f"dev_{k}": f"{v:.6f}" for k, v in run.dev.items()}})
        return run


def log_run_figures(run: Run, name: str) -> None:
    """The variant's curves (every phase's logged history) and per-risk figure per split, on its MLflow run."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        panels: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(dict)
        for i, info in enumerate(run.phases):
            for metrics, step in info["history"]:
                for k, v in metrics.items():
                    if isinstance(v, int | float):
                        panels[k].setdefault(f"{i + 1}:{info['kind']}", []).append((step, float(v)))
        paths = [plot_series(dict(panels), Path(d) / "curves.png", f"{name}: training and dev curves")]
        for split, counts in run.risks.items():
            if counts:
                paths.append(plot_per_risk({k: (v[0], v[1]) for k, v in counts.items()}, Path(d) / f"per_risk_{split}.png",
                                           f"{name}: per risk type, {split}"))
        log_artifacts([p for png in paths for p in (png, png.with_suffix(".json"))], "figures")


def _mean_sd(vals: list[float]) -> str:
    """Mean ± sample std over seeds; the mean alone for one seed (no spread to report)."""
    return f"{statistics.mean(vals):.3f} ± {statistics.stdev(vals):.3f}" if len(vals) > 1 else f"{vals[0]:.3f}"


def table2(rows: dict[str, list[dict[str, float]]], splits: tuple[str, ...]) -> str:
    header = "| method | " + " | ".join(f"{s} {k.upper()}" for s in splits for k in HEAD) + " |"
    lines = [header, "|" + "---|" * (1 + len(splits) * len(HEAD))]
    for method, runs in rows.items():
        cells = [_mean_sd([r[f"{s}/{k}"] for r in runs]) for s in splits for k in HEAD]
        lines.append(f"| {LABELS.get(method, method)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table13(rows: dict[str, list[dict[str, float]]], split: str) -> str:
    lines = ["| scheme | prompt | SR | SSR | SRec |", "|---|---|---|---|---|"]
    for v in ("sft_only", "branchpo_only", "safebranch"):
        for variant, label in ((v, "relabelled (ours)"), (f"{v}_fb", "+FB")):
            if variant in rows:
                lines.append(f"| {LABELS[v]} | {label} | " + " | ".join(_mean_sd([r[f"{split}/{k}"] for r in rows[variant]])
                                                                         for k in HEAD) + " |")
    return "\n".join(lines) + "\n"


def table16(risks: dict[str, list[dict[str, dict]]], splits: tuple[str, ...]) -> str:
    """Per-risk-type SRec (safe / total triggered conditions), summed over seeds, base vs SafeBranch."""
    names = sorted({r for runs in risks.values() for run in runs for s in splits for r in run.get(s, {})})
    lines = ["| risk type | " + " | ".join(f"{m} {s}" for s in splits for m in risks) + " |",
             "|---|" + "---|" * (len(splits) * len(risks))]
    for risk in names:
        cells = []
        for s in splits:
            for runs in risks.values():
                safe = sum(run.get(s, {}).get(risk, [0, 0])[0] for run in runs)
                total = sum(run.get(s, {}).get(risk, [0, 0])[1] for run in runs)
                cells.append(f"{safe}/{total} ({safe / total:.2f})" if total else "-")
        lines.append(f"| {risk} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sweep(trainer: Trainer, cfg: SafeBranchConfig, seed: int) -> tuple[dict[str, float], list[Run]]:
    """Pick learning rates by the dev result of each sweep key's variant (``variants.SWEEPS``, in order)."""
    picks = {k: float(getattr(cfg, k)["learning_rate"]) for k in ("sft", "branchpo", "trajectory_dpo")}
    runs: list[Run] = []
    for key, (kind, variant) in SWEEPS.items():
        if not cfg.sweep.get(key) or variant not in cfg.variants:
            continue
        points = [trainer.run(variant, seed, lrs_for(variant, {**picks, key: float(lr)}), register=False, tag=f"sweep-{key}-")
                  for lr in cfg.sweep[key]]
        best = max(points, key=lambda r: rank(r.dev, trainer.sr_floor))
        picks[key] = best.lrs[kind]
        for r in points:
            r.sweep_key = key
        runs += points
        print(f"sweep {key}: " + ", ".join(f"lr {r.lrs[kind]:g} dev SSR {r.dev.get('ssr', 0):.3f} SR {r.dev.get('sr', 0):.3f}"
                                           for r in points) + f" -> {picks[key]:g}")
    return picks, runs


def sweep_table(runs: list[Run], picks: dict[str, float], splits: tuple[str, ...]) -> str:
    lines = ["| sweep (variant) | lr | selected step | dev SR | dev SSR | final reward acc. | "
             + " | ".join(f"{s} SR | {s} SSR" for s in splits) + " |", "|" + "---|" * (6 + 2 * len(splits))]
    for r in runs:
        kind = r.phases[-1]["kind"]
        acc = [m["dpo/rewards/accuracies"] for m, _ in r.phases[-1]["history"] if "dpo/rewards/accuracies" in m]
        mark = " **(picked)**" if picks[r.sweep_key] == r.lrs[kind] else ""
        step = r.phases[-1]["metrics"].get(("sft" if kind == "sft" else "dpo") + "_dev/best_step", 0)
        lines.append(f"| {r.sweep_key} ({r.variant}) | {r.lrs[kind]:g}{mark} | {step:.0f} | {r.dev.get('sr', 0):.3f} | "
                     f"{r.dev.get('ssr', 0):.3f} | {f'{acc[-1]:.2f}' if acc else '-'} | "
                     + " | ".join(f"{r.eval[f'{s}/sr']:.3f} | {r.eval[f'{s}/ssr']:.3f}" for s in splits) + " |")
    return "\n".join(lines) + "\n"


def _plots(out: Path, runs: list[Run], sweep_runs: list[Run], risks: dict[str, dict]) -> list[Path]:
    first = [r for r in runs if r.seed == runs[0].seed]
    dev = {f"dev {k.upper()}": {r.variant: [(p["step"], p[k]) for info in r.phases[-1:] for p in info["curve"]] for r in first}
           for k in ("ssr", "sr")}
    paths = [plot_series(dev, out / "dev_curves.png", f"Dev-split curves of each variant's last phase (seed {runs[0].seed})")]
    losses = {"train loss": {}, "DPO reward accuracy": {}}
    for r in first:
        for m, s in r.phases[-1]["history"]:
            for key, panel in (("sft/loss", "train loss"), ("dpo/loss", "train loss"), ("dpo/rewards/accuracies", "DPO reward accuracy")):
                if key in m:
                    losses[panel].setdefault(r.variant, []).append((s, m[key]))
    paths.append(plot_series(losses, out / "training_curves.png", "Training loss and DPO reward accuracy (last phase)"))
    if sweep_runs:
        panels: dict[str, dict[str, list]] = defaultdict(dict)
        for r in sweep_runs:
            kind = r.phases[-1]["kind"]
            per_epoch = r.phases[-1]["steps_per_epoch"]
            for k in ("ssr", "sr"):
                panels[f"{r.sweep_key}: dev {k.upper()}"][f"lr {r.lrs[kind]:g}"] = [
                    (p["step"] / per_epoch, p[k]) for p in r.phases[-1]["curve"]]
        paths.append(plot_series(panels, out / "sweep_curves.png", "Sweep: dev SR / SSR against epochs per learning rate",
                                 xlabel="epoch"))
    for split, counts in risks.items():
        paths.append(plot_per_risk({k: tuple(v) for k, v in counts.items()}, out / f"per_risk_{split}.png",
                                   f"SafeBranch per-risk SRec on {split} (all seeds)"))
    return paths


@flow(name="safebranch", log_prints=True)
def safebranch(cfg: SafeBranchConfig = SafeBranchConfig(), base: Path = BASE, pairs_dir: Path = PAIRS,
               rollouts: Path = ROLLOUTS, splits: Path = SPLITS, out: Path = OUT, metrics_path: Path = METRICS,
               promote_cfg: PromoteConfig | None = PromoteConfig()) -> dict[str, float]:
    pairs = read_jsonl(pairs_dir / "pairs.jsonl")
    safe = read_jsonl(pairs_dir / "safe_episodes.jsonl")
    train_tasks = load_task_dir(splits / cfg.train_split)[0]
    golden = golden_replay(train_tasks) if cfg.sft_data == "golden_replay" or "golden_replay_only" in cfg.variants else []
    raw_path = pairs_dir.parent / "raw" / "raw.jsonl"  # the final pairs' branches (prefix actions) for after-repair pairs
    final_ids = {p["pair_id"] for p in pairs}
    repaired = [b for b in (RawBranch.from_json(r) for r in (read_jsonl(raw_path) if raw_path.exists() else []))
                if b.branch_id in final_ids]
    extra = extra_pairs(cfg.branchpo_pairs, train_tasks, repaired)
    trajectories = [Trajectory.from_json(read_json(p)) for p in sorted((rollouts / "shards").glob("*.json"))]
    earlier = {n: read_jsonl(pairs_dir / f"pairs_{n}.jsonl") if (pairs_dir / f"pairs_{n}.jsonl").exists() else None
               for n in ("extracted", "judged")}
    data = datasets(pairs, read_jsonl(pairs_dir / "pairs_fb.jsonl"), read_jsonl(pairs_dir / "sft.jsonl"),
                    read_jsonl(pairs_dir / "replay.jsonl"), trajectory_pairs(safe, trajectories, len(pairs), False),
                    trajectory_pairs(safe, trajectories, len(pairs), True), earlier["extracted"], earlier["judged"],
                    golden, extra, cfg.sft_data)
    print("data: " + ", ".join(f"{k} {len(v)}" for k, v in data.items())
          + f"; extra BranchPO pairs {len(extra)} ({', '.join(cfg.branchpo_pairs) or 'none'})")
    base_dev = _dev_evaluator(splits / cfg.dev_split)(HFActor(base, batch_size=64))
    sr_floor = floor_from(base_dev["sr"], cfg.max_dev_sr_drop)
    print(f"base dev SR {base_dev['sr']:.3f} SSR {base_dev['ssr']:.3f}; selection floor dev SR >= "
          + (f"{sr_floor:.3f}" if sr_floor is not None else "none"))
    trainer = Trainer(cfg, base, data, splits, out, sr_floor)
    lrs, sweep_runs = sweep(trainer, cfg, cfg.seeds[0])
    runs = [trainer.run(v, seed, lrs_for(v, lrs), register=True) for seed in cfg.seeds for v in cfg.variants]
    base_eval, base_risks, base_tasks = eval_task(base, splits, cfg.eval_splits)
    rows: dict[str, list[dict[str, float]]] = {"base": [base_eval]}
    for r in runs:
        rows.setdefault(r.variant, []).append(r.eval)
        print(f"{r.variant} seed {r.seed}: dev SSR {r.dev.get('ssr', 0):.3f} SR {r.dev.get('sr', 0):.3f}; test SR "
              f"{r.eval['test/sr']:.3f} SSR {r.eval['test/ssr']:.3f} (version {r.version})")
    seeds = f"seeds {list(cfg.seeds)}; critic-free, T = 0; checkpoints selected on {cfg.dev_split}"
    atomic_write_text(out / "table2.md", f"# Table 2 (mean ± std over {seeds})\n\n" + table2(rows, cfg.eval_splits))
    atomic_write_text(out / "table13.md", f"# Table 13: +FB ablation on {cfg.eval_splits[0]} ({seeds})\n\n"
                      + table13(rows, cfg.eval_splits[0]))
    sb_risks = [r.risks for r in runs if r.variant == "safebranch"]
    atomic_write_text(out / "table16.md", f"# Table 16: per-risk-type SRec, safe/total summed over seeds ({seeds})\n\n"
                      + table16({"base (1 run, deterministic)": [base_risks], "SafeBranch": sb_risks}, cfg.eval_splits))
    atomic_write_text(out / "sweep.md", f"# Learning-rate sweep (seed {cfg.seeds[0]}; picked by dev SSR, ties SR)\n\n"
                      + sweep_table(sweep_runs, lrs, cfg.eval_splits))
    summed = {s: {risk: [sum(r[s][risk][i] for r in sb_risks if risk in r[s]) for i in (0, 1)]
                  for risk in sorted({k for r in sb_risks for k in r[s]})} for s in cfg.eval_splits}
    plots = _plots(out, runs, sweep_runs, summed)
    metrics: dict[str, float] = {f"lr/{k}": v for k, v in lrs.items()}
    for method, results in rows.items():
        for key in results[0]:
            metrics[f"eval/{method}/{key}"] = statistics.mean(r[key] for r in results)
    if "safebranch" in rows:
        for s in cfg.eval_splits:
            metrics[f"eval/ssr_lift/{s}"] = metrics[f"eval/safebranch/{s}/ssr"] - metrics[f"eval/base/{s}/ssr"]
            metrics[f"eval/sr_drop/{s}"] = metrics[f"eval/base/{s}/sr"] - metrics[f"eval/safebranch/{s}/sr"]
    by_variant = {v: [r.tasks for r in runs if r.variant == v] for v in {r.variant for r in runs}}
    paired = {f"{a} vs {b}": {s: compare([t[s] for t in by_variant[a]], [t[s] for t in by_variant[b]],
                                         n=cfg.paired_bootstrap, seed=cfg.seeds[0]) for s in cfg.eval_splits}
              for a, b in PAIRED if a in by_variant and b in by_variant and cfg.paired_bootstrap}
    for name, per_split in paired.items():
        for s, cells in per_split.items():
            metrics.update({f"paired/{name.replace(' vs ', '_vs_')}/{s}/{k}_{part}": v[i]
                            for k, v in cells.items() for i, part in enumerate(("diff", "lo", "hi"))})
    atomic_write_text(out / "paired.md", f"# Per-task paired differences, 95 % bootstrap CI ({seeds}; each task "
                      f"averaged over seeds; * = interval excludes 0)\n\n" + paired_table(paired, cfg.eval_splits))
    write_json(out / "results.json", {"learning_rates": lrs, "runs": [_run_json(r) for r in runs],
                                      "sweep": [_run_json(r) for r in sweep_runs], "base": base_eval,
                                      "base_tasks": base_tasks, "base_dev": base_dev, "sr_floor": sr_floor,
                                      "paired": paired})
    with mlflow_run(trainer.track, "safebranch-report", params={**dataclasses.asdict(cfg), "picked_lrs": lrs}):
        log_metrics(metrics)
        log_artifacts([out / n for n in ("table2.md", "table13.md", "table16.md", "sweep.md", "paired.md", "results.json")]
                      + plots)
    candidates = [r for r in runs if r.variant == "safebranch" and r.version]
    if promote_cfg and candidates:
        best = max(candidates, key=lambda r: rank(r.dev, sr_floor))
        tag_base_dev(promote_cfg, base_dev)
        decision = promote(promote_cfg, version=best.version, base_dev=base_dev)
        print(f"promotion of {cfg.registered_model} v{best.version} (SafeBranch seed {best.seed}): {decision['reason']}")
    write_manifest(out, cfg, inputs=[pairs_dir, base])
    write_json(metrics_path, metrics)
    print((out / "table2.md").read_text())
    return metrics


def _run_json(r: Run) -> dict[str, Any]:
    return {"variant": r.variant, "seed": r.seed, "learning_rates": r.lrs, "model": str(r.model), "version": r.version,
            "dev": r.dev, "eval": r.eval, "risks": r.risks, "tasks": r.tasks,
            "phases": [{k: v for k, v in p.items() if k != "history"} for p in r.phases]}


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
