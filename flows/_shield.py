"""What the ShieldVLA stage flows share: where each stage writes, episode-seed shards, the stage CLI."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from embodied_safety.config import load_params
from flows._link import run_stage

DEMOS = Path("data/shield/demos")
BC = Path("models/shield/bc")
ROLLOUTS = Path("data/shield/rollouts")
LABELS = Path("data/shield/labels")
CALIBRATION = Path("data/shield/calibration")
RTD = Path("data/shield/rtd")


def seed_shards(base: int, n: int, size: int) -> list[list[int]]:
    """Episode seeds ``episode_seed(base, 0..n-1)`` cut into shards of ``size`` (consecutive, so a vectorised
    env replays exactly the same episodes)."""
    from embodied_safety.shield.demos import episode_seeds

    seeds = episode_seeds(base, range(n))
    return [seeds[i:i + size] for i in range(0, n, max(size, 1))]


def stage_main(flow_obj: Any, section: str, cls: type, doc: str | None,
               wrap: Callable[[Any, Any], Any] = lambda f, cfg: f,
               other_sections: dict[str, tuple[str, type]] | None = None) -> Callable[[list[str] | None], None]:
    """The ``main()`` of a stage module: ``--params`` only, the section loaded into ``cls``; ``wrap(flow, cfg)``
    may swap the flow (e.g. its task runner); ``other_sections`` maps a flow keyword to another section the stage
    reads (``{"label_cfg": ("rubric_label", RubricLabelConfig)}``)."""

    def main(argv: list[str] | None = None) -> None:
        parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--params", default="params.yaml")
        params = parser.parse_args(argv).params
        extra = {kw: load_params(sec, c, params) for kw, (sec, c) in (other_sections or {}).items()}
        cfg = load_params(section, cls, params)
        run_stage(wrap(flow_obj, cfg), cfg, **extra)

    return main
