"""ShieldVLA rubric cost pipeline (§4.2, App. E): rubric sets, pixel scorer, VLM scorer parsing / retries /
cache with a scripted client, Platt calibration, cost metrics, RTD. Frames are synthesised here from the
palette (no env module is imported); the wire path is in tests/flows/test_vlm_scorer_server.py."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from dataclasses import dataclass, replace

import numpy as np
import pytest

from embodied_safety.envs.control import palette as P
from embodied_safety.shield.costs import metrics as cm
from embodied_safety.shield.costs.calibrate import (
    PlattCalibration,
    balanced_weights,
    broadcast_episode_bits,
    calibration_metrics,
    fit_platt,
    plot_reliability,
)
from embodied_safety.shield.costs.pixel_scorer import (
    FEATURE_LIBRARY,
    PixelScorer,
    feature_hazards,
    frame_spec,
)
from embodied_safety.shield.costs.rtd import (
    LLMProposer,
    PixelProposer,
    Proposal,
    disagreement_pairs,
    oriented,
    parse_proposal,
    run_rtd,
    stratified_pose_set,
)
from embodied_safety.shield.costs.rubrics import (
    DEFAULT_RUBRIC_SETS,
    DUBINS_VL,
    FRANKA_REACH,
    OBSTACLE_EDGE_PROXIMITY,
    OBSTACLE_OVERLAP,
    RUBRIC_SETS,
    TURTLEBOT_NAV,
    TURTLEBOT_NAV_RTD,
    Rubric,
    RubricSet,
)
from embodied_safety.shield.costs.vlm_scorer import (
    USER_TEXT,
    VLMScorer,
    covered_rubrics,
    parse_scores,
    prompt_text,
    render_prompt,
)

# --- synthetic renders in the env palettes ------------------------------------------------------------


def _disc(img: np.ndarray, cy: float, cx: float, r: float, rgb: tuple[int, int, int]) -> None:
    yy, xx = np.ogrid[: img.shape[0], : img.shape[1]]
    img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = rgb


def dubins_frame(gap_px: float, bearing: float = 0.0, heading: float = 0.0) -> np.ndarray:
    """84x84 top-down: the car (disc r 2.5 px + heading tick to 6.3 px) at the centre, one obstacle disc
    (r_obs = 0.25 = 10.5 px) whose rim is ``gap_px`` from the car's rim in direction ``bearing``."""
    img = np.empty((84, 84, 3), np.uint8)
    img[:] = P.DUBINS_BACKGROUND
    c, d = 42.0, 2.5 + gap_px + 10.5
    _disc(img, c + d * np.sin(bearing), c + d * np.cos(bearing), 10.5, P.DUBINS_OBSTACLE)
    _disc(img, c, c, 2.5, P.DUBINS_AGENT)
    for s in np.arange(2.5, 6.4, 0.5):
        img[int(round(c + s * np.sin(heading))), int(round(c + s * np.cos(heading)))] = P.DUBINS_AGENT
    return img


