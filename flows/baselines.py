"""Stage ``baselines``: the inference-time safety baselines with the base actor (SafeBranch App. C, F.4).

Self-Verification (Algorithm 1), Lookahead (Algorithm 2) and the runtime full-critic, each on
every evaluation split under the critic-free protocol, with their test-time cost (actor calls,
verifier / value / critic calls, simulated lookahead steps, seconds). Each (method, split) is one
shard (``tasks/inference_time.py``), run in this process or on a Dask / Ray cluster (``task_runner``).

Outputs: ``data/baselines/<method>/<split>/{metrics.json, episodes.jsonl, per_risk.png}``,
``data/baselines/table14.md`` (beside the base actor critic-free, evaluated here on the same
tasks), ``data/baselines_metrics.json``.
"""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow

from embodied_safety.config.baselines import BaselinesConfig
from embodied_safety.config.rollouts import load_with_rollout_actor
from embodied_safety.config.shared import ActorConfig
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.rollout.actor_eval import evaluate_actor
from flows._stage import Stage
from tasks.actors import cached_actor, cached_split
from tasks.inference_time import baseline_task
from tasks.runners import map_shards, with_runner
from tasks.tracking import resolve_actor

SPLITS = Path("data/household/splits")
OUT = Path("data/baselines")
METRICS = Path("data/baselines_metrics.json")
LABELS = {"base": "Base actor, critic-free", "self_verification": "Self-Verification (Alg. 1)",
          "lookahead": "Lookahead (Alg. 2)", "full_critic": "Runtime full-critic (F.4)"}
COST = {"base": "", "self_verification": "verifier", "lookahead": "value", "full_critic": "critic"}


def table14(rows: dict[str, dict[str, dict[str, float]]], splits: tuple[str, ...]) -> str:
    """Methods x splits (SR / SSR / SRec) with the test-time cost summed over the splits, in calls: the file is a
    hashed output, so no wall time (a fresh clone must write the same bytes; the seconds are in the stage's log)."""
    head = "| method | " + " | ".join(f"{s} {k}" for s in splits for k in ("SR", "SSR", "SRec")) + \
        " | actor calls / episode | module calls (total) |"
    lines = [head, "|" + "---|" * (1 + 3 * len(splits) + 2)]
    for method, per_split in rows.items():
        cells = [f"{per_split[s][f'eval/{k}']:.3f}" for s in splits for k in ("sr", "ssr", "srec")]
        n = sum(per_split[s]["eval/n_tasks"] for s in splits)
        actor = sum(per_split[s].get("eval/cost/actor_calls", per_split[s]["eval/mean_steps"] * per_split[s]["eval/n_tasks"])
                    for s in splits) / max(n, 1)
        module = sum(per_split[s].get("eval/cost/module_calls", 0) for s in splits)
        lines.append(f"| {LABELS.get(method, method)} | " + " | ".join(cells) +
                     f" | {actor:.1f} | {module:.0f} {COST.get(method, '')} |")
    return "\n".join(lines) + "\n"


@flow(name="baselines", log_prints=True)
def baselines(cfg: BaselinesConfig = BaselinesConfig(), splits: Path = SPLITS, out: Path = OUT,
              metrics_path: Path = METRICS) -> dict[str, float]:
    actor_cfg = resolve_actor(ActorConfig(**cfg.actor))
    tmp = scratch_dir(out)
    rows: dict[str, dict[str, dict[str, float]]] = {"base": {}}
    for split in cfg.splits:  # the critic-free reference on the same tasks, same process
        t0 = time.perf_counter()
        m, _ = evaluate_actor(list(cached_split(splits / split).values()), cached_actor(actor_cfg),
                              extra_steps=cfg.extra_steps)
        rows["base"][split] = {**{k: float(v) for k, v in m.items()}, "eval/cost/seconds": time.perf_counter() - t0}
    calls = [(method, splits / split, split, cfg, actor_cfg, tmp / method / split)
             for method in cfg.methods for split in cfg.splits]

    def report(args: tuple, m: dict[str, float]) -> None:
        rows.setdefault(args[0], {})[args[2]] = m
        print(f"{args[0]:18s} {args[2]:16s} SR {m['eval/sr']:.3f} SSR {m['eval/ssr']:.3f} SRec {m['eval/srec']:.3f} "
              f"actor calls/ep {m['eval/cost/actor_calls_per_episode']:.1f} module calls {m['eval/cost/module_calls']:.0f}")

    map_shards(baseline_task, calls, cfg, done=report)
    atomic_write_text(tmp / "table14.md", f"# Inference-time baselines with the base actor (critic-free protocol, "
                      f"{cfg.verifier_backend} verifier / {cfg.value_backend} value / {cfg.critic_backend} critic)\n\n"
                      + table14(rows, cfg.splits))
    write_manifest(tmp, cfg, inputs=[splits / s for s in cfg.splits], extra={"actor": actor_cfg.model})
    replace_dir(tmp, out)
    metrics = {f"baselines/{method}/{split}/{k.removeprefix('eval/')}": v for method, per in rows.items()
               for split, m in per.items() for k, v in m.items()
               if k.removeprefix("eval/") in ("sr", "ssr", "srec") or k.startswith("eval/cost/")}
    write_json(metrics_path, metrics)
    print((out / "table14.md").read_text())
    print("wall time, summed over the splits: " + ", ".join(
        f"{LABELS.get(m, m)} {sum(per[s].get('eval/cost/seconds', 0) for s in cfg.splits):.1f} s" for m, per in rows.items()))
    return metrics


STAGE = Stage("baselines", baselines, config=BaselinesConfig, params=("baselines", "rollouts.actor"),
              load=load_with_rollout_actor, wrap=with_runner,
              inputs={"splits": str(SPLITS), "actor": "models/bootstrap_actor"}, outs=(str(OUT),), metrics=str(METRICS))
main = STAGE.main

if __name__ == "__main__":
    main()
