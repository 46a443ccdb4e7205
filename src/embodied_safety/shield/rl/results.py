"""What one ``shield_ppo`` stage run writes per env from its finished runs: ``tables.md`` (the :mod:`.report` tables
plus the gradient-agreement and gate-check sections), ``curves.png``, ``bars.png``, ``safe_set.png`` (Dubins-VL,
Fig. 3), ``results.json``, ``gate_check.json``, the headline metrics, and the best ShieldVLA policy + critic.

A row is a stored run's ``result.json`` plus ``_path`` (its store folder) and ``delta_default`` (not a δ-sweep
run); the stored critics and policies are read back from ``_path`` for the figures and the agreement check.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config.control_envs import display_name
from ...config.shield_ppo import ShieldPPOConfig
from ...io import atomic_write_text, without_run_facts, write_json
from . import report as rep
from .runs import RUNS, model_run, ppo_config, reference_run

#: the files :func:`write_env_results` writes that the stage logs to MLflow
LOGGED = ("tables.md", "curves.png", "bars.png", "safe_set.png", "results.json", "gate_check.json")


def grad_agreement(critic: Any, policy: Any, n: int = 2048, seed: int = 5) -> dict[str, float]:
    """How often ``sign(∂Q_s/∂a)`` at the policy mean agrees with the better of the two full turns, judged by the
    simulator (min ground-truth margin over 1 s: 0.3 s of turn, then straight), on Dubins-VL states placed
    0.31-0.65 from an obstacle's edge with random headings (:func:`~.gate_check.turn_agreement`). 0.5 is chance;
    Eq. 6's safety step follows this sign."""
    from .gate_check import turn_agreement

    res = turn_agreement(critic, policy, "image", n=n, seed=seed)
    return {"agreement": res["gradient_agreement"], "best_candidate_agreement": res["best_candidate_agreement"],
            "states": res["states"], "hj_turn_agreement": res["hj_turn_agreement"]}