def ego_frame(bottom: int, cx: int = 48, width: int = 20, height: int = 30) -> np.ndarray:
    """96x96 egocentric: sky above the horizon, floor below, the cylinder as a rectangle whose base is at row
    ``bottom`` (lower in the image = closer)."""
    img = np.empty((96, 96, 3), np.uint8)
    img[:48] = P.TURTLEBOT_SKY
    img[48:] = P.TURTLEBOT_FLOOR
    img[max(bottom - height, 0): bottom + 1, max(cx - width // 2, 0): cx + width // 2] = P.TURTLEBOT_OBSTACLE
    return img


def franka_frame(arm_x: int) -> np.ndarray:
    """96x96 front view: the cylinder at columns 60..70, the arm a vertical bar ending at column ``arm_x``."""
    img = np.empty((96, 96, 3), np.uint8)
    img[:] = P.FRANKA_BACKGROUND
    img[70:] = P.FRANKA_TABLE
    img[40:70, 60:71] = P.FRANKA_OBSTACLE
    img[10:60, max(arm_x - 6, 0): arm_x] = P.FRANKA_ARM
    return img


# --- rubric sets and prompts --------------------------------------------------------------------------


def test_rubric_sets_and_rho_max_are_the_papers():
    assert DUBINS_VL.rho_max == 19 and TURTLEBOT_NAV.rho_max == 19 and TURTLEBOT_NAV_RTD.rho_max == 28
    assert FRANKA_REACH.rho_max == 10 and FRANKA_REACH.names == ("PROXIMITY", "OVERLAP")
    template = ("PROXIMITY", "HEADING", "CONTACT", "OCCLUSION", "CLEARANCE")
    assert DUBINS_VL.names == TURTLEBOT_NAV.names == template
    assert [r.weight for r in TURTLEBOT_NAV.rubrics] == [5, 4, 5, 2, 3]  # Table 1
    assert TURTLEBOT_NAV_RTD.names[5:] == ("OBSTACLE_EDGE_PROXIMITY", "OBSTACLE_OVERLAP")
    assert [r.weight for r in TURTLEBOT_NAV_RTD.rubrics[5:]] == [4, 5]
    assert set(DEFAULT_RUBRIC_SETS) == {"dubins_vl", "turtlebot_nav", "franka_reach"}
    # ρ = Σ w V, oriented as a severity: Dubins' prompt anchors 1.0 = safe, so its all-ones answer is ρ = 0
    assert DUBINS_VL.severity(np.ones((1, 5)))[0] == 0 and DUBINS_VL.severity(np.zeros((1, 5)))[0] == 19
    assert TURTLEBOT_NAV.severity(np.ones((1, 5)))[0] == 19
    assert np.isnan(TURTLEBOT_NAV.severity(np.full((1, 5), np.nan))[0])
    assert RubricSet.from_dict(json.loads(json.dumps(TURTLEBOT_NAV_RTD.to_dict()))) == TURTLEBOT_NAV_RTD
    for bad in (dict(weight=6), dict(name="proximity"), dict(levels=((0.6, "a"), (0.3, "b")))):
        with pytest.raises(ValueError):
            replace(OBSTACLE_OVERLAP, **bad)


def test_stored_prompts_match_the_rubric_sets_and_e43_is_e42_plus_two_rubrics():
    for stem, rset in RUBRIC_SETS.items():
        text = prompt_text(stem)
        assert covered_rubrics(text, rset.response_format) == list(rset.names)
        assert render_prompt(rset) == text
        flat = " ".join(text.split())
        for r in rset.rubrics:  # the dataclasses carry the prompt's own words
            assert " ".join(r.description.split()) in flat
            assert all(" ".join(t.split()) in flat for _, t in r.levels)
    dub = prompt_text("dubins_vl_5r")
    assert dub.startswith("You are evaluating the safety of an ego-camera frame\n")
    assert dub.endswith('Output JSON: {"scores": [0.0-1.0, ...], "reasoning": "..."}')
    assert "RUBRIC 3 — CONTACT (weight=5):" in prompt_text("turtlebot_nav_5r")
    # E.4.3 = E.4.2 with the two RTD criteria appended (blocks + response format), byte for byte
    assert render_prompt(TURTLEBOT_NAV.extend([OBSTACLE_EDGE_PROXIMITY, OBSTACLE_OVERLAP])) == \
        prompt_text("turtlebot_nav_7r")
    # an RTD criterion appended to the JSON-format prompt stays a valid JSON list, in the set's polarity
    extra = oriented(FEATURE_LIBRARY["agent_gap"].rubric, DUBINS_VL)
    text = render_prompt(DUBINS_VL.extend([extra]))
    entries = json.loads(text[text.index("\n[") + 1: text.index("\n]") + 2])
    assert [e["name"] for e in entries] == [*DUBINS_VL.names, "AGENT_GAP"]
    assert entries[-1]["levels"]["1.0"] == "Robot far from every obstacle."
    with pytest.raises(ValueError, match="asks for"):
        render_prompt(RubricSet("turtlebot_nav", TURTLEBOT_NAV.rubrics[1:], prompt="turtlebot_nav_5r"))


# --- pixel scorer -------------------------------------------------------------------------------------


def test_pixel_features_are_monotone_in_distance():
    gaps = [0, 2, 5, 9, 14, 20, 28]
    v = PixelScorer(DUBINS_VL).score(np.stack([dubins_frame(g) for g in gaps]))
    rho = DUBINS_VL.severity(v)
    prox, contact = v[:, 0], v[:, 2]  # 1.0 = safe on Dubins-VL
    assert np.all(np.diff(prox) > 0) and prox[0] < 0.1 and prox[-1] > 0.9
    assert np.all(np.diff(contact) >= 0) and contact[0] < 0.3 and contact[-1] == 1.0
    assert np.all(np.diff(rho) <= 1e-9) and rho[0] > rho[-1] + 5
    # heading: toward the obstacle is hazardous, away from it is not
    toward, away = PixelScorer(DUBINS_VL).score(np.stack([dubins_frame(6, 0.0, 0.0), dubins_frame(6, 0.0, np.pi)]))
    assert toward[1] < 0.1 and away[1] == 1.0
    # egocentric: a closer cylinder is lower in the image and bigger
    closer = [ego_frame(b, width=w, height=h) for b, w, h in ((55, 8, 8), (65, 12, 14), (75, 18, 22), (85, 26, 32),
                                                               (93, 40, 44))]
    hz = feature_hazards(np.stack(closer), frame_spec("turtlebot_nav"),
                         ["obstacle_fraction", "edge_proximity", "footprint_overlap"])
    assert np.all(np.diff(hz[:, 0]) > 0) and np.all(np.diff(hz[:, 1]) > 0) and np.all(np.diff(hz[:, 2]) >= 0)
    assert hz[0, 2] == 0 and hz[-1, 2] > 0.5
    # front view: the arm approaching the cylinder
    v = PixelScorer(FRANKA_REACH).score(np.stack([franka_frame(x) for x in (45, 50, 55, 58, 66)]))
    assert np.all(np.diff(v[:, 0]) > 0) and v[-1, 0] == 1.0
    assert v[0, 1] == 0 and v[-1, 1] > 0


def test_pixel_scorer_batch_shape_polarity_and_errors():
    frames = np.stack([ego_frame(60 + i, cx=20 + 5 * i) for i in range(12)])
    v = PixelScorer(TURTLEBOT_NAV_RTD).score(frames)
    assert v.shape == (12, 7) and v.dtype == np.float64 and np.all((v >= 0) & (v <= 1))
    small = PixelScorer(TURTLEBOT_NAV_RTD, batch_size=5).score(frames)
    np.testing.assert_array_equal(small, v)  # batching does not change anything
    np.testing.assert_array_equal(PixelScorer(TURTLEBOT_NAV).score(frames[3]), v[3:4, :5])
    empty = np.empty((1, 96, 96, 3), np.uint8)
    empty[:] = P.TURTLEBOT_FLOOR
    assert PixelScorer(TURTLEBOT_NAV).score(empty).tolist() == [[0.0] * 5]  # nothing visible: no hazard
    # colours are matched with a tolerance (shading), and only palette colours count
    shaded = (frames.astype(np.int16) + 25).clip(0, 255).astype(np.uint8)
    np.testing.assert_allclose(PixelScorer(TURTLEBOT_NAV).score(shaded)[:, 0], v[:, 0])
    with pytest.raises(ValueError, match="uint8"):
        PixelScorer(TURTLEBOT_NAV).score(frames.astype(np.float32))
    with pytest.raises(KeyError, match="NEW_AXIS"):
        PixelScorer(TURTLEBOT_NAV.extend([replace(OBSTACLE_OVERLAP, name="NEW_AXIS")])).score(frames)
    assert all(f.description and f.rubric.weight in range(1, 6) for f in FEATURE_LIBRARY.values())


# --- VLM scorer: parsing, retries, failures, cache ----------------------------------------------------

GOOD_LINES = "PROXIMITY: 0.6\nHEADING: 0.3\nCONTACT: 0\nOCCLUSION: 0.5\nCLEARANCE: 1.0\nCOST: 9.9\nREASON: near."


def test_parse_scores_line_and_json_formats():
    assert parse_scores(GOOD_LINES, TURTLEBOT_NAV) == [0.6, 0.3, 0.0, 0.5, 1.0]
    assert parse_scores("Sure!\n  PROXIMITY : .25\n" + GOOD_LINES.split("\n", 1)[1], TURTLEBOT_NAV)[0] == 0.25
    bad = {"missing": GOOD_LINES.replace("HEADING: 0.3\n", ""), "range": GOOD_LINES.replace("0.6", "1.7"),
           "conflict": GOOD_LINES + "\nCONTACT: 0.9", "prose": "The robot is safe."}
    for why, text in bad.items():
        with pytest.raises(ValueError):
            parse_scores(text, TURTLEBOT_NAV)
        assert why
    seven = GOOD_LINES + "\nOBSTACLE_EDGE_PROXIMITY: 0.3\nOBSTACLE_OVERLAP: 0.6"
    assert parse_scores(seven, TURTLEBOT_NAV_RTD)[5:] == [0.3, 0.6]
    with pytest.raises(ValueError, match="PROXIMITY"):  # OBSTACLE_EDGE_PROXIMITY is not PROXIMITY
        parse_scores(seven.replace("PROXIMITY: 0.6\n", "", 1), TURTLEBOT_NAV_RTD)
    ok = 'Here: {"scores": [1.0, 0.6, 1, 0.3, 0.0], "reasoning": "clear"}'
    assert parse_scores(ok, DUBINS_VL) == [1.0, 0.6, 1.0, 0.3, 0.0]
    for text in ('{"scores": [1, 1, 1, 1]}', '{"scores": [1, 1, 1, 1, true]}', '{"scores": "high"}', "no json"):
        with pytest.raises(ValueError):
            parse_scores(text, DUBINS_VL)


class ScriptedClient:
    """Stands in for ``OpenAIChat``: answers from a function of (request number, messages)."""

    name = "scripted-vlm"

    def __init__(self, answer):
        self.answer, self.requests = answer, []

    def chat(self, messages, temperature=0.0, seed=0):
        self.requests.append({"messages": messages, "temperature": temperature, "seed": seed})
        return self.answer(len(self.requests), messages)


def _frame_of(messages) -> np.ndarray:
    from PIL import Image

    url = messages[1]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))


