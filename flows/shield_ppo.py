"""Stage ``shield_ppo@<env>``: the HJ safety critic, feasibility-gated PPO, the baselines and the ablations.

    python -m flows.shield_ppo --env dubins     # one env (a DVC foreach stage per env)
    python -m flows.shield_ppo --tables         # stage shield_tables: every env's tables in one file

Per env, from the BC policy (``bc_policy``), its rollouts (``shield_rollouts``) and the Platt scalars
(``calibrate``):

1. **warm critics**, one per margin source the runs need (rubric / gt / binary): ``Q_s`` regressed onto ℓ and
   then TD-trained on the BC rollouts (:func:`embodied_safety.shield.rl.critic.warm_start`);
2. **runs** — every (run, seed) of ``shield_ppo.runs`` and the δ sweep — each a Prefect task that trains
   (:func:`embodied_safety.shield.rl.ppo.train`, same env steps for every method) and evaluates the deterministic
   policy on the same held-out seeds in-distribution and under the +Color / +Light / +All perturbations.
   A finished run is stored in ``.cache/shield/ppo/<key>/`` (key: the run's config, inputs and code), so a
   killed stage resumes and a re-run with unchanged inputs trains nothing;
3. **tables and pictures** in ``data/shield/ppo/<env>/``: ``tables.md`` (Tables 2/3, 4, 5, 6, 7 layouts),
   ``curves.png``, ``bars.png``, ``safe_set.png`` (Dubins-VL, Fig. 3), ``results.json``;
4. **MLflow**: a run per training run (curves, evaluation), the ShieldVLA policy and critic registered as
   ``shield_policy_<env>`` / ``shield_critic_<env>``, the best (SR, then CSC) promoted to ``champion``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.codekey import cached_code_key
from embodied_safety.config import RubricLabelConfig, ShieldPPOConfig
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from flows._shield import BC, CALIBRATION, ROLLOUTS
from flows._stage import Arg, Out, Plot, Stage, run_stage
from tasks.progress import ProgressArtifact
from tasks.shield import STORE, _file_hash, scorer_for, scorer_key
from tasks.store import content_key
from tasks.tracking import (
    alias_version,
    log_artifacts,
    log_metrics,
    mlflow_run,
    register_model_dir,
    registry,
    tracking_config,
)

OUT = Path("data/shield/ppo")
MODELS = Path("models/shield/ppo")
EVAL_BASE = 3000  # evaluation seeds episode_seed(3000, i): disjoint from demos, BC evaluation and rollouts
MAX_STEPS = {"dubins": 100, "turtlebot": 100, "franka": 400}
#: run name -> (method, margin source, safety update, gate); None: the stage default (``shield_ppo.safety_update``,
#: ``shield_ppo.gate``)
RUNS: dict[str, tuple[str, str, str | None, str | None]] = {
    "ppo": ("ppo", "rubric", None, None),
    "ppo_lag": ("ppo_lag", "rubric", None, None),
    "gated": ("gated", "rubric", None, None),
    "gated_gt": ("gated", "gt", None, None),
    "gated_binary": ("gated", "binary", None, None),
    "penalty": ("penalty", "rubric", None, None),
    "gated_dpg": ("gated", "rubric", "dpg", None),
    "gated_mixed": ("gated", "rubric", "mixed", None),
    "gated_d1": ("gated", "rubric", "advantage", "d1"),
    "gated_selective": ("gated", "rubric", "advantage", "selective"),
    "gated_selective_recovery": ("gated", "rubric", "recovery", "selective"),
}
#: ``shield_ppo.gate`` -> the critic's bootstrap (``CriticConfig.target``)
GATE_TARGET = {"d1": "policy_mean", "selective": "best"}


def ppo_config(cfg: ShieldPPOConfig, env: str, run: str, seed: int, delta: float | None = None) -> Any:
    """Table 14 for ``env`` (+ the CPU overrides), as a ``PPOConfig`` for one run; ``critic_*`` keys go to the
    critic's config."""
    from embodied_safety.shield.rl.critic import CriticConfig
    from embodied_safety.shield.rl.ppo import PPOConfig

    method, margin, update, gate = RUNS[run]
    merged = {**cfg.hyper.get(env, {}), **(cfg.cpu.get(env, {}) if cfg.budget == "cpu" else {})}
    critic = {k[len("critic_"):]: v for k, v in merged.items() if k.startswith("critic_")}
    critic["target"] = GATE_TARGET[gate or cfg.gate]
    ppo = {k: v for k, v in merged.items() if not k.startswith("critic_")}
    if "hidden" in critic:
        critic["hidden"] = tuple(critic["hidden"])
    if delta is not None:
        ppo["delta"] = float(delta)
    return PPOConfig(method=method, margin=margin, safety_update=update or cfg.safety_update,  # type: ignore[arg-type]
                     critic=CriticConfig(**critic), seed=seed, **ppo)


