"""Efficiency against natural best-of-N sampling (SafeBranch Fig. 3a).

Natural pairs come from independent rollouts of the same task (the ``rollouts`` stage, same
budget of one episode per task and temperature): two trajectories that share an action prefix
and diverge at step k, one ending safe-and-successful and the other unsafe, form a same-anchor pair
(task, k, safe action). SafeBranch's count is its final pairs from the same number of episodes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

from ..records import Trajectory


def natural_pairs(trajectories: Sequence[Trajectory]) -> set[tuple[str, int, str]]:
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        by_task[t.task].append(t)
    pairs = set()
    for task, group in by_task.items():
        for a, b in combinations(group, 2):
            if a.safe_success == b.safe_success or not (a.success and b.success):
                continue
            safe, unsafe = (a, b) if a.safe_success else (b, a)
            sa = [s.action or s.raw_output for s in safe.steps]
            ua = [s.action or s.raw_output for s in unsafe.steps]
            k = next((i for i, (x, y) in enumerate(zip(sa, ua, strict=False)) if x != y), None)
            if k is not None:
                pairs.add((task, k, sa[k]))
    return pairs


def efficiency(final_pairs: int, trajectories: Sequence[Trajectory], episodes_branch: int) -> dict[str, float]:
    natural = len(natural_pairs(trajectories))
    return {
        "efficiency/branch_pairs": float(final_pairs),
        "efficiency/branch_episodes": float(episodes_branch),
        "efficiency/natural_pairs": float(natural),
        "efficiency/natural_episodes": float(len(trajectories)),
        "efficiency/ratio": final_pairs / natural if natural else float("inf"),
        "efficiency/branch_pairs_per_episode": final_pairs / max(episodes_branch, 1),
        "efficiency/natural_pairs_per_episode": natural / max(len(trajectories), 1),
    }
