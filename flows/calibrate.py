"""Stage ``calibrate``: Platt-calibrate the rubric severity into a per-frame margin ℓ̂(o) (§4.2 step iii).

Per env: a class-balanced logistic regression of the per-episode safety bit (broadcast to the episode's
frames) on ρ, ℓ̂(o) = −(aρ + b), positive on safe frames; then the cost quality of −ℓ̂ against the
ground-truth per-frame cost, which the calibration never saw: per-frame AUROC, pre-contact tail AUROC,
tail AUROC in the |ℓ| < band, Spearman with episode cost (Table 11 layout). Outputs
``data/shield/calibration/<env>/{platt.json, margins.npz, cost_quality.json, reliability.png}``,
``data/shield/calibration/table11.md``, ``data/shield/calibration_metrics.json``; one MLflow run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from prefect import flow

from embodied_safety.config.calibrate import CalibrateConfig
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.shield.policy.demos import save_npz
from flows._shield import CALIBRATION, LABELS, ROLLOUTS
from flows._stage import Plot, Stage
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

METRICS = Path("data/shield/calibration_metrics.json")


@flow(name="calibrate", log_prints=True)
def calibrate(cfg: CalibrateConfig = CalibrateConfig(), rollouts: Path = ROLLOUTS, labels: Path = LABELS,
              out: Path = CALIBRATION, metrics_path: Path = METRICS) -> dict[str, float]:
    from embodied_safety.shield.costs.calibrate import calibration_metrics, fit_platt, plot_reliability
    from embodied_safety.shield.costs.metrics import cost_quality, render_table11
    from embodied_safety.shield.policy.rollouts import RolloutSet

    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    rows: dict[str, dict[str, float]] = {}
    for env in cfg.envs:
        data = RolloutSet.load(rollouts / env / "rollouts.npz", mmap=False)
        rho = np.load(labels / env / "scores.npz")["rho"]
        unsafe = np.asarray(data.label).astype(bool)
        cal = fit_platt(rho, unsafe, C=cfg.C)
        margin = cal.margin(rho)
        quality = cost_quality(-margin, data.cost, data.frame_episode, data.frame_t, data.episode_cost,
                               margin=data.margin, k=cfg.precontact_k, band=cfg.band)
        m = {**calibration_metrics(cal, rho, unsafe), **quality}
        cal.save(tmp / env / "platt.json")
        save_npz(tmp / env / "margins.npz", {"margin": margin.astype(np.float32)}, compress=True)
        write_json(tmp / env / "cost_quality.json", m)
        plot_reliability(cal, rho, unsafe, tmp / env / "reliability.png", title=f"Platt calibration, {env}")
        rows[f"{env} (pixel rubric, Platt)"] = m
        metrics.update({f"calibrate/{env}/{k.replace('calibration/', '').replace('cost/', '')}": float(v)
                        for k, v in m.items() if isinstance(v, int | float)})
        print(f"{env}: a={cal.a:.3f} b={cal.b:.3f}; per-frame AUROC of ℓ̂ {quality['cost/per_frame_auroc']:.3f}, "
              f"pre-contact tail AUROC {quality['cost/precontact_tail_auroc']:.3f}")
    atomic_write_text(tmp / "table11.md", "# Per-frame cost quality (Table 11 layout)\n\n" + render_table11(rows))
    write_manifest(tmp, cfg, inputs=[labels / env / "scores.npz" for env in cfg.envs])
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    with mlflow_run(tracking_config(cfg.tracking), "calibrate", {"envs": list(cfg.envs), "C": cfg.C}):
        log_metrics(metrics)
        log_artifacts([out / "table11.md", *(out / env / "reliability.png" for env in cfg.envs)])
    return metrics


STAGE = Stage("calibrate", calibrate, config=CalibrateConfig, inputs={"rollouts": str(ROLLOUTS), "labels": str(LABELS)},
              outs=(str(CALIBRATION),), metrics=str(METRICS), plots=(Plot(f"{CALIBRATION}/dubins/reliability.png", x_label="predicted P(unsafe)", y_label="observed rate"),))
main = STAGE.main

if __name__ == "__main__":
    main()