def agreements(env: str, rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """:func:`grad_agreement` of every stored critic of the first seed, per run (Dubins-VL only)."""
    if env != "dubins":
        return {}
    from ..policy.visuomotor import load_policy
    from .critic import load_critic

    out = {}
    first = min(r["seed"] for r in rows)
    for r in rows:
        path = Path(r["_path"])
        if r["seed"] == first and (path / "critic").is_dir():
            policy = load_policy(path / "policy")
            out[r["run"]] = grad_agreement(load_critic(path / "critic", policy.config), policy)
    return out


def safe_set(env: str, rows: list[dict[str, Any]], out: Path) -> Path | None:
    """Fig. 3 from the stored critics of seed 0 (ShieldVLA and, when run, the GT-cost oracle)."""
    if env != "dubins":
        return None
    from ...envs.control.dubins import INSTRUCTION
    from ..policy.visuomotor import load_policy
    from .critic import load_critic

    grid = rep.dubins_grid()
    values = {}
    ran = {r["run"] for r in rows}
    for run, label in ((model_run(ran), "rubric ℓ̂"), (reference_run(ran), "GT ℓ*")):
        r = next((r for r in rows if r["run"] == run and r["seed"] == min(x["seed"] for x in rows)
                  and r.get("delta_default", True)), None)
        if r is None or not (Path(r["_path"]) / "critic").is_dir():
            continue
        policy = load_policy(Path(r["_path"]) / "policy")
        values[f"Q_s ({label})"] = rep.safe_set_values(load_critic(Path(r["_path"]) / "critic", policy.config),
                                                       policy, grid, INSTRUCTION)
    if not values:
        return None
    return rep.plot_safe_set(values, grid, out / "safe_set.png",
                             "Dubins-VL: learned Q_s(o, ā(o)) by car position; obstacle at the centre, dashed: ℓ* = 0")


@dataclass(frozen=True)
class EnvResults:
    """What :func:`write_env_results` computed and :func:`env_metrics` logs: the tables' text, the gradient
    agreements per run, and the do-no-harm form per ShieldVLA run (:func:`.report.do_no_harm_forms`, computed once:
    it is a bootstrap)."""

    tables: str
    agreement: dict[str, dict[str, float]]
    forms: dict[str, dict[str, float]]


def write_env_results(cfg: ShieldPPOConfig, env: str, rows: list[dict[str, Any]], checks: dict[str, dict[str, Any]],
                      start: dict[str, dict[str, float]], out: Path) -> EnvResults:
    """Tables, figures, ``results.json`` and ``gate_check.json`` into ``out``. ``start``: the BC start's evaluation
    per condition (the do-no-harm reference)."""
    main_rows = [r for r in rows if r["delta_default"]]
    name = display_name(env)
    bound = {r["run"]: ppo_config(cfg, env, r["run"], 0).lagrangian_upper_bound for r in rows
             if RUNS.get(r["run"], ("",))[0] in ("ppo_lag", "penalty")}
    lam = ("; λ cap (lagrangian_upper_bound): " + ", ".join(f"{k} {'none' if v is None else f'{v:g}'}"
                                                            for k, v in sorted(bound.items()))) if bound else ""
    tables = rep.render_tables(rows, f"{name}: ShieldVLA part 2 ({cfg.scale} matrix, budget: {cfg.budget}, "
                                     f"safety update: {cfg.safety_update}, gate: {cfg.gate}{lam})", env)
    forms = rep.do_no_harm_forms(main_rows, start["in"])
    tables += rep.table_do_no_harm(main_rows, start["in"], forms=forms) + rep.table_selected(main_rows, start["in"])
    atomic_write_text(out / "tables.md", tables)
    rep.plot_curves(main_rows, out / "curves.png", f"{name}: training (mean over seeds)")
    rep.plot_bars(main_rows, out / "bars.png", f"{name}: evaluation, {cfg.eval_episodes[env]} episodes")
    safe_set(env, main_rows, out)
    agreement = agreements(env, main_rows)
    if agreement:
        tables += ("\n## Does the critic's action gradient point the safe way? (Dubins-VL, seed-0 critics)\n\n"
                   "| run | sign(∂Q/∂a) agrees with the simulator's safer turn | best candidate agrees | states | "
                   "ranks the turns as the HJ values do |\n"
                   "|---|---|---|---|---|\n"
                   + "".join(f"| {rep.LABELS.get(k, k)} | {v['agreement']:.3f} | {v['best_candidate_agreement']:.3f} "
                             f"| {v['states']:.0f} | {v['hj_turn_agreement']:.3f} |\n" for k, v in agreement.items()))
    if checks:
        tables += rep.table_gate_check(checks)
    atomic_write_text(out / "tables.md", tables)
    write_json(out / "results.json", without_run_facts({"start": start, "rows": [{k: v for k, v in r.items()
                                                                                     if k != "_path"} for r in rows]}))
    write_json(out / "gate_check.json", checks)
    return EnvResults(tables, agreement, forms)


def env_metrics(env: str, rows: list[dict[str, Any]], res: EnvResults, checks: dict[str, dict[str, Any]],
                start: dict[str, dict[str, float]]) -> dict[str, float]:
    """``<env>/<run>/<metric>`` (mean over seeds), the start's SR / CSC, the do-no-harm form
    (``<env>/do_no_harm/*`` for ShieldVLA, ``<env>/do_no_harm/<run>/*`` for the other runs of ``res.forms``;
    finite numbers only), the gradient agreements, the gate checks' numbers,
    the validated checkpoints' SR / CSC (``<env>/selected/<run>/*``) and the δ sweep's SR / CSC."""
    metrics = {f"{k}/{m}": v for k, d in rep.summary([r for r in rows if r["delta_default"]]).items()
               for m, v in d.items()}
    metrics.update({f"{env}/start/{k}": float(start["in"][k]) for k in ("sr", "csc", "violation_rate")
                    if k in start["in"]})
    metrics.update({f"{env}/do_no_harm/" + ("" if run == "gated" else f"{run}/") + k: v
                    for run, form in res.forms.items() for k, v in form.items() if math.isfinite(v)})
    metrics.update({f"{env}/{run}/grad_agreement": v["agreement"] for run, v in res.agreement.items()})
    metrics.update({f"{env}/gate_check/{name}/{k}": float(v) for name, c in checks.items() for k, v in c.items()
                    if isinstance(v, (int, float))})
    metrics.update({f"{k.replace('/', '/selected/', 1)}/{m}": v
                    for k, d in rep.summary(rep.selected_rows(r for r in rows if r["delta_default"])).items()
                    for m, v in d.items()})
    for d, srs, cscs in rep.delta_rows(rows, env):
        metrics[f"{env}/delta{d:g}/sr"] = sum(srs) / len(srs)
        metrics[f"{env}/delta{d:g}/csc"] = sum(cscs) / len(cscs)
    return metrics


def copy_best(rows: list[dict[str, Any]], dest: Path) -> None:
    """The ShieldVLA model's (:func:`.runs.model_run`: ``gated``, else ``gated_search``) policy + critic of the best
    seed (SR, then −CSC) as plain model dirs in ``dest``, with ``source.json``; nothing when neither ran."""
    main = [r for r in rows if r["delta_default"]]
    run = model_run(r["run"] for r in main)
    best = max((r for r in main if r["run"] == run), key=lambda r: (r["eval"]["in"]["sr"], -r["eval"]["in"]["csc"]),
               default=None)
    if best is None:
        return
    for part in ("policy", "critic"):
        shutil.copytree(Path(best["_path"]) / part, dest / part)
    write_json(dest / "source.json", {"run": run, "seed": best["seed"], "eval": best["eval"]})
