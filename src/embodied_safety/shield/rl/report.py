"""Tables (the paper's layouts: Tables 2/3, 4, 5, 6, 7) and pictures (training curves, result bars, the
learned safe set of Fig. 3) of the ``shield_ppo`` stage's results.

A result row is ``{"env", "run", "seed", "method", "margin", "delta", "eval": {condition: {sr, csc, ...}},
"history": [...]}``; every table is the mean ± std over seeds of the in-distribution evaluation unless named.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...config.control_envs import ENV_KEYS, display_name
from ...evaluation.plots import curve_rows, write_plot_data
from ...evaluation.stats import crossed_bootstrap, t_interval

LABELS: dict[str, str] = {
    "ppo": "Unconstrained PPO",
    "ppo_lag": "PPO-Lagrangian (SafeVLA-style)",
    "gated_gt": "HJ (GT cost), gated",
    "gated_oracle": "HJ, oracle critic (distilled from the simulator's action values), gated",
    "gated_oracle_recovery": "HJ, oracle critic, gated, recovery pull (weight 0.2)",
    "gated_search": "HJ, rubric-search critic (rubric-scored simulator branches), gated, recovery pull (0.2)",
    "gated": "ShieldVLA: HJ critic + gate (rubric margin)",
    "gated_binary": "HJ critic + gate, binary cost (+1 / −5)",
    "penalty": "HJ critic as Lagrangian penalty",
    "gated_dpg": "gate + Eq. 6's −β∇Q safety step (paper)",
    "gated_mixed": "gate + (A_r − βA_c)/(1+β) on infeasible samples",
    "gated_advantage": "gate + β × cost-advantage step on infeasible samples (stops 30-46's default)",
    "gated_d1": "D.1 gate (critic of the current policy) + cost-advantage step",
    "gated_selective": "selective gate (HJ critic, best candidate) + cost-advantage step",
    "gated_selective_recovery": "selective gate + recovery target (pull toward the best candidate)",
}
#: the ShieldVLA runs whose do-no-harm form the stage checks (:func:`do_no_harm_forms`): the TD critic's and the
#: rubric search's
FORM_RUNS = ("gated", "gated_search")
MAIN_ROWS = ("ppo", "ppo_lag", "gated_gt", "gated_oracle", "gated_oracle_recovery", "gated_search", "gated")


def _stats(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the sample standard deviation over seeds (``ddof=1``; 0 for one seed): the spread a new seed would
    show, as the intervals and the experiments report it (the population std would understate it by
    √(n/(n−1)): 1.22× at three seeds)."""
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def _cell(values: Sequence[float], digits: int = 2) -> str:
    if not values:
        return "–"
    m, s = _stats(values)
    return f"{m:.{digits}f} ± {s:.{digits}f}" if len(values) > 1 else f"{m:.{digits}f}"


