"""Validated checkpoints: the iterate of a PPO run chosen on validation episodes (docs/shield_ppo.md).

The stage reports each run's final iterate. At Table 14's 1 M steps that reading depends on when a run is stopped:
PPO-Lagrangian tracks ShieldVLA to iteration ~730 and then loses success and doubles its cost (its λ climbs
uncapped), so the final iterates compare a collapsed baseline. With ``shield_ppo.select_every`` > 0 the
stage also evaluates the deterministic policy every that many iterations (and the last) on *validation* episodes
(``episode_seed(VAL_BASE, i)``, disjoint from the test episodes the tables read), keeps the best trained iterate
(:func:`selection_key`: validation SR, then lower validation CSC, then the later one) and evaluates it on the test
episodes; the tables then show both readings. The start (iteration 0) is not a candidate: a run that never beats it
would otherwise report the start as its own result. Evaluation is deterministic and draws no training noise, so the
training run itself does not change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

#: validation episodes ``episode_seed(VAL_BASE, i)``: disjoint from the test episodes (``evaluation.EVAL_BASE``), the BC
#: demonstrations and evaluation, and the rollouts
VAL_BASE = 3100


def selection_key(sr: float, csc: float, iteration: int) -> tuple[float, float, int]:
    """The order of checkpoints: higher validation SR, then lower validation CSC, then the later iteration."""
    return (float(sr), -float(csc), int(iteration))


class CheckpointSelector:
    """Called after each PPO iteration (``train``'s ``log``): every ``every`` iterations and at ``last`` it evaluates
    ``policy`` on ``episodes`` validation episodes of ``env`` and keeps a copy of the best iterate's weights."""

    def __init__(self, env: str, policy: Any, every: int, episodes: int, last: int, base: int = VAL_BASE) -> None:
        if every <= 0 or episodes <= 0:
            raise ValueError(f"select_every and select_episodes must be > 0, got {every} and {episodes}")
        self.env, self.policy, self.every, self.episodes, self.last, self.base = env, policy, every, episodes, last, base
        self.curve: list[dict[str, float]] = []
        self.best: dict[str, float] | None = None
        self._state: dict[str, Any] | None = None

    def __call__(self, iteration: int) -> None:
        if iteration % self.every == 0 or iteration == self.last:
            self.evaluate(iteration)

    def evaluate(self, iteration: int) -> None:
        """Evaluate the policy as it is after ``iteration`` (off the schedule too: a run stopped by a time budget
        evaluates its last iterate) and keep it when it is the best so far."""
        from .evaluation import evaluate_conditions

        ev = evaluate_conditions(self.env, self.policy, self.episodes, ["in"], base=self.base)["in"]
        point = {"iteration": float(iteration), "sr": float(ev["sr"]), "csc": float(ev["csc"])}
        self.curve.append(point)
        if self.best is None or selection_key(point["sr"], point["csc"], iteration) > selection_key(
                self.best["sr"], self.best["csc"], int(self.best["iteration"])):
            self.best = point
            self._state = copy.deepcopy(self.policy.state_dict())

    def chosen(self) -> Any:
        """After training (its final iterate the last one evaluated): the policy at the chosen iterate -- the trained
        policy itself when that is the final one, else a copy with the kept weights."""
        if self.best is None or self._state is None:
            raise RuntimeError("no checkpoint was evaluated")
        if self.best is self.curve[-1]:
            return self.policy
        other = copy.deepcopy(self.policy)
        other.load_state_dict(self._state)
        return other

    def finish(self, final_in: Mapping[str, Any], episodes: int) -> tuple[dict[str, Any], Any]:
        """After training: (what ``result.json`` records under ``selected``, the chosen policy). The chosen iterate
        is evaluated on ``episodes`` test episodes in-distribution, unless it is the last one (``final_in``, its
        evaluation there)."""
        from .evaluation import evaluate_conditions

        chosen = self.chosen()
        test = {"in": final_in} if chosen is self.policy else evaluate_conditions(self.env, chosen, episodes, ["in"])
        return self.result(test), chosen

    def result(self, test: Mapping[str, Any]) -> dict[str, Any]:
        """What a run's ``result.json`` records under ``selected``: the chosen iteration, its validation SR / CSC,
        the validation curve and ``eval`` (the chosen policy's evaluation on the test episodes, ``test``)."""
        assert self.best is not None
        return {"iteration": self.best["iteration"], "val": {"sr": self.best["sr"], "csc": self.best["csc"]},
                "every": self.every, "episodes": self.episodes, "curve": self.curve, "eval": dict(test)}
