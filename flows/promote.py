"""Move the registry alias ``champion`` to a candidate actor, or roll it back.

    python -m flows.promote                 # offer the newest version of the registered model
    python -m flows.promote --version 7     # offer version 7
    python -m flows.promote --rollback      # champion <- previous
    python -m flows.promote --show          # print the aliases and each version's dev metrics

The rule (``embodied_safety.train.promotion.decide``): the candidate's dev SSR must beat the
champion's and its dev SR may drop by at most ``promote.max_sr_drop``. With no champion yet it must
beat the base actor (the newest version of ``promote.base_model``, ``actor-base``) the same way,
with SR at most ``promote.base_max_sr_drop`` below the base's; the ``safebranch`` stage tags that
version with its dev metrics. On promotion the old champion
gets alias ``previous``. A rollback points ``champion`` back at ``previous`` and tags the demoted
version ``rolled_back``. Dev metrics are the model version's ``dev_ssr`` / ``dev_sr`` tags, written
when the ``safebranch`` stage registers it. ``models:/actor@champion`` then loads anywhere an actor
model is named (``rollouts.actor.model``, ``flows.evaluate_policy --model``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from prefect import flow

from embodied_safety.config.params import load_params
from embodied_safety.config.promote import PromoteConfig
from embodied_safety.train.promotion import decide
from tasks.tracking import alias_version, registry, tracking_config


def _dev(mv: Any) -> dict[str, float]:
    return {k: float(mv.tags[f"dev_{k}"]) for k in ("ssr", "sr") if f"dev_{k}" in mv.tags}


def _newest(client: Any, name: str) -> Any:
    versions = client.search_model_versions(f"name='{name}'")
    return max(versions, key=lambda v: int(v.version)) if versions else None


def tag_base_dev(cfg: PromoteConfig, dev: dict[str, float]) -> str | None:
    """Write the base actor's dev ``ssr`` / ``sr`` as tags of the newest ``base_model`` version."""
    client = registry(tracking_config(cfg.tracking))
    mv = _newest(client, cfg.base_model)
    if mv is None:
        return None
    for k in ("ssr", "sr"):
        client.set_model_version_tag(cfg.base_model, mv.version, f"dev_{k}", f"{dev[k]:.6f}")
    return str(mv.version)


@flow(name="promote", log_prints=True)
def promote(cfg: PromoteConfig = PromoteConfig(), version: str | None = None,
            base_dev: dict[str, float] | None = None) -> dict[str, Any]:
    client = registry(tracking_config(cfg.tracking))
    name = cfg.registered_model
    if version is None:
        versions = client.search_model_versions(f"name='{name}'")
        if not versions:
            raise ValueError(f"registered model {name!r} has no versions to promote")
        version = str(max(int(v.version) for v in versions))
    candidate = client.get_model_version(name, str(version))
    champion = alias_version(client, name, "champion")
    if champion is not None and str(champion.version) == str(candidate.version):
        return {"promoted": False, "reason": f"version {version} is already the champion", "champion": str(champion.version)}
    if base_dev is None and champion is None and (base := _newest(client, cfg.base_model)) is not None:
        base_dev = _dev(base)
    ok, reason = decide(_dev(candidate), _dev(champion) if champion is not None else None, cfg.max_sr_drop,
                        base_dev, cfg.base_max_sr_drop)
    if ok:
        if champion is not None:
            client.set_registered_model_alias(name, "previous", champion.version)
        client.set_registered_model_alias(name, "champion", candidate.version)
    now = alias_version(client, name, "champion")
    print(f"{name} v{version}: {reason}")
    return {"promoted": ok, "reason": reason, "candidate": str(version), "champion": str(now.version) if now else None}


@flow(name="promote-rollback", log_prints=True)
def rollback(cfg: PromoteConfig = PromoteConfig()) -> dict[str, Any]:
    client = registry(tracking_config(cfg.tracking))
    name = cfg.registered_model
    previous, champion = alias_version(client, name, "previous"), alias_version(client, name, "champion")
    if previous is None:
        raise ValueError(f"{name}: no alias 'previous' to roll back to")
    client.set_registered_model_alias(name, "champion", previous.version)
    client.delete_registered_model_alias(name, "previous")
    if champion is not None:
        client.set_model_version_tag(name, champion.version, "rolled_back", "true")
    print(f"{name}: champion v{champion.version if champion else None} -> v{previous.version}")
    return {"champion": str(previous.version), "demoted": str(champion.version) if champion else None}


def show(cfg: PromoteConfig) -> dict[str, Any]:
    client = registry(tracking_config(cfg.tracking))
    name = cfg.registered_model
    versions = sorted(client.search_model_versions(f"name='{name}'"), key=lambda v: int(v.version))
    return {"aliases": {a: (str(v.version) if (v := alias_version(client, name, a)) else None) for a in ("champion", "previous")},
            "versions": {str(v.version): {"variant": v.tags.get("variant"), "seed": v.tags.get("seed"), **_dev(v)} for v in versions}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--version", help="registered model version to offer (default: the newest)")
    parser.add_argument("--rollback", action="store_true", help="point champion back at previous")
    parser.add_argument("--show", action="store_true", help="print aliases and versions, change nothing")
    args = parser.parse_args(argv)
    cfg = load_params("promote", PromoteConfig, args.params)
    if args.show:
        print(json.dumps(show(cfg), indent=1))
    elif args.rollback:
        rollback(cfg)
    else:
        promote(cfg, args.version)


if __name__ == "__main__":
    main()
