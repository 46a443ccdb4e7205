"""IS-Bench task files: the schema, a strict-but-tolerant loader and a writer.

Layout (IS-Bench's own): ``<dir>/tasks/<name>.json`` and ``<dir>/bddl/<name>/problem0.bddl``.
Unknown keys (``_base_config`` and fields this project does not use) are tolerated; required
fields that are missing or ill-typed raise :class:`TaskFormatError` naming the file and field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...errors import TaskFormatError
from ...io import atomic_write_text
from .actions import ActionParseError, parse_action
from .wash import WashRuleError, WashRules, parse_wash_rules

ConditionKind = Literal["process", "termination"]

#: IS-Bench's eight risk labels (Collision and Tripping are separate, as upstream). A task file may use
#: any risk string; unknown ones are reported per risk as they are.
RISK_TYPES: tuple[str, ...] = (
    "Collision Hazard",
    "Tripping Hazard",
    "Fire Hazard",
    "Food Contamination",
    "Chemical Hazard",
    "Water Spill Damage",
    "Falling Object Hazard",
    "Electrical Shock",
)


@dataclass(frozen=True)
class SafetyCondition:
    """One process ("before" an action) or termination safety condition."""

    kind: ConditionKind
    risk_type: str
    safety_bddl: str
    action: str | None  # process: trigger action; termination: None | "completion" | action string
    safety_principle: str = ""
    safety_tip: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "risk_type": self.risk_type,
            "safety_principle": self.safety_principle,
            "safety_tip": self.safety_tip,
            "safety_bddl": self.safety_bddl,
            "action": self.action,
        }
        if self.kind == "process":
            out["type"] = "before"
        return out


@dataclass(frozen=True)
class PlanStep:
    action: str
    caution: str | None = None

    @property
    def is_safety_step(self) -> bool:
        """A golden step with a non-empty caution is a safety step (removed by ``golden_unsafe``)."""
        return bool(self.caution and self.caution.strip())


@dataclass(frozen=True)
class HouseholdTask:
    """An IS-Bench-format household task with its BDDL problem text."""

    name: str
    instruction: str
    object_list: tuple[str, ...]
    object_abilities: dict[str, tuple[str, ...]]
    bddl: str
    process_conditions: tuple[SafetyCondition, ...]
    termination_conditions: tuple[SafetyCondition, ...]
    example_planning: tuple[PlanStep, ...]
    execution_goal: str | None = None  # BDDL; None -> the problem's (:goal ...)
    room: str | None = None
    scene_model: str | None = None
    initial_setup: tuple[str, ...] = ()
    goal_condition: str = ""
    wash_rules: WashRules = field(default_factory=WashRules)
    cautions: str = ""
    task_info: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def conditions(self) -> tuple[SafetyCondition, ...]:
        return self.process_conditions + self.termination_conditions

    @property
    def golden_length(self) -> int:
        return len(self.example_planning)

    def to_json(self) -> dict[str, Any]:
        return {
            "task_info": {"task_name": self.name, **{k: v for k, v in self.task_info.items() if k != "task_name"}},
            "scene_info": {"default_scene_model": self.scene_model, "room": self.room},
            "planning_context": {
                "task_instruction": self.instruction,
                "initial_setup": list(self.initial_setup),
                "goal_condition": self.goal_condition,
                "object_list": list(self.object_list),
                "object_abilities": {k: list(v) for k, v in self.object_abilities.items()},
                "wash_rules": self.wash_rules.to_json(),
            },
            "evaluation_cautions": self.cautions,
            "evaluation_goal_conditions": {
                "process_safety_goal_condition": [c.to_json() for c in self.process_conditions],
                "termination_safety_goal_condition": [c.to_json() for c in self.termination_conditions],
                "execution_goal_condition": self.execution_goal,
            },
            "example_planning": [{"action": s.action, "caution": s.caution} for s in self.example_planning],
        }


# ---------------------------------------------------------------------- reading
class _Reader:
    """Typed field access that reports ``file: dotted.field: problem``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def get(self, obj: Any, key: str, where: str, typ: type | tuple[type, ...], required: bool = True) -> Any:
        fieldname = f"{where}.{key}" if where else key
        if not isinstance(obj, dict):
            raise TaskFormatError(self.path, where or "<root>", f"expected an object, got {type(obj).__name__}")
        if key not in obj or obj[key] is None:
            if required:
                raise TaskFormatError(self.path, fieldname, "required field is missing")
            return None
        value = obj[key]
        if not isinstance(value, typ):
            names = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
            raise TaskFormatError(self.path, fieldname, f"expected {names}, got {type(value).__name__}")
        return value

    def str_list(self, obj: Any, key: str, where: str, required: bool = True) -> tuple[str, ...]:
        value = self.get(obj, key, where, (list, str), required)
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise TaskFormatError(self.path, f"{where}.{key}[{i}]", f"expected str, got {type(item).__name__}")
        return tuple(value)


def _read_condition(r: _Reader, raw: Any, kind: ConditionKind, where: str) -> SafetyCondition:
    bddl = r.get(raw, "safety_bddl", where, str)
    risk = r.get(raw, "risk_type", where, str)
    action = r.get(raw, "action", where, str, required=kind == "process")
    if action is not None and action != "completion":
        try:
            action = str(parse_action(action)) if "(" in action else action.strip().upper()
        except ActionParseError as exc:
            raise TaskFormatError(r.path, f"{where}.action", str(exc)) from exc
    return SafetyCondition(
        kind=kind,
        risk_type=risk,
        safety_bddl=bddl,
        action=action,
        safety_principle=r.get(raw, "safety_principle", where, str, required=False) or "",
        safety_tip=r.get(raw, "safety_tip", where, str, required=False) or "",
    )


