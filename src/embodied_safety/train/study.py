"""A SafeBranch study (stage ``safebranch``): its data sets, one run per (variant, seed), the data its results
file holds, its summary metrics and its figures. Pure: ``tasks/safebranch.py`` wraps training and evaluation
as Prefect tasks and tracks the runs, ``flows/safebranch.py`` orchestrates, and the report stage renders the
tables from ``results.json`` (:mod:`embodied_safety.evaluation.report`).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..actors.hf import HFActor
from ..branch.golden import extra_pairs, golden_replay
from ..config.safebranch import SafeBranchConfig
from ..envs.household.env import CompiledTask, load_task_dir
from ..envs.household.suite.augment import AugmentSettings, augment_tasks
from ..evaluation.household_metrics import per_risk_counts
from ..evaluation.plots import plot_per_risk, plot_series
from ..evaluation.selection import OUTCOMES
from ..evaluation.stats import compare, per_task
from ..io import read_json, read_jsonl
from ..records import RawBranch, Trajectory
from ..rollout.actor_eval import evaluate_actor
from .common import TrainResult
from .safebranch import train_branchpo, train_sft
from .trajectory_dpo import train_trajectory_dpo, trajectory_pairs
from .variants import Phase, datasets

HEAD = ("sr", "ssr", "srec")
PAIRED = (("safebranch", "sft_only"), ("safebranch", "golden_replay_only"), ("sft_only", "golden_replay_only"))
TRAINERS = {"sft": train_sft, "branchpo": train_branchpo, "trajectory_dpo": train_trajectory_dpo}
Evaluation = tuple[dict[str, float], dict[str, dict], dict[str, dict]]


def replay_tasks(train_tasks: Sequence[CompiledTask], extra_objects: int) -> list[CompiledTask]:
    """The tasks the golden replay covers: every train task, plus ``extra_objects`` copies of each with 1-2 neutral
    extra objects, made exactly as the bootstrap actor's (``augment_tasks`` with its default seed 0)."""
    if extra_objects <= 0:
        return list(train_tasks)
    return [*train_tasks, *augment_tasks(train_tasks, AugmentSettings(extra_copies=extra_objects))[0]]


def load_data(cfg: SafeBranchConfig, pairs_dir: Path, rollouts: Path, splits: Path) -> tuple[dict[str, list[dict]], list]:
    """The named data sets of every variant (``variants.datasets``) and the extra BranchPO pairs."""
    pairs = read_jsonl(pairs_dir / "pairs.jsonl")
    safe = read_jsonl(pairs_dir / "safe_episodes.jsonl")
    train_tasks = load_task_dir(splits / cfg.train_split)[0]
    golden = (golden_replay(replay_tasks(train_tasks, cfg.replay_extra_objects))
              if cfg.sft_data == "golden_replay" or "golden_replay_only" in cfg.variants else [])
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
    return data, extra


def dev_evaluator(dev_dir: Path) -> Callable[[HFActor], dict[str, Any]]:
    """Dev SR / SSR / SRec and the per-task outcomes the Selector's tie test pairs (``selection.OUTCOMES``)."""
    tasks = load_task_dir(dev_dir)[0]

    def evaluate(actor: HFActor) -> dict[str, Any]:
        m, results = evaluate_actor(tasks, actor)
        return {**{k: float(m[f"eval/{k}"]) for k in HEAD},
                OUTCOMES: {"sr": [int(r.success) for r in results], "ssr": [int(r.safe_success) for r in results]}}

    return evaluate


def train_phase(start: Path, phase: Phase, data: list[dict], out: Path, params: dict, seed: int, peft: dict | None,
                dev_dir: Path, eval_every: int, sr_floor: float | None = None) -> tuple[TrainResult, list[tuple[dict, int]]]:
    """One training phase with dev-split checkpoint selection; the result and its per-step log."""
    history: list[tuple[dict, int]] = []
    result = TRAINERS[phase.kind](start, data, out, params, seed, log=lambda m, s: history.append((m, s)), peft=peft,
                                  evaluate=dev_evaluator(dev_dir), eval_every=eval_every, sr_floor=sr_floor)
    return result, history


