"""The training variants of SafeBranch Tables 2, 4, 13 and 15, as chains of phases over named data sets.

All variants draw on the same rollouts and have matched-size data: the branch pairs for the DPO
phases (plus the after-repair and contrast pairs of ``branch.golden`` when enabled), as many
trajectory pairs as branch pairs for Trajectory DPO, and the chosen side + replay for SFT. The
replay is the golden plan of every train task (``sft_data: golden_replay``, paper D.5) or the
corrected episodes (``corrected_episodes``, the earlier default).

| variant | phases | data | Table 4 row |
|---|---|---|---|
| sft_only | SFT | chosen side + replay | SFT |
| golden_replay_only | SFT | the golden replay alone, no branch data | control (Table 2) |
| branchpo_only | BranchPO from the base actor | branch pairs | BranchPO without warm-up (Table 15) |
| safebranch | SFT -> BranchPO | as above | Ours |
| trajectory_dpo | trajectory DPO from the base actor | safe vs unsafe episodes | Trajectory DPO |
| trajectory_dpo_success_matched | as above, unsafe side still succeeded | | + success-matched |
| *_fb | the same, critic cue kept in the prompt | ``pairs_fb`` | +FB (Table 13) |
| safebranch_extracted / safebranch_judged | SafeBranch's SFT, then BranchPO on the pairs before the judge / before pruning | | Fig. 3c |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["sft", "branchpo", "trajectory_dpo"]
SFT_DATA = ("golden_replay", "corrected_episodes")


@dataclass(frozen=True)
class Phase:
    kind: Kind
    data: str  # key into the data sets built by ``datasets``


RECIPES: dict[str, tuple[Phase, ...]] = {
    "sft_only": (Phase("sft", "sft"),),
    "golden_replay_only": (Phase("sft", "golden"),),
    "branchpo_only": (Phase("branchpo", "pairs"),),
    "safebranch": (Phase("sft", "sft"), Phase("branchpo", "pairs")),
    "trajectory_dpo": (Phase("trajectory_dpo", "trajectory"),),
    "trajectory_dpo_success_matched": (Phase("trajectory_dpo", "trajectory_success_matched"),),
    "sft_only_fb": (Phase("sft", "sft_fb"),),
    "branchpo_only_fb": (Phase("branchpo", "pairs_fb"),),
    "safebranch_fb": (Phase("sft", "sft_fb"), Phase("branchpo", "pairs_fb")),
    # Fig. 3c: BranchPO on the pairs before the judge / before pruning, after the same SFT as SafeBranch
    "safebranch_extracted": (Phase("sft", "sft"), Phase("branchpo", "pairs_extracted")),
    "safebranch_judged": (Phase("sft", "sft"), Phase("branchpo", "pairs_judged")),
}
LABELS = {
    "base": "Base (bootstrap actor)", "sft_only": "SFT-only", "golden_replay_only": "Golden replay only (no branch data)",
    "branchpo_only": "BranchPO-only",
    "safebranch": "SafeBranch (SFT -> BranchPO)", "trajectory_dpo": "Trajectory DPO",
    "trajectory_dpo_success_matched": "+ success-matched", "sft_only_fb": "SFT-only +FB",
    "branchpo_only_fb": "BranchPO-only +FB", "safebranch_fb": "SafeBranch +FB",
    "safebranch_extracted": "SafeBranch on extracted pairs", "safebranch_judged": "SafeBranch on judge-kept pairs",
}
# sweep key -> (the phase whose learning rate it picks, the variant whose dev result picks it).
# SFT is swept first: SafeBranch's BranchPO sweep builds on the picked SFT checkpoint.
SWEEPS: dict[str, tuple[Kind, str]] = {"sft": ("sft", "sft_only"), "branchpo": ("branchpo", "safebranch"),
                                       "branchpo_only": ("branchpo", "branchpo_only"),
                                       "trajectory_dpo": ("trajectory_dpo", "trajectory_dpo")}


def lrs_for(variant: str, picks: dict[str, float]) -> dict[str, float]:
    """Learning rate per phase kind for ``variant``: BranchPO-only (and its +FB twin) use their own
    sweep's pick when there is one, every other variant its phases' picks."""
    own = "branchpo_only" if variant.removesuffix("_fb") == "branchpo_only" and "branchpo_only" in picks else "branchpo"
    return {"sft": picks["sft"], "branchpo": picks[own], "trajectory_dpo": picks["trajectory_dpo"]}


def _chosen(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"messages": p["prompt"] + p["chosen"], "pair_id": p["pair_id"], "task": p["task"]} for p in pairs]


def datasets(pairs: list[dict[str, Any]], pairs_fb: list[dict[str, Any]], sft: list[dict[str, Any]],
             replay: list[dict[str, Any]], trajectory: list[dict[str, Any]],
             trajectory_success_matched: list[dict[str, Any]], pairs_extracted: list[dict[str, Any]] | None = None,
             pairs_judged: list[dict[str, Any]] | None = None, golden: list[dict[str, Any]] | None = None,
             extra_pairs: list[dict[str, Any]] | None = None,
             sft_data: str = "golden_replay") -> dict[str, list[dict[str, Any]]]:
    """The named data sets the phases train on.

    * ``sft`` = the chosen side + the replay ``sft_data`` names: ``golden`` (golden plans of the
      train tasks) or ``replay`` (corrected episodes); ``sft_fb`` the same with the +FB prompts.
    * ``golden``: the golden replay alone (the no-branch-data control).
    * ``extra_pairs`` (after-repair / contrast pairs, cue-free) join every branch-pair set alike.
    * ``pairs_extracted`` / ``pairs_judged``: the funnel's earlier stages (Fig. 3c)."""
    if sft_data not in SFT_DATA:
        raise ValueError(f"sft_data {sft_data!r}: one of {SFT_DATA}")
    golden, extra = list(golden or []), list(extra_pairs or [])
    surround = golden if sft_data == "golden_replay" else replay
    out = {"pairs": pairs + extra, "pairs_fb": pairs_fb + extra, "sft": sft + surround,
           "sft_fb": _chosen(pairs_fb) + surround, "golden": golden,
           "trajectory": trajectory, "trajectory_success_matched": trajectory_success_matched}
    for name, rows in (("extracted", pairs_extracted), ("judged", pairs_judged)):
        if rows is not None:
            out[f"pairs_{name}"] = rows + extra
    return out


def chain_key(phases: tuple[Phase, ...], lrs: dict[Kind, float]) -> str:
    """Directory name of a phase chain; variants sharing a prefix (SFT-only, SafeBranch) share its checkpoint."""
    return "__".join(f"{p.kind}-{p.data}-lr{lrs[p.kind]:g}" for p in phases)
