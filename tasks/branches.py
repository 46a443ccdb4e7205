"""Prefect tasks for branch-pair construction."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.branch.collect import BranchSettings, collect_branches
from embodied_safety.branch.dataset import pair_invariants, replay_rows
from embodied_safety.branch.judge import JudgeVerdict, judge, judge_llm
from embodied_safety.config.shared import ActorConfig
from embodied_safety.critics.llm import LLMCritic
from embodied_safety.records import RawBranch
from tasks.actors import cached_actor, cached_split


@task(name="collect-branches", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def collect_task(split_dir: Path, split: str, temperature: float, seed: int, actor_cfg: ActorConfig,
                 settings: BranchSettings, critic_cfg: ActorConfig | None = None,
                 cache_dir: Path | None = None) -> tuple[list[RawBranch], int, dict[str, int], list[dict[str, object]]]:
    """One shard: every task of one split at one temperature, critics in the loop (rule, or an LLM).

    Returns (branches, episodes, end reasons, corrected episodes that ended safe and successful as
    ``{"task", "temperature", "steps": replay rows}``)."""
    tasks = list(cached_split(split_dir).values())
    critic = LLMCritic(cached_actor(critic_cfg), f"{critic_cfg.base_url}|{critic_cfg.model}", cache_dir) if critic_cfg else None
    eps = collect_branches(tasks, split, cached_actor(actor_cfg), temperature, seed, settings, critic)
    ends: dict[str, int] = {}
    corrected: list[dict[str, object]] = []
    for e in eps:
        ends[e.end or "finished"] = ends.get(e.end or "finished", 0) + 1
        result = e.episode.result()
        if e.branches and result.success and result.safe_success:  # a corrected episode that ended well
            corrected.append({"task": e.compiled.name, "temperature": temperature,
                              "steps": replay_rows(e.compiled, e.actions)})
    return [b for e in eps for b in e.branches], len(eps), ends, corrected


@task(name="judge-branches", cache_policy=NO_CACHE)
def judge_task(split_dirs: list[Path], branches: list[RawBranch], level: str, judge_cfg: ActorConfig | None = None,
               cache_dir: Path | None = None) -> dict[str, JudgeVerdict]:
    """Rule judge, or the LLM judge when ``judge_cfg`` names an endpoint."""
    tasks = {name: c for d in split_dirs for name, c in cached_split(d).items()}
    if judge_cfg is not None:
        critic = LLMCritic(cached_actor(judge_cfg), f"{judge_cfg.base_url}|{judge_cfg.model}", cache_dir)
        return {b.branch_id: judge_llm(critic, tasks[b.task], b) for b in branches if b.accepted}
    return {b.branch_id: judge(tasks[b.task], b, level) for b in branches if b.accepted}


@task(name="check-invariants", cache_policy=NO_CACHE)
def invariants_task(split_dirs: list[Path], final: list[RawBranch]) -> dict[str, list[str]]:
    tasks = {name: c for d in split_dirs for name, c in cached_split(d).items()}
    return {b.branch_id: p for b in final if (p := pair_invariants(tasks[b.task], b))}
