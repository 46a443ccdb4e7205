"""Prefect task of the ``bc_policy`` stage: BC (+ DAgger with the scripted expert) for one env, evaluated
(the recipe and its episode seeds: ``embodied_safety.shield.policy.start``), tracked in MLflow and written."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config.bc_policy import BCPolicyConfig
from embodied_safety.io import without_run_facts, write_json
from embodied_safety.threads import set_torch_threads
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config


@task(name="train-bc", cache_policy=NO_CACHE, log_prints=True)
def train_bc_task(env: str, demos_path: Path, cfg: BCPolicyConfig, out: Path) -> dict[str, float]:
    from embodied_safety.shield.policy.demos import DemoSet
    from embodied_safety.shield.policy.start import fit_restarts

    set_torch_threads(cfg.threads)
    with mlflow_run(tracking_config(cfg.tracking), f"bc_policy/{env}", {"env": env, **cfg.__dict__}):
        fit = fit_restarts(env, DemoSet.load(demos_path), cfg, log=log_metrics)
        hist, final = fit.history, {**fit.final, **fit.summary()}
        fit.policy.save(out)  # writes the whole dir: the curve and history go in after
        title = f"behaviour cloning{' + DAgger' if hist.rounds else ''}, {env} (checkpoint by {hist.select_by})"
        figures = [hist.plot(out / "bc_curve.png", title=title)]
        if len(fit.rows) > 1:
            figures.append(fit.plot(out / "restarts.png", title=f"{env}: {len(fit.rows)} BC restarts, one kept by "
                                                                f"{hist.select_by} on the selection episodes"))
        write_json(out / "history.json",  # no wall-clock
                   without_run_facts({"rows": hist.rows, "rounds": hist.rounds, "final": final,
                                      "restarts": fit.rows, "restart_chosen": fit.chosen}))
        log_metrics({f"bc/final/{k}": v for k, v in final.items()})
        log_artifacts([*figures, out / "history.json"])
    for r in fit.rows:
        print(f"{env}: restart seed {r['seed']:.0f}: selection SR {r['sr']:.3f}, held-out SR {r['eval_sr']:.3f}, "
              f"violation rate {r['eval_violation_rate']:.3f}" + ("  <- kept" if r is fit.rows[fit.chosen] else ""))
    print(f"{env}: best epoch {final['best_epoch']:.0f} (by {hist.select_by}), eval SR {final['eval_sr']:.3f}, "
          f"violation rate {final['eval_violation_rate']:.3f}, {final['total_seconds']:.0f} s")
    return final