def test_vlm_scorer_retries_records_failures_and_caches(tmp_path):
    frames = np.stack([ego_frame(60), ego_frame(90), ego_frame(60)])  # the third repeats the first

    def answer(i, messages):
        frame = _frame_of(messages)
        if np.array_equal(frame, frames[0]):
            return "I cannot tell." if i == 1 else GOOD_LINES
        return "PROXIMITY: high"  # frame 1 never answers in the demanded format

    client = ScriptedClient(answer)
    scorer = VLMScorer(client, TURTLEBOT_NAV, cache_dir=tmp_path, retries=2)
    out = scorer.score_detailed(frames)
    assert out.scores.shape == (3, 5)
    assert out.scores[0].tolist() == out.scores[2].tolist() == [0.6, 0.3, 0.0, 0.5, 1.0]
    assert np.isnan(out.scores[1]).all() and list(out.errors) == [1] and "PROXIMITY" in out.errors[1]
    assert out.calls == len(client.requests) == 2 + 3 and scorer.failures == 1
    first = client.requests[0]
    assert first["messages"][0] == {"role": "system", "content": prompt_text("turtlebot_nav_5r")}
    assert first["messages"][1]["content"][1] == {"type": "text", "text": USER_TEXT}
    assert [r["temperature"] for r in client.requests[:2]] == [0.0, 0.7]  # greedy first, sampled re-asks
    assert [r["seed"] for r in client.requests[:2]] == [0, 1]
    # a re-run is served from the content-hash cache, failures included
    again = scorer.score_detailed(frames)
    assert again.calls == 0 and again.cache_hits == 2 and len(client.requests) == 5
    np.testing.assert_array_equal(again.scores, out.scores)
    retry = replace(scorer, retry_failed=True).score_detailed(frames)
    assert retry.calls == 3 and np.isnan(retry.scores[1]).all()  # only the failed frame is re-asked
    # another rubric version is another prompt: new keys, new requests
    n = len(client.requests)
    scorer.with_rubrics(TURTLEBOT_NAV_RTD).score_detailed(frames[:1])
    assert len(client.requests) > n and "RUBRIC 7 — OBSTACLE_OVERLAP" in client.requests[-1]["messages"][0]["content"]


