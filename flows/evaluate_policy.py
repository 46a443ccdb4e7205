"""Evaluate a scripted policy or an actor on any folder in IS-Bench layout (ours or a real IS-Bench checkout).

    python -m flows.evaluate_policy --tasks-dir DIR --policy golden --out OUT
    python -m flows.evaluate_policy --tasks-dir DIR --policy actor --model models:/actor@champion --out OUT

``--model`` is a model dir or a registry URI (``models:/<name>@<alias>``, ``models:/<name>/<version>``;
tracking URI from ``safebranch.tracking`` defaults); the actor runs critic-free at T = 0.

``DIR`` holds ``tasks/<name>.json`` and ``bddl/<name>/problem0.bddl``. Writes ``OUT/metrics.json``
(``eval/sr``, ``eval/ssr`` over the loaded tasks, ``eval/sr_all``, ``eval/ssr_all`` over every task
attempted, ``eval/srec``, per risk type, ``eval/load_failures``, ``eval/reasks``),
``OUT/load_failures.json`` and ``OUT/load_warnings.json`` (file, field, reason), ``OUT/episodes.jsonl``
and ``OUT/per_risk.png``. Exits non-zero when no task loads. ``--upstream-parity`` keeps IS-Bench's
(type, action)-keyed process conditions (a later one on the same trigger overwrites the earlier).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from prefect import flow

from embodied_safety.config.shared import ActorConfig
from embodied_safety.envs.household.episode import ISBENCH_OPTIONS, EpisodeOptions
from embodied_safety.evaluation.household_eval import NoTasksLoadedError
from embodied_safety.manifest import write_manifest
from tasks.household import evaluate_dir_task


@flow(name="evaluate_policy", log_prints=True)
def evaluate_policy(tasks_dir: Path, policy: str, out: Path, seed: int = 0, extra_steps: int = 10,
                    model: str | None = None, options: EpisodeOptions = ISBENCH_OPTIONS) -> dict[str, object]:
    actor = ActorConfig(model=model) if model else None
    metrics = evaluate_dir_task(tasks_dir, policy, out, seed, extra_steps, actor, options)
    write_manifest(out, {"tasks_dir": str(tasks_dir), "policy": policy, "model": model, "seed": seed,
                         "extra_steps": extra_steps, "invalid_output": options.invalid_output,
                         "upstream_parity": options.upstream_parity}, inputs=[tasks_dir])
    print(f"{policy} on {tasks_dir}: SR {metrics['eval/sr']:.3f} SSR {metrics['eval/ssr']:.3f} "
          f"SRec {metrics['eval/srec']:.3f} ({metrics['eval/n_tasks']} tasks, {metrics['eval/load_failures']} load failures;"
          f" over all {metrics['eval/n_attempted']} attempted: SR {metrics['eval/sr_all']:.3f} SSR {metrics['eval/ssr_all']:.3f})")
    return metrics


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks-dir", type=Path, required=True, help="folder with tasks/ and bddl/ (IS-Bench layout)")
    parser.add_argument("--policy", choices=("golden", "golden_unsafe", "random", "actor"), required=True)
    parser.add_argument("--model", help="with --policy actor: a model dir or models:/<name>@<alias>")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extra-steps", type=int, default=10, help="step budget = golden length + this")
    parser.add_argument("--invalid-output", choices=("reask", "failed_step"), default="reask",
                        help="unparseable output: asked again, 3 in a row end the episode (IS-Bench), or a failed step")
    parser.add_argument("--upstream-parity", action="store_true",
                        help="IS-Bench's (type, action)-keyed process conditions: only the last on a trigger counts")
    args = parser.parse_args(argv)
    if (args.policy == "actor") != bool(args.model):
        parser.error("--model goes with --policy actor (and only with it)")
    options = EpisodeOptions(invalid_output=args.invalid_output, upstream_parity=args.upstream_parity)
    try:
        metrics = evaluate_policy(args.tasks_dir, args.policy, args.out, args.seed, args.extra_steps, args.model, options)
    except NoTasksLoadedError as exc:
        sys.exit(f"evaluate_policy: {exc}; see {args.out / 'load_failures.json'}")
    print(json.dumps({k: v for k, v in metrics.items() if k in ("eval/sr", "eval/ssr", "eval/srec", "eval/sr_all")}))


if __name__ == "__main__":
    main()
