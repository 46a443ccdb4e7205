"""From raw branches to training data: hindsight relabel, pruning, TRL files, the funnel.

* Relabel (Box 7): the pair's prompt is h_k, the cue-free prompt the actor saw when it proposed
  y-; the chosen side's cue ([h_k; f_k]) is dropped, so both sides share the prompt byte for byte.
  The ``+FB`` ablation (F.2) keeps the cue on both sides instead.
* Prune: one canonical pair per (task, anchor step, normalised y+) across temperatures, keeping
  the lowest temperature's.
* TRL conversational preference format: ``prompt`` / ``chosen`` / ``rejected`` message lists plus
  metadata; the SFT file holds ``messages`` of the chosen side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..actors.prompts import ANCHOR, strip_cue
from ..envs.household.env import CompiledTask
from ..evaluation.household_metrics import risk_slug
from ..records import RawBranch
from .judge import JudgeVerdict, restore


def preference_row(b: RawBranch, with_feedback: bool = False) -> dict[str, object]:
    prompt = b.prompt_with_cue if with_feedback else strip_cue(b.prompt_with_cue)
    assert with_feedback or prompt == b.prompt, "relabelled prompt must equal h_k byte for byte"
    return {
        "prompt": [{"role": "user", "content": prompt}],
        "chosen": [{"role": "assistant", "content": b.chosen_action}],
        "rejected": [{"role": "assistant", "content": b.rejected_action}],
        "pair_id": b.branch_id, "task": b.task, "risk_type": b.risk_type, "trigger": b.trigger,
        "hazard_class": b.hazard_class, "temperature": b.temperature, "anchor_step": b.anchor_step,
        "condition_index": b.condition_index, "track": "B", "variant": "+FB" if with_feedback else "relabelled",
    }


def sft_row(b: RawBranch) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": b.prompt}, {"role": "assistant", "content": b.chosen_action}],
            "pair_id": b.branch_id, "task": b.task}


def replay_rows(compiled: CompiledTask, actions: Sequence[str], level: str = "full",
                kind: str = "replay") -> list[dict[str, object]]:
    """SFT replay (paper D.5): every successful step of ``actions`` replayed from the task's start,
    as (cue-free prompt, action) messages in the actor's own context (``build_context``, compact
    style). ``actions`` is a corrected episode (``kind`` replay) or the golden plan (``golden``)."""
    from ..actors.context import build_context

    world = compiled.new_world()
    rows = []
    for a in actions:
        prompt = build_context(compiled, world, level).prompt("compact")  # type: ignore[arg-type]
        if world.step(a).ok:
            rows.append({"messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": a}],
                         "task": compiled.name, "kind": kind})
    return rows


def prune(branches: Sequence[RawBranch]) -> list[RawBranch]:
    """One pair per (task, anchor step, normalised y+), lowest temperature first."""
    seen: set[tuple[str, int, str]] = set()
    out = []
    for b in sorted(branches, key=lambda x: (x.temperature, x.task, x.anchor_step, x.branch_id)):
        key = (b.task, b.anchor_step, b.chosen_action or "")
        if key not in seen:
            seen.add(key)
            out.append(b)
    return out


def funnel(raw: Sequence[RawBranch], verdicts: dict[str, JudgeVerdict], final: Sequence[RawBranch]) -> dict[str, object]:
    """Counts per stage (extracted = accepted repairs, judge-kept, final), per risk type and trigger."""
    extracted = [b for b in raw if b.accepted]
    kept = [b for b in extracted if verdicts[b.branch_id].accept]
    stages = {"extracted": extracted, "judged": kept, "final": list(final)}
    out: dict[str, object] = {
        "data/repairs_attempted": len(raw),
        "data/repairs_failed": sum(not b.accepted for b in raw),
        "data/repair_acceptance": len(kept) / len(raw) if raw else 0.0,
        "data/judge_keep_rate": len(kept) / len(extracted) if extracted else 0.0,
    }
    for name, items in stages.items():
        out[f"data/pairs_{name}"] = len(items)
        for risk, n in sorted(Counter(b.risk_type for b in items).items()):
            out[f"data/pairs_{name}/risk/{risk_slug(risk)}"] = n
        for trig, n in sorted(Counter(b.trigger for b in items).items()):
            out[f"data/pairs_{name}/trigger/{trig}"] = n
    rejects = Counter(verdicts[b.branch_id].reason for b in extracted if not verdicts[b.branch_id].accept)
    out["data/judge_reject_reasons"] = dict(rejects.most_common())
    return out


def pair_invariants(compiled: CompiledTask, b: RawBranch) -> list[str]:
    """The issue's invariants for one final pair; returns the violated ones (empty = all hold)."""
    problems = []
    row = preference_row(b)
    prompt = row["prompt"][0]["content"]  # type: ignore[index]
    if prompt != b.prompt or strip_cue(b.prompt_with_cue) != prompt:
        problems.append("prompt bytes differ between the two sides")
    if not has_no_cue(prompt) or b.feedback in prompt:
        problems.append("feedback text in the prompt")
    world = restore(compiled, b)
    snap = world.snapshot()
    ok = world.step(b.chosen_action or "").ok
    resolved = ok and compiled.condition_holds(b.condition_index, world)
    world.restore(snap)
    if not ok:
        problems.append("chosen action not executable from the restored state")
    if not resolved:
        problems.append("chosen action does not resolve the recorded condition")
    if compiled.condition_holds(b.condition_index, world):
        problems.append("rejected action does not violate the condition (it already holds at h_k)")
    return problems


def has_no_cue(prompt: str) -> bool:
    """Invariant: a relabelled prompt carries no critic feedback before the anchor."""
    head = prompt.split(ANCHOR, 1)[0]
    return "[Safety constraint]" not in head and "You previously proposed" not in head
