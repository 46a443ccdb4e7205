"""Prefect tasks of the ``shield_ppo`` stage: warm critics, their gate checks and the training runs, each stored
under a content key in the ShieldVLA store (``.cache/shield/{critic_warm,gate_check,ppo}``), and the stage's
MLflow report and promotion.

A stored warm critic or run is keyed by its config, its inputs' content and the code key of the training code
(:data:`TRAINING_CODE`), not of this module or the report code: a change to a table or a plot re-renders, it does
not retrain. These tasks live apart from ``tasks/shield.py`` so the demo, rollout and label shards (keyed by that
module's import closure) and the part-1 stages' DVC deps do not depend on the training code.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.codekey import cached_code_key
from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.config.shield_ppo import ShieldPPOConfig
from embodied_safety.io import write_json
from embodied_safety.shield.costs.sources import margin_for, scorer_key
from embodied_safety.shield.rl.runs import EnvInputs, conditions, env_runs, model_run, ppo_config, run_tag
from tasks.progress import ProgressArtifact
from tasks.shield import STORE, _file_hash
from tasks.store import config_key, content_key
from tasks.tracking import (
    alias_version,
    log_artifacts,
    log_metrics,
    mlflow_run,
    register_model_dir,
    registry,
    tracking_config,
)

#: what a stored warm critic or run depends on: the import closure of the training / scoring / evaluation code
#: (embodied_safety.codekey)
TRAINING_CODE = ("embodied_safety.shield.rl.ppo", "embodied_safety.shield.rl.critic",
                 "embodied_safety.shield.costs.margins", "embodied_safety.shield.rl.vecenv",
                 "embodied_safety.shield.rl.runs", "embodied_safety.shield.rl.select", "tasks.shield")
#: what a stored gate check depends on beyond its warm critic
CHECK_CODE = ("embodied_safety.shield.rl.gate_check", "embodied_safety.shield.rl.viability",
              "embodied_safety.shield.policy.rollouts")


def _code() -> str:
    return cached_code_key(*TRAINING_CODE)


def _margin_source(inputs: EnvInputs, margin: str, label_cfg: RubricLabelConfig) -> Any:
    return margin_for(inputs.env, margin, inputs.calibration, label_cfg, STORE)


def _rollout_margins(inputs: EnvInputs, margin: str, label_cfg: RubricLabelConfig) -> tuple[Any, Any]:
    from embodied_safety.shield.rl.runs import rollout_margins

    return rollout_margins(_margin_source(inputs, margin, label_cfg), inputs.rollouts)


@task(name="warm-critic", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def warm_critic(inputs: EnvInputs, margin: str, critic_cfg: Any, warmup: dict[str, int],
                label_cfg: RubricLabelConfig, store: Path) -> Path:
    """The BC warm-up of one critic per (env, margin source), stored by content key."""
    import torch

    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import rollout_margins, warm_start_critic

    env = inputs.env
    key = content_key({"env": env, "margin": margin, "scorer": scorer_key(env, label_cfg),
                       "critic": config_key(critic_cfg), "warmup": warmup,
                       "inputs": [_file_hash(p) for p in inputs.files()], "code": _code()})
    path = store / "critic_warm" / key
    if (path / "critic.json").is_file():
        return path
    torch.manual_seed(0)
    policy = load_policy(inputs.bc)
    source = _margin_source(inputs, margin, label_cfg)
    rs, ell = rollout_margins(source, inputs.rollouts)
    critic, extra = warm_start_critic(env, policy, rs, ell, critic_cfg, warmup, source=source)
    critic.save(path, extra=extra)
    print(f"{env}/{margin}: critic warm-up on {extra['transitions']} transitions, {extra['seconds']:.0f} s")
    return path


@task(name="gate-check", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def check_gate(inputs: EnvInputs, margin: str, warm: Path, delta: float, label_cfg: RubricLabelConfig,
               store: Path) -> dict[str, Any]:
    """The offline acceptance check of a warm critic before any PPO step (:func:`~embodied_safety.shield.rl.
    gate_check.check_on_rollouts`); stored by content key (the warm critic, δ and the check's code)."""
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic
    from embodied_safety.shield.rl.gate_check import check_on_rollouts

    path = store / "gate_check" / f"{content_key({'warm': warm.name, 'delta': delta, 'code': cached_code_key(*CHECK_CODE)})}.json"
    if path.is_file():
        return json.loads(path.read_text())
    policy = load_policy(inputs.bc)
    critic = load_critic(warm, policy.config)
    rs, ell = _rollout_margins(inputs, margin, label_cfg)
    res = check_on_rollouts(inputs.env, critic, policy, rs, ell, delta)
    write_json(path, {"margin": margin, "target": critic.config.target, **res})
    print(f"{inputs.env}/{margin}/{critic.config.target} gate check: " + ", ".join(
        f"{k} {v:.3f}" for k, v in res.items() if isinstance(v, float)))
    return json.loads(path.read_text())


@task(name="evaluate-start", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def evaluate_start(inputs: EnvInputs, cfg: ShieldPPOConfig, store: Path) -> dict[str, dict[str, float]]:
    """The BC start (every run's initial policy) on the runs' evaluation episodes and conditions — the reference
    of the do-no-harm form (:func:`~embodied_safety.shield.rl.report.do_no_harm`); stored by content key."""
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.evaluation import evaluate_conditions

    conds = ["in", *cfg.ood]
    key = content_key({"env": inputs.env, "bc": _file_hash(str(inputs.bc)), "eval": [cfg.eval_episodes[inputs.env], conds],
                       "code": _code()})
    path = store / "start_eval" / f"{key}.json"
    if path.is_file():
        return json.loads(path.read_text())
    ev = evaluate_conditions(inputs.env, load_policy(inputs.bc), cfg.eval_episodes[inputs.env], conds)
    write_json(path, ev)
    print(f"{inputs.env}/start: SR {ev['in']['sr']:.3f} CSC {ev['in']['csc']:.2f}")
    return ev


def run_path(cfg: ShieldPPOConfig, inputs: EnvInputs, run: str, seed: int, delta: float | None, warm: Path | None,
             label_cfg: RubricLabelConfig, store: Path) -> Path:
    """Where a run is stored: the hash of its config, evaluation, warm critic, inputs and training code."""
    env = inputs.env
    blob = {"env": env, "run": run, "ppo": config_key(ppo_config(cfg, env, run, seed, delta)),
            "eval": [cfg.eval_episodes[env], conditions(cfg, run, delta)], "warm": warm.name if warm else None,
            "scorer": scorer_key(env, label_cfg), "inputs": [_file_hash(p) for p in inputs.files()], "code": _code()}
    if cfg.select_every > 0:  # validated checkpoints (the key of a run without them is unchanged)
        blob["select"] = [cfg.select_every, cfg.select_episodes[env]]
    return store / "ppo" / content_key(blob)


@task(name="shield-ppo-run", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0, log_prints=True)
def train_run(inputs: EnvInputs, run: str, seed: int, delta: float | None, cfg: ShieldPPOConfig,
              warm: Path | None, label_cfg: RubricLabelConfig, store: Path) -> dict[str, Any]:
    """Train one (run, seed[, δ]) from the BC policy, evaluate it, store it (:func:`~embodied_safety.shield.rl.runs.
    train_and_store`, the GPU study script's function too); MLflow-tracked and registered when trained."""
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic
    from embodied_safety.shield.rl.runs import train_and_store

    env = inputs.env
    pcfg = ppo_config(cfg, env, run, seed, delta)
    path = run_path(cfg, inputs, run, seed, delta, warm, label_cfg, store)
    if (path / "result.json").is_file():
        return json.loads((path / "result.json").read_text())
    policy = load_policy(inputs.bc)
    critic = load_critic(warm, policy.config) if warm is not None else None
    src = margin_for(env, pcfg.margin, inputs.calibration, label_cfg, STORE)
    tag = run_tag(run, seed, delta)
    with mlflow_run(tracking_config(cfg.tracking), f"shield_ppo/{env}/{tag}", {"env": env, "run": run,
                                                                                **dataclasses.asdict(pcfg)}):
        bar = ProgressArtifact(pcfg.iterations, f"PPO iterations {env} {tag}")

        def log(m: dict[str, float], it: int) -> None:
            log_metrics(m, it)
            bar.set(it)

        result = train_and_store(env, policy, src, pcfg, path, critic=critic, eval_episodes=cfg.eval_episodes[env],
                                 conds=conditions(cfg, run, delta), select_every=cfg.select_every,
                                 select_episodes=cfg.select_episodes[env], log=log,
                                 extra={"run": run, "seed": seed, "version": None})
        ev = result["eval"]
        log_metrics({f"eval/{c}/{k}": v for c, m in ev.items() for k, v in m.items()})
        if "selected" in result:
            log_metrics({f"selected/in/{k}": v for k, v in result["selected"]["eval"]["in"].items()}
                        | {"selected/iteration": result["selected"]["iteration"]})
        if cfg.register and run == model_run(env_runs(cfg, env)) and delta is None:
            tags = {"env": env, "seed": str(seed), "sr": f"{ev['in']['sr']:.4f}", "csc": f"{ev['in']['csc']:.4f}"}
            result["version"] = register_model_dir(f"shield_policy_{env}", path / "policy", "policy", tags)
            result["critic_version"] = register_model_dir(f"shield_critic_{env}", path / "critic", "critic", tags)
            write_json(path / "result.json", result)
        log_artifacts([path / "result.json"])
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


def report_env(cfg: ShieldPPOConfig, env: str, out: Path, rows: list[dict[str, Any]],
               metrics: dict[str, float]) -> None:
    """The env's report run in MLflow (metrics, the result files); with ``register``, the champion moved and
    ``promoted`` logged there. Not in ``metrics``: whether a run is promoted depends on the registry's state (1 in a
    fresh workspace, 0 where a better champion exists), and the stage's metrics file must depend on its inputs only."""
    from embodied_safety.shield.rl.results import LOGGED

    with mlflow_run(tracking_config(cfg.tracking), f"shield_ppo/{env}/report", {"env": env, "budget": cfg.budget}):
        log_metrics(metrics)
        log_artifacts([out / n for n in LOGGED])
        if cfg.register:
            log_metrics({"promoted": float(bool(promote_best(cfg, env, rows).get("policy", {}).get("promoted")))})
