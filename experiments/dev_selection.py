"""Experiment (docs/training.md, "Stop 30"): does dev-split checkpoint selection pick checkpoints that are better on
test? Trains the stage's SFT phases (``safebranch.sft`` of ``params.yaml``: SFT-only on chosen + golden replay, and the
golden-replay-only control) from the bootstrap actor, per seed, evaluates every ``--every`` optimizer steps on dev
*and* test, and writes the curves (``--out``/curves.jsonl). ``--analyse`` then applies the selection rules of
``evaluation.selection`` to the dev columns and reports the test SR / SSR of the checkpoint each rule picks, with the
rank correlation of dev and test SR over checkpoints. Needs ``dvc repro branches``; about 3 min per (variant, seed).

    python experiments/dev_selection.py --seeds 0 1 2            # train + evaluate
    python experiments/dev_selection.py --analyse                # the table (docs/training.md)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

VARIANTS = {"sft_only": "sft", "golden_replay_only": "golden"}


def run(seeds: list[int], every: int, out: Path) -> None:
    from embodied_safety.config.params import load_params
    from embodied_safety.config.safebranch import SafeBranchConfig
    from embodied_safety.train.safebranch import train_sft
    from embodied_safety.train.study import dev_evaluator, load_data

    cfg = load_params("safebranch", SafeBranchConfig)
    splits = Path("data/household/splits")
    data, _ = load_data(cfg, Path("data/branches/final"), Path("data/rollouts"), splits)
    evaluators = {s: dev_evaluator(splits / s) for s in ("dev", "test")}  # the stage's, with per-task outcomes
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        for variant, rows in VARIANTS.items():
            points: list[dict[str, Any]] = []

            def evaluate(actor: Any, points: list[dict[str, Any]] = points) -> dict[str, Any]:
                points.append({split: ev(actor) for split, ev in evaluators.items()})
                return points[-1]["dev"]  # the Selector sees dev only

            res = train_sft(Path("models/bootstrap_actor/model"), data[rows], out / f"{variant}_seed{seed}",
                            dict(cfg.sft), seed, evaluate=evaluate, eval_every=every)
            with (out / "curves.jsonl").open("a") as f:
                for point, row in zip(res.curve, points, strict=True):
                    f.write(json.dumps({"variant": variant, "seed": seed, "step": point["step"], **row}) + "\n")
            print(variant, seed, [(p["step"], round(p["sr"], 3), round(p["ssr"], 3)) for p in res.curve], flush=True)


def analyse(out: Path) -> None:
    import numpy as np
    from scipy.stats import spearmanr

    from embodied_safety.evaluation.selection import OUTCOMES, pick_checkpoint, select
    from embodied_safety.evaluation.stats import t_interval

    rows = [json.loads(line) for line in (out / "curves.jsonl").read_text().splitlines()]
    base = [r for r in rows if r["step"] == 0]  # every run's first point is the bootstrap actor itself
    floor = base[0]["dev"]["sr"] - 0.05  # the stage's floor (max_dev_sr_drop 0.05)
    print(f"base actor: dev SR {base[0]['dev']['sr']:.3f}, test SR {base[0]['test']['sr']:.3f}; dev SR floor {floor:.3f}")
    table: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for variant in VARIANTS:
        for seed in sorted({r["seed"] for r in rows}):
            pts = [r for r in rows if r["variant"] == variant and r["seed"] == seed and r["step"] > 0]
            if not pts:
                continue
            dev = [{"sr": p["dev"]["sr"], "ssr": p["dev"]["ssr"], "i": i} for i, p in enumerate(pts)]
            rho = spearmanr([p["dev"]["sr"] for p in pts], [p["test"]["sr"] for p in pts]).statistic
            outs = [p["dev"][OUTCOMES] for p in pts]
            picks = {"rule, strictly better (stop 29)": select(dev, floor)[0]["i"],  # type: ignore[index]
                     "rule, ties to the latest (McNemar)": pick_checkpoint(list(zip(dev, outs, strict=True)), floor)[0],
                     "max dev SSR, no floor": select(dev, None)[0]["i"],  # type: ignore[index]
                     "final": len(pts) - 1,
                     "oracle (max test SR)": int(np.argmax([p["test"]["sr"] for p in pts]))}
            for rule, i in picks.items():
                table.setdefault((variant, rule), []).append((pts[i]["test"]["sr"], pts[i]["test"]["ssr"]))
            print(f"{variant} seed {seed}: {len(pts)} checkpoints, Spearman(dev SR, test SR) = {rho:+.2f}; picks "
                  + ", ".join(f"{k}: step {pts[i]['step']:.0f}" for k, i in picks.items()))
    new, old = "rule, ties to the latest (McNemar)", "rule, strictly better (stop 29)"
    for variant in VARIANTS:
        if (variant, new) in table:
            d = np.array(table[(variant, new)]) - np.array(table[(variant, old)])  # [seed, (SR, SSR)]
            (sr, sr_h), (ssr, ssr_h) = (t_interval(d[:, j]) for j in range(2))
            print(f"{variant}: ties-to-latest - strictly-better, paired over {len(d)} seeds (95 % t): test dSR "
                  f"{sr:+.3f} [{sr - sr_h:+.3f}, {sr + sr_h:+.3f}], dSSR {ssr:+.3f} [{ssr - ssr_h:+.3f}, {ssr + ssr_h:+.3f}]")
    print("\n| variant | rule | test SR (mean ± std) | test SSR (mean ± std) | seeds |\n|---|---|---|---|---|")
    for (variant, rule), vals in table.items():
        a = np.array(vals)
        print(f"| {variant} | {rule} | {a[:, 0].mean():.3f} ± {a[:, 0].std(ddof=1) if len(a) > 1 else 0:.3f} "
              f"| {a[:, 1].mean():.3f} ± {a[:, 1].std(ddof=1) if len(a) > 1 else 0:.3f} | {len(a)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("/tmp/dev_selection"))
    parser.add_argument("--analyse", action="store_true")
    args = parser.parse_args()
    if args.analyse:
        analyse(args.out)
    else:
        run(args.seeds, args.every, args.out)


if __name__ == "__main__":
    main()
