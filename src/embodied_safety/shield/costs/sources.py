"""The rubric scorer and margin source a ShieldVLA stage uses, chosen from the ``rubric_label`` config.

One place decides how frames are scored (the pixel scorer by default, or a VLM behind an OpenAI-compatible
endpoint) so that every consumer scores them the way the ``calibrate`` stage's Platt scalars were fitted:
``rubric_label`` and ``rtd`` (per-frame scores), ``shield_ppo`` and ``benchmarks/shield_study_gpu.py`` (the
rubric margin ℓ̂ the critic trains on).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...config.rubric_label import RubricLabelConfig
from .margins import MarginSource, margin_source


def scorer_key(env: str, cfg: RubricLabelConfig) -> dict[str, Any]:
    """What decides an env's rubric scores, for content keys."""
    return {"backend": cfg.backend, "rubric": cfg.rubric_sets[env], "vlm": cfg.vlm if cfg.backend == "vlm" else None}


def scorer_for(rset: Any, cfg: RubricLabelConfig, cache_dir: Path) -> Any:
    """The pixel scorer (``backend: pixel``) or the VLM scorer over an OpenAI-compatible endpoint (``backend:
    vlm``; its per-frame answers cached under ``cache_dir/vlm``) for one rubric set."""
    from .pixel_scorer import PixelScorer

    if cfg.backend == "pixel":
        return PixelScorer(rset)
    from ...llm.chat import OpenAIChat
    from .vlm_scorer import VLMScorer

    vlm = dict(cfg.vlm)
    client = OpenAIChat(vlm.pop("base_url", "http://127.0.0.1:8000/v1"), vlm.pop("model", "default"), **vlm)
    return VLMScorer(client, rset, cache_dir=cache_dir / "vlm", retries=cfg.retries)


def margin_for(env: str, kind: str, calibration_dir: str | Path, cfg: RubricLabelConfig,
               cache_dir: Path) -> MarginSource:
    """The margin source of a run: ``gt`` / ``binary``, or ``rubric`` with the env's rubric set of ``cfg``, its
    scorer (:func:`scorer_for`) and the Platt scalars in ``calibration_dir``."""
    from .rubrics import RUBRIC_SETS

    if kind != "rubric":
        return margin_source(kind)  # type: ignore[arg-type]
    rset = RUBRIC_SETS[cfg.rubric_sets[env]]
    return margin_source("rubric", env, str(calibration_dir), scorer=scorer_for(rset, cfg, cache_dir),
                         rubric_set=rset)
