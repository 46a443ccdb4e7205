"""Stage ``shield_ppo@<env>``: the HJ safety critic, feasibility-gated PPO, the baselines and the ablations.

    python -m flows.shield_ppo --env dubins     # one env (a DVC foreach stage per env)

Per env, from the BC policy (``bc_policy``), its rollouts (``shield_rollouts``) and the Platt scalars
(``calibrate``):

1. **warm critics**, one per (margin source, critic target) the runs need: ``Q_s`` regressed onto ℓ and then
   TD-trained on the BC rollouts (:func:`embodied_safety.shield.rl.runs.warm_start_critic`), each checked offline
   before any PPO step (:func:`embodied_safety.shield.rl.gate_check.check_on_rollouts`);
2. **runs** — every (run, seed) of ``shield_ppo.runs`` and the δ sweep — each a Prefect task that trains
   (:func:`embodied_safety.shield.rl.ppo.train`, same env steps for every method) and evaluates the deterministic
   policy on the same held-out seeds in-distribution and under the +Color / +Light / +All perturbations.
   A finished run is stored in ``.cache/shield/ppo/<key>/`` (key: the run's config, inputs and code;
   ``tasks/shield_ppo.py``), so a killed stage resumes and a re-run with unchanged inputs trains nothing;
3. **the start**: the BC policy evaluated on the same episodes and conditions (stored by content key), the
   reference of the do-no-harm form (issue 21: ShieldVLA's SR at least the start's − 0.02, its CSC below
   PPO-Lagrangian's, over the seeds with 95 % intervals);
4. **tables and pictures** in ``data/shield/ppo/<env>/`` (:mod:`embodied_safety.shield.rl.results`): ``tables.md``
   (Tables 2/3, 4, 5, 6, 7 layouts), ``curves.png``, ``bars.png``, ``safe_set.png`` (Dubins-VL, Fig. 3),
   ``results.json`` (the ``report`` stage renders every env's rows into ``reports/shield_tables.md``);
5. **MLflow**: a run per training run (curves, evaluation), the ShieldVLA policy and critic registered as
   ``shield_policy_<env>`` / ``shield_critic_<env>``, the best (SR, then CSC) promoted to ``champion``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from prefect import flow

from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.config.shield_ppo import ShieldPPOConfig
from embodied_safety.io import replace_dir, scratch_dir, without_run_facts, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.shield.rl.runs import EnvInputs
from flows._shield import BC, CALIBRATION, ROLLOUTS
from flows._stage import Arg, Plot, Stage, run_stage
from tasks.runners import map_shards, with_runner
from tasks.shield import STORE
from tasks.shield_ppo import check_gate, evaluate_start, report_env, run_path, train_run, warm_critic

OUT = Path("data/shield/ppo")
MODELS = Path("models/shield/ppo")


def env_inputs(env: str) -> EnvInputs:
    """One env's inputs in this checkout: the BC policy, its rollouts and the calibration (the experiments use it too)."""
    return EnvInputs(env, BC / env, ROLLOUTS / env / "rollouts.npz", CALIBRATION / env)


@flow(name="shield_ppo", log_prints=True)
def shield_ppo(cfg: ShieldPPOConfig = ShieldPPOConfig(), env: str = "dubins", out_root: Path = OUT,
               models_root: Path = MODELS, label_cfg: RubricLabelConfig = RubricLabelConfig()) -> dict[str, float]:
    """``label_cfg``: the ``rubric_label`` section (which scorer the rubric margin uses)."""
    from embodied_safety.shield.rl import results
    from embodied_safety.shield.rl.runs import CriticKey, plan

    inputs = env_inputs(env)
    todo = plan(cfg, env)
    # one warm critic per (margin source, critic target) the runs use, each checked before any PPO step
    warm: dict[CriticKey, Path] = {}
    checks: dict[str, dict[str, Any]] = {}
    for wkey, ccfg in todo.critics.items():
        warm[wkey] = warm_critic(inputs, wkey[0], ccfg, dict(cfg.warmup), label_cfg, STORE)
        checks[wkey.name] = check_gate(inputs, wkey[0], warm[wkey], todo.deltas[wkey], label_cfg, STORE)
    start = evaluate_start(inputs, cfg, STORE)  # the runs' initial policy on their evaluation episodes
    calls = [(inputs, job.run, job.seed, job.delta, cfg, warm.get(job.critic) if job.critic is not None else None,
              label_cfg, STORE) for job in todo.jobs]
    rows = map_shards(train_run, calls, cfg)  # one after another, or runner_workers at once (task_runner: dask)
    for r, args, job in zip(rows, calls, todo.jobs, strict=True):
        r["_path"] = str(run_path(cfg, inputs, job.run, job.seed, job.delta, args[5], label_cfg, STORE))
        r["delta_default"] = job.delta is None
    out = scratch_dir(out_root / env)
    res = results.write_env_results(cfg, env, rows, checks, start, out)
    write_manifest(out, cfg, inputs=[Path(p) for p in inputs.files()])
    mtmp = scratch_dir(models_root / env)  # the ShieldVLA policy + critic of the best seed, as plain model dirs
    results.copy_best(rows, mtmp)
    replace_dir(mtmp, models_root / env)
    metrics = results.env_metrics(env, rows, res, checks, start)
    report_env(cfg, env, out, rows, metrics)  # MLflow; with ``register``, the champion (and ``promoted`` there)
    replace_dir(out, out_root / env)
    write_json(out_root.parent / f"ppo_metrics_{env}.json", without_run_facts(metrics))
    print(res.tables)
    return metrics


def _run(stage: Stage, cfg: ShieldPPOConfig, args: argparse.Namespace, kwargs: dict[str, Any]) -> Any:
    """``--env E``: stage ``shield_ppo@E``."""
    if args.env not in cfg.envs:
        stage.parser().error(f"--env must be one of {list(cfg.envs)}")
    return run_stage(stage.publishing(with_runner(shield_ppo, cfg)), cfg, **kwargs)


_ENV = "${item}"
STAGE = Stage("shield_ppo", shield_ppo, config=ShieldPPOConfig, call=_run,
              params=("shield_ppo", "rubric_label.backend", "rubric_label.vlm", "rubric_label.rubric_sets"),
              sections={"label_cfg": ("rubric_label", RubricLabelConfig)},
              inputs={"bc": f"{BC}/{_ENV}", "rollouts": f"{ROLLOUTS}/{_ENV}/rollouts.npz",
                      "platt": f"{CALIBRATION}/{_ENV}/platt.json"},
              outs=(f"{OUT}/{_ENV}", f"{MODELS}/{_ENV}"), metrics=f"{OUT.parent}/ppo_metrics_{_ENV}.json",
              plots=(Plot(f"{OUT}/dubins/curves.png", x_label="env steps"), Plot(f"{OUT}/dubins/safe_set.png", data=False),
                     Plot(f"{OUT}/dubins/bars.png", "bars", y_label="mean over seeds")),
              foreach="${shield_ppo.envs}", cmd_args=f"--env {_ENV}",
              args=(Arg(("--env",), {"help": "one of shield_ppo.envs (stage shield_ppo@<env>)"}),))
main = STAGE.main

if __name__ == "__main__":
    main()