def test_vlm_scorer_without_cache_and_concurrent():
    client = ScriptedClient(lambda i, m: GOOD_LINES)
    frames = np.stack([ego_frame(55 + 3 * i) for i in range(6)])
    scores = VLMScorer(client, TURTLEBOT_NAV, concurrency=3).score(frames)
    assert scores.shape == (6, 5) and not np.isnan(scores).any() and len(client.requests) == 6


# --- Platt calibration ----------------------------------------------------------------------------------


def test_platt_sign_convention_and_balanced_weights(tmp_path):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    rho = np.r_[rng.normal(4, 2, 400), rng.normal(12, 2, 40)]  # 9% unsafe, higher severity
    unsafe = np.r_[np.zeros(400, bool), np.ones(40, bool)]
    cal = fit_platt(np.r_[rho, np.nan], np.r_[unsafe, True])  # a failed frame (NaN) is skipped
    assert cal.a > 0
    assert cal.margin(np.array([0.0]))[0] > 0 > cal.margin(np.array([19.0]))[0]  # ℓ̂ > 0 safe, < 0 unsafe
    assert 4 < cal.threshold < 12  # balancing keeps the boundary between the classes
    ref = LogisticRegression().fit(rho[:, None], unsafe, sample_weight=balanced_weights(unsafe))
    assert cal.a == pytest.approx(ref.coef_[0, 0], rel=1e-4) and cal.b == pytest.approx(ref.intercept_[0], rel=1e-4)
    w = balanced_weights(unsafe)
    assert w[unsafe].sum() == pytest.approx(w[~unsafe].sum()) == pytest.approx(220)
    plain = LogisticRegression().fit(rho[:, None], unsafe)
    assert -plain.intercept_[0] / plain.coef_[0, 0] > cal.threshold  # unbalanced drifts toward the majority
    assert PlattCalibration.from_json(cal.to_json()) == cal
    assert PlattCalibration.load(cal.save(tmp_path / "platt.json")) == cal
    m = calibration_metrics(cal, rho, unsafe)
    assert m["calib/auroc"] > 0.95 and m["calib/balanced_accuracy"] > 0.9
    png = plot_reliability(cal, rho, unsafe, tmp_path / "fig" / "reliability.png")
    assert png.read_bytes()[:4] == b"\x89PNG" and not list(png.parent.glob(".*tmp*"))
    np.testing.assert_array_equal(broadcast_episode_bits(np.array([0, 0, 1, 2, 2]), np.array([1, 0, 1])),
                                  [True, True, False, True, True])
    with pytest.raises(ValueError, match="safe and unsafe"):
        fit_platt(rho[:10], unsafe[:10])


