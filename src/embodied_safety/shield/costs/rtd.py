"""Refinement-through-Differentiation (App. E.2, Algorithm 2): grow the rubric from the frames it mis-ranks.

Round 0 scores a stratified pose set, Platt-calibrates ρ on the per-frame labels (the broadcast episode bits)
into margins m = −(aρ + b), and measures the tail AUROC. Each round then

1. takes the *disagreement pairs* (o_i, o_j): y_i unsafe, y_j safe, but m_i ≥ m_j (the unsafe frame looks at
   least as safe; ties count, as in the AUROC, so a collapsed scorer still yields pairs). The most violating
   pairs are kept: unsafe frames by decreasing margin matched to safe frames by increasing margin, each
   frame used once, at most ``max_pairs`` (the paper used 30–40);
2. asks a proposer for one new criterion per pair (``PixelProposer``: the library feature that best separates
   the pair; ``LLMProposer``: the meta-prompt with both frames over the OpenAI-compatible API);
3. dedups by name (the highest weight wins), tallies votes, adds the top-k by votes with their proposed
   weights, re-scores the pose set, re-calibrates and recomputes the tail AUROC;
4. diagnoses: per-rubric Δ_k = mean over the pairs of hazard_k(o_i) − hazard_k(o_j); if every Δ_k is the
   same (within ``collapse_tol``) the rubrics carry no separate information — scorer mode collapse (line 17).

Our one addition: a round that *lowers* the tail AUROC is recorded (``accepted = False``) and its rubrics are
not kept; the previous rubric stays, and the rejected names are not proposed again. Algorithm 2 would keep
them and continue; a silent regression of the cost would reach the safety critic unnoticed.

Tail AUROC: with ground-truth margins ``h`` (the simulator's ℓ*, used only to evaluate and to stratify,
never by a scorer or the calibration) it is :func:`~.metrics.tail_auroc` on ``|h| < band``; without
them, the AUROC of −m against the labels over the whole pose set.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ...io import write_json
from ...llm.ask import ask_cached, cache_key
from ...llm.parsing import json_object
from .calibrate import PlattCalibration, fit_platt
from .metrics import auroc, tail_auroc
from .pixel_scorer import FEATURE_LIBRARY, FrameSpec, PixelScorer, as_batch, feature_hazards, frame_spec
from .rubrics import NAME_RE, Rubric, RubricSet
from .vlm_scorer import ChatClient, chat_each, frame_digest, prompt_text, text_with_images

META_PROMPT = "rtd_meta_v1"


class Scorer(Protocol):
    """A rubric scorer: V [N, K] in the set's polarity (NaN rows = failed frames), re-creatable for a new set."""

    rubric_set: RubricSet

    def score(self, frames: np.ndarray) -> np.ndarray: ...

    def with_rubrics(self, rubric_set: RubricSet) -> Scorer: ...


@dataclass(frozen=True)
class Proposal:
    """A candidate criterion (in the rubric set's polarity) proposed for one disagreement pair."""

    rubric: Rubric
    justification: str = ""
    source: str = ""  # the pixel feature, or the proposer model
    pair: int = -1


class Proposer(Protocol):
    def propose(self, unsafe_frame: np.ndarray, safe_frame: np.ndarray, rubric_set: RubricSet) -> Proposal | None:
        """One new criterion that would have ranked ``unsafe_frame`` above ``safe_frame``, or None."""
        ...


def oriented(rubric: Rubric, rubric_set: RubricSet) -> Rubric:
    """A hazard-polarity rubric (0.0 = safe) rewritten for a set anchored 1.0 = safe (levels v → 1 − v)."""
    if not rubric_set.higher_is_safer:
        return rubric
    return replace(rubric, levels=tuple((round(1.0 - v, 6), t) for v, t in reversed(rubric.levels)))


# --- pose set and disagreement pairs -------------------------------------------------------------------


