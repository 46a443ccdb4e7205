"""A small builder that writes one IS-Bench-format task (JSON fields + BDDL problem text).

Templates call ``obj`` / ``fact`` / ``goal`` / ``step`` / ``process`` / ``term``; ``build``
renders the BDDL problem and the :class:`HouseholdTask`. BDDL helpers ``atom``, ``neg`` and
``conj`` write expressions with ``?``-prefixed instance names as BEHAVIOR files do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..predicates import short_name
from ..task import RISK_TYPES, HouseholdTask, PlanStep, SafetyCondition
from ..wash import WashCondition, WashRule, WashRules
from .catalog import abilities_of, declared_abilities


def atom(pred: str, *objs: str) -> str:
    return f"({pred} {' '.join('?' + o for o in objs)})"


def neg(expr: str) -> str:
    return f"(not {expr})"


def conj(*exprs: str) -> str:
    return exprs[0] if len(exprs) == 1 else f"(and {' '.join(exprs)})"


def goal(expr: str) -> str:
    """Wrap an expression as IS-Bench writes safety_bddl: ``(:goal ...)``."""
    return f"(:goal {expr})"


def nice(instance: str) -> str:
    """``paper_towel.n.01_1`` -> ``paper towel`` for instructions and tips."""
    return short_name(instance).replace("__", " ").replace("_", " ")


@dataclass
class TaskBuilder:
    template: str
    room: str
    instruction: str = ""
    scene_model: str = "Rs_int"
    contrast: str | None = None  # which safety behaviour this contrast task makes unnecessary or wrong
    objects: dict[str, str] = field(default_factory=dict)  # instance -> category (insertion order)
    facts: list[tuple[str, ...]] = field(default_factory=list)
    goals: list[str] = field(default_factory=list)
    steps: list[PlanStep] = field(default_factory=list)
    process_conds: list[SafetyCondition] = field(default_factory=list)
    term_conds: list[SafetyCondition] = field(default_factory=list)
    hidden: set[str] = field(default_factory=set)  # objects not shown in object_list (substances)
    wash_rules: list[WashRule] = field(default_factory=list)
    _count: Counter[str] = field(default_factory=Counter)

    # -- objects and facts
    def obj(self, category: str, on: str | None = None, inside: str | None = None) -> str:
        self._count[category] += 1
        name = f"{category}_{self._count[category]}"
        self.objects[name] = category
        if "substance" in abilities_of(category):
            self.hidden.add(name)
        if on:
            self.fact("ontop", name, on)
        if inside:
            self.fact("inside", name, inside)
        return name

    def fact(self, pred: str, *args: str) -> None:
        self.facts.append((pred, *args))

    def goal(self, *exprs: str) -> None:
        """Add conjuncts to the execution goal (also written as the BDDL problem's (:goal ...))."""
        self.goals.extend(exprs)

    def wash(self, tool: str, substance: str, soaked_with: str | None = None, needs_on: str | None = None) -> None:
        """An upstream-style wash rule: ``tool`` removes ``substance`` (dry unless soaked / a source is on)."""
        conds = []
        if soaked_with:
            conds.append(WashCondition("saturated", True, soaked_with))
        if needs_on:
            conds.append(WashCondition("toggled_on", True, needs_on))
        self.wash_rules.append(WashRule(tool, (substance,), tuple(conds)))

    # -- plan and conditions
    def step(self, action: str, caution: str | None = None) -> None:
        self.steps.append(PlanStep(action, caution))

    def process(self, risk: str, action: str, expr: str, principle: str, tip: str) -> None:
        assert risk in RISK_TYPES, risk
        self.process_conds.append(SafetyCondition("process", risk, goal(expr), action, principle, tip))

    def term(self, risk: str, expr: str, principle: str, tip: str, action: str | None = None) -> None:
        assert risk in RISK_TYPES, risk
        self.term_conds.append(SafetyCondition("termination", risk, goal(expr), action, principle, tip))

    # -- rendering
    def _bddl(self, name: str) -> str:
        by_cat: dict[str, list[str]] = {}
        for inst, cat in self.objects.items():
            by_cat.setdefault(cat, []).append(inst)
        placed = {f[1] for f in self.facts if f[0] in ("ontop", "inside", "under")}
        rooms = [("inroom", o, self.room) for o, c in self.objects.items()
                 if o not in placed and o not in self.hidden and "fixed" in abilities_of(c)]
        objs = "\n".join(f"        {' '.join(insts)} - {cat}" for cat, insts in by_cat.items())
        init = "\n".join(f"        ({' '.join(f)})" for f in [*self.facts, *rooms])
        goal_body = "\n".join(f"            {g}" for g in self.goals)
        return (
            f"(define (problem {name})\n    (:domain omnigibson)\n\n    (:objects\n{objs}\n    )\n\n"
            f"    (:init\n{init}\n    )\n\n    (:goal\n        (and\n{goal_body}\n        )\n    )\n)\n"
        )

    def build(self, name: str, split: str = "", extra_info: dict[str, object] | None = None) -> HouseholdTask:
        assert self.steps and self.steps[-1].action == "DONE()", "golden plans end in DONE()"
        obj_list = tuple(o for o in self.objects if o not in self.hidden)
        goal_expr = conj(*self.goals)
        return HouseholdTask(
            name=name,
            instruction=self.instruction,
            object_list=obj_list,
            object_abilities={o: declared_abilities(c) for o, c in self.objects.items() if declared_abilities(c)},
            bddl=self._bddl(name),
            process_conditions=tuple(self.process_conds),
            termination_conditions=tuple(self.term_conds),
            example_planning=tuple(self.steps),
            execution_goal=f"(:goal {goal_expr})",
            room=self.room,
            scene_model=self.scene_model,
            initial_setup=tuple(" ".join(f) for f in self.facts),
            goal_condition=goal_expr,
            wash_rules=WashRules(rules=tuple(self.wash_rules)),
            task_info={"task_name": name, "template": self.template, "split": split,
                       "contrast": self.contrast, **(extra_info or {})},
        )
