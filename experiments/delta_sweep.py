"""Experiment (docs/shield_ppo.md, "Stop 51"): Table 7 -- the gate threshold δ of a run against SR / CSC -- from
``checkpoint_curve.py`` result files (the runs at each δ trained by the same library calls as the stage), read by the
stage's own table function (:func:`embodied_safety.shield.rl.report.table_delta`: the means, and whether CSC falls as
δ grows on each adjacent step's crossed-bootstrap interval).

    python experiments/delta_sweep.py --run gated_search --baseline lag \\
        --files experiments/results/study1m_amd.json experiments/results/sweep1m_amd.json \\
        --out experiments/results/delta_sweep_1m_amd

Every variant of ``--run`` in the files is one δ: its ``delta`` override, or the run's own δ in ``--params`` when
it has none. Each seed's final iterate becomes a stage result row (``eval["in"]``: the test episodes; the validation
episodes are a second table; a third reads each seed's validated checkpoint on the test episodes). Written: ``<out>.json`` (the rows' numbers and the steps), ``<out>.png`` (SR and CSC
against δ, mean ± std over seeds, test and validation, with ``--baseline``'s final iterate and the start).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from checkpoint_curve import choose, finish_sr_csc
from results_json import write_results

PARTS = {"test": "test episodes (the stage's evaluation set)", "val": "validation episodes"}


def sweep_rows(files: list[dict[str, Any]], run: str, own_delta: float, part: str,
               validated: bool = False) -> list[dict[str, Any]]:
    """Stage result rows (``report``'s layout) of every seed's final iterate of ``run``'s variants, on ``part``; with
    ``validated``, of its validated checkpoint (the best trained iterate on the validation episodes,
    ``checkpoint_curve.choose``, as the stage's ``select_every``) instead."""
    rows = []
    for data in files:
        for entry in data["runs"].values():
            if entry["run"] != run:
                continue
            delta = float(entry["overrides"].get("delta", own_delta))
            for seed, r in entry["seeds"].items():
                rows.append({"env": "dubins", "run": run, "seed": int(seed), "delta": delta,
                             "delta_default": delta == own_delta,
                             "eval": {"in": (choose(r["curve"], True) if validated else r["curve"][-1])[part]}})
    return rows


def baseline_finals(files: list[dict[str, Any]], name: str, part: str) -> list[dict[str, float]]:
    """The final iterate of variant ``name`` per seed on ``part`` (the first file that has it)."""
    for data in files:
        if name in data["runs"]:
            return [r["curve"][-1][part] for r in data["runs"][name]["seeds"].values()]
    raise SystemExit(f"no variant {name!r} in the files")


def plot(rows: dict[str, list[dict[str, Any]]], base: dict[str, list[dict[str, float]]], start: dict[str, Any],
         baseline: str, run: str, path: Path) -> None:
    import matplotlib.pyplot as plt

    from embodied_safety.shield.rl import report as rep

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for part, style in (("test", "-"), ("val", ":")):
        dr = rep.delta_rows(rows[part])
        ds = [d for d, _, _ in dr]
        for ax, i, key in ((axes[0], 1, "sr"), (axes[1], 2, "csc")):
            m = [np.mean(x[i]) for x in dr]
            s = [np.std(x[i], ddof=1) if len(x[i]) > 1 else 0.0 for x in dr]
            line = ax.errorbar(ds, m, yerr=s, ls=style, marker="o", capsize=3, label=f"{run} ({part})")
            ax.axhline(np.mean([b[key] for b in base[part]]), color=line[0].get_color(), lw=1, ls="--",
                       label=f"{baseline} final ({part})")
            ax.axhline(start[part][key], color="0.5", lw=1, ls=style, label=f"start ({part})")
    finish_sr_csc(fig, axes, "gate threshold δ (rubric-margin logit)", "Dubins-VL: the δ sweep's final iterates, mean "
                  "± std over seeds (a larger δ flags more samples)", path, legend=1)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", nargs="+", type=Path, required=True, help="checkpoint_curve.py result files")
    ap.add_argument("--run", default="gated_search", help="the swept run (shield/rl/runs.py::RUNS)")
    ap.add_argument("--baseline", default="lag", help="the variant drawn as the reference line (PPO-Lagrangian)")
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="for the run's own δ")
    ap.add_argument("--out", type=Path, required=True, help="<out>.json and <out>.png")
    args = ap.parse_args(argv)

    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.rl import report as rep
    from embodied_safety.shield.rl.runs import ppo_config

    files = [json.loads(f.read_text()) for f in args.files]
    starts = {json.dumps({p: {k: d["start"][p][k] for k in ("sr", "csc")} for p in PARTS}) for d in files}
    if len(starts) != 1:
        raise SystemExit("the files were trained from different starts")
    own = ppo_config(load_params("shield_ppo", ShieldPPOConfig, args.params), "dubins", args.run, 0).delta
    rows = {p: sweep_rows(files, args.run, own, p) for p in PARTS}
    base = {p: baseline_finals(files, args.baseline, p) for p in PARTS}
    result: dict[str, Any] = {"run": args.run, "own_delta": own, "files": [str(f) for f in args.files]}
    for part, title in PARTS.items():
        table = rep.table_delta(rows[part])
        b = base[part]
        line = (f"{args.baseline} (final, {len(b)} seeds): SR {np.mean([x['sr'] for x in b]):.3f}, "
                f"CSC {np.mean([x['csc'] for x in b]):.2f}; start SR {files[0]['start'][part]['sr']:.3f}, "
                f"CSC {files[0]['start'][part]['csc']:.2f}")
        print(f"## {title}\n\n{table}\n{line}\n")
        result[part] = {"table": table, "reference": line,
                        "deltas": [{"delta": d, "sr": sr, "csc": csc} for d, sr, csc in rep.delta_rows(rows[part])],
                        "steps": rep.delta_steps(rows[part])}
    picked = sweep_rows(files, args.run, own, "test", validated=True)
    table = rep.table_delta(picked)
    print(f"## validated checkpoints (the best trained iterate on the validation episodes), test episodes\n\n{table}")
    result["validated"] = {"table": table, "steps": rep.delta_steps(picked),
                           "deltas": [{"delta": d, "sr": sr, "csc": csc} for d, sr, csc in rep.delta_rows(picked)]}
    write_results(args.out.with_suffix(".json"), result)
    plot(rows, base, files[0]["start"], args.baseline, args.run, args.out.with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