def group(rows: Iterable[Mapping[str, Any]], condition: str = "in") -> dict[tuple[str, str], dict[str, list[float]]]:
    """(env, run) -> {"sr": [per seed], "csc": [...]} for one evaluation condition."""
    out: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: {"sr": [], "csc": []})
    for r in rows:
        ev = r["eval"].get(condition)
        if ev is not None:
            cell = out[(r["env"], r["run"])]
            cell["sr"].append(float(ev["sr"]))
            cell["csc"].append(float(ev["csc"]))
    return dict(out)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{"<env>/<run>": {"sr", "sr_std", "csc", "csc_std", "seeds"}}`` (in-distribution)."""
    out = {}
    for (env, run), cell in group(rows).items():
        (sr, sr_s), (csc, csc_s) = _stats(cell["sr"]), _stats(cell["csc"])
        out[f"{env}/{run}"] = {"sr": sr, "sr_std": sr_s, "csc": csc, "csc_std": csc_s, "seeds": float(len(cell["sr"]))}
    return out


def _envs(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    seen = {r["env"] for r in rows}
    return [e for e in ENV_KEYS if e in seen] + sorted(seen - set(ENV_KEYS))


def table_main(rows: Sequence[Mapping[str, Any]]) -> str:
    """Tables 2 and 3 in one: SR↑ / CSC↓ per env, mean ± std over the training seeds."""
    envs, g = _envs(rows), group(rows)
    head = "| Method | " + " | ".join(f"{display_name(e)} SR↑ | {display_name(e)} CSC↓" for e in envs) + " |"
    lines = [head, "|---|" + "---|---|" * len(envs)]
    runs = [r for r in MAIN_ROWS if any((e, r) in g for e in envs)]
    for run in runs:
        cells = []
        for e in envs:
            c = g.get((e, run))
            cells += [_cell(c["sr"]), _cell(c["csc"])] if c else ["–", "–"]
        lines.append(f"| {LABELS.get(run, run)} | " + " | ".join(cells) + " |")
    seeds = ", ".join(f"{display_name(e)} {max(len(g[(e, r)]['sr']) for r in runs if (e, r) in g)}"
                      for e in envs)
    return "\n".join(lines) + f"\n\nMean ± std over training seeds ({seeds}); deterministic policy.\n"


def table_pair(rows: Sequence[Mapping[str, Any]], runs: Sequence[str], title: str) -> str:
    """Two (or more) rows per env: Table 4 (binary vs rubric) or Table 5 (penalty vs gating)."""
    envs, g = _envs(rows), group(rows)
    envs = [e for e in envs if all((e, r) in g for r in runs)]
    if not envs:
        return f"{title}: no env has all of {list(runs)}\n"
    lines = [f"| {title} | " + " | ".join(f"{display_name(e)} SR↑ | {display_name(e)} CSC↓" for e in envs) + " |",
             "|---|" + "---|---|" * len(envs)]
    for run in runs:
        cells = []
        for e in envs:
            cells += [_cell(g[(e, run)]["sr"]), _cell(g[(e, run)]["csc"])]
        lines.append(f"| {LABELS.get(run, run)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table_ood(rows: Sequence[Mapping[str, Any]], runs: Sequence[str] = ("ppo_lag", "gated"),
              conditions: Sequence[str] = ("in", "color", "light", "all")) -> str:
    """Table 6: SR / CSC per (env, method) under each held-out visual condition."""
    envs = _envs(rows)
    gs = {c: group(rows, c) for c in conditions}
    head = ["| Condition |"]
    sep = ["|---|"]
    cols = [(e, r) for e in envs for r in runs if (e, r) in gs["in"]]
    for e, r in cols:
        head.append(f" {display_name(e)} {LABELS.get(r, r).split(' (')[0].split(':')[0]} SR | CSC |")
        sep.append("---|---|")
    lines = ["".join(head), "".join(sep)]
    names = {"in": "In-dist", "color": "+Color", "light": "+Light", "all": "+All"}
    for c in conditions:
        cells = []
        for key in cols:
            cell = gs[c].get(key)
            cells += [_cell(cell["sr"]), _cell(cell["csc"])] if cell else ["–", "–"]
        lines.append(f"| {names.get(c, c)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sweep_run(rows: Sequence[Mapping[str, Any]], env: str = "dubins") -> str:
    """The run ``env``'s δ sweep re-trained (the one with rows at a non-default δ); ``gated`` when there was none."""
    return next((r["run"] for r in rows if r["env"] == env and not r.get("delta_default", True)), "gated")


def delta_rows(rows: Sequence[Mapping[str, Any]], env: str = "dubins") -> list[tuple[float, list[float], list[float]]]:
    """(δ, SRs, CSCs) of the swept run's rows of ``env`` (:func:`sweep_run`, its default δ included), by δ."""
    by = _sweep_by_seed(rows, env)
    return [(d, [float(e["sr"]) for e in by[d].values()], [float(e["csc"]) for e in by[d].values()]) for d in sorted(by)]