def stratified_pose_set(h: np.ndarray, n: int, band: float = 0.25, tail_share: float = 0.5, strata: int = 8,
                        seed: int = 0) -> np.ndarray:
    """Sorted indices of ``n`` frames, biased to the high-cost tail.

    ``tail_share · n`` frames come from the near-boundary band ``|h| < band``, half from its unsafe side
    (h < 0) and half from its safe side (as far as each side has frames); the rest are spread evenly over
    ``strata`` quantile bins of ``h`` among the other frames, so the bulk of the distribution is covered
    too. Frames with a non-finite ``h`` are never drawn. Deterministic in ``seed``.
    """
    h = np.asarray(h, dtype=np.float64)
    rng = np.random.default_rng(seed)
    finite = np.flatnonzero(np.isfinite(h))
    if finite.size == 0:
        raise ValueError("stratified_pose_set: no frame has a finite ground-truth margin h")
    n = min(n, finite.size)
    chosen: list[np.ndarray] = []

    def draw(pool: np.ndarray, k: int) -> np.ndarray:
        k = min(k, pool.size)
        return rng.choice(pool, size=k, replace=False) if k > 0 else pool[:0]

    inside, outside_safe = finite[h[finite] < 0], finite[h[finite] >= 0]
    tail_in = inside[np.abs(h[inside]) < band]
    tail_out = outside_safe[h[outside_safe] < band]
    n_tail = int(round(tail_share * n))
    a = draw(tail_in, n_tail // 2)
    b = draw(tail_out, n_tail - a.size)
    a = np.concatenate([a, draw(np.setdiff1d(tail_in, a), n_tail - a.size - b.size)])
    chosen += [a, b]
    rest = np.setdiff1d(finite, np.concatenate(chosen))
    left = n - sum(c.size for c in chosen)
    if left > 0 and rest.size:
        edges = np.quantile(h[rest], np.linspace(0, 1, strata + 1))
        bins = np.clip(np.searchsorted(edges, h[rest], side="right") - 1, 0, strata - 1)
        per = [rest[bins == s] for s in range(strata)]
        quota = [left // strata + (1 if s < left % strata else 0) for s in range(strata)]
        picks = [draw(p, q) for p, q in zip(per, quota, strict=True)]
        chosen += picks
        short = left - sum(p.size for p in picks)
        if short > 0:
            chosen.append(draw(np.setdiff1d(rest, np.concatenate(picks)), short))
    return np.sort(np.concatenate(chosen)).astype(np.int64)


def disagreement_pairs(margin: np.ndarray, unsafe: np.ndarray, max_pairs: int = 30) -> list[tuple[int, int]]:
    """(i, j) with ``unsafe[i]``, not ``unsafe[j]`` and m_i ≥ m_j, most violating first, each frame once."""
    m = np.asarray(margin, dtype=np.float64)
    y = np.asarray(unsafe).astype(bool)
    ok = np.isfinite(m)
    bad = np.flatnonzero(y & ok)
    good = np.flatnonzero(~y & ok)
    bad = bad[np.argsort(-m[bad], kind="stable")]
    good = good[np.argsort(m[good], kind="stable")]
    pairs = []
    for i, j in zip(bad, good, strict=False):
        if len(pairs) >= max_pairs or m[i] < m[j]:
            break
        pairs.append((int(i), int(j)))
    return pairs


# --- proposers -------------------------------------------------------------------------------------------


@dataclass
class PixelProposer:
    """Proposes the library feature (one the set does not use yet, meaningful for the view) whose hazard rises
    most from the safe to the unsafe frame; weight ⌈5Δ⌉ clipped to 1..5; abstains below ``min_delta``."""

    spec: FrameSpec | None = None
    min_delta: float = 0.1

    def propose(self, unsafe_frame: np.ndarray, safe_frame: np.ndarray, rubric_set: RubricSet) -> Proposal | None:
        spec = self.spec or frame_spec(rubric_set.env)
        mapping = PixelScorer(rubric_set, spec).mapping
        used = {mapping.get(n) for n in rubric_set.names}
        names = [f.name for f in FEATURE_LIBRARY.values()
                 if spec.view in f.views and f.name not in used and f.rubric.name not in rubric_set.names]
        if not names:
            return None
        hz = feature_hazards(np.stack([unsafe_frame, safe_frame]), spec, names)
        delta = hz[0] - hz[1]
        best = int(np.argmax(delta))
        if delta[best] < self.min_delta:
            return None
        feature = FEATURE_LIBRARY[names[best]]
        weight = int(min(5, max(1, math.ceil(5 * float(delta[best]) - 1e-9))))
        why = (f"{feature.name}: hazard {hz[0, best]:.2f} on the unsafe frame vs {hz[1, best]:.2f} on the safe one "
               f"({feature.description})")
        return Proposal(oriented(replace(feature.rubric, weight=weight), rubric_set), why, feature.name)


def _polarity(rubric_set: RubricSet) -> str:
    if rubric_set.higher_is_safer:
        return ("like the current rubric, 1.0 = safe (no hazard on this axis) and 0.0 = most hazardous, with "
                "anchors at 0.0, 0.3, 0.6 and 1.0.")
    return ("like the current rubric, 0.0 = safe (no hazard on this axis) and 1.0 = most hazardous, with "
            "anchors at 0.0, 0.3, 0.6 and 1.0.")


def meta_prompt(rubric_set: RubricSet) -> str:
    """The RTD meta-prompt (Algorithm 2 line 9: both frames, the current rubric, atomic / MECE / w ∈ 1..5)."""
    listing = "\n".join(f"- {r.name} (weight={r.weight}): {r.description}" for r in rubric_set.rubrics)
    return prompt_text(META_PROMPT).format(env=rubric_set.env, rubric=listing, polarity=_polarity(rubric_set))


def parse_proposal(text: str) -> dict[str, Any]:
    """A proposed criterion from the proposer's reply (the first JSON object), validated; raises ValueError."""
    obj = json_object(text)
    name = obj.get("name")
    if not isinstance(name, str):
        raise ValueError("field 'name' missing or not a string")
    name = "_".join(w for w in "".join(c if c.isalnum() else " " for c in name).upper().split())
    if not NAME_RE.match(name):
        raise ValueError(f"name {obj.get('name')!r} is not an identifier")
    weight = obj.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 5:
        raise ValueError(f"weight {weight!r} is not an integer in 1..5")
    definition = obj.get("definition")
    if not isinstance(definition, str) or not definition.strip():
        raise ValueError("field 'definition' missing or empty")
    levels = obj.get("levels")
    if not isinstance(levels, dict) or len(levels) < 2:
        raise ValueError("field 'levels' must map at least two anchors to texts")
    try:
        pairs = sorted((float(k), str(v)) for k, v in levels.items())
    except ValueError as exc:
        raise ValueError(f"level keys must be numbers: {list(levels)}") from exc
    rubric = Rubric(name, weight, " ".join(definition.split()), tuple(pairs))  # validates the levels
    return {**rubric.to_dict(), "justification": str(obj.get("justification", ""))}


@dataclass
class LLMProposer:
    """The meta-prompt with both frames (unsafe first) over a :class:`~.vlm_scorer.ChatClient`; replies are
    validated, re-asked up to ``retries`` times and cached like the scorer's; a reply that stays invalid is a
    recorded failure and no proposal."""

    client: ChatClient
    cache_dir: Path | None = None
    retries: int = 2
    temperature: float = 0.0
    retry_temperature: float = 0.7
    calls: int = 0
    errors: list[str] = field(default_factory=list)

    def propose(self, unsafe_frame: np.ndarray, safe_frame: np.ndarray, rubric_set: RubricSet) -> Proposal | None:
        text = meta_prompt(rubric_set)
        key = cache_key(self.client.name, text, frame_digest(unsafe_frame), frame_digest(safe_frame))
        [answer] = ask_cached(chat_each(self.client), [text_with_images(text, [unsafe_frame, safe_frame])], [key],
                              parse_proposal, self.cache_dir, self.client.name, self.retries, self.temperature,
                              self.retry_temperature)
        self.calls += answer.calls
        if not answer.ok:
            self.errors.append(answer.error or "invalid")
            return None
        value = dict(answer.value)
        justification = value.pop("justification", "")
        return Proposal(Rubric.from_dict(value), justification, self.client.name)


# --- the loop --------------------------------------------------------------------------------------------


def _finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None


@dataclass
class RTDRound:
    """What one round did; ``to_dict`` is JSON-safe (NaN → null)."""

    round: int
    pairs: list[tuple[int, int]]
    proposals: list[dict[str, Any]]
    failed_proposals: int
    votes: dict[str, int]
    added: list[dict[str, Any]]
    auroc_before: float
    auroc_after: float
    accepted: bool
    rubric_deltas: dict[str, float]
    identical_frames: float
    collapse: bool
    diagnosis: str

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pairs"] = [list(p) for p in self.pairs]
        for k in ("auroc_before", "auroc_after", "identical_frames"):
            d[k] = _finite_or_none(d[k])
        d["rubric_deltas"] = {k: _finite_or_none(v) for k, v in self.rubric_deltas.items()}
        return d


@dataclass
class RTDResult:
    rubric_set: RubricSet
    calibration: PlattCalibration
    diagnostic: dict[str, Any]  # round 0: tail AUROC, pairs, per-rubric deltas, collapse
    rounds: list[RTDRound]

    def to_dict(self) -> dict[str, Any]:
        return {"rubric_set": self.rubric_set.to_dict(), "calibration": asdict(self.calibration),
                "round0": self.diagnostic, "rounds": [r.to_dict() for r in self.rounds]}

    def save(self, path: str | os.PathLike[str]) -> Path:
        return write_json(path, self.to_dict())


def collapse_stats(rubric_set: RubricSet, scores: np.ndarray, pairs: Sequence[tuple[int, int]],
                   tol: float = 1e-3) -> tuple[dict[str, float], float, bool]:
    """(per-rubric Δ_k over the pairs, share of frames whose K scores are all equal, collapse flag)."""
    hz = rubric_set.hazards(scores)
    ok = np.isfinite(hz).all(axis=1)
    identical = float((np.ptp(hz[ok], axis=1) <= 1e-6).mean()) if ok.any() and hz.shape[1] > 1 else float("nan")
    pairs = [(i, j) for i, j in pairs if ok[i] and ok[j]]
    if not pairs:
        return {n: float("nan") for n in rubric_set.names}, identical, False
    i, j = np.array(pairs).T
    deltas = (hz[i] - hz[j]).mean(axis=0)
    collapse = len(deltas) > 1 and float(np.ptp(deltas)) <= tol
    return dict(zip(rubric_set.names, map(float, deltas), strict=True)), identical, collapse


def _evaluate(scorer: Scorer, frames: np.ndarray, unsafe: np.ndarray, h: np.ndarray | None,
              band: float) -> tuple[np.ndarray, PlattCalibration, np.ndarray, float]:
    scores = scorer.score(frames)
    rho = scorer.rubric_set.severity(scores)
    cal = fit_platt(rho, unsafe)
    margin = cal.margin(rho)
    tail = tail_auroc(-margin, h, band) if h is not None else auroc(-margin, unsafe)
    return scores, cal, margin, tail


def run_rtd(scorer: Scorer, proposer: Proposer, frames: np.ndarray, unsafe: np.ndarray, h: np.ndarray | None = None,
            rounds: int = 1, top_k: int = 2, max_pairs: int = 30, band: float = 0.25, collapse_tol: float = 1e-3,
            log: Callable[[dict[str, float], int], None] | None = None) -> RTDResult:
    """Algorithm 2 on a pose set: ``frames`` [N, H, W, 3], per-frame labels ``unsafe`` (the broadcast episode
    bits), optional ground-truth margins ``h`` for the tail AUROC. Returns the refined rubric and the records."""
    frames = as_batch(frames)
    unsafe = np.asarray(unsafe).astype(bool)
    rset = scorer.rubric_set
    scores, cal, margin, tail = _evaluate(scorer, frames, unsafe, h, band)
    pairs = disagreement_pairs(margin, unsafe, max_pairs)
    deltas, identical, collapse = collapse_stats(rset, scores, pairs, collapse_tol)
    diagnostic = {"tail_auroc": _finite_or_none(tail), "pairs": len(pairs), "collapse": collapse,
                  "identical_frames": _finite_or_none(identical),
                  "rubric_deltas": {k: _finite_or_none(v) for k, v in deltas.items()}, "rubric_set": rset.prompt}
    if log:
        log({"rtd/tail_auroc": tail, "rtd/pairs": float(len(pairs))}, 0)
    rejected: set[str] = set()
    records: list[RTDRound] = []
    for n in range(1, rounds + 1):
        pairs = disagreement_pairs(margin, unsafe, max_pairs)
        proposals: list[Proposal] = []
        failed = 0
        for k, (i, j) in enumerate(pairs):
            p = proposer.propose(frames[i], frames[j], rset)
            if p is None:
                failed += 1
            elif p.rubric.name not in rset.names and p.rubric.name not in rejected:
                proposals.append(replace(p, pair=k))
        votes: dict[str, int] = {}
        best: dict[str, Proposal] = {}
        for p in proposals:
            votes[p.rubric.name] = votes.get(p.rubric.name, 0) + 1
            if p.rubric.name not in best or p.rubric.weight > best[p.rubric.name].rubric.weight:
                best[p.rubric.name] = p
        top = sorted(votes, key=lambda name: (-votes[name], -best[name].rubric.weight, name))[:top_k]
        added = [replace(best[name].rubric, provenance=f"PROPOSED by RTD round {n}, votes={votes[name]}")
                 for name in top]
        record = dict(round=n, pairs=pairs, failed_proposals=failed, votes=votes,
                      proposals=[{"pair": p.pair, "name": p.rubric.name, "weight": p.rubric.weight,
                                  "source": p.source, "justification": p.justification} for p in proposals],
                      added=[r.to_dict() for r in added], auroc_before=tail)
        if not added:
            records.append(RTDRound(**record, auroc_after=tail, accepted=False, rubric_deltas={},
                                    identical_frames=float("nan"), collapse=False,
                                    diagnosis="no proposal: nothing to add, loop stopped"))
            break
        new_scorer = scorer.with_rubrics(rset.extend(added))
        new_scores, new_cal, new_margin, new_tail = _evaluate(new_scorer, frames, unsafe, h, band)
        deltas, identical, collapse = collapse_stats(new_scorer.rubric_set, new_scores, pairs, collapse_tol)
        accepted = not (new_tail < tail)  # NaN on either side: no evidence of a regression
        if collapse:
            diagnosis = "scorer mode collapse: per-rubric deltas identical; scale the scorer"
        elif not accepted:
            diagnosis = "tail AUROC dropped: added rubrics rejected, previous rubric kept"
        elif new_tail > tail:
            diagnosis = "refinement effective: tail AUROC improved"
        else:
            diagnosis = "refinement neutral: tail AUROC unchanged"
        records.append(RTDRound(**record, auroc_after=new_tail, accepted=accepted, rubric_deltas=deltas,
                                identical_frames=identical, collapse=collapse, diagnosis=diagnosis))
        if log:
            log({"rtd/tail_auroc": new_tail, "rtd/accepted": float(accepted), "rtd/added": float(len(added)),
                 "rtd/collapse": float(collapse)}, n)
        if accepted:
            scorer, rset, cal, margin, tail = new_scorer, new_scorer.rubric_set, new_cal, new_margin, new_tail
        else:
            rejected.update(r.name for r in added)
    return RTDResult(rset, cal, diagnostic, records)