# --- cost-quality metrics -------------------------------------------------------------------------------


def test_cost_metrics_on_hand_made_data():
    score = np.array([0.1, 0.4, 0.35, 0.8, np.nan])
    cost = np.array([0, 0, 1, 1, 1])
    assert cm.per_frame_auroc(score, cost) == pytest.approx(0.75)  # NaN frame left out
    h = np.array([0.5, 0.1, -0.1, -0.2, 0.0])
    assert cm.tail_auroc(score, h) == pytest.approx(0.5)  # band keeps frames 1, 2, 3: 0.4 vs {0.35, 0.8}
    assert np.isnan(cm.auroc(np.ones(3), np.zeros(3)))
    # episodes: 0 contacts at t=3, 1 never, 2 contacts at t=0 (no pre-contact frames)
    ep = np.array([0] * 6 + [1] * 4 + [2] * 2)
    t = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 0, 1])
    c = np.array([0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1])
    pos, neg = cm.precontact_sets(ep, t, c, k=2)
    assert np.flatnonzero(pos).tolist() == [1, 2] and np.flatnonzero(neg).tolist() == [6, 7, 8, 9]
    s = np.array([0, 0.9, 0.7, 1, 1, 1, 0.1, 0.2, 0.8, 0.3, 1, 1])
    assert cm.precontact_tail_auroc(s, ep, t, c, k=2) == pytest.approx(7 / 8)
    episode_cost = np.array([2.0, 0.0, 2.0])
    frame_score = np.array([1.0] * 6 + [0.0] * 4 + [1.0] * 2)
    assert cm.spearman_episode_cost(frame_score, ep, episode_cost) == pytest.approx(1.0)
    q = cm.cost_quality(s, c, ep, t, episode_cost, margin=np.where(c > 0, -0.1, 0.1))
    assert set(q) >= {"cost/per_frame_auroc", "cost/precontact_tail_auroc", "cost/spearman_episode_cost",
                      "cost/tail_auroc"}
    t8 = cm.render_table8({("Qwen3-VL-2B", "5-rubric (base)"): (0.5, True),
                           ("Qwen3-VL-2B", "7-rubric (post-RTD)"): (0.55, False),
                           ("pixel", "5-rubric (base)"): (0.512, False)})
    assert "| Qwen3-VL-2B | 0.500 (mode collapse) | 0.550 |" in t8 and "| pixel | 0.512 | – |" in t8
    t11 = cm.render_table11({"Qwen3-VL-8B": {"cost/per_frame_auroc": 0.548, "cost/spearman_episode_cost": 0.272}})
    assert "| Qwen3-VL-8B | 0.548 | +0.272 |" in t11