def _sweep_by_seed(rows: Sequence[Mapping[str, Any]], env: str) -> dict[float, dict[int, Mapping[str, Any]]]:
    """δ -> seed -> the in-distribution evaluation of the swept run's rows of ``env`` (:func:`sweep_run`)."""
    run = sweep_run(rows, env)
    by: dict[float, dict[int, Mapping[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["env"] == env and r["run"] == run and "in" in r["eval"]:
            by[float(r["delta"])][int(r["seed"])] = r["eval"]["in"]
    return by


def delta_steps(rows: Sequence[Mapping[str, Any]], env: str = "dubins", level: float = 0.95) -> list[dict[str, Any]]:
    """Table 7's monotonicity, step by step: for each pair of adjacent δ of the swept run (:func:`sweep_run`), CSC and
    SR at the larger δ minus at the smaller, paired by seed, with the 95 % interval of :func:`paired_interval` (the
    crossed bootstrap over seeds and episodes where every row carries ``per_episode`` outcomes, ``episodes`` = 1; else
    the t interval over seeds)."""
    by = _sweep_by_seed(rows, env)
    ds = sorted(by)
    out = []
    for lo, hi in zip(ds, ds[1:], strict=False):
        seeds = sorted(set(by[lo]) & set(by[hi]))
        if not seeds:
            continue
        episodes = all("per_episode" in by[d][s] for d in (lo, hi) for s in seeds)
        step: dict[str, Any] = {"delta_lo": lo, "delta_hi": hi, "seeds": len(seeds), "episodes": float(episodes)}
        for key, column in (("csc", "cost"), ("sr", "sr")):
            eps = ({s: np.subtract(by[hi][s]["per_episode"][column], by[lo][s]["per_episode"][column]) for s in seeds}
                   if episodes else None)
            step[key] = paired_interval({s: float(by[hi][s][key]) - float(by[lo][s][key]) for s in seeds}, eps, level)
        out.append(step)
    return out


def table_delta(rows: Sequence[Mapping[str, Any]], env: str = "dubins") -> str:
    """Table 7: the gate threshold δ against SR / CSC; a swept run other than ``gated`` is named in the corner. With
    two δ or more, whether CSC falls as δ grows (a larger δ flags more samples): on the means and on each adjacent
    step's 95 % interval (:func:`delta_steps`)."""
    dr = delta_rows(rows, env)
    if not dr:
        return "no δ sweep\n"
    run = sweep_run(rows, env)
    corner = "| |" if run == "gated" else f"| {LABELS.get(run, run)} |"
    lines = [f"{corner} " + " | ".join(f"δ={d:g}" for d, _, _ in dr) + " |", "|---|" + "---|" * len(dr),
             "| SR↑ | " + " | ".join(_cell(s) for _, s, _ in dr) + " |",
             "| CSC↓ | " + " | ".join(_cell(c) for _, _, c in dr) + " |"]
    steps = delta_steps(rows, env)
    if steps:
        means = monotone([float(np.mean(c)) for _, _, c in dr])
        below = all(st["csc"][2] < 0 for st in steps)
        how = ("crossed bootstrap over seeds and episodes" if all(st["episodes"] for st in steps)
               else "t intervals over seeds")
        lines += ["", f"CSC falls as δ grows — on the means: **{'yes' if means else 'no'}**; every step's 95 % "
                  f"interval below zero: **{'yes' if below else 'no'}** (the larger δ minus the smaller, paired by "
                  f"seed; {how}): " + "; ".join(
                      f"δ {st['delta_lo']:g} → {st['delta_hi']:g}: CSC {_diff_cell(st['csc'], 2)}, SR "
                      f"{_diff_cell(st['sr'], 3)}" for st in steps) + "."]
    return "\n".join(lines) + "\n"



def table_gate_check(checks: Mapping[str, Mapping[str, Any]]) -> str:
    """The warm critics' offline acceptance check (:mod:`.gate_check`), one row per (margin, critic target);
    ``unrecoverable`` (:mod:`.viability`, exits counted) is the reference ``Q ≤ 0`` should match, and the turn
    ranking on the near-obstacle frames the number ``knows_safer_turn`` needs at 0.8."""
    lines = ["\n## Offline gate check of the warm critics (before any PPO step)\n",
             "| margin / target | flagged Q(o, ā) ≤ δ | floor | Q ≤ 0 | unsafe frames | unrecoverable frames | "
             "Q ≤ 0 on lost / on recoverable | best candidate agrees (probe) | ranks the turns as HJ: near-obstacle "
             "frames (probe) | verdicts |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def num(c: Mapping[str, Any], key: str) -> str:
        return f"{c[key]:.3f}" if key in c else "–"

    for name, c in checks.items():
        floor = c.get("flag_floor_rate", c["margin_below_delta_rate"])
        verdicts = ", ".join(k for k in ("selective", "knows_safer_turn") if c.get(k)) or ("none" if "selective" in c
                                                                                           else "–")
        lines.append(f"| {name} | {c['infeasible_frac']:.3f} | {floor:.3f} | {c['infeasible_frac_at_0']:.3f} | "
                     f"{c['unsafe_frame_rate']:.3f} | {num(c, 'unrecoverable_frame_rate')} | "
                     f"{num(c, 'lost_flagged_at_0')} / {num(c, 'recoverable_flagged_at_0')} | "
                     f"{num(c, 'best_candidate_agreement')} | {num(c, 'near_frame_turn_agreement')} "
                     f"({num(c, 'hj_turn_agreement')}) | {verdicts} |")
    return "\n".join(lines) + "\n"


#: issue 21's do-no-harm form: ShieldVLA's SR at least the start's minus this, its CSC below PPO-Lagrangian's
NO_HARM_SR_SLACK = 0.02


def seed_values(rows: Iterable[Mapping[str, Any]], run: str, condition: str = "in") -> dict[int, dict[str, float]]:
    """seed -> {"sr", "csc"} of one run's default-δ rows (one env's rows)."""
    return {int(r["seed"]): {k: float(r["eval"][condition][k]) for k in ("sr", "csc")}
            for r in rows if r["run"] == run and r.get("delta_default", True) and condition in r["eval"]}


def episode_values(rows: Iterable[Mapping[str, Any]], run: str, condition: str = "in") -> dict[int, dict[str, list[float]]]:
    """seed -> the per-episode ``{"sr", "cost"}`` of one run's default-δ rows (rows evaluated without per-episode
    values are left out)."""
    return {int(r["seed"]): r["eval"][condition]["per_episode"] for r in rows
            if r["run"] == run and r.get("delta_default", True) and "per_episode" in r["eval"].get(condition, {})}


def paired_interval(per_seed: Mapping[int, float], per_episode: Mapping[int, Sequence[float]] | None = None,
                    level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lower, upper) of a paired difference over seeds. With ``per_episode`` (seed -> the per-episode
    differences on the shared evaluation episodes, for every seed of ``per_seed``): the crossed bootstrap over seeds
    and episodes (:func:`~embodied_safety.evaluation.stats.crossed_bootstrap`); else the Student-t interval over seeds
    (nan bounds for one seed)."""
    seeds = sorted(per_seed)
    if per_episode is not None and seeds and all(s in per_episode for s in seeds):
        return crossed_bootstrap([per_episode[s] for s in seeds], level=level)
    m, h = t_interval([per_seed[s] for s in seeds], level)
    return m, m - h, m + h


def do_no_harm(rows: Sequence[Mapping[str, Any]], start: Mapping[str, Any], run: str = "gated",
               baseline: str = "ppo_lag", level: float = 0.95) -> dict[str, float] | None:
    """Issue 21's do-no-harm form for one env: ``run``'s SR minus the start's (the BC policy on the same evaluation
    episodes) and ``run``'s CSC minus ``baseline``'s (paired by seed and, where the rows and the start carry
    ``per_episode`` outcomes, by episode), each a mean with its 95 % interval (:func:`paired_interval`: over seeds and
    episodes when it can, else over seeds; ``episodes`` = 1 says which). ``holds``: the form on the means (SR − start
    ≥ −:data:`NO_HARM_SR_SLACK`, CSC − baseline < 0); ``shown``: on the interval bounds (never with one seed)."""
    a, b = seed_values(rows, run), seed_values(rows, baseline)
    common = sorted(set(a) & set(b))
    if not common:
        return None
    ea, eb, e0 = episode_values(rows, run), episode_values(rows, baseline), start.get("per_episode")
    by_episode = e0 is not None and all(s in ea and s in eb for s in common)
    sr = paired_interval({s: a[s]["sr"] - start["sr"] for s in common},
                         {s: np.subtract(ea[s]["sr"], e0["sr"]) for s in common} if by_episode else None, level)
    csc = paired_interval({s: a[s]["csc"] - b[s]["csc"] for s in common},
                          {s: np.subtract(ea[s]["cost"], eb[s]["cost"]) for s in common} if by_episode else None, level)
    shown = bool(len(common) > 1 and sr[1] >= -NO_HARM_SR_SLACK and csc[2] < 0)  # nan bounds compare False
    return {"seeds": float(len(common)), "episodes": float(by_episode),
            "sr_minus_start": sr[0], "sr_minus_start_lo": sr[1], "sr_minus_start_hi": sr[2],
            "csc_minus_baseline": csc[0], "csc_minus_baseline_lo": csc[1], "csc_minus_baseline_hi": csc[2],
            "holds": float(sr[0] >= -NO_HARM_SR_SLACK and csc[0] < 0), "shown": float(shown)}


def _diff_cell(interval: tuple[float, float, float], digits: int) -> str:
    m, lo, hi = interval
    return f"{m:+.{digits}f}" + ("" if math.isnan(lo) else f" [{lo:+.{digits}f}, {hi:+.{digits}f}]")


def do_no_harm_forms(rows: Sequence[Mapping[str, Any]], start: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """:func:`do_no_harm` of every run of :data:`FORM_RUNS` that ran beside PPO-Lagrangian."""
    forms = {run: do_no_harm(rows, start, run) for run in FORM_RUNS}
    return {run: form for run, form in forms.items() if form is not None}


def table_do_no_harm(rows: Sequence[Mapping[str, Any]], start: Mapping[str, Any], runs: Sequence[str] = (
        "ppo", "ppo_lag", "gated", "gated_search"), forms: Mapping[str, Mapping[str, float]] | None = None,
        title: str = "The start and the do-no-harm form (issue 21)") -> str:
    """The start (the BC policy on the runs' evaluation episodes) beside the runs that ran (unconstrained PPO: what
    the cost terms are read against), each run minus the start, and the do-no-harm form of each ShieldVLA run
    (``forms``, else :func:`do_no_harm_forms` of ``rows``) with its 95 % intervals."""
    lines = [f"\n## {title}\n",
             "| policy | SR↑ | CSC↓ | SR − start | CSC − start |", "|---|---|---|---|---|",
             f"| BC start (the runs' initial policy) | {start['sr']:.2f} | {start['csc']:.2f} | | |"]
    e0 = start.get("per_episode")
    for run in runs:
        v, ev = seed_values(rows, run), episode_values(rows, run)
        if not v:
            continue
        ok = e0 is not None and set(v) <= set(ev)
        sr = paired_interval({s: x["sr"] - start["sr"] for s, x in v.items()},
                             {s: np.subtract(ev[s]["sr"], e0["sr"]) for s in v} if ok else None)
        csc = paired_interval({s: x["csc"] - start["csc"] for s, x in v.items()},
                              {s: np.subtract(ev[s]["cost"], e0["cost"]) for s in v} if ok else None)
        lines.append(f"| {LABELS.get(run, run)} | {_cell([x['sr'] for x in v.values()])} | "
                     f"{_cell([x['csc'] for x in v.values()])} | {_diff_cell(sr, 3)} | {_diff_cell(csc, 2)} |")
    forms = do_no_harm_forms(rows, start) if forms is None else forms
    if not forms:
        return "\n".join(lines) + "\n\nDo-no-harm form: needs both PPO-Lagrangian and ShieldVLA runs.\n"
    return "\n".join(lines + [_form_line(run, form) for run, form in forms.items()]) + "\n"


def _form_line(run: str, form: Mapping[str, float]) -> str:
    n = int(form["seeds"])
    verdict = ("holds on the means and on the 95 % interval bounds" if form["shown"] else
               "holds on the means, not on the 95 % interval bounds" if form["holds"] else "does not hold")
    how = ("95 % intervals of the crossed bootstrap over the seeds and the evaluation episodes" if form["episodes"]
           else "95 % t intervals over the seeds")
    one = (" — one seed is a sample: its interval covers the evaluation episodes only." if form["episodes"] else
           " — one seed is a sample, not an interval.")
    return (f"\nDo-no-harm form of {LABELS.get(run, run)} (SR ≥ start SR − {NO_HARM_SR_SLACK}, CSC below "
            f"PPO-Lagrangian's), {n} seed{'s' if n != 1 else ''}: SR − start "
            f"{_diff_cell((form['sr_minus_start'], form['sr_minus_start_lo'], form['sr_minus_start_hi']), 3)}, "
            f"CSC − PPO-Lagrangian "
            f"{_diff_cell((form['csc_minus_baseline'], form['csc_minus_baseline_lo'], form['csc_minus_baseline_hi']), 2)}"
            f" (paired; {how}): **{verdict}**" + (one if n < 2 else "."))


def selected_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of runs with a validated checkpoint (``selected``, :mod:`.select`), each with the chosen iterate's
    test evaluation as its ``eval``."""
    return [{**r, "eval": r["selected"]["eval"]} for r in rows if "selected" in r]


def table_selected(rows: Sequence[Mapping[str, Any]], start: Mapping[str, Any]) -> str:
    """The validated checkpoints (the best trained iterate on validation episodes, read on the test episodes): Tables
    2/3 and the do-no-harm table of those iterates, and the iterations chosen per run; empty when no row has one."""
    sel = selected_rows(rows)
    if not sel:
        return ""
    chosen: dict[str, list[int]] = defaultdict(list)
    for r in sel:
        chosen[r["run"]].append(int(r["selected"]["iteration"]))
    every, episodes = sel[0]["selected"]["every"], sel[0]["selected"]["episodes"]
    return ("\n## Validated checkpoints (the best trained iterate on validation episodes, read on the test episodes)"
            f"\n\nEvery {every} PPO iterations and the last, {episodes} validation episodes (disjoint from the test "
            "episodes); chosen by validation SR, then lower validation CSC, then the later iterate. Chosen iterations: "
            + "; ".join(f"{LABELS.get(k, k)} {sorted(v)}" for k, v in chosen.items()) + ".\n\n" + table_main(sel)
            + table_do_no_harm(sel, start, title="The start and the do-no-harm form, validated checkpoints"))


def render_tables(rows: Sequence[Mapping[str, Any]], title: str, delta_env: str = "dubins") -> str:
    """Tables 2/3, 4, 5, the safety-step ablation, 6 (on the default-δ runs) and 7 (the δ sweep)."""
    main = [r for r in rows if r.get("delta_default", True)]
    return "\n".join([
        f"# {title}\n",
        "## Main results (Tables 2 / 3)\n", table_main(main),
        "## Cost signal (Table 4)\n", table_pair(main, ["gated_binary", "gated"], "Cost signal"),
        "## Gating vs penalty (Table 5)\n", table_pair(main, ["penalty", "gated"], "Critic use"),
        "## The safety step on infeasible samples (Eq. 6's ∇Q vs ours)\n",
        table_pair(main, ["gated_dpg", "gated_advantage", "gated"], "Safety step"),
        "## OOD (Table 6)\n", table_ood(main),
        f"## Gate threshold δ (Table 7, {display_name(delta_env)})\n", table_delta(rows, delta_env)])


def monotone(values: Sequence[float], decreasing: bool = True, tol: float = 0.0) -> bool:
    pairs = zip(values, values[1:], strict=False)
    return all((b <= a + tol) if decreasing else (b >= a - tol) for a, b in pairs)


# --------------------------------------------------------------------------------------------------
# pictures


def plot_curves(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], title: str,
                runs: Sequence[str] | None = None) -> Path:
    """Training CSC, reach and SR (stochastic policy, episodes ending in each iteration) against env steps."""
    from matplotlib.figure import Figure

    runs = runs or sorted({r["run"] for r in rows})
    fig = Figure(figsize=(15, 4))
    axes = fig.subplots(1, 3)
    data: list[dict[str, Any]] = []
    for run in runs:
        hs = [r["history"] for r in rows if r["run"] == run and r["history"]]
        if not hs:
            continue
        n = min(len(h) for h in hs)
        x = np.asarray([hs[0][i]["env_steps"] for i in range(n)])
        for ax, key in zip(axes, ("csc", "reach", "sr"), strict=True):
            ys = np.asarray([[h[i].get(key, np.nan) for i in range(n)] for h in hs], dtype=np.float64)
            y = _smooth(np.nanmean(ys, axis=0))
            ax.plot(x, y, label=LABELS.get(run, run))
            data += curve_rows(key, LABELS.get(run, run), list(zip(x.tolist(), y.tolist(), strict=True)))
    for ax, key in zip(axes, ("training CSC (simulator cost)", "reach rate", "SR (reach, no violation)"), strict=True):
        ax.set_title(key)
        ax.set_xlabel("env steps")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    write_plot_data(path, data)
    return _save(fig, path, title)


def _save(fig: Any, path: str | os.PathLike[str], title: str) -> Path:
    """Title, layout, then the PNG written atomically (a temporary file, then a rename)."""
    from ...evaluation.plots import save_figure

    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


def _smooth(y: np.ndarray, k: int = 5) -> np.ndarray:
    out = np.copy(y)
    for i in range(len(y)):
        w = y[max(0, i - k + 1):i + 1]
        w = w[np.isfinite(w)]
        out[i] = w.mean() if len(w) else np.nan
    return out


def plot_bars(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], title: str) -> Path:
    """Evaluation SR and CSC per run (mean, seed-std error bars)."""
    from matplotlib.figure import Figure

    g = group(rows)
    keys = sorted(g, key=lambda k: (k[0], list(LABELS).index(k[1]) if k[1] in LABELS else 99, k[1]))
    names = [LABELS.get(k[1], k[1]) for k in keys]
    fig = Figure(figsize=(12, 0.5 * len(keys) + 2))
    axes = fig.subplots(1, 2)
    data: list[dict[str, Any]] = []
    for ax, key, colour in zip(axes, ("sr", "csc"), ("tab:green", "tab:red"), strict=True):
        means = [_stats(g[k][key])[0] for k in keys]
        data += [{"panel": key, "series": f"{k[0]}" if len({kk[0] for kk in keys}) > 1 else key,
                  "category": n, "value": m} for k, n, m in zip(keys, names, means, strict=True)]
        stds = [_stats(g[k][key])[1] for k in keys]
        ax.barh(range(len(keys)), means, xerr=stds, color=colour, alpha=0.8)
        ax.set_yticks(range(len(keys)), names if key == "sr" else [""] * len(keys), fontsize=8)
        ax.set_title({"sr": "SR ↑", "csc": "CSC ↓"}[key])
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
    write_plot_data(path, data)
    return _save(fig, path, title)


def dubins_grid(resolution: int = 41, headings: Sequence[float] = (0.0, math.pi / 2, math.pi, -math.pi / 2),
                obstacle: tuple[float, float] = (0.0, 0.0), goal: tuple[float, float] = (0.7, 0.7)) -> dict[str, Any]:
    """Frames of a fixed Dubins-VL scene with the car at every grid position and heading (Fig. 3's axes)."""
    from ...envs.control.dubins import D_SAFE, R_OBS, _Batch

    xs = np.linspace(-0.95, 0.95, resolution)
    gx, gy = np.meshgrid(xs, xs[::-1])
    n = gx.size
    frames = np.zeros((len(headings), n, 84, 84, 3), dtype=np.uint8)
    for h, th in enumerate(headings):
        b = _Batch(n, 1, 0.1, 100, 10, None, render=True)
        b.state[:] = np.array([0, 0, th, goal[0], goal[1], obstacle[0], obstacle[1]])
        b.state[:, 0], b.state[:, 1] = gx.ravel(), gy.ravel()
        for i in range(n):
            b.background[i] = b._draw_background(i) if i == 0 else b.background[0]
        frames[h] = b.frames()
    gt = np.hypot(gx - obstacle[0], gy - obstacle[1]) - R_OBS - D_SAFE
    return {"xs": xs, "frames": frames, "headings": list(headings), "gt_margin": gt, "obstacle": obstacle,
            "goal": goal, "r_obs": R_OBS, "d_safe": D_SAFE}


def safe_set_values(critic: Any, policy: Any, grid: Mapping[str, Any], instruction: str) -> np.ndarray:
    """``Q_s(o, ā_θ(o))`` on every grid frame: [headings, res, res]."""
    import torch

    frames = grid["frames"]
    res = len(grid["xs"])
    out = np.zeros((frames.shape[0], res, res), dtype=np.float32)
    with torch.no_grad():
        for h in range(frames.shape[0]):
            vals = []
            for s in range(0, frames.shape[1], 1024):
                img = torch.as_tensor(frames[h, s:s + 1024])
                ins = [instruction] * len(img)
                vals.append(critic(img, ins, policy(img, ins)[0]).numpy())
            out[h] = np.concatenate(vals).reshape(res, res)
    return out


def plot_safe_set(values: Mapping[str, np.ndarray], grid: Mapping[str, Any], path: str | os.PathLike[str],
                  title: str) -> Path:
    """Fig. 3: one row per critic, one column per heading; blue Q > 0 (feasible), red Q < 0, the Q = 0 contour
    in black, the obstacle disc and the d_safe ring (where the ground-truth margin is 0) in grey."""
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    heads = grid["headings"]
    fig = Figure(figsize=(3.3 * len(heads), 3.2 * len(values)))
    axes = fig.subplots(len(values), len(heads), squeeze=False)
    ext = (grid["xs"][0], grid["xs"][-1], grid["xs"][0], grid["xs"][-1])
    for r, (name, q) in enumerate(values.items()):
        lim = float(np.nanmax(np.abs(q))) or 1.0
        for c, th in enumerate(heads):
            ax = axes[r][c]
            im = ax.imshow(q[c], extent=ext, cmap="RdBu", norm=TwoSlopeNorm(0.0, -lim, lim))
            ax.contour(grid["xs"], grid["xs"][::-1], q[c], levels=[0.0], colors="k", linewidths=1.2)
            ox, oy = grid["obstacle"]
            for rad, style in ((grid["r_obs"], "-"), (grid["r_obs"] + grid["d_safe"], "--")):
                ax.add_patch(Circle((ox, oy), rad, fill=False, color="grey", ls=style))
            ax.arrow(-0.75, -0.75, 0.15 * math.cos(th), 0.15 * math.sin(th), head_width=0.05, color="k")
            ax.set_xlim(ext[0], ext[1])
            ax.set_ylim(ext[2], ext[3])
            ax.set_title(f"{name}, θ = {math.degrees(th):.0f}°", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(im, ax=axes[r][-1], fraction=0.046)
    return _save(fig, path, title)