def phase_schedule(params: dict[str, Any], rows: int, eval_every: int, max_dev_evals: int) -> tuple[int, int]:
    """(steps per epoch, dev evaluation interval): at least ``eval_every`` and at most ``max_dev_evals`` evaluations."""
    batch = int(params.get("per_device_train_batch_size", 8))
    steps = int(params.get("max_steps", 0)) or -(-rows // batch) * int(params.get("num_train_epochs", 1))
    return -(-rows // batch), max(eval_every, -(-steps // max_dev_evals))


def evaluate_model(model: Path, splits: Path, names: tuple[str, ...]) -> Evaluation:
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

    def to_json(self) -> dict[str, Any]:
        """The run in ``results.json`` (a sweep point also names its sweep and its last DPO reward accuracy)."""
        acc = [m["dpo/rewards/accuracies"] for m, _ in self.phases[-1]["history"] if "dpo/rewards/accuracies" in m]
        sweep = {"sweep_key": self.sweep_key, "final_reward_acc": acc[-1] if acc else None} if self.sweep_key else {}
        return {"variant": self.variant, "seed": self.seed, "learning_rates": self.lrs, "model": str(self.model),
                "version": self.version, "dev": self.dev, "eval": self.eval, "risks": self.risks, "tasks": self.tasks,
                "phases": [{k: v for k, v in p.items() if k != "history"} for p in self.phases], **sweep}


def summed_risks(runs: list[Run], splits: tuple[str, ...]) -> dict[str, dict[str, list[int]]]:
    """Per split, per risk type: (satisfied, triggered) summed over the given runs."""
    return {s: {risk: [sum(r.risks[s][risk][i] for r in runs if risk in r.risks[s]) for i in (0, 1)]
                for risk in sorted({k for r in runs for k in r.risks[s]})} for s in splits}


def summary_metrics(lrs: dict[str, float], base_eval: dict[str, float], runs: list[Run], splits: tuple[str, ...],
                    paired: dict[str, dict[str, dict]]) -> dict[str, float]:
    """``models/safebranch_metrics.json``: picked rates, mean eval per method, SSR lift / SR drop, paired CIs."""
    rows: dict[str, list[dict[str, float]]] = {"base": [base_eval]}
    for r in runs:
        rows.setdefault(r.variant, []).append(r.eval)
    metrics: dict[str, float] = {f"lr/{k}": v for k, v in lrs.items()}
    for method, results in rows.items():
        for key in results[0]:
            metrics[f"eval/{method}/{key}"] = statistics.mean(r[key] for r in results)
    if "safebranch" in rows:
        for s in splits:
            metrics[f"eval/ssr_lift/{s}"] = metrics[f"eval/safebranch/{s}/ssr"] - metrics[f"eval/base/{s}/ssr"]
            metrics[f"eval/sr_drop/{s}"] = metrics[f"eval/base/{s}/sr"] - metrics[f"eval/safebranch/{s}/sr"]
    for name, per_split in paired.items():
        for s, cells in per_split.items():
            metrics.update({f"paired/{name.replace(' vs ', '_vs_')}/{s}/{k}_{part}": v[i]
                            for k, v in cells.items() for i, part in enumerate(("diff", "lo", "hi"))})
    return metrics


def paired_comparisons(runs: list[Run], splits: tuple[str, ...], n: int, seed: int) -> dict[str, dict[str, dict]]:
    """Per-task paired bootstrap differences (``PAIRED``), each task averaged over seeds."""
    by_variant = {v: [r.tasks for r in runs if r.variant == v] for v in {r.variant for r in runs}}
    return {f"{a} vs {b}": {s: compare([t[s] for t in by_variant[a]], [t[s] for t in by_variant[b]], n=n, seed=seed)
                            for s in splits}
            for a, b in PAIRED if a in by_variant and b in by_variant and n}


def run_figures(run: Run, name: str, folder: Path) -> list[Path]:
    """One run's curves (every phase's logged history) and per-risk figure per split, with their data files."""
    panels: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(dict)
    for i, info in enumerate(run.phases):
        for metrics, step in info["history"]:
            for k, v in metrics.items():
                if isinstance(v, int | float):
                    panels[k].setdefault(f"{i + 1}:{info['kind']}", []).append((step, float(v)))
    paths = [plot_series(dict(panels), folder / "curves.png", f"{name}: training and dev curves")]
    for split, counts in run.risks.items():
        if counts:
            paths.append(plot_per_risk({k: (v[0], v[1]) for k, v in counts.items()}, folder / f"per_risk_{split}.png",
                                       f"{name}: per risk type, {split}"))
    return [p for png in paths for p in (png, png.with_suffix(".json"))]


def study_figures(out: Path, runs: list[Run], sweep_runs: list[Run], risks: dict[str, dict]) -> list[Path]:
    """The stage's figures: dev curves, training curves, sweep curves (first seed), per-risk SRec per split."""
    first = [r for r in runs if r.seed == runs[0].seed]
    dev = {f"dev {k.upper()}": {r.variant: [(p["step"], p[k]) for info in r.phases[-1:] for p in info["curve"]] for r in first}
           for k in ("ssr", "sr")}
    paths = [plot_series(dev, out / "dev_curves.png", f"Dev-split curves of each variant's last phase (seed {runs[0].seed})")]
    losses: dict[str, dict[str, list]] = {"train loss": {}, "DPO reward accuracy": {}}
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
