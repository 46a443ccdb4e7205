"""Experiment (docs/shield_ppo.md, "Stop 44"): the stage's Dubins-VL runs with PPOConfig overrides, over seeds.

What keeps gated PPO from holding the BC start? Each variant is a stage run name plus ``key=value`` overrides of its
:class:`~embodied_safety.shield.rl.ppo.PPOConfig` (``runs.ppo_config`` from this clone's ``params.yaml`` first, as
the stage builds it), trained with :func:`~embodied_safety.shield.rl.ppo.train` from the clone's BC policy and the
warm critic given for its margin (the stage's stored ones, ``.cache/shield/critic_warm/<key>``), evaluated by
``runs.evaluate_conditions`` on the stage's 100 evaluation episodes. No MLflow, no store: one JSON per call. The start
is evaluated on the same episodes; differences are paired by seed with 95 % t intervals (against the start and
against ``--baseline``), with the stage's threads and CPU kernels (``threads.pin_stage_threads``). Run from a clone
that ran ``shield_ppo@dubins``:

    python experiments/ppo_variants.py --warm rubric=.cache/shield/critic_warm/<key> \\
        --variant lag:ppo_lag --variant lag_margin:ppo_lag:dual_cost=margin --baseline lag --seeds 0 1 2 3 4 \\
        --out experiments/results/ppo_variants_dual.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from oracle_study import paired, run_summary
from results_json import write_results


def parse_override(text: str) -> tuple[str, Any]:
    """``key=value`` with ``value`` read as JSON when it parses (a string otherwise)."""
    k, v = text.split("=", 1)
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v


def parse_variant(text: str) -> tuple[str, str, dict[str, Any]]:
    """``name:run[:key=value,key=value]`` -> (name, run, overrides) (:func:`parse_override`)."""
    name, run, *rest = text.split(":", 2)
    return name, run, dict(parse_override(item) for item in (rest[0].split(",") if rest and rest[0] else []))



def summary_line(name: str, s: dict[str, Any], baseline: str | None) -> str:
    """One run's :func:`oracle_study.run_summary` (plus ``*_minus_baseline`` when paired) as a line of text."""
    d = s["sr_minus_start"]
    line = (f"{name}: SR {s['sr'][0]:.3f}±{s['sr'][1]:.3f} CSC {s['csc'][0]:.2f}±{s['csc'][1]:.2f} "
            f"SR−start {d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]")
    if "sr_minus_baseline" in s:
        b, c = s["sr_minus_baseline"], s["csc_minus_baseline"]
        line += f" | −{baseline}: SR {b[0]:+.3f} [{b[1]:+.3f}, {b[2]:+.3f}] CSC {c[0]:+.2f} [{c[1]:+.2f}, {c[2]:+.2f}]"
    return line


