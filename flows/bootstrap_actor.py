"""Stage ``bootstrap_actor``: train the embedded default actor from scratch, evaluate, register.

Writes ``models/bootstrap_actor/`` (``model/`` = HF dir, ``train_log.jsonl``, ``training_curve.png``,
``manifest.json``) and ``models/bootstrap_actor_metrics.json``; logs the run to MLflow and registers
the model as ``actor-base``. The issue's thresholds are reported as ``checks/*`` (1 = met).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from prefect import flow

from embodied_safety.actors.bootstrap import TrainSettings
from embodied_safety.actors.bootstrap_data import DataSettings, bootstrap_examples
from embodied_safety.actors.hf import HFActor
from embodied_safety.config.bootstrap_actor import BootstrapActorConfig
from embodied_safety.config.shared import ModelShape
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.envs.household.suite.augment import AugmentSettings, augment_tasks, held_out
from embodied_safety.evaluation.plots import plot_curves
from embodied_safety.io import replace_dir, scratch_dir, without_run_facts, write_json, write_jsonl
from embodied_safety.manifest import write_manifest
from embodied_safety.rollout.actor_eval import evaluate_actor, feedback_following
from flows._stage import Plot, Stage
from tasks.actors import train_bootstrap_task
from tasks.tracking import log_metrics, mlflow_run, register_model_dir, tracking_config

SPLITS = Path("data/household/splits")
OUT = Path("models/bootstrap_actor")
METRICS = Path("models/bootstrap_actor_metrics.json")


@flow(name="bootstrap_actor", log_prints=True)
def bootstrap_actor(cfg: BootstrapActorConfig = BootstrapActorConfig(), splits: Path = SPLITS, out: Path = OUT,
                    metrics_path: Path = METRICS) -> dict[str, float]:
    train_tasks, _ = load_task_dir(splits / "train")
    eval_tasks, _ = load_task_dir(splits / cfg.eval_split)
    data = DataSettings(cfg.drop_prob, cfg.patterns, cfg.seed, "compact", cfg.observation, cfg.renamed_fraction,
                        cfg.recovery, rename_exclude=held_out() if cfg.renamed_fraction else frozenset())
    augmented, aug_counts = augment_tasks(train_tasks, AugmentSettings(
        cfg.augment_extra_objects, cfg.augment_extra_max, cfg.augment_rename_targets, cfg.seed))
    if augmented:
        print(f"augmentation: {aug_counts}")
    examples = bootstrap_examples([*train_tasks, *augmented], data)
    kinds = {k: sum(e.kind == k for e in examples) for k in sorted({e.kind for e in examples})}
    print(f"{len(examples)} examples from {len(train_tasks)} train tasks (+{len(augmented)} augmented): {kinds}")
    shape = ModelShape(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(ModelShape)})
    tmp = scratch_dir(out)
    rows: list[dict[str, float]] = []
    with mlflow_run(tracking_config(cfg.tracking), "bootstrap_actor", params=dataclasses.asdict(cfg)):
        metrics: dict[str, float] = dict(train_bootstrap_task(
            examples, tmp / "model", shape, TrainSettings(sft=cfg.sft, seed=cfg.seed),
            log=lambda m, step: rows.append({**m, "step": step}), proxy_names=cfg.proxy_names))
        metrics.update({f"data/examples_{k}": v for k, v in kinds.items()})
        if augmented:
            metrics.update({f"data/augment_{k}": float(v) for k, v in aug_counts.items()})
        actor = HFActor(tmp / "model")
        ev, _ = evaluate_actor(eval_tasks, actor, temperature=0.0, seed=cfg.seed, prefix="eval")
        metrics.update({k: v for k, v in ev.items() if k.count("/") == 1})
        metrics.update(feedback_following(eval_tasks, actor, prefix="eval"))
        metrics.update(ood_with_and_without_proxies(actor, tmp / "model", splits, cfg))
        metrics["checks/sr"] = float(metrics["eval/sr"] >= cfg.min_sr)
        metrics["checks/ssr"] = float(0 < metrics["eval/ssr"] <= cfg.max_ssr)
        metrics["checks/feedback_following"] = float(metrics.get("eval/feedback_following", 0) >= cfg.min_feedback_following)
        for row in rows:
            log_metrics({k: v for k, v in row.items() if k != "step"}, step=int(row["step"]))
        write_jsonl(tmp / "train_log.jsonl", without_run_facts(rows))  # the model dir's bytes: no wall-clock
        curve = plot_curves(rows, ["losses/loss", "charts/mean_token_accuracy", "charts/learning_rate"],
                            tmp / "training_curve.png", "bootstrap actor (SFT from scratch)")
        write_manifest(tmp, cfg, inputs=[splits / "train"])
        log_metrics(metrics)
        import mlflow

        mlflow.log_artifact(str(curve))
        replace_dir(tmp, out)
        metrics["registry/version"] = float(register_model_dir(cfg.register_as, out / "model",
                                                                tags={"stage": "bootstrap_actor"}))
    write_json(metrics_path, metrics)
    print(f"bootstrap actor on {cfg.eval_split}: SR {metrics['eval/sr']:.3f} SSR {metrics['eval/ssr']:.3f} "
          f"feedback-following {metrics.get('eval/feedback_following', 0):.3f}; checks "
          f"{[k for k, v in metrics.items() if k.startswith('checks/') and v == 1.0]}")
    return metrics


def ood_with_and_without_proxies(actor: HFActor, model: Path, splits: Path,
                                 cfg: BootstrapActorConfig) -> dict[str, float]:
    """SR / SSR on each of ``cfg.ood_splits`` as the actor runs (``{split}/sr``) and, when it has proxy names, without
    them (``{split}/plain_sr``): the reports show both (actors/proxy.py)."""
    plain = HFActor(model, proxy_names=False) if actor.lexicon is not None else None
    out: dict[str, float] = {}
    for split in cfg.ood_splits:
        tasks, _ = load_task_dir(splits / split)
        for tag, a in (("", actor), ("plain_", plain)):
            if a is not None:
                ev, _ = evaluate_actor(tasks, a, temperature=0.0, seed=cfg.seed, prefix=split)
                out.update({f"{split}/{tag}{k.split('/', 1)[1]}": float(v) for k, v in ev.items()
                            if k.count("/") == 1 and k.split("/", 1)[1] in ("sr", "ssr")})
    return out


STAGE = Stage("bootstrap_actor", bootstrap_actor, config=BootstrapActorConfig, inputs={"splits": str(SPLITS)},
              outs=(str(OUT),), metrics=str(METRICS), plots=(Plot(f"{OUT}/training_curve.png"),))
main = STAGE.main

if __name__ == "__main__":
    main()
