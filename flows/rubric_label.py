"""Stage ``rubric_label``: score every rollout frame against the env's rubric set (§4.2 step ii).

Frames are cut into batches of ``batch_frames`` (``tasks/shield.py::label_shard``, stored by content key; the
VLM backend also caches each frame's answer), scored by the ``pixel`` backend (default: features of the
rendered frame only) or the ``vlm`` backend (the verbatim E.4 prompts over an OpenAI-compatible endpoint with
the frame attached), and concatenated: ``data/shield/labels/<env>/scores.npz`` (``scores`` [N, K] in the
prompt's own direction, NaN rows for frames never validly answered; ``rho`` [N] the weighted severity) and
``rubric.json``. Metrics: ``data/shield/labels_metrics.json``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from prefect import flow

from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.io import replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.shield.policy.demos import save_npz
from flows._shield import LABELS, ROLLOUTS
from flows._stage import Stage
from tasks.runners import map_shards, with_runner
from tasks.shield import label_shard

METRICS = Path("data/shield/labels_metrics.json")


@flow(name="rubric_label", log_prints=True)
def rubric_label(cfg: RubricLabelConfig = RubricLabelConfig(), rollouts: Path = ROLLOUTS, out: Path = LABELS,
                 metrics_path: Path = METRICS) -> dict[str, float]:
    from embodied_safety.shield.costs.metrics import per_frame_auroc
    from embodied_safety.shield.costs.rubrics import RUBRIC_SETS
    from embodied_safety.shield.policy.rollouts import RolloutSet

    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    for env in cfg.envs:
        path = rollouts / env / "rollouts.npz"
        data = RolloutSet.load(path)
        n = data.n_frames
        calls = [(env, path, a, min(a + cfg.batch_frames, n), cfg) for a in range(0, n, cfg.batch_frames)]
        scores = np.concatenate([np.load(p)["scores"] for p in map_shards(label_shard, calls, cfg)])
        rset = RUBRIC_SETS[cfg.rubric_sets[env]]
        rho = rset.severity(scores)
        save_npz(tmp / env / "scores.npz", {"scores": scores.astype(np.float32), "rho": rho.astype(np.float32)},
                 compress=True)
        write_json(tmp / env / "rubric.json", rset.to_dict())
        failed = int(np.isnan(scores).any(axis=1).sum())
        m = {"frames": float(n), "failed_frames": float(failed), "rho_mean": float(np.nanmean(rho)),
             "rho_auroc_vs_cost": per_frame_auroc(rho, np.asarray(data.cost))}
        metrics.update({f"labels/{env}/{k}": v for k, v in m.items()})
        print(f"{env}: {cfg.backend} scores of {n} frames with {rset.prompt} ({failed} failed); "
              f"raw ρ AUROC vs cost {m['rho_auroc_vs_cost']:.3f}")
    write_manifest(tmp, cfg, inputs=[rollouts / env / "rollouts.npz" for env in cfg.envs])
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    return metrics


STAGE = Stage("rubric_label", rubric_label, config=RubricLabelConfig, wrap=with_runner,
              inputs={"rollouts": str(ROLLOUTS)}, outs=(str(LABELS),), metrics=str(METRICS))
main = STAGE.main

if __name__ == "__main__":
    main()
