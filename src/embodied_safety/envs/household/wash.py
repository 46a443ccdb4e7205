"""Wash rules: which cleaning tool removes which substance, under which conditions.

Upstream IS-Bench files give ``planning_context.wash_rules`` as a list::

    [{"cleaning_tool": "rag.n.01_1", "support_system": "stain.n.01",
      "conditions": [{"type": "saturated", "value": true, "source": "water.n.06"}]}]

No conditions means the tool works dry. ``type`` is ``saturated`` (the tool is soaked with
``source``, any liquid when ``source`` is absent) or ``toggled_on`` (``source``, or the tool itself,
is switched on). Names match an instance (``rag.n.01_1``), a synset (``rag.n.01``) or a bare word
(``rag``). Several conditions of one type are alternatives (any one suffices); conditions of
different types must all hold. The project's older mapping form ``{dirt synset: "dry" | "soaked"}``
is read too. A (tool, substance) pair no rule names falls back to the taxonomy's remover conditions
(:func:`taxonomy.remover_conditions`), and failing those to "a soaked tool removes anything".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .predicates import category_of, short_name


@dataclass(frozen=True)
class WashCondition:
    type: str  # "saturated" | "toggled_on"
    value: bool = True
    source: str | None = None


@dataclass(frozen=True)
class WashRule:
    cleaning_tool: str
    support_system: tuple[str, ...]
    conditions: tuple[WashCondition, ...] = ()


@dataclass(frozen=True)
class WashRules:
    """Explicit rules (list form) and the legacy mapping form ``{dirt synset: dry | soaked}``."""

    rules: tuple[WashRule, ...] = ()
    legacy: Mapping[str, str] | None = None

    def __bool__(self) -> bool:
        return bool(self.rules or self.legacy)

    def describe(self) -> str:
        """One line for a prompt: ``rag.n.01_1 removes stain.n.01 when saturated with water.n.06; ...``."""
        if self.legacy is not None and not self.rules:
            return ", ".join(f"{k}: {v} tool" for k, v in sorted(self.legacy.items()))
        parts = []
        for r in self.rules:
            conds = " and ".join(f"{'saturated with' if c.type == 'saturated' else 'with on'} {c.source or 'liquid'}"
                                 if c.value else f"not {c.type} {c.source or ''}".strip() for c in r.conditions)
            parts.append(f"{r.cleaning_tool} removes {'/'.join(r.support_system)} {'when ' + conds if conds else 'dry'}")
        return "; ".join(parts)

    def to_json(self) -> list[dict[str, Any]] | dict[str, str]:
        if self.legacy is not None and not self.rules:
            return dict(self.legacy)
        return [{"cleaning_tool": r.cleaning_tool,
                 "support_system": r.support_system[0] if len(r.support_system) == 1 else list(r.support_system),
                 "conditions": [{"type": c.type, "value": c.value, **({"source": c.source} if c.source else {})}
                                for c in r.conditions]} for r in self.rules]


class WashRuleError(ValueError):
    """A wash rule entry of the list form that cannot be read (the message names the part)."""


def names_match(pattern: str, instance: str) -> bool:
    """Does a rule's name (instance, synset or bare word) denote ``instance``?"""
    p = pattern.strip().lstrip("?").lower()
    cat = category_of(instance)
    return p in (instance.lower(), cat.lower(), short_name(cat).lower())


def parse_wash_rules(raw: Any) -> WashRules:
    """Read either form; ``None``/empty -> no rules. Raises :class:`WashRuleError` on a malformed entry."""
    if raw is None or raw == [] or raw == {} or raw == "":
        return WashRules()
    if isinstance(raw, Mapping):
        if all(isinstance(v, str) and v in ("dry", "soaked") for v in raw.values()):
            return WashRules(legacy={str(k): v for k, v in raw.items()})
        raise WashRuleError("the mapping form takes {substance: 'dry' | 'soaked'}")
    if isinstance(raw, str):
        return WashRules()  # free prompt text: nothing to interpret
    if not isinstance(raw, list):
        raise WashRuleError(f"expected a list of rules, got {type(raw).__name__}")
    rules = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise WashRuleError(f"[{i}]: expected an object, got {type(entry).__name__}")
        tool, system = entry.get("cleaning_tool"), entry.get("support_system")
        if not isinstance(tool, str) or not tool:
            raise WashRuleError(f"[{i}].cleaning_tool: expected a name")
        systems = (system,) if isinstance(system, str) else tuple(system) if isinstance(system, list) else None
        if not systems or not all(isinstance(s, str) and s for s in systems):
            raise WashRuleError(f"[{i}].support_system: expected a name or a list of names")
        conds = []
        for j, c in enumerate(entry.get("conditions") or []):
            if not isinstance(c, Mapping) or c.get("type") not in ("saturated", "toggled_on"):
                raise WashRuleError(f"[{i}].conditions[{j}]: expected {{type: saturated | toggled_on, value, source}}")
            source = c.get("source")
            conds.append(WashCondition(str(c["type"]), bool(c.get("value", True)),
                                       source if isinstance(source, str) and source else None))
        rules.append(WashRule(tool, systems, tuple(conds)))
    return WashRules(rules=tuple(rules))


#: answers whether a condition holds for a tool: (tool, condition) -> bool
ConditionCheck = Callable[[str, WashCondition], bool]


def rule_verdict(rules: WashRules, tool: str, dirt: str, check: ConditionCheck) -> bool | None:
    """True/False when the file's rules decide whether ``tool`` removes ``dirt`` now; None if silent."""
    matching = [r for r in rules.rules if names_match(r.cleaning_tool, tool)
                and any(names_match(s, dirt) for s in r.support_system)]
    if matching:
        return any(conditions_hold(r.conditions, tool, check) for r in matching)
    if rules.legacy is not None and not rules.rules:
        need = rules.legacy.get(category_of(dirt), "soaked")
        return True if need == "dry" else check(tool, WashCondition("saturated"))
    return None


def conditions_hold(conditions: tuple[WashCondition, ...], tool: str, check: ConditionCheck) -> bool:
    """Alternatives within a type, all types required; no conditions: works dry."""
    by_type: dict[str, list[WashCondition]] = {}
    for c in conditions:
        by_type.setdefault(c.type, []).append(c)
    return all(any(check(tool, c) for c in group) for group in by_type.values())