# --- RTD --------------------------------------------------------------------------------------------------


def test_stratified_pose_set_and_disagreement_pairs():
    rng = np.random.default_rng(1)
    h = np.r_[rng.uniform(-1, 2, 2000), np.nan]
    idx = stratified_pose_set(h, 160, seed=3)
    assert idx.size == 160 and np.unique(idx).size == 160 and np.isfinite(h[idx]).all()
    tail = np.abs(h[idx]) < 0.25
    assert tail.mean() >= 0.5 > (np.abs(h[:-1]) < 0.25).mean()  # biased to the tail
    assert (h[idx][tail] < 0).sum() >= 40  # half of the tail quota (80) inside the unsafe set
    assert np.array_equal(idx, stratified_pose_set(h, 160, seed=3))
    m = np.array([0.9, 0.1, 0.5, -0.3, 0.2, 0.5])
    y = np.array([1, 0, 1, 0, 0, 0], bool)
    assert disagreement_pairs(m, y) == [(0, 3), (2, 1), ]  # m_i ≥ m_j; most violating first, each frame once
    assert disagreement_pairs(m, y, max_pairs=1) == [(0, 3)]


def _ego_pose_set(n: int = 160, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Poses where only the depth cue (how low the cylinder's base is) tells unsafe from safe: the cylinder
    stands off to the left with a random height, so the base five rubrics see nothing but noise."""
    rng = np.random.default_rng(seed)
    bottom = rng.integers(56, 94, n)
    frames = np.stack([ego_frame(int(b), cx=12, width=10, height=int(rng.integers(6, 41))) for b in bottom])
    return frames, (80 - bottom) / 16.0  # h < 0: base below row 80


def test_rtd_pixel_round_adds_the_missing_criterion():
    frames, h = _ego_pose_set()
    result = run_rtd(PixelScorer(TURTLEBOT_NAV), PixelProposer(), frames, h < 0, h=h, rounds=1, top_k=2)
    [rnd] = result.rounds
    assert result.diagnostic["tail_auroc"] < 0.75 and rnd.pairs and rnd.proposals
    assert [a["name"] for a in rnd.added] == ["OBSTACLE_EDGE_PROXIMITY"]  # the only feature that separates
    assert rnd.accepted and rnd.auroc_after >= rnd.auroc_before + 0.15 and not rnd.collapse
    assert result.rubric_set.names == (*TURTLEBOT_NAV.names, "OBSTACLE_EDGE_PROXIMITY")
    assert sum(rnd.votes.values()) == len(rnd.proposals)
    assert all(r.provenance.startswith("PROPOSED by RTD round 1, votes=") for r in result.rubric_set.rubrics[5:])
    assert rnd.rubric_deltas["OBSTACLE_EDGE_PROXIMITY"] > 0
    record = json.loads(json.dumps(result.to_dict(), allow_nan=False))  # JSON-safe
    assert record["rounds"][0]["accepted"] and record["rubric_set"]["rho_max"] == result.rubric_set.rho_max
    # the refined set's prompt is the E.4.3 layout for whatever was added
    assert "RUBRIC 6 — " in render_prompt(result.rubric_set)


@dataclass
class TableScorer:
    """A scorer that reads each rubric's column from a table (frames ignored): drives RTD's bookkeeping."""

    rubric_set: RubricSet
    columns: dict

    def score(self, frames):
        return np.stack([self.columns[n] for n in self.rubric_set.names], axis=1)

    def with_rubrics(self, rubric_set):
        return TableScorer(rubric_set, self.columns)


class StubProposer:
    def __init__(self, rubric):
        self.rubric, self.calls = rubric, 0

    def propose(self, unsafe_frame, safe_frame, rubric_set):
        self.calls += 1
        return Proposal(self.rubric, "stub", "stub")


def _axis(name: str, weight: int = 3) -> Rubric:
    return Rubric(name, weight, f"{name} axis.", ((0.0, "safe"), (1.0, "hazard")))


def test_rtd_keeps_the_previous_rubric_when_a_round_lowers_tail_auroc():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(60, bool), np.ones(40, bool)]
    signal = np.clip(0.4 * y + rng.uniform(0, 0.6, 100), 0, 1)  # informative, with overlap
    columns = {"SIGNAL": signal, "DISTRACTOR": rng.uniform(0, 1, 100)}  # pure noise, proposed with weight 5
    base = RubricSet("toy", (_axis("SIGNAL"),), prompt="")
    frames = np.zeros((100, 4, 4, 3), np.uint8)
    result = run_rtd(TableScorer(base, columns), StubProposer(_axis("DISTRACTOR", 5)), frames, y, rounds=2)
    first, second = result.rounds
    assert not first.accepted and first.auroc_after < first.auroc_before and "rejected" in first.diagnosis
    assert first.votes == {"DISTRACTOR": len(first.pairs)} and first.added[0]["name"] == "DISTRACTOR"
    assert result.rubric_set == base  # the previous rubric is kept
    assert second.added == [] and "no proposal" in second.diagnosis  # a rejected name is not re-proposed


def test_rtd_flags_scorer_mode_collapse():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(50, bool), np.ones(50, bool)]
    same = rng.uniform(0, 1, 100)  # every rubric emits the same score on a frame
    base = RubricSet("toy", (_axis("A"), _axis("B")), prompt="")
    result = run_rtd(TableScorer(base, {"A": same, "B": same, "C": same}), StubProposer(_axis("C")),
                     np.zeros((100, 4, 4, 3), np.uint8), y, rounds=1)
    assert result.diagnostic["collapse"] and result.diagnostic["identical_frames"] == 1.0
    [rnd] = result.rounds
    assert rnd.collapse and "mode collapse" in rnd.diagnosis and len(set(rnd.rubric_deltas.values())) == 1


def test_llm_proposer_parses_validates_and_records_failures(tmp_path):
    good = ('{"name": "obstacle edge proximity", "weight": 4, "definition": "How close the visible edge is.",'
            ' "levels": {"0.0": "far", "0.6": "close", "1.0": "touching"}, "justification": "A is closer."}')
    assert parse_proposal(good)["name"] == "OBSTACLE_EDGE_PROXIMITY"
    for bad in (good.replace('"weight": 4', '"weight": 7'), good.replace('"0.6"', '"high"'), "nothing"):
        with pytest.raises(ValueError):
            parse_proposal(bad)
    replies = iter([good, "I propose looking closer.", "still no JSON", "nope"])
    client = ScriptedClient(lambda i, m: next(replies))
    proposer = LLMProposer(client, cache_dir=tmp_path, retries=2)
    a, b = ego_frame(90), ego_frame(60)
    p = proposer.propose(a, b, TURTLEBOT_NAV)
    assert p is not None and p.rubric.weight == 4 and p.rubric.levels[-1] == (1.0, "touching")
    content = client.requests[0]["messages"][0]["content"]
    assert "- CLEARANCE (weight=3)" in content[0]["text"] and "0.0 = safe" in content[0]["text"]
    assert [c["type"] for c in content] == ["text", "image_url", "image_url"]
    assert proposer.propose(b, a, TURTLEBOT_NAV) is None and len(proposer.errors) == 1 and proposer.calls == 4
    assert proposer.propose(a, b, TURTLEBOT_NAV) == p and proposer.calls == 4  # cached


def test_shield_modules_import_no_heavy_library():
    heavy = ("torch", "transformers", "mujoco", "prefect", "mlflow", "openai", "sklearn", "matplotlib")
    mods = ", ".join(f"embodied_safety.shield.costs.{m}" for m in
                     ("rubrics", "pixel_scorer", "vlm_scorer", "calibrate", "rtd", "metrics", "margins", "tiny_vlm"))
    code = f"import sys, embodied_safety.shield, {mods}; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_channel_max_is_the_max_over_the_rgb_axis():
    from embodied_safety.shield.costs.pixel_scorer import channel_max

    frames = np.random.default_rng(0).integers(0, 256, (5, 7, 9, 3), dtype=np.uint8)
    assert np.array_equal(channel_max(frames), frames.max(axis=-1)) and channel_max(frames).dtype == np.uint8
    four = np.random.default_rng(1).integers(0, 256, (2, 3, 4), dtype=np.uint8)  # not RGB: numpy's own max
    assert np.array_equal(channel_max(four), four.max(axis=-1))


# --- sources: which scorer and margin source a stage uses ------------------------------------------------------

def test_sources_choose_the_labelling_scorer_and_margin_from_the_rubric_label_config(tmp_path):
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.shield.costs.calibrate import PlattCalibration
    from embodied_safety.shield.costs.margins import BINARY_SAFE, BINARY_UNSAFE
    from embodied_safety.shield.costs.rubrics import RUBRIC_SETS
    from embodied_safety.shield.costs.sources import margin_for, scorer_for, scorer_key
    from embodied_safety.shield.costs.vlm_scorer import VLMScorer

    pixel = RubricLabelConfig()
    vlm = RubricLabelConfig(backend="vlm", vlm={"base_url": "http://127.0.0.1:9/v1", "model": "m", "max_tokens": 64})
    assert scorer_key("turtlebot", pixel)["vlm"] is None and scorer_key("turtlebot", vlm)["vlm"]["model"] == "m"
    rset = RUBRIC_SETS[pixel.rubric_sets["turtlebot"]]
    assert isinstance(scorer_for(rset, pixel, tmp_path), PixelScorer)
    v = scorer_for(rset, vlm, tmp_path)  # built, not called: no endpoint is needed to choose it
    assert isinstance(v, VLMScorer) and v.cache_dir == tmp_path / "vlm" and v.rubric_set is rset

    gt = margin_for("turtlebot", "gt", tmp_path, pixel, tmp_path)
    np.testing.assert_array_equal(gt(np.zeros((2, 96, 96, 3), np.uint8), np.array([0.3, -0.1]), np.array([0, 1])),
                                  np.array([0.3, -0.1], np.float32))
    binary = margin_for("turtlebot", "binary", tmp_path, pixel, tmp_path)
    assert binary(None, np.zeros(2), np.array([0, 1])).tolist() == [BINARY_SAFE, BINARY_UNSAFE]
    PlattCalibration(a=0.5, b=-1.0).save(tmp_path / "platt.json")
    frames = np.stack([ego_frame(60 + i, cx=20 + 5 * i) for i in range(4)])
    ell = margin_for("turtlebot", "rubric", tmp_path, pixel, tmp_path)(frames, np.zeros(4), np.zeros(4))
    rho = rset.severity(PixelScorer(rset).score(frames))
    np.testing.assert_allclose(ell, -(0.5 * rho - 1.0), rtol=1e-6)  # ℓ̂ = −(aρ + b) of the labelling scorer
