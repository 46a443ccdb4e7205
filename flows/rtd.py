"""Stage ``rtd``: Refinement-through-Differentiation of the rubric (Algorithm 2, App. E.2), offline.

Per env: a stratified pose set of the labelled rollout frames, biased to the near-boundary tail; disagreement
pairs; criteria proposed by the ``pixel`` proposer (the frame-feature library) or the ``llm`` proposer (the
meta-prompt over an OpenAI-compatible VLM endpoint); dedup, votes, top-k added; re-scored; tail AUROC before
and after and the mode-collapse diagnosis per round. A round that would lower tail AUROC is recorded and
rejected. Beside it, the clip scorer (issue 21 item 5, ``shield/costs/clip.py``): the per-frame AUROC against
``cost > 0`` over all labelled frames of the stored severity ρ (``frame_auroc``) and of its maximum over the
episode's last ``clip_frames`` frames (``clip_auroc``), a second table in ``table8.md``. Outputs
``data/shield/rtd/<env>/{rtd.json, rubric.json}``, ``data/shield/rtd/table8.md``, ``data/shield/rtd_metrics.json``;
one MLflow run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from prefect import flow

from embodied_safety.config.rtd import RTDConfig
from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.io import atomic_write_text, read_json, replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.shield.costs.sources import scorer_for
from flows._shield import LABELS, ROLLOUTS, RTD
from flows._stage import Stage
from tasks.shield import STORE
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

METRICS = Path("data/shield/rtd_metrics.json")


def proposer_for(cfg: RTDConfig) -> object:
    from embodied_safety.shield.costs.rtd import LLMProposer, PixelProposer

    if cfg.proposer == "pixel":
        return PixelProposer()
    from embodied_safety.llm.chat import OpenAIChat

    spec = dict(cfg.proposer_actor)
    client = OpenAIChat(spec.pop("base_url", "http://127.0.0.1:8000/v1"), spec.pop("model", "default"), **spec)
    return LLMProposer(client, cache_dir=STORE / "rtd_llm")


@flow(name="rtd", log_prints=True)
def rtd(cfg: RTDConfig = RTDConfig(), rollouts: Path = ROLLOUTS, labels: Path = LABELS, out: Path = RTD,
        metrics_path: Path = METRICS, label_cfg: RubricLabelConfig = RubricLabelConfig()) -> dict[str, float]:
    """``label_cfg``: the ``rubric_label`` section, so the pose set is re-scored by the scorer that labelled it."""
    from embodied_safety.shield.costs.clip import clip_scores
    from embodied_safety.shield.costs.metrics import per_frame_auroc, render_table8
    from embodied_safety.shield.costs.rtd import run_rtd, stratified_pose_set
    from embodied_safety.shield.costs.rubrics import RubricSet
    from embodied_safety.shield.policy.rollouts import RolloutSet

    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    cells: dict[tuple[str, str], tuple[float, bool]] = {}
    clip_rows: list[str] = []
    for env in cfg.envs:
        data = RolloutSet.load(rollouts / env / "rollouts.npz", mmap=False)
        rset = RubricSet.from_dict(read_json(labels / env / "rubric.json"))
        h = np.asarray(data.margin, dtype=np.float64)
        idx = stratified_pose_set(h, cfg.pose_set, band=cfg.band, seed=cfg.seed)
        result = run_rtd(scorer_for(rset, label_cfg, STORE), proposer_for(cfg), np.asarray(data.frames)[idx],
                         np.asarray(data.label)[idx], h[idx], rounds=cfg.rounds, top_k=cfg.top_k,
                         max_pairs=cfg.max_pairs, band=cfg.band)
        result.save(tmp / env / "rtd.json")
        write_json(tmp / env / "rubric.json", result.rubric_set.to_dict())
        before = result.diagnostic["tail_auroc"]
        after = result.rounds[-1].auroc_after if result.rounds and result.rounds[-1].accepted else before
        cells[(f"{env}: {label_cfg.backend} scorer", "base rubric")] = (before, bool(result.diagnostic["collapse"]))
        cells[(f"{env}: {label_cfg.backend} scorer", "post-RTD")] = (after, bool(result.rounds and result.rounds[-1].collapse))
        added = [a["name"] for r in result.rounds if r.accepted for a in r.added]
        metrics.update({f"rtd/{env}/tail_auroc_before": float(before), f"rtd/{env}/tail_auroc_after": float(after),
                        f"rtd/{env}/rubrics_added": float(len(added)), f"rtd/{env}/poses": float(len(idx))})
        print(f"{env}: tail AUROC {before:.3f} -> {after:.3f}; added {added or 'nothing'}")
        rho = np.load(labels / env / "scores.npz")["rho"].astype(np.float64)
        frame_auc = per_frame_auroc(rho, data.cost)
        clip_auc = per_frame_auroc(clip_scores(rho, data.frame_episode, data.frame_t, cfg.clip_frames), data.cost)
        metrics.update({f"rtd/{env}/frame_auroc": frame_auc, f"rtd/{env}/clip_auroc": clip_auc})
        clip_rows.append(f"| {env} | {rho.size} | {int((np.asarray(data.cost) > 0).sum())} | {frame_auc:.3f} | "
                         f"{clip_auc:.3f} |")
        print(f"{env}: per-frame AUROC vs cost > 0: single frame {frame_auc:.3f}, clip of {cfg.clip_frames} {clip_auc:.3f}")
    atomic_write_text(tmp / "table8.md", "# Tail AUROC before / after RTD (Table 8 layout)\n\n"
                      + render_table8(cells, columns=("base rubric", "post-RTD"))
                      + f"\n## Per-frame AUROC against cost > 0: one frame vs a clip of the last {cfg.clip_frames} frames\n\n"
                      + "| env | frames | unsafe | single frame | clip |\n|---|---|---|---|---|\n"
                      + "".join(r + "\n" for r in clip_rows))
    write_manifest(tmp, cfg, inputs=[labels / env / f for env in cfg.envs for f in ("rubric.json", "scores.npz")])
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    with mlflow_run(tracking_config(cfg.tracking), "rtd", {"envs": list(cfg.envs), "proposer": cfg.proposer}):
        log_metrics(metrics)
        log_artifacts([out / "table8.md", *(out / env / "rtd.json" for env in cfg.envs)])
    return metrics


STAGE = Stage("rtd", rtd, config=RTDConfig, sections={"label_cfg": ("rubric_label", RubricLabelConfig)},
              params=("rtd", "rubric_label.backend", "rubric_label.vlm", "rubric_label.rubric_sets"),
              inputs={"rollouts": str(ROLLOUTS), "labels": str(LABELS)}, outs=(str(RTD),), metrics=str(METRICS))
main = STAGE.main

if __name__ == "__main__":
    main()
