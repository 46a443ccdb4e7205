"""Stage ``bc_policy``: behaviour-clone the language-conditioned visuomotor policy in each control env.

Per env (``tasks/bc_policy.py``): the demos of ``shield_demos`` -> ``train_bc`` (Gaussian NLL, random-shift
augmentation) -> ``dagger_rounds`` rounds of DAgger with the privileged scripted expert (the policy's own
episodes relabelled by the expert, aggregated, retrained) -> the checkpoint with the best closed-loop SR on
selection seeds (``select_by: sr`` / ``sr_1se``; ``nll``: the lowest held-out NLL) -> with ``restarts[env]`` > 1 the
same from more training seeds and the same rule across the runs -> evaluation of the deterministic policy on other
held-out seeds (SR = reach with zero violations, reach rate, violation rate, CSC; every restart's beside the kept
one's: ``restarts_*``). Outputs
``models/shield/bc/<env>/{config.json, model.safetensors, history.json, bc_curve.png[, restarts.png]}``,
``models/shield/bc_metrics.json``; one MLflow run per env with the curve.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.config.bc_policy import BCPolicyConfig
from embodied_safety.io import replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from flows._shield import BC, DEMOS
from flows._stage import Plot, Stage
from tasks.bc_policy import train_bc_task

METRICS = Path("models/shield/bc_metrics.json")
KEPT = ("val_loss", "best_epoch", "total_seconds", "dagger_rounds", "dagger_steps")


@flow(name="bc_policy", log_prints=True)
def bc_policy(cfg: BCPolicyConfig = BCPolicyConfig(), demos: Path = DEMOS, out: Path = BC,
              metrics_path: Path = METRICS) -> dict[str, float]:
    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    for env in cfg.envs:
        final = train_bc_task(env, demos / env / "demos.npz", cfg, tmp / env)
        metrics.update({f"bc/{env}/{k}": v for k, v in final.items()
                        if k.startswith(("eval_", "restart")) or k in KEPT})
    write_manifest(tmp, cfg, inputs=[demos / env / "demos.npz" for env in cfg.envs])
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    return metrics


STAGE = Stage("bc_policy", bc_policy, config=BCPolicyConfig, inputs={"demos": str(DEMOS)}, outs=(str(BC),),
              metrics=str(METRICS), plots=(Plot(f"{BC}/dubins/bc_curve.png", x_label="epoch"),))
main = STAGE.main

if __name__ == "__main__":
    main()
