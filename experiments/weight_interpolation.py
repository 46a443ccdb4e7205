"""Experiment (docs/training.md, "Stop 35"): does interpolating the fine-tuned actor's weights back toward the base
actor's (WiSE-FT, Wortsman et al. 2022) keep the base's task success while keeping the fine-tune's safety?

For each trained variant of the ``safebranch`` stage's ``results.json`` (seed 0 by default) and each α, the actor
θ(α) = (1 − α) θ_base + α θ_variant is evaluated critic-free (the stage's evaluator, T = 0) on dev, test and the OOD
splits. α = 0 is the base actor, α = 1 the variant. The rule issue 20 asks for (max dev SSR subject to dev SR ≥ base
dev SR − 0.05) then picks α on dev alone; the table shows what that pick scores on test and OOD. Needs the outputs of
``dvc repro safebranch``; about 20 s per (variant, α) on 2 cores.

    python experiments/weight_interpolation.py --alphas 0.25 0.5 0.75 1.0   # -> experiments/results/weight_interpolation.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

SPLITS = ("dev", "test", "ood_objectshift", "ood_taskshift")


def interpolate(base: Path, tuned: Path, alpha: float, out: Path) -> Path:
    """θ(α) saved as a model directory beside the tuned one's tokenizer and profile files."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    a = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32).state_dict()
    model = AutoModelForCausalLM.from_pretrained(tuned, dtype=torch.float32)
    sd = model.state_dict()
    mixed = {k: (1 - alpha) * a[k] + alpha * v if v.is_floating_point() else v for k, v in sd.items()}
    model.load_state_dict(mixed)
    shutil.copytree(tuned, out, dirs_exist_ok=True)
    model.save_pretrained(out)
    return out


def evaluate(model: Path, splits: Path) -> dict[str, float]:
    """SR / SSR per split with the stage's critic-free evaluator (:func:`~embodied_safety.train.study.evaluate_model`)."""
    from embodied_safety.train.study import evaluate_model

    metrics = evaluate_model(model, splits, SPLITS)[0]
    return {f"{split}/{k}": metrics[f"{split}/{k}"] for split in SPLITS for k in ("sr", "ssr")}


def pick(rows: list[dict[str, Any]], floor: float) -> dict[str, Any]:
    """Max dev SSR subject to dev SR ≥ floor (ties: higher dev SR, then smaller α); else max dev SR."""
    ok = [r for r in rows if r["dev/sr"] >= floor - 1e-9]
    pool = ok or rows
    key = (lambda r: (r["dev/ssr"], r["dev/sr"], -r["alpha"])) if ok else (lambda r: (r["dev/sr"], -r["alpha"]))
    return {**max(pool, key=key), "above_floor": bool(ok)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.25, 0.5, 0.75, 1.0])
    ap.add_argument("--variants", nargs="+", default=["safebranch", "sft_only", "golden_replay_only"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--results", type=Path, default=Path("models/safebranch/results.json"))
    ap.add_argument("--base", type=Path, default=Path("models/bootstrap_actor/model"))
    ap.add_argument("--splits", type=Path, default=Path("data/household/splits"))
    ap.add_argument("--max-dev-sr-drop", type=float, default=0.05)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/weight_interpolation.json"))
    args = ap.parse_args(argv)

    from embodied_safety.io import write_json
    from embodied_safety.threads import pin_stage_threads

    pin_stage_threads()
    runs = {r["variant"]: r for r in json.loads(args.results.read_text())["runs"] if r["seed"] == args.seed}
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    done = {(r["variant"], r["alpha"]) for r in rows}
    if ("base", 0.0) not in done:
        rows.append({"variant": "base", "alpha": 0.0, **evaluate(args.base, args.splits)})
        write_json(args.out, rows)
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants:
            for alpha in args.alphas:
                if (variant, alpha) in done:
                    continue
                model = interpolate(args.base, Path(runs[variant]["model"]), alpha, Path(tmp) / f"{variant}-{alpha}")
                rows.append({"variant": variant, "alpha": alpha, **evaluate(model, args.splits)})
                write_json(args.out, rows)  # after every point: a killed run keeps what it finished
                print(json.dumps(rows[-1]), flush=True)
    print(table(rows, args.max_dev_sr_drop))


def table(rows: list[dict[str, Any]], drop: float) -> str:
    """Markdown: every (variant, α) (the best per column in bold) and, per variant, the α the dev rule picks."""
    base = next(r for r in rows if r["variant"] == "base")
    cols = [f"{s}/{k}" for s in SPLITS for k in ("sr", "ssr")]
    from embodied_safety.evaluation.report import markdown_table

    lines = [markdown_table(["variant / α", *cols], [(f"{r['variant']} / {r['alpha']:.2f}", [r[c] for c in cols], [])
                                                    for r in rows])]
    lines.append("")
    for variant in dict.fromkeys(r["variant"] for r in rows if r["variant"] != "base"):
        p = pick([base] + [r for r in rows if r["variant"] == variant], base["dev/sr"] - drop)
        lines.append(f"- {variant}: dev rule picks α = {p['alpha']:.2f} (above floor: {p['above_floor']}): test SR / SSR "
                     f"{p['test/sr']:.3f} / {p['test/ssr']:.3f}, OOD-ObjectShift {p['ood_objectshift/sr']:.3f} / "
                     f"{p['ood_objectshift/ssr']:.3f}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
