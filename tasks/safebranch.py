"""Prefect tasks of the ``safebranch`` stage (a training phase, an actor's evaluation) and the ``Trainer`` that
runs a variant as tracked, registered phase chains; the science is :mod:`embodied_safety.train.study`."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config.safebranch import SafeBranchConfig
from embodied_safety.evaluation.selection import rank
from embodied_safety.train.common import TrainResult
from embodied_safety.train.study import (
    Evaluation,
    Run,
    evaluate_model,
    phase_schedule,
    run_figures,
    train_phase,
)
from embodied_safety.train.variants import RECIPES, SWEEPS, Kind, Phase, chain_key, lrs_for
from tasks.progress import ProgressArtifact
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, register_model_dir, tracking_config

#: finished training phases by content key: a killed ``safebranch`` stage (or study) trains only what is missing
PHASES = Path(".cache/safebranch/phases")


def phase_key(start: Path, phase: Phase, data: list[dict], params: dict, seed: int, peft: dict | None, dev_dir: Path,
              eval_every: int, sr_floor: float | None) -> str:
    """Everything a phase's checkpoint depends on: the start model's content, the phase, its examples, the training
    params, the seed, the adapter, the dev split's content, the evaluation interval, the SR floor and the code."""
    from embodied_safety.codekey import cached_code_key
    from embodied_safety.manifest import hash_path
    from tasks.store import content_key

    return content_key({"start": hash_path(start), "phase": str(phase), "data": content_key(data), "params": params,
                        "seed": seed, "peft": peft, "dev": hash_path(dev_dir), "eval_every": eval_every,
                        "sr_floor": sr_floor, "code": cached_code_key("embodied_safety.train.study")})


@task(name="train-phase", cache_policy=NO_CACHE, log_prints=False)
def phase_task(start: Path, phase: Phase, data: list[dict], out: Path, params: dict, seed: int,
               peft: dict | None, dev_dir: Path, eval_every: int, sr_floor: float | None = None,
               store: Path = PHASES) -> tuple[TrainResult, list[tuple[dict, int]]]:
    """One training phase with dev-split checkpoint selection; returns the result and its per-step log. The
    checkpoint and the result are stored under :func:`phase_key`, published whole; a stored phase is copied to
    ``out`` instead of trained again."""
    import shutil

    from embodied_safety.io import read_json, replace_dir, scratch_dir, write_json

    stored = store / phase_key(start, phase, data, params, seed, peft, dev_dir, eval_every, sr_floor)
    if (stored / "phase.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(stored / "model", out)
        raw = read_json(stored / "phase.json")
        return TrainResult(raw["metrics"], raw["curve"]), [(m, int(s)) for m, s in raw["history"]]
    result, history = train_phase(start, phase, data, out, params, seed, peft, dev_dir, eval_every, sr_floor)
    tmp = scratch_dir(stored)
    shutil.copytree(out, tmp / "model")
    write_json(tmp / "phase.json", {"metrics": result.metrics, "curve": result.curve, "history": history})
    replace_dir(tmp, stored)
    return result, history


@task(name="evaluate-actor", cache_policy=NO_CACHE)
def eval_task(model: Path, splits: Path, names: tuple[str, ...]) -> Evaluation:
    """Critic-free SR / SSR / SRec per split, per-risk (satisfied, triggered) counts, per-task outcomes."""
    return evaluate_model(model, splits, names)


class Trainer:
    """Trains phase chains once per (seed, chain) and turns a variant into a tracked, registered ``Run``."""

    def __init__(self, cfg: SafeBranchConfig, base: Path, data: dict[str, list[dict]], splits: Path, out: Path,
                 sr_floor: float | None = None) -> None:
        self.cfg, self.base, self.data, self.splits, self.out, self.sr_floor = cfg, base, data, splits, out, sr_floor
        self.done: dict[tuple[int, str], tuple[Path, dict[str, Any]]] = {}
        self.evals: dict[Path, Evaluation] = {}  # sweep point = variant chain
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
                per_epoch, every = phase_schedule(params, len(self.data[p.data]), self.cfg.eval_every.get(p.kind, 10),
                                                  self.cfg.max_dev_evals)
                result, history = phase_task(start, p, self.data[p.data], out, params, seed, self.cfg.peft,
                                             self.splits / self.cfg.dev_split, every, self.sr_floor)
                self.done[(seed, key)] = (out, {"kind": p.kind, "data": p.data, "lr": lrs[p.kind],
                                                "steps_per_epoch": per_epoch,
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
            with tempfile.TemporaryDirectory() as d:
                log_artifacts(run_figures(run, name, Path(d)), "figures")
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

    def sweep(self, seed: int) -> tuple[dict[str, float], list[Run]]:
        """Pick learning rates by the dev result of each sweep key's variant (``variants.SWEEPS``, in order)."""
        cfg = self.cfg
        picks = {k: float(getattr(cfg, k)["learning_rate"]) for k in ("sft", "branchpo", "trajectory_dpo")}
        runs: list[Run] = []
        for key, (kind, variant) in SWEEPS.items():
            if not cfg.sweep.get(key) or variant not in cfg.variants:
                continue
            points = [self.run(variant, seed, lrs_for(variant, {**picks, key: float(lr)}), register=False,
                               tag=f"sweep-{key}-") for lr in cfg.sweep[key]]
            best = max(points, key=lambda r: rank(r.dev, self.sr_floor))
            picks[key] = best.lrs[kind]
            for r in points:
                r.sweep_key = key
            runs += points
            print(f"sweep {key}: " + ", ".join(f"lr {r.lrs[kind]:g} dev SSR {r.dev.get('ssr', 0):.3f} "
                                               f"SR {r.dev.get('sr', 0):.3f}" for r in points) + f" -> {picks[key]:g}")
        return picks, runs
