"""Gated PPO's pieces that need no training: the vector env view, the margin sources, the result tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embodied_safety.shield.costs.margins import BINARY_SAFE, BINARY_UNSAFE, MarginSource
from embodied_safety.shield.rl import report as rep
from embodied_safety.shield.rl.vecenv import TrainVec


def test_train_vec_keeps_the_terminal_frame_and_the_reset_one() -> None:
    vec = TrainVec("dubins", 8, seed=3)
    images, instr, margin, cost = vec.reset()
    assert images.shape == (8, 84, 84, 3) and len(instr) == 8 and margin.shape == (8,)
    rng = np.random.default_rng(0)
    seen_done = False
    for _ in range(120):
        step = vec.step(rng.uniform(-1.1, 1.1, 8))
        assert step.images.shape == step.reached_images.shape == (8, 84, 84, 3)
        live = ~step.done
        assert np.array_equal(step.images[live], step.reached_images[live])
        assert np.allclose(step.margin[live], step.reached_margin[live])
        assert np.array_equal(step.cost, (step.margin < 0).astype(float))
        if step.done.any():
            seen_done = True
            d = np.flatnonzero(step.done)
            assert not np.array_equal(step.images[d], step.reached_images[d])  # a new episode's first frame
    assert seen_done


def test_margin_sources() -> None:
    frames = np.zeros((3, 4, 4, 3), np.uint8)
    gt = np.array([0.5, -0.1, 0.0])
    cost = np.array([0.0, 1.0, 0.0])
    assert MarginSource("gt")(frames, gt, cost).tolist() == pytest.approx(gt.tolist())
    assert MarginSource("binary")(frames, gt, cost).tolist() == [BINARY_SAFE, BINARY_UNSAFE, BINARY_SAFE]

    class Platt:
        def margin(self, rho: np.ndarray) -> np.ndarray:
            return -(2.0 * rho - 1.0)

    rubric = MarginSource("rubric", lambda f: np.array([0.0, 1.0, 0.5]), Platt())
    assert rubric(frames, gt, cost).tolist() == pytest.approx([1.0, -1.0, 0.0])


def _row(run: str, seed: int, sr: float, csc: float, delta: float = 0.2, env: str = "dubins",
         default: bool = True, ood: bool = False) -> dict:
    ev = {"in": {"sr": sr, "csc": csc}}
    if ood:
        ev["color"] = {"sr": sr / 2, "csc": csc * 2}
    return {"env": env, "run": run, "seed": seed, "method": "gated", "margin": "rubric", "delta": delta,
            "eval": ev, "history": [], "delta_default": default}


def test_do_no_harm_form_pairs_seeds_against_the_start_and_ppo_lagrangian() -> None:
    start = {"sr": 0.30, "csc": 2.0}
    lag = [_row("ppo_lag", s, 0.25, c) for s, c in enumerate((4.0, 5.0, 6.0))]
    # gated: SR − start = −0.01, −0.01, +0.02 (mean 0); CSC − PPO-Lagrangian = −1, −1.5, −0.5 (mean −1)
    gated = [_row("gated", s, sr, c) for s, (sr, c) in enumerate(((0.29, 3.0), (0.29, 3.5), (0.32, 5.5)))]
    form = rep.do_no_harm(lag + gated, start)
    assert form is not None and form["seeds"] == 3.0
    assert form["sr_minus_start"] == pytest.approx(0.0) and form["csc_minus_baseline"] == pytest.approx(-1.0)
    # t(0.975, 2) = 4.303; sd of the CSC differences 0.5 -> half-width 4.303 * 0.5 / sqrt(3)
    assert form["csc_minus_baseline_hi"] - form["csc_minus_baseline"] == pytest.approx(4.303 * 0.5 / 3 ** 0.5, rel=1e-3)
    assert form["episodes"] == 0.0  # no per-episode outcomes in these rows: the t interval over seeds
    assert form["holds"] == 1.0 and form["shown"] == 0.0  # the SR interval reaches below −0.02
    table = rep.table_do_no_harm(lag + gated, start)
    assert "| BC start (the runs' initial policy) | 0.30 | 2.00 | | |" in table
    assert "holds on the means, not on the 95 % interval bounds" in table
    assert "Unconstrained PPO" not in table  # only the runs that ran; with PPO's rows, its row beside them
    ppo = [_row("ppo", s, 0.30, 7.0) for s in range(3)]
    assert "| Unconstrained PPO | 0.30 ± 0.00 | 7.00 ± 0.00 |" in rep.table_do_no_harm(ppo + lag + gated, start)
    # a seed only one method ran is not paired; one seed: no interval, never "shown"
    one = rep.do_no_harm([lag[0], gated[0], _row("gated", 7, 0.0, 0.0)], start)
    assert one is not None and one["seeds"] == 1.0 and one["shown"] == 0.0 and one["holds"] == 1.0
    assert "one seed is a sample" in rep.table_do_no_harm([lag[0], gated[0]], start)
    worse = [_row("gated", s, 0.20, 3.0) for s in range(3)]
    assert rep.do_no_harm(lag + worse, start)["holds"] == 0.0  # type: ignore[index]
    assert "does not hold" in rep.table_do_no_harm(lag + worse, start)
    assert rep.do_no_harm(lag, start) is None and "needs both" in rep.table_do_no_harm(lag, start)
    # each ShieldVLA run of FORM_RUNS that ran gets its own verdict: the rubric-search run beside the TD critic's
    search = [_row("gated_search", s, 0.31, 2.0) for s in range(3)]
    forms = rep.do_no_harm_forms(lag + gated + search, start)
    assert list(forms) == ["gated", "gated_search"] and forms["gated_search"]["csc_minus_baseline"] == pytest.approx(-3.0)
    both = rep.table_do_no_harm(lag + gated + search, start)
    assert both.count("Do-no-harm form of") == 2 and f"Do-no-harm form of {rep.LABELS['gated_search']}" in both
    assert list(rep.do_no_harm_forms(lag + search, start)) == ["gated_search"]


def _episode_row(run: str, seed: int, sr: list[float], cost: list[float]) -> dict:
    ev = {"sr": float(np.mean(sr)), "csc": float(np.mean(cost)), "per_episode": {"sr": sr, "cost": cost}}
    return {"env": "dubins", "run": run, "seed": seed, "eval": {"in": ev}, "history": [], "delta_default": True}


def test_do_no_harm_resamples_the_evaluation_episodes_when_the_rows_carry_them() -> None:
    """Three seeds that behave identically: a t interval over seeds has zero width, but the same 200 episodes decide
    every seed's SR − start, so the interval must still cover the episodes' sampling error."""
    n = 200
    base = np.asarray([i % 2 for i in range(n)], float)  # the start: SR 0.5
    moved = base.copy()
    moved[:20] = 1 - moved[:20]  # 10 episodes gained, 10 lost: SR − start 0 on these episodes, ±1 on 20 of them
    start = {"sr": float(base.mean()), "csc": 1.0, "per_episode": {"sr": base.tolist(), "cost": [1.0] * n}}
    lag = [_episode_row("ppo_lag", s, base.tolist(), [2.0] * n) for s in range(3)]
    gated = [_episode_row("gated", s, moved.tolist(), [1.5 + (i % 3 == 0) for i in range(n)]) for s in range(3)]
    form = rep.do_no_harm(lag + gated, start)
    assert form is not None and form["episodes"] == 1.0 and form["seeds"] == 3.0
    assert form["sr_minus_start"] == pytest.approx(0.0)
    # SE of the mean over 200 episodes of ±1 on 20 of them: sqrt(20 / 200) / sqrt(200) ≈ 0.022 -> about ±0.044
    assert -0.07 < form["sr_minus_start_lo"] < -0.025 and 0.025 < form["sr_minus_start_hi"] < 0.07
    assert form["csc_minus_baseline_hi"] < 0 and form["holds"] == 1.0 and form["shown"] == 0.0  # SR bound < −0.02
    assert rep.do_no_harm(lag + gated, start) == form  # a fixed resampling seed: the same interval every time
    table = rep.table_do_no_harm(lag + gated, start)
    assert "crossed bootstrap over the seeds and the evaluation episodes" in table
    # the seeds' spread still counts: the same episodes with seeds shifted apart give a wider interval
    from embodied_safety.evaluation.stats import crossed_bootstrap

    d = moved - base
    same = crossed_bootstrap([d, d, d])
    apart = crossed_bootstrap([d - 0.1, d, d + 0.1])
    assert same[0] == pytest.approx(apart[0]) and apart[2] - apart[1] > same[2] - same[1] + 0.05
    one = crossed_bootstrap([d])  # one seed: the episodes alone
    assert one[1] < 0 < one[2]


def test_tables_have_the_papers_layouts() -> None:
    rows = [_row("ppo_lag", s, 0.1 + s / 100, 3.0, ood=True) for s in range(3)]
    rows += [_row("gated", s, 0.2, 1.0 + s, ood=True) for s in range(3)]
    rows += [_row("penalty", 0, 0.05, 4.0), _row("gated", 0, 0.3, 5.0, delta=0.0, default=False)]
    main = rep.table_main([r for r in rows if r["delta_default"]])
    assert "| PPO-Lagrangian (SafeVLA-style) | 0.11 ± 0.01 | 3.00 ± 0.00 |" in main
    assert "2.00 ± 1.00" in main and "Mean ± std over training seeds (Dubins-VL 3)" in main  # the sample std (ddof=1)
    assert "Critic use" in rep.table_pair(rows, ["penalty", "gated"], "Critic use")
    ood = rep.table_ood([r for r in rows if r["delta_default"]])
    assert "| +Color |" in ood and "| +Light | – |" in ood
    delta = rep.table_delta(rows)
    assert "δ=0 | δ=0.2" in delta
    (d0, s0, c0), (d1, s1, c1) = rep.delta_rows(rows)
    assert (d0, s0, c0) == (0.0, [0.3], [5.0]) and d1 == 0.2 and len(s1) == 3
    assert rep.monotone([5.0, 2.0, 2.0, 1.0]) and not rep.monotone([1.0, 2.0])
    summary = rep.summary(rows)
    assert summary["dubins/penalty"] == {"sr": 0.05, "sr_std": 0.0, "csc": 4.0, "csc_std": 0.0, "seeds": 1.0}


def test_the_delta_table_says_whether_csc_falls_as_delta_grows_step_by_step() -> None:
    """Table 7's monotonicity (issue 21: "the δ sweep monotone in CSC"): each adjacent pair of δ, paired by seed; by
    episode too when the rows carry per-episode outcomes."""
    rows = []
    for seed in range(3):  # CSC 3 -> 2 -> 1.9 as δ goes -1 -> 0 -> 0.2: the last step is within the seeds' noise
        for delta, csc, default in ((-1.0, 3.0, False), (0.0, 2.0, True), (0.2, 1.9 + 0.3 * (seed - 1), False)):
            rows.append(_row("gated_search", seed, 0.4, csc + 0.01 * seed, delta=delta, default=default))
    steps = rep.delta_steps(rows)
    assert [(st["delta_lo"], st["delta_hi"], st["seeds"], st["episodes"]) for st in steps] == [
        (-1.0, 0.0, 3, 0.0), (0.0, 0.2, 3, 0.0)]
    assert steps[0]["csc"][0] == pytest.approx(-1.0) and steps[0]["csc"][2] < 0  # the same step on every seed
    assert steps[1]["csc"][1] < 0 < steps[1]["csc"][2] and steps[1]["sr"][0] == pytest.approx(0.0)
    table = rep.table_delta(rows)
    assert "on the means: **yes**; every step's 95 % interval below zero: **no**" in table
    assert "t intervals over seeds" in table and "δ -1 → 0: CSC -1.00 [" in table
    # per-episode outcomes on shared episodes: the crossed bootstrap; a rise in CSC makes the means verdict "no"
    for r in rows:
        c = r["eval"]["in"]["csc"] + (2.0 if r["delta"] == 0.2 else 0.0)
        r["eval"]["in"] |= {"csc": c, "per_episode": {"sr": [0.0, 1.0] * 5, "cost": [c - 1.0, c + 1.0] * 5}}
    table = rep.table_delta(rows)
    assert "on the means: **no**" in table and "crossed bootstrap over seeds and episodes" in table
    assert rep.delta_steps(rows)[1]["episodes"] == 1.0 and rep.delta_steps(rows)[1]["csc"][0] > 0
    assert rep.delta_steps([_row("gated", 0, 0.1, 1.0)]) == []  # one δ: no steps, no verdict line
    assert "falls" not in rep.table_delta([_row("gated", 0, 0.1, 1.0)])


def test_the_delta_sweep_names_its_run_and_the_model_run_falls_back_to_the_rubric_search(tmp_path) -> None:
    """``shield_ppo.sweep_run``: the δ table reads the swept run's rows (its own δ included) and names it; without
    a ``gated`` run the ShieldVLA model (registered, copied to ``models/``) is ``gated_search``'s best seed."""
    import dataclasses
    import json

    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.rl.results import copy_best
    from embodied_safety.shield.rl.runs import model_run, plan, reference_run

    rows = [_row("ppo_lag", s, 0.3, 2.0) for s in range(2)]
    rows += [_row("gated_search", s, 0.3 + s / 10, 1.0, delta=-0.5) for s in range(2)]
    rows += [_row("gated_search", s, 0.2, 0.5, delta=0.0, default=False) for s in range(2)]
    assert rep.sweep_run(rows) == "gated_search"
    assert [(d, len(s)) for d, s, _ in rep.delta_rows(rows)] == [(-0.5, 2), (0.0, 2)]
    assert rep.table_delta(rows).startswith(f"| {rep.LABELS['gated_search']} | δ=-0.5 | δ=0 |")
    assert rep.table_delta([_row("gated", 0, 0.1, 1.0)]).startswith("| | δ=0.2 |")  # the TD critic's: no name
    assert model_run(["ppo_lag", "gated_search", "gated"]) == "gated" and model_run(["ppo_lag", "gated_search"]) == \
        "gated_search" and model_run(["ppo_lag"]) is None
    # the safe-set figure's GT panel: the first ground-truth-margin run the matrix ran
    assert reference_run(["gated_search", "gated_oracle", "gated_oracle_recovery"]) == "gated_oracle_recovery"
    assert reference_run(["ppo_lag", "gated"]) is None
    for r in rows:
        r["_path"] = str(tmp_path / f"{r['run']}-{r['seed']}-{r['delta']}")
        for part in ("policy", "critic"):
            (Path(r["_path"]) / part).mkdir(parents=True)
    copy_best(rows, tmp_path / "best")
    assert json.loads((tmp_path / "best" / "source.json").read_text())["run"] == "gated_search"
    assert json.loads((tmp_path / "best" / "source.json").read_text())["seed"] == 1  # SR 0.4 against 0.3
    cfg = dataclasses.replace(ShieldPPOConfig(), runs={"dubins": ["ppo_lag"]}, seeds={"dubins": [0]},
                              delta_sweep={"dubins": [0.0, 0.2]}, sweep_run="ppo_lag")
    with pytest.raises(ValueError, match="shield_ppo.sweep_run"):
        plan(cfg, "dubins")
