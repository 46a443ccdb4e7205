"""The champion rule of the model registry (pure; ``flows.promote`` applies it to MLflow).

A candidate replaces the champion only if its dev SSR is strictly higher and its dev SR is at most
``max_sr_drop`` below the champion's. With no champion yet, the same test is made against the base
actor (``actor-base``) with the selection margin ``base_max_sr_drop`` (0.05): a candidate must beat
the base, not just exist. With no champion and no base dev metrics nothing is promoted.
"""

from __future__ import annotations

from collections.abc import Mapping


def _beats(candidate: Mapping[str, float], other: Mapping[str, float], max_drop: float, name: str) -> tuple[bool, str]:
    if candidate["ssr"] <= other["ssr"]:
        return False, f"dev SSR {candidate['ssr']:.3f} does not beat the {name}'s {other['ssr']:.3f}"
    drop = other["sr"] - candidate["sr"]
    if drop > max_drop + 1e-9:
        return False, f"dev SR drops {drop:.3f} (> {max_drop:.3f}) from the {name}'s {other['sr']:.3f}"
    return True, (f"dev SSR {candidate['ssr']:.3f} > the {name}'s {other['ssr']:.3f} with SR {candidate['sr']:.3f} "
                  f"(drop {drop:+.3f} <= {max_drop:.3f}): promoted")


def decide(candidate: Mapping[str, float], champion: Mapping[str, float] | None, max_sr_drop: float,
           base: Mapping[str, float] | None = None, base_max_sr_drop: float = 0.05) -> tuple[bool, str]:
    """(promote?, reason). The mappings hold the selected checkpoint's dev ``ssr`` and ``sr``."""
    for key in ("ssr", "sr"):
        if key not in candidate:
            return False, f"candidate has no dev {key.upper()} (tag dev_{key})"
    if champion is not None:
        return _beats(candidate, champion, max_sr_drop, "champion")
    if base is None or not {"ssr", "sr"} <= set(base):
        return False, "no champion yet and no base-actor dev metrics to beat (tags dev_ssr / dev_sr): not promoted"
    ok, reason = _beats(candidate, base, base_max_sr_drop, "base actor")
    return ok, f"no champion yet; {reason}"
