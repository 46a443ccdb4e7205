"""Validated checkpoints (shield/rl/select.py): the best trained iterate on validation episodes, kept while PPO
trains, and the stage's table of those iterates (shield/rl/report.py)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from embodied_safety.shield.rl import report as rep  # noqa: E402
from embodied_safety.shield.rl.select import CheckpointSelector, selection_key  # noqa: E402


def test_the_order_prefers_validation_sr_then_lower_cost_then_the_later_iterate() -> None:
    points = [(0.4, 1.0, 10), (0.5, 2.0, 20), (0.5, 1.5, 30), (0.5, 1.5, 40)]
    assert max(points, key=lambda p: selection_key(*p)) == (0.5, 1.5, 40)


def _dubins_policy():
    from embodied_safety.envs.control.dubins import DubinsVLEnv
    from embodied_safety.shield.policy.visuomotor import policy_for_env

    torch.manual_seed(0)
    return policy_for_env(DubinsVLEnv())


def _move(policy, scale: float) -> dict:
    """A different policy each iteration (as PPO's updates make it); the weights after the move."""
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(scale * torch.randn_like(p))
    return {k: v.detach().clone() for k, v in policy.state_dict().items()}


def test_the_selector_evaluates_on_schedule_and_keeps_the_best_iterates_weights() -> None:
    """Evaluated after iterations 2 and 4 and the last (5) on the validation episodes, with the stage's evaluation;
    the chosen iterate is the best of those by :func:`selection_key`, and its weights come back after the policy
    moved on."""
    from embodied_safety.shield.rl.evaluation import evaluate_conditions
    from embodied_safety.shield.rl.select import VAL_BASE

    policy = _dubins_policy()
    sel = CheckpointSelector("dubins", policy, every=2, episodes=4, last=5)
    weights = {}
    for it in range(1, 6):
        weights[it] = _move(policy, 0.05)
        sel(it)
    assert [p["iteration"] for p in sel.curve] == [2.0, 4.0, 5.0]
    best = max(sel.curve, key=lambda p: selection_key(p["sr"], p["csc"], int(p["iteration"])))
    assert sel.best == best
    chosen = sel.chosen()
    it = int(best["iteration"])
    assert all(torch.equal(chosen.state_dict()[k], weights[it][k]) for k in weights[it])
    assert (chosen is policy) == (it == 5)
    # the validation numbers are the chosen weights' on episode_seed(VAL_BASE, i), deterministic
    again = evaluate_conditions("dubins", chosen, 4, ["in"], base=VAL_BASE)["in"]
    assert (again["sr"], again["csc"]) == (best["sr"], best["csc"])
    out = sel.result({"in": {"sr": 0.55, "csc": 1.9}})
    assert out["iteration"] == best["iteration"] and out["val"] == {"sr": best["sr"], "csc": best["csc"]}
    assert out["eval"]["in"]["sr"] == 0.55 and out["curve"] == sel.curve
    with pytest.raises(ValueError, match="select_every"):
        CheckpointSelector("dubins", policy, every=0, episodes=4, last=5)


def test_the_last_iterate_chosen_is_the_trained_policy_itself() -> None:
    policy = _dubins_policy()
    sel = CheckpointSelector("dubins", policy, every=10, episodes=2, last=3)
    for it in (1, 2, 3):
        sel(it)
    assert [p["iteration"] for p in sel.curve] == [3.0] and sel.chosen() is policy


def _row(run: str, seed: int, sr: float, csc: float, sel: tuple[float, float, int] | None) -> dict:
    row = {"env": "dubins", "run": run, "seed": seed, "delta": 0.2, "delta_default": True,
           "eval": {"in": {"sr": sr, "csc": csc}}}
    if sel is not None:
        row["selected"] = {"iteration": float(sel[2]), "val": {"sr": sel[0], "csc": sel[1]}, "every": 122,
                           "episodes": 300, "curve": [], "eval": {"in": {"sr": sel[0], "csc": sel[1]}}}
    return row


def test_the_stage_tables_show_the_validated_checkpoints_beside_the_final_iterates() -> None:
    rows = [_row("ppo_lag", s, 0.3, 3.0, (0.5, 1.5, 732)) for s in range(3)]
    rows += [_row("gated", s, 0.5, 1.2, (0.5, 1.2, 977)) for s in range(3)]
    sel = rep.selected_rows(rows)
    assert [r["eval"]["in"]["sr"] for r in sel[:3]] == [0.5] * 3 and rows[0]["eval"]["in"]["sr"] == 0.3
    table = rep.table_selected(rows, {"sr": 0.45, "csc": 1.0})
    assert "## Validated checkpoints" in table and "Every 122 PPO iterations" in table
    assert f"{rep.LABELS['ppo_lag']} [732, 732, 732]" in table
    assert "| PPO-Lagrangian (SafeVLA-style) | 0.50 ± 0.00 | 1.50 ± 0.00 |" in table
    assert "## The start and the do-no-harm form, validated checkpoints" in table
    assert rep.table_selected([_row("gated", 0, 0.5, 1.2, None)], {"sr": 0.45, "csc": 1.0}) == ""