def _read_wash_rules(raw: Any, path: str) -> WashRules:
    """Upstream's list form or our mapping form (``wash.parse_wash_rules``); a malformed rule names its entry."""
    try:
        return parse_wash_rules(raw)
    except WashRuleError as exc:
        where, sep, reason = str(exc).partition(": ")
        suffix = where if sep and where.startswith("[") else ""
        raise TaskFormatError(path, f"planning_context.wash_rules{suffix}", reason if suffix else str(exc)) from exc


def _parse_goal_field(raw: Any, r: _Reader, where: str) -> str | None:
    if raw is None or raw == "" or raw == []:
        return None
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        inner = " ".join(x.strip() for x in raw)
        return f"(:goal (and {inner}))"
    raise TaskFormatError(r.path, where, f"expected a BDDL string or list of strings, got {type(raw).__name__}")


def _read_text(file: str | os.PathLike[str], path: str, where: str) -> str:
    """A file's text as UTF-8; an unreadable or non-UTF-8 file is a :class:`TaskFormatError`."""
    try:
        return Path(file).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFormatError(path, where, f"{file} is not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise TaskFormatError(path, where, f"cannot read {file}: {exc.strerror or exc}") from exc


def read_task(json_path: str | os.PathLike[str], bddl_path: str | os.PathLike[str] | None = None) -> HouseholdTask:
    """Read one task JSON and its ``problem0.bddl``; structural checks only (see compile_task)."""
    path = str(json_path)
    r = _Reader(path)
    try:
        raw = json.loads(_read_text(path, path, "<root>"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise TaskFormatError(path, "<root>", f"invalid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise TaskFormatError(path, "<root>", f"expected a JSON object, got {type(raw).__name__}")
    name = Path(path).stem
    if bddl_path is None:
        bddl_path = Path(path).parent.parent / "bddl" / name / "problem0.bddl"
    if not Path(bddl_path).is_file():
        raise TaskFormatError(path, "bddl", f"BDDL problem file not found at {bddl_path}")
    bddl = _read_text(bddl_path, path, "bddl")
    pc = r.get(raw, "planning_context", "", dict)
    egc = r.get(raw, "evaluation_goal_conditions", "", dict)
    where_p, where_t = "evaluation_goal_conditions.process_safety_goal_condition", "evaluation_goal_conditions.termination_safety_goal_condition"
    process = r.get(egc, "process_safety_goal_condition", "evaluation_goal_conditions", list)
    term = r.get(egc, "termination_safety_goal_condition", "evaluation_goal_conditions", list)
    abilities_raw = r.get(pc, "object_abilities", "planning_context", dict, required=False) or {}
    abilities: dict[str, tuple[str, ...]] = {}
    for obj, abl in abilities_raw.items():
        if isinstance(abl, dict):  # {"openable": {...}, ...} form
            abl = [k for k, v in abl.items() if v is not False]
        if not isinstance(abl, list | tuple) or not all(isinstance(a, str) for a in abl):
            raise TaskFormatError(path, f"planning_context.object_abilities.{obj}", "expected a list of ability names")
        abilities[obj] = tuple(abl)
    steps = []
    for i, s in enumerate(r.get(raw, "example_planning", "", list)):
        action = r.get(s, "action", f"example_planning[{i}]", str)
        caution = r.get(s, "caution", f"example_planning[{i}]", str, required=False)
        steps.append(PlanStep(action, caution))
    scene = raw.get("scene_info") if isinstance(raw.get("scene_info"), dict) else {}
    info = raw.get("task_info") if isinstance(raw.get("task_info"), dict) else {}
    cautions = raw.get("evaluation_cautions")
    goal_cond = pc.get("goal_condition")
    return HouseholdTask(
        name=name,
        instruction=r.get(pc, "task_instruction", "planning_context", str),
        object_list=r.str_list(pc, "object_list", "planning_context"),
        object_abilities=abilities,
        bddl=bddl,
        process_conditions=tuple(_read_condition(r, c, "process", f"{where_p}[{i}]") for i, c in enumerate(process)),
        termination_conditions=tuple(_read_condition(r, c, "termination", f"{where_t}[{i}]") for i, c in enumerate(term)),
        example_planning=tuple(steps),
        execution_goal=_parse_goal_field(egc.get("execution_goal_condition"), r, "evaluation_goal_conditions.execution_goal_condition"),
        room=scene.get("room") if isinstance(scene.get("room"), str) else None,
        scene_model=scene.get("default_scene_model") if isinstance(scene.get("default_scene_model"), str) else None,
        initial_setup=r.str_list(pc, "initial_setup", "planning_context", required=False),
        goal_condition=goal_cond if isinstance(goal_cond, str) else json.dumps(goal_cond) if goal_cond else "",
        wash_rules=_read_wash_rules(pc.get("wash_rules"), path),
        cautions=cautions if isinstance(cautions, str) else json.dumps(cautions) if cautions else "",
        task_info=dict(info),
        source=path,
    )


def write_task(task: HouseholdTask, root: str | os.PathLike[str]) -> Path:
    """Write ``root/tasks/<name>.json`` and ``root/bddl/<name>/problem0.bddl`` atomically."""
    root = Path(root)
    json_path = root / "tasks" / f"{task.name}.json"
    atomic_write_text(root / "bddl" / task.name / "problem0.bddl", task.bddl)
    atomic_write_text(json_path, json.dumps(task.to_json(), indent=2) + "\n")
    return json_path
