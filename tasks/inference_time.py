"""Prefect task for the inference-time baselines: one (method, split) shard."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config.baselines import BaselinesConfig
from embodied_safety.config.shared import ActorConfig
from embodied_safety.critics.llm import LLMCritic
from embodied_safety.evaluation.household_eval import write_evaluation
from embodied_safety.inference_time.baselines import (
    baseline_metrics,
    run_full_critic,
    run_lookahead,
    run_self_verification,
    timed,
)
from embodied_safety.inference_time.modules import LLMValue, LLMVerifier, RuleValue, RuleVerifier
from embodied_safety.io import without_run_facts, write_json
from embodied_safety.rollout.runner import RolloutSettings
from tasks.actors import cached_actor, cached_split


def _llm(cfg: dict, actor_cfg: ActorConfig, cache_dir: Path, max_new_tokens: int) -> LLMCritic:
    """An LLM module; its model defaults to the actor's own (the paper's same-backbone baselines)."""
    mcfg = ActorConfig(**{"prompt_style": "full", "max_new_tokens": max_new_tokens, **{**actor_cfg.__dict__, **cfg}})
    return LLMCritic(cached_actor(mcfg), f"{mcfg.base_url}|{mcfg.model}", cache_dir)


@task(name="baseline-shard", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def baseline_task(method: str, split_dir: Path, split: str, cfg: BaselinesConfig, actor_cfg: ActorConfig,
                  out: Path) -> dict[str, float]:
    """Run ``method`` on every task of ``split_dir``; write metrics (with costs), episodes, per-risk plot."""
    tasks = list(cached_split(split_dir).values())
    actor = cached_actor(actor_cfg)
    cache = out.parent.parent / "llm_cache"
    settings = RolloutSettings.isbench(cfg.extra_steps)
    if method == "self_verification":
        verifier = LLMVerifier(_llm(cfg.verifier, actor_cfg, cache, 256)) if cfg.verifier_backend == "llm" else RuleVerifier()
        eps, seconds = timed(run_self_verification, tasks, actor, verifier, cfg.retries, settings, cfg.seed)
    elif method == "lookahead":
        value = LLMValue(_llm(cfg.value, actor_cfg, cache, 128)) if cfg.value_backend == "llm" else RuleValue()
        eps, seconds = timed(run_lookahead, tasks, actor, value, cfg.k, cfg.lookahead_temperature, settings, cfg.seed)
    elif method == "full_critic":
        critic = _llm(cfg.critic, actor_cfg, cache, 512) if cfg.critic_backend == "llm" else None
        eps, seconds = timed(run_full_critic, tasks, actor, critic, cfg.max_repair_attempts, cfg.max_recursion,
                             cfg.extra_steps, seed=cfg.seed)
    else:
        raise ValueError(f"baselines.methods: unknown method {method!r}")
    write_evaluation(out, [e.result for e in eps], [], f"{method} on {split}")
    metrics = {k: float(v) for k, v in baseline_metrics(eps, seconds).items()}
    write_json(out / "metrics.json", without_run_facts(metrics))  # seconds: MLflow only
    return metrics
