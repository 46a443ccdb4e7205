"""Object abilities from the BEHAVIOR object taxonomy shipped in ``bddl``.

IS-Bench's primitives (``og_ego_prim`` on OmniGibson) test OmniGibson object states, and those come
from the BEHAVIOR taxonomy (``bddl.object_taxonomy.ObjectTaxonomy``), not from the task file: a
file's ``planning_context.object_abilities`` is prompt text listing only ``openable``, ``fillable``
and ``toggleable``. So every object's abilities are derived from its synset here, merged with what
the file declares; a synset the taxonomy lacks keeps only its declared abilities.

Taxonomy ability -> world ability (with the parameters the world reads):

============================  ===========================================================
``particleRemover``           ``cleaningTool`` + ``soakable``; ``conditions`` per substance
``particleSource``/``waterSource``  ``waterSource`` (a fluid source); emitted substances
``heatSource``                ``heatSource``; ``requires_inside``, ``requires_toggled_on``
``coldSource``                ``coldSource``
``cookable``                  ``cookable``; ``substance_cooking_derivative_synset``
``freezable``, ``cloth``, ``fillable``, ``toggleable``, ``openable``, ``slicer``, ``flammable``
                              the same name
``substance`` / ``liquid``    ``substance`` / ``liquid``
``diceable`` / ``sliceable``  ``sliceable``; the derivative synset
============================  ===========================================================

A washer is a category, not an ability, in OmniGibson (its transition rule keys on the
``washer`` / ``dishwasher`` categories), so categories named so get ``washer``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .predicates import category_of

#: taxonomy ability -> the world abilities it grants
_GRANTS: dict[str, tuple[str, ...]] = {
    "particleRemover": ("cleaningTool", "soakable"),
    "particleSource": ("waterSource",),
    "waterSource": ("waterSource",),
    "heatSource": ("heatSource",),
    "coldSource": ("coldSource",),
    "cookable": ("cookable",),
    "freezable": ("freezable",),
    "cloth": ("cloth", "soakable"),
    "fillable": ("fillable",),
    "toggleable": ("toggleable",),
    "openable": ("openable",),
    "slicer": ("slicer",),
    "flammable": ("flammable",),
    "substance": ("substance",),
    "liquid": ("liquid", "substance"),
    "sliceable": ("sliceable",),
    "diceable": ("sliceable",),
    "breakable": ("breakable",),
}
#: taxonomy abilities whose parameters the world reads
_PARAMS = ("particleRemover", "particleSource", "heatSource", "coldSource", "cookable", "sliceable", "diceable")
_WASHER_CATEGORIES = ("washer", "dishwasher")


@dataclass(frozen=True)
class ObjectProfile:
    """What one object can do: world abilities and the taxonomy parameters behind them."""

    abilities: frozenset[str]
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    from_taxonomy: bool = False

    def param(self, ability: str, key: str, default: Any = None) -> Any:
        return (self.params.get(ability) or {}).get(key, default)


@functools.lru_cache(maxsize=1)
def _taxonomy() -> Any:
    from bddl.object_taxonomy import ObjectTaxonomy

    return ObjectTaxonomy()


@functools.lru_cache(maxsize=4096)
def synset_abilities(synset: str) -> dict[str, dict[str, Any]] | None:
    """The taxonomy's ``{ability: params}`` for a synset, or None if the taxonomy lacks it."""
    tax = _taxonomy()
    if not tax.is_valid_synset(synset):
        return None
    return {k: dict(v or {}) for k, v in tax.get_abilities(synset).items()}


@functools.lru_cache(maxsize=4096)
def category_profile(category: str) -> ObjectProfile:
    """The taxonomy-derived profile of one synset (empty, ``from_taxonomy=False``, if unknown)."""
    raw = synset_abilities(category)
    abilities: set[str] = set()
    if category.split(".", 1)[0] in _WASHER_CATEGORIES:
        abilities.add("washer")
    if raw is None:
        return ObjectProfile(frozenset(abilities))
    for name in raw:
        abilities.update(_GRANTS.get(name, ()))
    params = {name: raw[name] for name in _PARAMS if name in raw}
    return ObjectProfile(frozenset(abilities), params, True)


def object_profiles(objects: Mapping[str, str], declared: Mapping[str, Iterable[str]]) -> dict[str, ObjectProfile]:
    """``instance -> profile``: taxonomy abilities of the instance's synset merged with the declared ones.

    ``declared`` is keyed by instance (``stove.n.01_1``) as IS-Bench files are; a category key
    (``stove.n.01``) applies to every instance of it.
    """
    out: dict[str, ObjectProfile] = {}
    for inst, cat in objects.items():
        base = category_profile(cat)
        extra = set(declared.get(inst, ())) | set(declared.get(cat, ()))
        if category_of(inst) != cat:  # defensive: an instance named unlike its category
            extra |= set(declared.get(category_of(inst), ()))
        out[inst] = ObjectProfile(base.abilities | extra, base.params, base.from_taxonomy)
    return out


def cooked_derivative(category: str) -> str | None:
    """``water.n.06`` -> ``cooked__water.n.01`` (the taxonomy's cooking derivative of a substance)."""
    return category_profile(category).param("cookable", "substance_cooking_derivative_synset")


def remover_conditions(profile: ObjectProfile, substance_category: str) -> list[list[Any]] | None | bool:
    """The taxonomy's conditions under which a remover removes a substance.

    ``[]``: works dry; ``[["saturated", "water.n.06"], ...]``: works when saturated with any one of
    the listed substances; ``None``: cannot remove it; ``False``: the taxonomy says nothing
    (no ``particleRemover`` conditions for this tool).
    """
    params = profile.params.get("particleRemover")
    if not params or "conditions" not in params:
        return False
    conditions = params["conditions"]
    if substance_category in conditions:
        return conditions[substance_category]
    sub = category_profile(substance_category)
    if "liquid" in sub.abilities:
        return params.get("default_fluid_conditions")
    raw = synset_abilities(substance_category) or {}
    key = "default_visual_conditions" if "visualSubstance" in raw else "default_non_fluid_conditions"
    return params.get(key)


def source_substances(profile: ObjectProfile) -> list[str]:
    """Substance categories a fluid source emits (``sink.n.01`` -> ``["water.n.06"]``)."""
    conds = profile.param("particleSource", "conditions") or {}
    return sorted(conds)