def _inputs(env: str) -> list[str]:
    return [str(BC / env), str(ROLLOUTS / env / "rollouts.npz"), str(CALIBRATION / env / "platt.json")]


#: what a stored warm critic or run depends on: the import closure of the training / scoring / evaluation code
#: (embodied_safety.codekey), not the report code (a change to a table or a plot re-renders, it does not retrain)
TRAINING_CODE = ("embodied_safety.shield.rl.ppo", "embodied_safety.shield.rl.critic", "embodied_safety.shield.costs.margins",
                 "embodied_safety.shield.rl.vecenv", "tasks.shield")
#: what a stored gate check depends on beyond its warm critic
CHECK_CODE = ("embodied_safety.shield.rl.gate_check", "embodied_safety.shield.policy.rollouts")


def _code() -> str:
    return cached_code_key(*TRAINING_CODE)


@task(name="warm-critic", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def margin_for(env: str, kind: str, label_cfg: RubricLabelConfig) -> Any:
    """The margin source of a run; the rubric one scores frames with the scorer ``rubric_label`` used (the one
    the Platt scalars of ``calibrate`` were fitted on)."""
    from embodied_safety.shield.costs.margins import margin_source
    from embodied_safety.shield.costs.rubrics import RUBRIC_SETS

    if kind != "rubric":
        return margin_source(kind)  # type: ignore[arg-type]
    rset = RUBRIC_SETS[label_cfg.rubric_sets[env]]
    return margin_source("rubric", env, str(CALIBRATION / env), scorer=scorer_for(rset, label_cfg), rubric_set=rset)


def _rollout_margins(env: str, margin: str, label_cfg: RubricLabelConfig) -> tuple[Any, Any]:
    """The BC rollouts and ℓ of every frame from the margin source."""
    import numpy as np

    from embodied_safety.shield.policy.rollouts import RolloutSet

    src = margin_for(env, margin, label_cfg)
    rs = RolloutSet.load(ROLLOUTS / env / "rollouts.npz")
    frames, gt_m, gt_c = np.asarray(rs.frames), np.asarray(rs.margin), np.asarray(rs.cost)
    return rs, np.concatenate([src(frames[i:i + 2048], gt_m[i:i + 2048], gt_c[i:i + 2048])
                               for i in range(0, len(frames), 2048)])


def warm_critic(env: str, margin: str, critic_cfg: Any, warmup: dict[str, int], label_cfg: RubricLabelConfig) -> Path:
    """The BC warm-up of one critic per (env, margin source), stored by content key."""
    import torch

    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import CriticTrainer, SafetyCritic, replay_from_rollouts, warm_start

    key = content_key({"env": env, "margin": margin, "scorer": scorer_key(env, label_cfg),
                       "critic": dataclasses.asdict(critic_cfg), "warmup": warmup,
                       "inputs": [_file_hash(p) for p in _inputs(env)], "code": _code()})
    path = STORE / "critic_warm" / key
    if (path / "critic.json").is_file():
        return path
    torch.manual_seed(0)
    policy = load_policy(BC / env)
    rs, ell = _rollout_margins(env, margin, label_cfg)
    buf = replay_from_rollouts(rs, ell, MAX_STEPS.get(env, 100))
    critic = SafetyCritic.from_policy(policy, critic_cfg)
    trainer = CriticTrainer(critic)

    def mean_action(images: Any, instructions: Any) -> Any:
        with torch.no_grad():
            return policy(images, instructions)[0]

    t0 = time.perf_counter()
    rows = warm_start(trainer, buf, mean_action, warmup["regress"], warmup["td"])
    critic.save(path, extra={"warmup": rows[-1:], "transitions": buf.size, "seconds": time.perf_counter() - t0})
    print(f"{env}/{margin}: critic warm-up on {buf.size} BC transitions, {time.perf_counter() - t0:.0f} s")
    return path


@task(name="gate-check", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def check_gate(env: str, margin: str, warm: Path, delta: float, label_cfg: RubricLabelConfig) -> dict[str, Any]:
    """The offline acceptance check of a warm critic before any PPO step (:func:`~embodied_safety.shield.rl.gate_check.
    gate_check`; the probe states are Dubins-VL's, so the other envs get the infeasible fractions only); stored
    by content key (the warm critic, δ and the check's code)."""
    import numpy as np
    import torch

    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic
    from embodied_safety.shield.rl.gate_check import gate_check, infeasible_fractions

    path = STORE / "gate_check" / f"{content_key({'warm': warm.name, 'delta': delta, 'code': cached_code_key(*CHECK_CODE)})}.json"
    if path.is_file():
        return json.loads(path.read_text())
    policy = load_policy(BC / env)
    critic = load_critic(warm, policy.config)
    rs, ell = _rollout_margins(env, margin, label_cfg)
    args = (critic, policy, torch.as_tensor(np.asarray(rs.frames)), rs.frame_instructions(), ell,
            np.asarray(rs.cost), delta)
    res = gate_check(*args, obs="image") if env == "dubins" else infeasible_fractions(*args)
    write_json(path, {"margin": margin, "target": critic.config.target, **res})
    print(f"{env}/{margin}/{critic.config.target} gate check: " + ", ".join(
        f"{k} {v:.3f}" for k, v in res.items() if isinstance(v, float)))
    return json.loads(path.read_text())


def _eval_conditions(env: str, policy: Any, episodes: int, conditions: list[str]) -> dict[str, dict[str, float]]:
    from embodied_safety.shield.policy.demos import episode_seeds
    from embodied_safety.shield.policy.rollouts import evaluate_policy

    seeds = episode_seeds(EVAL_BASE, range(episodes))
    out = {}
    for cond in conditions:
        pert = None if cond == "in" else cond
        if env == "dubins":
            from embodied_safety.envs.control.dubins import DubinsVLVec

            m = evaluate_policy(None, policy, seeds, n_envs=64,
                                make_vec=lambda n, p=pert: DubinsVLVec(n, render=True, perturbation=p))
        else:
            import gymnasium as gym

            from embodied_safety.shield.envs import gym_id

            m = evaluate_policy(lambda p=pert: gym.make(gym_id(env), perturbation=p), policy, seeds, n_envs=8)
        out[cond] = {k: float(v) for k, v in m.items()}
    return out


def _conditions(cfg: ShieldPPOConfig, run: str, delta: float | None) -> list[str]:
    """In-distribution always; the OOD perturbations for ``ood_runs`` (not for the δ sweep's extra runs)."""
    return ["in", *cfg.ood] if run in cfg.ood_runs and delta is None else ["in"]


def run_path(cfg: ShieldPPOConfig, env: str, run: str, seed: int, delta: float | None, warm: Path | None,
             label_cfg: RubricLabelConfig) -> Path:
    """Where a run is stored: the hash of its config, evaluation, warm critic, inputs and training code."""
    blob = {"env": env, "run": run, "ppo": dataclasses.asdict(ppo_config(cfg, env, run, seed, delta)),
            "eval": [cfg.eval_episodes[env], _conditions(cfg, run, delta)], "warm": warm.name if warm else None,
            "scorer": scorer_key(env, label_cfg), "inputs": [_file_hash(p) for p in _inputs(env)], "code": _code()}
    return STORE / "ppo" / content_key(blob)


@task(name="shield-ppo-run", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0, log_prints=True)
def train_run(env: str, run: str, seed: int, delta: float | None, cfg: ShieldPPOConfig,
              warm: Path | None, label_cfg: RubricLabelConfig) -> dict[str, Any]:
    """Train one (run, seed[, δ]) from the BC policy, evaluate it, store it; MLflow-tracked when trained."""

    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic
    from embodied_safety.shield.rl.ppo import train

    pcfg = ppo_config(cfg, env, run, seed, delta)
    conditions = _conditions(cfg, run, delta)
    path = run_path(cfg, env, run, seed, delta, warm, label_cfg)
    if (path / "result.json").is_file():
        return json.loads((path / "result.json").read_text())
    policy = load_policy(BC / env)
    critic = load_critic(warm, policy.config) if warm is not None else None
    src = margin_for(env, pcfg.margin, label_cfg)
    tag = f"{run}" + (f"-delta{delta:g}" if delta is not None else "") + f"-seed{seed}"
    track = tracking_config(cfg.tracking)
    with mlflow_run(track, f"shield_ppo/{env}/{tag}", {"env": env, "run": run, **dataclasses.asdict(pcfg)}):
        bar = ProgressArtifact(pcfg.iterations, f"PPO iterations {env} {tag}")
        res = train(policy, env, src, pcfg, critic=critic, log=lambda m, it: (log_metrics(m, it), bar.set(it)))
        ev = _eval_conditions(env, res.policy, cfg.eval_episodes[env], conditions)
        log_metrics({f"eval/{c}/{k}": v for c, m in ev.items() for k, v in m.items()})
        tmp = scratch_dir(path)
        res.policy.save(tmp / "policy")
        if res.critic is not None:
            res.critic.save(tmp / "critic")
        result = {"env": env, "run": run, "seed": seed, "method": pcfg.method, "margin": pcfg.margin,
                  "safety_update": pcfg.safety_update, "delta": pcfg.delta, "eval": ev, "history": res.history,
                  "train_seconds": sum(r["seconds"] for r in res.history), "version": None}
        if cfg.register and run == "gated" and delta is None:
            tags = {"env": env, "seed": str(seed), "sr": f"{ev['in']['sr']:.4f}", "csc": f"{ev['in']['csc']:.4f}"}
            result["version"] = register_model_dir(f"shield_policy_{env}", tmp / "policy", "policy", tags)
            result["critic_version"] = register_model_dir(f"shield_critic_{env}", tmp / "critic", "critic", tags)
        write_json(tmp / "result.json", result)
        log_artifacts([tmp / "result.json"])
    replace_dir(tmp, path)
    print(f"{env}/{tag}: SR {ev['in']['sr']:.3f} CSC {ev['in']['csc']:.2f} ({result['train_seconds']:.0f} s)")
    return result


def promote_best(cfg: ShieldPPOConfig, env: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``champion`` <- the registered ShieldVLA run with the best (SR, −CSC), if it beats the current one."""
    cands = [r for r in rows if r.get("version")]
    if not cands:
        return {"promoted": False, "reason": "nothing registered"}
    best = max(cands, key=lambda r: (r["eval"]["in"]["sr"], -r["eval"]["in"]["csc"]))
    client = registry(tracking_config(cfg.tracking))
    out: dict[str, Any] = {}
    for kind, version in (("policy", best["version"]), ("critic", best["critic_version"])):
        name = f"shield_{kind}_{env}"
        champ = alias_version(client, name, "champion")
        score = (best["eval"]["in"]["sr"], -best["eval"]["in"]["csc"])
        if champ is not None and str(champ.version) == str(version):
            out[kind] = {"promoted": False, "version": version, "reason": "already champion"}
            continue
        if champ is not None and (float(champ.tags.get("sr", 0)), -float(champ.tags.get("csc", 1e9))) >= score:
            out[kind] = {"promoted": False, "version": version, "reason": f"v{champ.version} is at least as good"}
            continue
        if champ is not None:
            client.set_registered_model_alias(name, "previous", champ.version)
        client.set_registered_model_alias(name, "champion", version)
        out[kind] = {"promoted": True, "version": version}
    return out


def _agreements(env: str, rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    if env != "dubins":
        return {}
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic

    out = {}
    first = min(r["seed"] for r in rows)
    for r in rows:
        path = Path(r["_path"])
        if r["seed"] == first and (path / "critic").is_dir():
            policy = load_policy(path / "policy")
            out[r["run"]] = grad_agreement(load_critic(path / "critic", policy.config), policy)
    return out


def _safe_set(env: str, rows: list[dict[str, Any]], out: Path) -> Path | None:
    """Fig. 3 from the stored critics of seed 0 (ShieldVLA and, when run, the GT-cost oracle)."""
    if env != "dubins":
        return None
    from embodied_safety.envs.control.dubins import INSTRUCTION
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic
    from embodied_safety.shield.rl.report import dubins_grid, plot_safe_set, safe_set_values

    grid = dubins_grid()
    values = {}
    for run, label in (("gated", "rubric ℓ̂"), ("gated_gt", "GT ℓ*")):
        r = next((r for r in rows if r["run"] == run and r["seed"] == min(x["seed"] for x in rows)
                  and r.get("delta_default", True)), None)
        if r is None or not (Path(r["_path"]) / "critic").is_dir():
            continue
        policy = load_policy(Path(r["_path"]) / "policy")
        values[f"Q_s ({label})"] = safe_set_values(load_critic(Path(r["_path"]) / "critic", policy.config), policy,
                                                   grid, INSTRUCTION)
    if not values:
        return None
    return plot_safe_set(values, grid, out / "safe_set.png",
                         "Dubins-VL: learned Q_s(o, ā(o)) by car position; obstacle at the centre, dashed: ℓ* = 0")


def grad_agreement(critic: Any, policy: Any, n: int = 2048, seed: int = 5) -> dict[str, float]:
    """How often ``sign(∂Q_s/∂a)`` at the policy mean agrees with the better of the two full turns, judged by the
    simulator (min ground-truth margin over 1 s: 0.3 s of turn, then straight), on Dubins-VL states placed
    0.31-0.65 from an obstacle's edge with random headings (:func:`~embodied_safety.shield.rl.gate_check.
    turn_agreement`). 0.5 is chance; Eq. 6's safety step follows this sign."""
    from embodied_safety.shield.rl.gate_check import turn_agreement

    res = turn_agreement(critic, policy, "image", n=n, seed=seed)
    return {"agreement": res["gradient_agreement"], "best_candidate_agreement": res["best_candidate_agreement"],
            "states": res["states"]}


@flow(name="shield_ppo", log_prints=True)
def shield_ppo(cfg: ShieldPPOConfig = ShieldPPOConfig(), env: str = "dubins", out_root: Path = OUT,
               models_root: Path = MODELS, label_cfg: RubricLabelConfig = RubricLabelConfig()) -> dict[str, float]:
    """``label_cfg``: the ``rubric_label`` section (which scorer the rubric margin uses)."""
    from embodied_safety.shield.rl import report as rep

    runs = list(cfg.runs.get(env, ["ppo", "ppo_lag", "gated"]))
    seeds = list(cfg.seeds.get(env, [0]))
    # one warm critic per (margin source, critic target) the runs use, each checked before any PPO step
    warm: dict[tuple[str, str], Path] = {}
    checks: dict[str, dict[str, Any]] = {}
    default_delta = ppo_config(cfg, env, "gated", 0).delta
    for run in runs:
        if RUNS[run][0] not in ("gated", "penalty"):
            continue
        ccfg = ppo_config(cfg, env, run, 0).critic
        wkey = (RUNS[run][1], ccfg.target)
        if wkey not in warm:
            warm[wkey] = warm_critic(env, wkey[0], ccfg, dict(cfg.warmup), label_cfg)
            checks["/".join(wkey)] = check_gate(env, wkey[0], warm[wkey], default_delta, label_cfg)
    jobs: list[tuple[str, int, float | None]] = [(r, s, None) for s in seeds for r in runs]
    jobs += [("gated", s, float(d)) for d in cfg.delta_sweep.get(env, []) if float(d) != default_delta for s in seeds]
    rows = []
    for run, seed, delta in jobs:
        method, margin = RUNS[run][:2]
        w = warm.get((margin, ppo_config(cfg, env, run, seed).critic.target)) if method in ("gated", "penalty") else None
        r = train_run(env, run, seed, delta, cfg, w, label_cfg)
        r["_path"] = str(run_path(cfg, env, run, seed, delta, w, label_cfg))
        r["delta_default"] = delta is None
        rows.append(r)
    out = scratch_dir(out_root / env)
    main_rows = [r for r in rows if r["delta_default"]]
    tables = rep.render_tables(rows, f"{rep.ENV_NAMES.get(env, env)}: ShieldVLA part 2 ({cfg.scale} matrix, budget: {cfg.budget}, "
                                 f"safety update: {cfg.safety_update}, gate: {cfg.gate})", env)
    atomic_write_text(out / "tables.md", tables)
    rep.plot_curves(main_rows, out / "curves.png", f"{rep.ENV_NAMES.get(env, env)}: training (mean over seeds)")
    rep.plot_bars(main_rows, out / "bars.png", f"{rep.ENV_NAMES.get(env, env)}: evaluation, {cfg.eval_episodes[env]} episodes")
    _safe_set(env, main_rows, out)
    agreement = _agreements(env, main_rows)
    if agreement:
        tables += ("\n## Does the critic's action gradient point the safe way? (Dubins-VL, seed-0 critics)\n\n"
                   "| run | sign(∂Q/∂a) agrees with the simulator's safer turn | best candidate agrees | states |\n"
                   "|---|---|---|---|\n"
                   + "".join(f"| {rep.LABELS.get(k, k)} | {v['agreement']:.3f} | {v['best_candidate_agreement']:.3f} "
                             f"| {v['states']:.0f} |\n" for k, v in agreement.items()))
    if checks:
        tables += rep.table_gate_check(checks)
    atomic_write_text(out / "tables.md", tables)
    write_json(out / "results.json", {"rows": [{k: v for k, v in r.items() if k != "_path"} for r in rows]})
    write_json(out / "gate_check.json", checks)
    write_manifest(out, cfg, inputs=[Path(p) for p in _inputs(env)])
    # the ShieldVLA policy + critic of the best seed, as plain model dirs
    best = max((r for r in main_rows if r["run"] == "gated"), key=lambda r: (r["eval"]["in"]["sr"], -r["eval"]["in"]["csc"]),
               default=None)
    mtmp = scratch_dir(models_root / env)
    if best is not None:
        import shutil

        for part in ("policy", "critic"):
            shutil.copytree(Path(best["_path"]) / part, mtmp / part)
        write_json(mtmp / "source.json", {"run": "gated", "seed": best["seed"], "eval": best["eval"]})
    replace_dir(mtmp, models_root / env)
    metrics = {f"{k}/{m}": v for k, d in rep.summary(main_rows).items() for m, v in d.items()}
    metrics.update({f"{env}/{run}/grad_agreement": v["agreement"] for run, v in agreement.items()})
    metrics.update({f"{env}/gate_check/{name}/{k}": float(v) for name, c in checks.items() for k, v in c.items()
                    if isinstance(v, (int, float))})
    for d, srs, cscs in rep.delta_rows(rows, env):
        metrics[f"{env}/delta{d:g}/sr"] = sum(srs) / len(srs)
        metrics[f"{env}/delta{d:g}/csc"] = sum(cscs) / len(cscs)
    with mlflow_run(tracking_config(cfg.tracking), f"shield_ppo/{env}/report", {"env": env, "budget": cfg.budget}):
        log_metrics(metrics)
        log_artifacts([out / n for n in ("tables.md", "curves.png", "bars.png", "safe_set.png", "results.json",
                                         "gate_check.json")])
        if cfg.register:
            metrics["promoted"] = float(bool(promote_best(cfg, env, rows).get("policy", {}).get("promoted")))
    replace_dir(out, out_root / env)
    write_json(out_root.parent / f"ppo_metrics_{env}.json", metrics)
    print(tables)
    return metrics


def _run(stage: Stage, cfg: ShieldPPOConfig, args: argparse.Namespace, kwargs: dict[str, Any]) -> Any:
    """``--tables``: stage ``shield_tables``; ``--env E``: stage ``shield_ppo@E``."""
    from embodied_safety.shield.rl.report import all_tables

    if args.tables:
        print(all_tables(cfg.envs, f"ShieldVLA part 2, all environments ({cfg.scale} matrix, budget: {cfg.budget}, "
                                   f"safety update: {cfg.safety_update})", OUT).read_text())
        return None
    if args.env not in cfg.envs:
        stage.parser().error(f"--env must be one of {list(cfg.envs)}")
    return run_stage(stage.publishing(shield_ppo), cfg, **kwargs)


_ENV = "${item}"
STAGE = Stage("shield_ppo", shield_ppo, config=ShieldPPOConfig, call=_run,
              params=("shield_ppo", "rubric_label.backend", "rubric_label.vlm", "rubric_label.rubric_sets"),
              sections={"label_cfg": ("rubric_label", RubricLabelConfig)},
              inputs={"bc": f"{BC}/{_ENV}", "rollouts": f"{ROLLOUTS}/{_ENV}/rollouts.npz",
                      "platt": f"{CALIBRATION}/{_ENV}/platt.json"},
              outs=(f"{OUT}/{_ENV}", f"{MODELS}/{_ENV}"), metrics=f"{OUT.parent}/ppo_metrics_{_ENV}.json",
              plots=(Plot(f"{OUT}/dubins/curves.png", x_label="env steps"), Plot(f"{OUT}/dubins/safe_set.png", data=False),
                     Plot(f"{OUT}/dubins/bars.png", "bars", y_label="mean over seeds")),
              foreach=("dubins", "turtlebot", "franka"), cmd_args=f"--env {_ENV}",
              args=(Arg(("--env",), {"help": "one of shield_ppo.envs (stage shield_ppo@<env>)"}),
                    Arg(("--tables",), {"action": "store_true", "help": "stage shield_tables: every env's tables"})))
#: ``python -m flows.shield_ppo --tables``: the tables of every env in one file
TABLES = Stage("shield_tables", shield_ppo, config=ShieldPPOConfig, params=("shield_ppo.envs",), call=_run,
               code=("embodied_safety.shield.rl.report",), inputs={"ppo": str(OUT)},
               outs=(Out(f"{OUT.parent}/ppo_tables.md", cache=False),), cmd_args="--tables", args=STAGE.args)
STAGES = (STAGE, TABLES)
main = STAGE.main

if __name__ == "__main__":
    main()
