"""Experiment (docs/shield_ppo.md, "Stop 45"): when does a PPO run lose the start, and would a validated checkpoint keep it?

Each variant (``name:run[:key=value,...]``, as in ``ppo_variants.py``) is trained over seeds from the clone's BC start
with the stage's config, warm critics, threads and CPU kernels. Every ``--every`` iterations (and at iteration 0, the
start) the deterministic policy is evaluated on two disjoint episode sets: *validation* (``episode_seed(--val-base,
i)``, used only to choose) and *test* (the stage's evaluation episodes, ``runs.EVAL_BASE``, never used to choose).
Training is not perturbed (deterministic evaluation draws no noise; the final test numbers equal
``ppo_variants.py``'s for the same seed). Written per variant:

* the curve: test and validation SR / CSC per evaluated iteration, mean over seeds;
* ``final``: the last iterate on test (what the stage reports now);
* ``select``: the checkpoint with the best validation SR (ties: lower validation CSC, then the later one) among the
  evaluated iterations *including* the start, on test; ``select_trained``: the same among trained checkpoints only.

Each as mean ± std over seeds with paired 95 % t intervals against the start and against ``--baseline``; for the final
iterate also the crossed bootstrap over seeds *and* episodes (``crossed``; the stage's do-no-harm interval, stop 47:
with the episodes held fixed one set of 100 read SR − start +0.04, another −0.04). Run from a
data clone that ran ``shield_ppo@dubins``:

    python experiments/checkpoint_curve.py --warm rubric=.cache/shield/critic_warm/<key> \\
        --variant lag:ppo_lag --variant gated:gated --baseline lag --seeds 0 1 2 3 4 \\
        --out experiments/results/checkpoint_curve.json

``--merge`` joins other result files of the same start (two processes on two cores, each with one thread and its
own ``--out``: 1.6× the throughput of one process with two threads on stop 50's machine).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from oracle_study import paired, run_summary
from ppo_variants import Context, parse_variant, summary_line
from results_json import write_results

from embodied_safety.shield.rl.select import VAL_BASE, selection_key


def evaluate(policy: Any, base: int, episodes: int) -> dict[str, Any]:
    """The deterministic policy on ``episode_seeds(base, range(episodes))`` of Dubins-VL, as the stage evaluates
    (``runs.evaluate_conditions``): the summary metrics and ``per_episode`` outcomes for the crossed bootstrap."""
    from embodied_safety.shield.rl.runs import evaluate_conditions

    return evaluate_conditions("dubins", policy, episodes, ["in"], base=base)["in"]


def crossed(runs: dict[str, Any], start: dict[str, Any], baseline: str | None) -> dict[str, Any]:
    """Per variant and episode set, the final iterate's SR − start and CSC − ``baseline`` with the crossed bootstrap
    over seeds and episodes (``evaluation.stats.crossed_bootstrap``, as the stage's do-no-harm table); variants whose
    seeds lack per-episode outcomes (results written before stop 47) are left out."""
    from embodied_safety.evaluation.stats import crossed_bootstrap

    out: dict[str, Any] = {}
    for part in ("test", "val"):
        s0 = start[part].get("per_episode")
        eps = {n: {int(k): r["curve"][-1][part].get("per_episode") for k, r in e["seeds"].items()}
               for n, e in runs.items()}
        for n, by_seed in eps.items():
            if s0 is None or any(v is None for v in by_seed.values()):
                continue
            seeds = sorted(by_seed)
            row = {"sr_minus_start": crossed_bootstrap([np.subtract(by_seed[s]["sr"], s0["sr"]) for s in seeds]),
                   "csc_minus_start": crossed_bootstrap([np.subtract(by_seed[s]["cost"], s0["cost"]) for s in seeds])}
            base = eps.get(baseline or "", {})
            if n != baseline and base and all(base.get(s) for s in seeds):
                row["sr_minus_baseline"] = crossed_bootstrap([np.subtract(by_seed[s]["sr"], base[s]["sr"]) for s in seeds])
                row["csc_minus_baseline"] = crossed_bootstrap([np.subtract(by_seed[s]["cost"], base[s]["cost"])
                                                               for s in seeds])
            out.setdefault(n, {})[part] = row
    return out


def choose(curve: list[dict[str, Any]], trained_only: bool = False) -> dict[str, Any]:
    """The checkpoint with the best validation SR (then lower validation CSC, then later): the stage's order
    (``shield.rl.select.selection_key``; the stage chooses among trained checkpoints only, ``trained_only``)."""
    rows = [r for r in curve if r["iteration"] > 0 or not trained_only]
    return max(rows, key=lambda r: selection_key(r["val"]["sr"], r["val"]["csc"], r["iteration"]))


def summarise(runs: dict[str, Any], start: dict[str, float], baseline: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    picks = {"final": lambda c: c[-1], "select": choose, "select_trained": lambda c: choose(c, True)}
    per = {n: {p: {int(s): f(r["curve"])["test"] for s, r in e["seeds"].items()} for p, f in picks.items()}
           for n, e in runs.items()}
    for n, e in runs.items():
        curves = [r["curve"] for r in e["seeds"].values()]
        its = [r["iteration"] for r in curves[0]]
        out[n] = {"curve": [{"iteration": it, **{f"{part}_{k}": float(np.mean([c[i][part][k] for c in curves]))
                                                  for part in ("test", "val") for k in ("sr", "csc")}}
                            for i, it in enumerate(its)],
                  "selected_iterations": {p: [f(r["curve"])["iteration"] for r in e["seeds"].values()]
                                          for p, f in picks.items() if p != "final"}}
        for p in picks:
            out[n][p] = run_summary(per[n][p], start)
            if baseline in per and n != baseline:
                out[n][p] |= {f"{k}_minus_baseline": v for k, v in paired(per[n][p], per[baseline][p]).items()}
    return out


def plot(summary: dict[str, Any], start: dict[str, float], path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for n, s in summary.items():
        its = [r["iteration"] for r in s["curve"]]
        for ax, k in zip(axes, ("sr", "csc"), strict=True):
            line, = ax.plot(its, [r[f"test_{k}"] for r in s["curve"]], marker="o", label=f"{n} (test)")
            ax.plot(its, [r[f"val_{k}"] for r in s["curve"]], ls=":", color=line.get_color(), label=f"{n} (validation)")
    for ax, k in zip(axes, ("sr", "csc"), strict=True):
        ax.axhline(start[k], color="0.5", lw=1, ls="--", label="start (test)")
    finish_sr_csc(fig, axes, "PPO iteration", "Dubins-VL: the deterministic policy every few PPO iterations, mean over "
                  "seeds", path, legend=0)


def finish_sr_csc(fig: Any, axes: Any, xlabel: str, title: str, path: Path, legend: int) -> None:
    """Label a (SR, CSC) pair of panels, put the legend on ``axes[legend]``, title, save and close the figure."""
    import matplotlib.pyplot as plt

    from embodied_safety.evaluation.plots import save_figure

    for ax, name in zip(axes, ("SR (safe + reach)", "CSC"), strict=True):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(name)
    axes[legend].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def merge(done: dict[str, Any], more: dict[str, Any], source: Path) -> None:
    """``more``'s seeds into ``done``'s runs (a seed in both keeps ``done``'s); errors when the start's evaluation or
    a variant's definition differs."""
    if any(more["start"][p][k] != done["start"][p][k] for p in ("test", "val") for k in ("sr", "csc")):
        raise ValueError(f"{source}: another start evaluation")
    for name, entry in more["runs"].items():
        mine = done["runs"].setdefault(name, {"run": entry["run"], "overrides": entry["overrides"], "seeds": {}})
        if (mine["run"], mine["overrides"]) != (entry["run"], entry["overrides"]):
            raise ValueError(f"{source}: variant {name} is {entry['run']} {entry['overrides']}, here "
                             f"{mine['run']} {mine['overrides']}")
        mine["seeds"] = {**entry["seeds"], **mine["seeds"]}
    done.setdefault("merged", []).append(str(source))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", default=[], help="name:run[:key=value,...]")
    ap.add_argument("--warm", action="append", default=[], help="margin=path of a warm critic (rubric, gt, oracle, search)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--every", type=int, default=4, help="evaluate every this many iterations (and the last)")
    ap.add_argument("--val-base", type=int, default=VAL_BASE)
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--merge", type=Path, nargs="*", default=[], help="result files of the same start (e.g. two "
                    "processes sharing the cores, each with its own --out): their variants' seeds join --out")
    args = ap.parse_args(argv)

    from embodied_safety.shield.rl.ppo import train
    from embodied_safety.shield.rl.runs import EVAL_BASE

    ctx = Context.load("dubins", dict(w.split("=", 1) for w in args.warm))
    n = ctx.episodes
    done: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if "start" not in done:
        start = ctx.start()
        done["start"] = {"iteration": 0, "test": evaluate(start, EVAL_BASE, n), "val": evaluate(start, args.val_base, n)}
    runs = done.setdefault("runs", {})
    for text in args.variant:
        name, run, over = parse_variant(text)
        for seed in args.seeds:
            if str(seed) in runs.get(name, {}).get("seeds", {}):
                continue
            policy, pcfg, critic, src = ctx.prepare(run, over, seed)
            curve: list[dict[str, Any]] = [done["start"]]

            def log(row: dict[str, float], it: int, _p: Any = policy, _c: list[dict[str, Any]] = curve,
                    _last: int = pcfg.iterations) -> None:
                if it % args.every == 0 or it == _last:
                    _c.append({"iteration": it, "test": evaluate(_p, EVAL_BASE, n),
                               "val": evaluate(_p, args.val_base, n), "dual": row.get("dual", float("nan"))})

            t0 = time.perf_counter()
            train(policy, ctx.env, src, pcfg, critic=critic, log=log, progress=None)
            for point in curve[1:-1]:  # per-episode outcomes: the start's and the final iterate's only
                for part in ("test", "val"):
                    point[part].pop("per_episode", None)
            entry = runs.setdefault(name, {"run": run, "overrides": over, "seeds": {}})
            entry["seeds"][str(seed)] = {"curve": curve, "seconds": time.perf_counter() - t0}
            pick = choose(curve)
            print(f"{name} seed {seed}: final test SR {curve[-1]['test']['sr']:.2f} CSC {curve[-1]['test']['csc']:.2f}"
                  f" | chosen it {pick['iteration']}: test SR {pick['test']['sr']:.2f} CSC {pick['test']['csc']:.2f}"
                  f" ({time.perf_counter() - t0:.0f} s)", flush=True)
            write_results(args.out, done)
    for other in args.merge:
        merge(done, json.loads(other.read_text()), other)
    start_test = done["start"]["test"]
    done["summary"] = summarise(runs, start_test, args.baseline)
    done["baseline"] = args.baseline
    done["crossed"] = crossed(runs, done["start"], args.baseline)
    write_results(args.out, done)
    plot(done["summary"], start_test, args.out.with_suffix(".png"))
    print(f"start: test SR {start_test['sr']:.3f} CSC {start_test['csc']:.2f}; "
          f"val SR {done['start']['val']['sr']:.3f} CSC {done['start']['val']['csc']:.2f}")
    for name, s in done["summary"].items():
        for p in ("final", "select", "select_trained"):
            print(summary_line(f"{name}/{p}", s[p], args.baseline))
    for name, parts in done["crossed"].items():
        for part, row in parts.items():
            print(f"{name}/final/{part} (crossed bootstrap over seeds and episodes): " + ", ".join(
                f"{k} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]" for k, (m, lo, hi) in row.items()))


if __name__ == "__main__":
    main()
