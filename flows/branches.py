"""Stage ``branches``: SafeBranch branch-pair construction (Algorithm 3, Phases A-B).

Rolls the actor out on the train split at each temperature with the prospective and
retrospective critics in the loop (rule backend), judges every accepted repair, relabels and
prunes. Collection and judge shards are one per (split, temperature), run in this process or on a
Dask / Ray cluster (``task_runner``, ``tasks/runners.py``). Each intermediate is its own DVC output:

* ``data/branches/raw/raw.jsonl``: every repair attempt (accepted or failed) with h_k, [h_k; f_k], y-, y+
* ``data/branches/judged/judged.jsonl``: judge verdicts with per-criterion reasons
* ``data/branches/final/{pairs.jsonl, pairs_fb.jsonl, sft.jsonl, replay.jsonl, safe_episodes.jsonl}``
  (and ``pairs_extracted.jsonl`` / ``pairs_judged.jsonl``: every accepted repair / every judge-kept
  one before pruning, for Fig. 3c):
  TRL preference pairs (relabelled and the +FB ablation), the SFT file (chosen side), the replay
  steps of corrected episodes that ended safe and successful (paper D.5, deduplicated) and those
  episodes one per line (the safe side of the Trajectory DPO baselines)
* ``data/branches/funnel.json`` (+ ``funnel_chart.png`` and its data ``funnel_chart.json``): counts per stage, risk type and trigger, the
  judge keep rate, the repair acceptance rate, and the efficiency ratio against natural sampling
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from prefect import flow

from embodied_safety.branch.collect import BranchSettings
from embodied_safety.branch.dataset import funnel, preference_row, prune, sft_row
from embodied_safety.branch.efficiency import efficiency
from embodied_safety.config.branches import BranchesConfig
from embodied_safety.config.rollouts import load_with_rollout_actor
from embodied_safety.config.shared import ActorConfig
from embodied_safety.evaluation.plots import plot_funnel
from embodied_safety.io import read_json, replace_dir, scratch_dir, write_json, write_jsonl
from embodied_safety.manifest import write_manifest
from embodied_safety.records import Trajectory
from flows._stage import Plot, Stage
from tasks.branches import collect_task, invariants_task, judge_task
from tasks.runners import map_shards, with_runner
from tasks.tracking import resolve_actor

SPLITS = Path("data/household/splits")
ROLLOUTS = Path("data/rollouts")
OUT = Path("data/branches")


@flow(name="branches", log_prints=True)
def branches(cfg: BranchesConfig = BranchesConfig(), splits: Path = SPLITS, rollouts: Path = ROLLOUTS,
             out: Path = OUT) -> dict[str, object]:
    settings = BranchSettings(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(BranchSettings)
                                 if hasattr(cfg, f.name)})
    actor_cfg = resolve_actor(ActorConfig(**cfg.actor))  # a registry URI (models:/actor@champion) -> its local dir
    critic_cfg = ActorConfig(**{"backend": "openai", "prompt_style": "full", "max_new_tokens": 512, **cfg.critic}) \
        if cfg.critic_backend == "llm" else None
    calls = [(splits / split, split, t, cfg.seed, actor_cfg, settings, critic_cfg, out / "critic_cache")
             for split in cfg.splits for t in cfg.temperatures]

    def report(args: tuple, result: tuple) -> None:
        got, n, ends, _ = result
        print(f"{args[1]} T={args[2]}: {n} episodes, {sum(b.accepted for b in got)}/{len(got)} repairs accepted, ends {ends}")

    shards = map_shards(collect_task, calls, cfg, done=report)  # critic-in-the-loop shards: (split, temperature)
    raw = [b for got, _, _, _ in shards for b in got]
    episodes = sum(n for _, n, _, _ in shards)
    corrected = [e for _, _, _, eps in shards for e in eps]
    judge_cfg = ActorConfig(**{"backend": "openai", "prompt_style": "full", "max_new_tokens": 256, **cfg.judge}) \
        if cfg.judge_backend == "llm" else None
    split_dirs = [splits / s for s in cfg.splits]
    verdicts: dict = {}  # judge shards: each collection shard's accepted repairs
    for part in map_shards(judge_task, [(split_dirs, got, cfg.observation, judge_cfg, out / "critic_cache")
                                        for got, _, _, _ in shards], cfg):
        verdicts.update(part)
    kept = [b for b in raw if b.accepted and verdicts[b.branch_id].accept]
    final = prune(kept)
    stats = funnel(raw, verdicts, final)
    violations = invariants_task(split_dirs, final)
    stats["checks/invariant_violations"] = len(violations)
    for pid, problems in list(violations.items())[:10]:
        print(f"pair {pid} violates: {problems}")
    trajectories = [Trajectory.from_json(read_json(p)) for p in sorted((rollouts / "shards").glob("*.json"))]
    stats.update(efficiency(len(final), trajectories, episodes))

    staged = {name: scratch_dir(out / name) for name in ("raw", "judged", "final")}
    write_jsonl(staged["raw"] / "raw.jsonl", (b.to_json() for b in raw))
    write_jsonl(staged["judged"] / "judged.jsonl", ({**verdicts[b.branch_id].to_json(), "task": b.task, "risk_type": b.risk_type,
                                                      "trigger": b.trigger} for b in raw if b.accepted))
    write_jsonl(staged["final"] / "pairs.jsonl", (preference_row(b) for b in final))
    # the funnel's earlier stages as pairs too, for the downstream effect of filtering (Fig. 3c)
    write_jsonl(staged["final"] / "pairs_extracted.jsonl", (preference_row(b) for b in raw if b.accepted))
    write_jsonl(staged["final"] / "pairs_judged.jsonl", (preference_row(b) for b in kept))
    write_jsonl(staged["final"] / "pairs_fb.jsonl", (preference_row(b, with_feedback=True) for b in final))
    write_jsonl(staged["final"] / "sft.jsonl", (sft_row(b) for b in final))
    write_jsonl(staged["final"] / "safe_episodes.jsonl", corrected)
    unique_replay = list({json.dumps(r, sort_keys=True): r for e in corrected for r in e["steps"]}.values())
    write_jsonl(staged["final"] / "replay.jsonl", unique_replay)
    stats["data/replay_steps"] = len(unique_replay)
    for name, path in staged.items():
        write_manifest(path, cfg, inputs=[splits / s for s in cfg.splits], extra={"stage_output": name})
        replace_dir(path, out / name)
    write_json(out / "funnel.json", stats)
    per_risk = {k.rsplit("/", 1)[1]: v for k, v in stats.items() if k.startswith("data/pairs_final/risk/")}
    plot_funnel({"extracted": stats["data/pairs_extracted"], "judge-kept": stats["data/pairs_judged"],
                 "final": stats["data/pairs_final"]}, per_risk, out / "funnel_chart.png",
                f"SafeBranch funnel ({episodes} episodes, rule critics + judge)")
    print(f"funnel: {stats['data/pairs_extracted']} -> {stats['data/pairs_judged']} -> {stats['data/pairs_final']} pairs; "
          f"judge keep rate {stats['data/judge_keep_rate']:.3f}, repair acceptance {stats['data/repair_acceptance']:.3f}, "
          f"efficiency ratio {stats['efficiency/ratio']:.1f}x")
    return stats


STAGE = Stage("branches", branches, config=BranchesConfig, params=("branches", "rollouts.actor"),
              load=load_with_rollout_actor, wrap=with_runner,
              inputs={"splits": str(SPLITS), "rollouts": str(ROLLOUTS), "actor": "models/bootstrap_actor"},
              outs=(f"{OUT}/raw", f"{OUT}/judged", f"{OUT}/final", f"{OUT}/funnel_chart.png", f"{OUT}/funnel_chart.json"),
              metrics=f"{OUT}/funnel.json",
              plots=(Plot(f"{OUT}/funnel_chart.png", "bars", y_label="pairs"),))
main = STAGE.main

if __name__ == "__main__":
    main()
