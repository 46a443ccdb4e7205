"""Experiment (docs/shield_ppo.md, "Stop 52"): is the late fall of long PPO runs the KL anchor's decay to zero?

At 1 M steps every run but one loses success in the last quarter ("Stop 51"), and at 8× the demo budget (196,608
steps) PPO-Lagrangian and unconstrained PPO fall in the last quarter too — at the same *fraction* of the run, five
times fewer steps in. The only schedule in ``ppo.train`` tied to the run's fraction is the KL anchor to the start,
``kl_start · (1 − progress)``, a quarter of its weight at 75 %. This runs ``checkpoint_curve.py`` (same arguments,
same result format) with the anchor's weight held at or above ``--floor · kl_start`` on every policy step: the
intervention the question needs. It is an experiment-only patch of ``GatedPPO.update`` (the stage has no such
option; adding one changes every run's content key and the lock), reported as such:

    python experiments/kl_floor.py --floor 0.25 --warm search=<critic> \\
        --variant lagf:ppo_lag:total_steps=196608 --seeds 0 1 2 3 4 --every 48 --baseline lagf \\
        --out experiments/results/kl_floor_8x.json
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any


def held_update(floor: float, update: Callable[..., dict[str, float]]) -> Callable[..., dict[str, float]]:
    """``GatedPPO.update`` with every policy step's anchor weight at least ``floor · kl_start``."""

    @functools.wraps(update)
    def held(self: Any, ro: Any, adv: Any, gate: Any, policy_step: bool = True) -> dict[str, float]:
        if policy_step and self.start_policy is not None:
            self.kl_weight = max(float(self.kl_weight), floor * self.cfg.kl_start)
        return update(self, ro, adv, gate, policy_step)

    return held


def hold_anchor(floor: float) -> None:
    """For this process: the anchor's weight never below ``floor · kl_start`` (the stage's linear decay above it)."""
    from embodied_safety.shield.rl.ppo import GatedPPO

    GatedPPO.update = held_update(floor, GatedPPO.update)  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], add_help=False)
    ap.add_argument("--floor", type=float, required=True, help="the anchor's weight floor, a fraction of kl_start")
    args, rest = ap.parse_known_args(argv)
    if not 0.0 <= args.floor <= 1.0:
        raise SystemExit(f"--floor must be in [0, 1], got {args.floor}")
    hold_anchor(args.floor)
    import checkpoint_curve

    checkpoint_curve.main(rest)


if __name__ == "__main__":
    main()