@dataclasses.dataclass
class Context:
    """What every run of a data clone shares: the stage's config (``params.yaml``), the BC start, the warm critics
    (``margin -> path``: rubric, gt, oracle), with the stage's threads and CPU kernels pinned
    (``threads.pin_stage_threads``: without them a run differs from the stage's)."""

    env: str
    cfg: Any  # ShieldPPOConfig
    label_cfg: Any  # RubricLabelConfig
    bc: Path
    warm: dict[str, str]

    @classmethod
    def load(cls, env: str, warm: dict[str, str]) -> Context:
        from embodied_safety.config.params import load_params
        from embodied_safety.config.rubric_label import RubricLabelConfig
        from embodied_safety.config.shield_ppo import ShieldPPOConfig
        from embodied_safety.threads import pin_stage_threads
        from flows._shield import BC

        pin_stage_threads()
        return cls(env, load_params("shield_ppo", ShieldPPOConfig), load_params("rubric_label", RubricLabelConfig),
                   BC / env, warm)

    @property
    def episodes(self) -> int:
        return int(self.cfg.eval_episodes[self.env])

    def start(self) -> Any:
        from embodied_safety.shield.policy.visuomotor import load_policy

        return load_policy(self.bc)

    def prepare(self, run: str, over: dict[str, Any], seed: int) -> tuple[Any, Any, Any, Any]:
        """(policy, PPOConfig, warm critic or None, margin source) of stage run ``run`` + ``over`` at ``seed``, as
        ``shield_ppo`` builds them (``runs.ppo_config``)."""
        from embodied_safety.shield.costs.sources import margin_for
        from embodied_safety.shield.rl.critic import load_critic
        from embodied_safety.shield.rl.runs import ppo_config
        from flows._shield import CALIBRATION
        from tasks.shield import STORE

        pcfg = dataclasses.replace(ppo_config(self.cfg, self.env, run, seed), **over)
        policy = self.start()
        # a distilled critic is named by what labelled it: ``oracle`` (the simulator's values), ``search`` (the rubric's)
        margin_key = {"gt": "oracle", "rubric": "search"}[pcfg.margin] if pcfg.critic.warmup == "distill" else pcfg.margin
        critic = (load_critic(Path(self.warm[margin_key]), policy.config)
                  if pcfg.method in ("gated", "penalty") else None)
        src = margin_for(self.env, pcfg.margin, CALIBRATION / self.env, self.label_cfg, STORE)
        return policy, pcfg, critic, src


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", default=[], help="name:run[:key=value,...]")
    ap.add_argument("--warm", action="append", default=[], help="margin=path of a warm critic (rubric, gt, oracle, search)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--baseline", default=None, help="the variant every other one is paired against")
    ap.add_argument("--env", default="dubins")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--merge", type=Path, nargs="*", default=[], help="other result files (the same start and variant "
                    "names, other seeds): their seeds join the summary (``summary`` then covers every file's seeds)")
    args = ap.parse_args(argv)

    from embodied_safety.shield.rl.ppo import train
    from embodied_safety.shield.rl.runs import evaluate_conditions

    ctx = Context.load(args.env, dict(w.split("=", 1) for w in args.warm))
    env, episodes = ctx.env, ctx.episodes
    done: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if "start" not in done:
        done["start"] = evaluate_conditions(env, ctx.start(), episodes, ["in"])["in"]
    runs = done.setdefault("runs", {})
    for text in args.variant or []:
        name, run, over = parse_variant(text)
        for seed in args.seeds:
            if str(seed) in runs.get(name, {}).get("seeds", {}):
                continue
            policy, pcfg, critic, src = ctx.prepare(run, over, seed)
            t0 = time.perf_counter()
            res = train(policy, env, src, pcfg, critic=critic, progress=None)
            ev = evaluate_conditions(env, res.policy, episodes, ["in"])["in"]
            hist = res.history
            row = {**ev, "train_seconds": time.perf_counter() - t0, "final_dual": hist[-1]["dual"],
                   "infeasible_frac": float(np.mean([h.get("infeasible_frac", np.nan) for h in hist])),
                   "margin_cost": float(np.nanmean([h.get("margin_cost", np.nan) for h in hist])),
                   "train_cost": float(np.nanmean([h.get("train_cost", np.nan) for h in hist]))}
            entry = runs.setdefault(name, {"run": run, "overrides": over, "seeds": {}})
            entry["seeds"][str(seed)] = row
            print(f"{name} seed {seed}: SR {ev['sr']:.2f} CSC {ev['csc']:.2f} dual {row['final_dual']:.2f} "
                  f"infeasible {row['infeasible_frac']:.2f} ({row['train_seconds']:.0f} s)", flush=True)
            write_results(args.out, done)
    per = {n: {int(s): r for s, r in e["seeds"].items()} for n, e in runs.items()}
    for other in args.merge:
        more = json.loads(other.read_text())
        if more["start"] != done["start"]:
            raise ValueError(f"{other}: another start evaluation than {args.out}'s")
        for n, e in more["runs"].items():
            per.setdefault(n, {}).update({int(s): r for s, r in e["seeds"].items()})
    done["merged"] = [str(p) for p in args.merge]
    base = per.get(args.baseline) if args.baseline else None
    done["summary"] = {}
    for n, rows in per.items():
        done["summary"][n] = run_summary(rows, done["start"])
        if base is not None and n != args.baseline:
            done["summary"][n] |= {f"{k}_minus_baseline": v for k, v in paired(rows, base).items()}
    done["baseline"] = args.baseline
    write_results(args.out, done)
    print(f"start: SR {done['start']['sr']:.3f} CSC {done['start']['csc']:.2f}")
    for n, s in done["summary"].items():
        print(summary_line(n, s, args.baseline))


if __name__ == "__main__":
    main()
