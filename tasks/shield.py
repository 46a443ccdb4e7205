"""Prefect tasks of the ShieldVLA stages: demo, rollout and labelling shards, each stored under a content key.

A shard's ``.npz`` lands in ``.cache/shield/<kind>/<key>.npz`` (atomic write), the key hashing the shard's
arguments, its input files and the code key of this module's import closure (``embodied_safety.codekey``); a
re-run after a kill loads the finished shards and computes the rest. Labelling shards with the VLM backend also keep the scorer's per-frame
cache, so a retried shard re-asks only the frames that were not answered.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.codekey import cached_code_key
from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.manifest import hash_path
from embodied_safety.shield.costs.sources import scorer_for, scorer_key
from tasks.store import content_key

STORE = Path(".cache/shield")


@cache
def _file_hash(path: str) -> str:
    return hash_path(path)[:16]


def shard_path(kind: str, blob: dict[str, Any], inputs: tuple[str, ...] = ()) -> Path:
    key = content_key({**blob, "inputs": [_file_hash(p) for p in inputs],
                       "code": cached_code_key("tasks.shield")})  # the import closure of the shard code
    return STORE / kind / f"{key}.npz"


@task(name="demo-shard", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def demo_shard(env: str, seeds: list[int], noise: float) -> Path:
    """Scripted-expert episodes for ``seeds`` (one episode per seed)."""
    from embodied_safety.shield.envs import env_factories, env_name
    from embodied_safety.shield.policy.demos import DemoSet, collect_demos, scripted_expert

    path = shard_path("demos", {"env": env, "seeds": seeds, "noise": noise})
    if not path.is_file():
        make_env, _ = env_factories(env)
        collect_demos(make_env, scripted_expert(env_name(env)), episode_seeds=seeds, noise=noise).save(path)
    DemoSet.load(path)  # a stored shard that does not load is recomputed by the retry
    return path


@task(name="shield-rollout-shard", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=0)
def rollout_shard(env: str, policy_dir: Path, seeds: list[int], deterministic: bool) -> Path:
    """The policy's episodes for ``seeds``, with frames, per-frame cost / margin and the episode bits."""
    from embodied_safety.shield.envs import env_factories
    from embodied_safety.shield.policy.rollouts import collect_rollouts
    from embodied_safety.shield.policy.visuomotor import load_policy

    path = shard_path("rollouts", {"env": env, "seeds": seeds, "deterministic": deterministic},
                      (str(policy_dir),))
    if not path.is_file():
        make_env, make_vec = env_factories(env)
        policy = load_policy(policy_dir)
        collect_rollouts(make_env, policy, seeds=seeds, deterministic=deterministic, n_envs=64 if make_vec else 8,
                         make_vec=make_vec).save(path)
    return path


@task(name="rubric-label-shard", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def label_shard(env: str, rollouts: Path, start: int, stop: int, cfg: RubricLabelConfig) -> Path:
    """Rubric scores V [n, K] (NaN rows: frames the VLM never answered validly) of frames ``start:stop``."""
    from embodied_safety.shield.costs.rubrics import RUBRIC_SETS
    from embodied_safety.shield.policy.demos import save_npz

    path = shard_path("labels", {"env": env, "range": [start, stop], **scorer_key(env, cfg)}, (str(rollouts),))
    if not path.is_file():
        from embodied_safety.shield.policy.rollouts import RolloutSet

        frames = np.asarray(RolloutSet.load(rollouts).frames[start:stop])
        scores = scorer_for(RUBRIC_SETS[cfg.rubric_sets[env]], cfg, STORE).score(frames)
        save_npz(path, {"scores": np.asarray(scores, dtype=np.float32)}, compress=False)
    return path
