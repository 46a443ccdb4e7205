"""The champion rule of the model registry (pure; ``flows.promote`` applies it to MLflow).

A candidate replaces the champion only if its dev SSR is strictly higher and its dev SR is at most
``max_sr_drop`` below the champion's. With no champion, any candidate with dev metrics is promoted.
"""

from __future__ import annotations

from collections.abc import Mapping


def decide(candidate: Mapping[str, float], champion: Mapping[str, float] | None,
           max_sr_drop: float) -> tuple[bool, str]:
    """(promote?, reason). Both mappings hold the selected checkpoint's dev ``ssr`` and ``sr``."""
    for key in ("ssr", "sr"):
        if key not in candidate:
            return False, f"candidate has no dev {key.upper()} (tag dev_{key})"
    if champion is None:
        return True, f"no champion yet: promoted (dev SSR {candidate['ssr']:.3f}, SR {candidate['sr']:.3f})"
    if candidate["ssr"] <= champion["ssr"]:
        return False, f"dev SSR {candidate['ssr']:.3f} does not beat the champion's {champion['ssr']:.3f}"
    drop = champion["sr"] - candidate["sr"]
    if drop > max_sr_drop:
        return False, f"dev SR drops {drop:.3f} (> {max_sr_drop:.3f}) from the champion's {champion['sr']:.3f}"
    return True, (f"dev SSR {candidate['ssr']:.3f} > {champion['ssr']:.3f} with SR {candidate['sr']:.3f} "
                  f"(drop {drop:+.3f} <= {max_sr_drop:.3f}): promoted")
