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
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np


def t_interval(d: np.ndarray) -> list[float]:
    """Mean and the 95 % t interval of paired differences (over seeds)."""
    from scipy import stats

    m = float(d.mean())
    if len(d) < 2:
        return [m, float("nan"), float("nan")]
    h = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)))
    return [m, m - h, m + h]


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
    rows = [r for r in json.loads(args.results.read_text())["rows"] if r["delta_default"]]
    episodes = load_params("shield_ppo", ShieldPPOConfig).eval_episodes["dubins"]
    start = evaluate_conditions("dubins", load_policy(BC / "dubins"), episodes, ["in"])["in"]
    by: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
    for r in rows:
        by[r["run"]][int(r["seed"])] = r["eval"]["in"]
    out: dict[str, Any] = {"episodes": episodes, "start": {k: start[k] for k in ("sr", "csc", "violation_rate")},
                           "runs": {}, "paired": {}}
    for run, seeds in by.items():
        sr = np.array([seeds[s]["sr"] for s in sorted(seeds)])
        csc = np.array([seeds[s]["csc"] for s in sorted(seeds)])
        out["runs"][run] = {"seeds": sorted(seeds), "sr": [float(sr.mean()), float(sr.std(ddof=1)) if len(sr) > 1 else 0.0],
                            "csc": [float(csc.mean()), float(csc.std(ddof=1)) if len(csc) > 1 else 0.0],
                            "sr_minus_start": t_interval(sr - start["sr"]),
                            "csc_minus_start": t_interval(csc - start["csc"])}
    for run in by:
        if run == "ppo_lag" or "ppo_lag" not in by:
            continue
        common = sorted(set(by[run]) & set(by["ppo_lag"]))
        for k in ("sr", "csc"):
            d = np.array([by[run][s][k] - by["ppo_lag"][s][k] for s in common])
            out["paired"][f"{run}-ppo_lag/{k}"] = t_interval(d)
    if "gated_oracle" in by and "gated_gt" in by:
        common = sorted(set(by["gated_oracle"]) & set(by["gated_gt"]))
        for k in ("sr", "csc"):
            d = np.array([by["gated_oracle"][s][k] - by["gated_gt"][s][k] for s in common])
            out["paired"][f"gated_oracle-gated_gt/{k}"] = t_interval(d)
    if args.against is not None:
        that: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
        for r in json.loads(args.against.read_text())["rows"]:
            if r["delta_default"]:
                that[r["run"]][int(r["seed"])] = r["eval"]["in"]
        for run in by:
            common = sorted(set(by[run]) & set(that.get(run, {})))
            for k in ("sr", "csc"):
                if common:
                    d = np.array([by[run][s][k] - that[run][s][k] for s in common])
                    out["paired"][f"{run}-against/{k}"] = t_interval(d)
    write_json(args.out, out)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
