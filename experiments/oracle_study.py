"""Experiment (docs/shield_ppo.md, "Stop 43"): the demo budget's runs with the oracle critic beside them, over seeds.

Reads a ``shield_ppo@dubins`` stage run's ``data/shield/ppo/dubins/results.json`` — made with e.g.

    dvc exp run -S 'shield_ppo.runs={dubins: [ppo_lag, gated, gated_gt, gated_oracle]}' \\
                -S 'shield_ppo.seeds={dubins: [0, 1, 2, 3, 4]}' shield_ppo

— evaluates the BC start on the same evaluation episodes (``runs.evaluate_conditions``: the stage evaluates
trained policies only), and writes per run the mean ± std over seeds of SR and CSC, and paired differences (same
seed) with 95 % t intervals: each run against the start (do-no-harm: SR not below the start's − 0.02) and the
gated runs against PPO-Lagrangian. Run from the clone that ran the stage:

    python experiments/oracle_study.py   # -> experiments/results/oracle_study.json
    python experiments/oracle_study.py --against <another run's results.json> --out ...
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

Seeds = dict[int, dict[str, float]]  # seed -> the run's in-distribution evaluation


def interval(d: np.ndarray) -> list[float]:
    """[mean, low, high]: the 95 % t interval of per-seed values (``evaluation.stats.t_interval``)."""
    from embodied_safety.evaluation.stats import t_interval

    m, h = t_interval(d)
    return [m, m - h, m + h]


def by_run(path: Path) -> dict[str, Seeds]:
    """A stage run's ``results.json``: run -> seed -> {sr, csc} (the stage-default δ's runs; ``report.seed_values``)."""
    from embodied_safety.shield.rl.report import seed_values

    rows = json.loads(path.read_text())["rows"]
    return {run: seed_values(rows, run) for run in dict.fromkeys(r["run"] for r in rows if r["delta_default"])}


def paired(a: Seeds, b: Seeds) -> dict[str, list[float]]:
    """``a − b`` over their common seeds, per metric, with its interval."""
    common = sorted(set(a) & set(b))
    return {k: interval(np.array([a[s][k] - b[s][k] for s in common])) for k in ("sr", "csc")}


def run_summary(seeds: Seeds, start: dict[str, float]) -> dict[str, Any]:
    """One run over its seeds: the seeds, SR and CSC as [mean, std], and each minus the start with its interval."""
    order = sorted(seeds)
    out: dict[str, Any] = {"seeds": order}
    for k in ("sr", "csc"):
        v = np.array([seeds[s][k] for s in order])
        out[k] = [float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0]
        out[f"{k}_minus_start"] = interval(v - start[k])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=Path("data/shield/ppo/dubins/results.json"))
    ap.add_argument("--out", type=Path, default=Path("experiments/results/oracle_study.json"))
    ap.add_argument("--against", type=Path, default=None, help="another stage run's results.json (e.g. without the KL "
                    "anchor): adds this − that per run, paired by seed")
    args = ap.parse_args(argv)

    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.io import write_json
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import evaluate_conditions
    from embodied_safety.threads import pin_stage_threads
    from flows._shield import BC

    pin_stage_threads()
    by = by_run(args.results)
    episodes = load_params("shield_ppo", ShieldPPOConfig).eval_episodes["dubins"]
    stored = json.loads(args.results.read_text()).get("start")  # the stage's own evaluation of the start (stop 46 on)
    start = stored["in"] if stored else evaluate_conditions("dubins", load_policy(BC / "dubins"), episodes, ["in"])["in"]
    out: dict[str, Any] = {"episodes": episodes, "start": {k: start[k] for k in ("sr", "csc", "violation_rate")},
                           "runs": {}, "paired": {}}
    for run, seeds in by.items():
        out["runs"][run] = run_summary(seeds, start)
    pairs = [(run, "ppo_lag", by["ppo_lag"]) for run in by if run != "ppo_lag" and "ppo_lag" in by]
    if "gated_oracle" in by and "gated_gt" in by:
        pairs.append(("gated_oracle", "gated_gt", by["gated_gt"]))
    if args.against is not None:
        that = by_run(args.against)
        pairs += [(run, "against", that[run]) for run in by if run in that]
    for run, name, other in pairs:
        out["paired"] |= {f"{run}-{name}/{k}": v for k, v in paired(by[run], other).items()}
    write_json(args.out, out)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
