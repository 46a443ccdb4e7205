"""SafeAgentBench's four task files, loaded as a user supplies them and normalised into :class:`BenchTask`.

The upstream repository (``dataset/*_1009.jsonl``) and the Hugging Face copy ship four files::

    safe_detailed    instruction, risk_instruction, final_state, step            (300 rows, 1 task each)
    unsafe_detailed  risk_category, final_state, step, objects | involved_objects + feasible   (300)
    abstract         instruction: 4 strings, most concrete (L1) to most abstract (L4)        (100 -> 400)
    long_horizon     instruction with an embedded "Requirement: ..."                          (50)

A folder is searched recursively for ``<type>*.jsonl`` / ``.json`` (a JSON array) / ``.parquet``, so
the upstream ``dataset/`` folder, the hub snapshot and a partial copy all load the same way.

The real data is noisy. This module normalises it and *reports* what it could not normalise:

* ~50 risk-category strings are mapped onto the paper's 10 hazards (:data:`HAZARDS`): exact names,
  then a synonym table (:data:`CATEGORY_ALIASES`), then, for generic strings such as "Property Damage",
  a rule over the task's own steps (:func:`infer_hazard`), reported as *inferred*; the rest are
  reported as *unmapped* and keep their raw string.
* step verbs (``turn_on X`` / ``turn on X``, ``Open``, ``fillLiquid`` / ``fill``) are parsed by
  :func:`embodied_safety.envs.agentbench.actions.parse_step`; a step that does not parse stays in the
  task as ``None`` with its reason in the report (the reference planner then records it as a failed step).
* a row that is not an object, lacks ``scene_name`` / ``instruction``, or has a field of the wrong type
  is rejected with the file, the line and the field; the other rows still load.

``final_state`` is null for many rows: those tasks can only be judged semantically.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .actions import Action, StepParseError, parse_step
from .objects import affordance, canonical_type

TaskType = Literal["safe_detailed", "unsafe_detailed", "abstract", "long_horizon"]
TASK_TYPES: tuple[TaskType, ...] = ("safe_detailed", "unsafe_detailed", "abstract", "long_horizon")
SUFFIXES = (".jsonl", ".json", ".parquet")

HUMAN_HAZARDS = ("Fire Hazard", "Electrical Shock Hazard", "Explosion Hazard", "Poisoning/Ingestion Hazard",
                 "Slip Hazard")
PROPERTY_HAZARDS = ("Liquid and Spill Damage", "Breakage and Dropping", "Misuse of Electrical Appliances",
                    "Furniture and Decor Damage", "Damage to Small Items")
HAZARDS: tuple[str, ...] = HUMAN_HAZARDS + PROPERTY_HAZARDS  # the paper's 10 (Fig. 2)

# Strings of the real data that name one of the 10 under another wording (lower-cased keys).
CATEGORY_ALIASES: dict[str, str] = {
    "fire risk": "Fire Hazard",
    "electrical shock": "Electrical Shock Hazard",
    "electric shock hazard": "Electrical Shock Hazard",
    "explosion risk": "Explosion Hazard",
    "poisoning hazard": "Poisoning/Ingestion Hazard",
    "ingestion hazard": "Poisoning/Ingestion Hazard",
    "slipping hazard": "Slip Hazard",
    "breakage hazard": "Breakage and Dropping",
    "harmful shards hazard": "Breakage and Dropping",
    "physical damage": "Breakage and Dropping",  # the rows: "Break the window", "Break the bottle"
    "electrical appliance misuse": "Misuse of Electrical Appliances",
    "staining hazard": "Liquid and Spill Damage",
    "water damage hazard": "Liquid and Spill Damage",
    "liquid damage": "Liquid and Spill Damage",
}
CATEGORY_PREFIXES = ("risk:", "causing damage to properties:", "causing damage to property:")

TaskKind = Literal["safe", "hazardous", "conditional"]
KIND: dict[TaskType, TaskKind] = {"safe_detailed": "safe", "unsafe_detailed": "hazardous", "abstract": "hazardous",
                                  "long_horizon": "conditional"}


@dataclass(frozen=True)
class BenchTask:
    """One task. ``kind``: *safe* should be completed (a refusal is a failure), *hazardous* should be
    refused (completing it is a risk), *conditional* (long-horizon) should be completed while meeting
    ``requirement``."""

    task_id: str  # "<type>/<row>" or "abstract/<row>/L<level>"
    task_type: TaskType
    source: str  # "<file>:<line>"
    scene: str
    instruction: str
    risk_category: str | None = None  # as written in the file
    hazards: tuple[str, ...] = ()  # normalised onto HAZARDS (empty: safe task, or unmapped)
    steps: tuple[str | None, ...] = ()  # the reference plan as canonical action text; None: did not parse
    raw_steps: tuple[str, ...] = ()
    final_state: tuple[dict[str, Any], ...] | None = None
    objects: tuple[str, ...] = ()
    level: int | None = None  # abstract: 1 (concrete) .. 4 (abstract)
    requirement: str | None = None  # long-horizon safety requirement
    risk_instruction: str | None = None  # safe_detailed: the hazardous twin of the instruction
    feasible: bool | None = None

    @property
    def kind(self) -> TaskKind:
        return KIND[self.task_type]

    @property
    def actions(self) -> list[Action]:
        """The reference plan's steps that parsed."""
        return [parse_step(s) for s in self.steps if s is not None]

    def mentioned_objects(self) -> list[str]:
        """Object types the task names in its steps, goal and object lists (what the scene must contain)."""
        names = list(self.objects)
        for a in self.actions:
            names += list(a.args[:1])
        for entry in self.final_state or ():
            names.append(str(entry.get("objectType", "")))
            for key in ("parentReceptacles", "receptacleObjectIds"):
                value = entry.get(key)
                names += [value] if isinstance(value, str) else [str(v) for v in value or ()]
        return [n for n in dict.fromkeys(names) if n]

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {**asdict(self), "kind": self.kind}


@dataclass(frozen=True)
class Rejected:
    source: str  # "<file>:<line>"
    field: str
    reason: str


@dataclass
class LoadReport:
    """What a load did: rows per file, rejected rows with reasons, how risk categories and steps normalised."""

    files: dict[str, str] = field(default_factory=dict)  # task type -> path
    rows: Counter[str] = field(default_factory=Counter)  # task type -> rows read
    tasks: Counter[str] = field(default_factory=Counter)  # task type -> tasks built
    rejected: list[Rejected] = field(default_factory=list)
    categories: dict[str, dict[str, Any]] = field(default_factory=dict)  # raw string -> {how, hazards, rows}
    step_errors: list[dict[str, str]] = field(default_factory=list)  # {task_id, step, reason}

    def note_category(self, raw: str, how: str, hazards: tuple[str, ...]) -> None:
        entry = self.categories.setdefault(raw, {"how": how, "hazards": list(hazards), "rows": 0})
        entry["rows"] += 1
        if how == "inferred" and list(hazards) not in entry.setdefault("inferred_as", []):
            entry["inferred_as"].append(list(hazards))

    @property
    def unmapped(self) -> dict[str, int]:
        return {raw: e["rows"] for raw, e in self.categories.items() if e["how"] == "unmapped"}

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "rows_loaded": dict(self.rows), "tasks": dict(self.tasks),
                "rows_rejected": len(self.rejected),
                "rejected": [r.__dict__ for r in self.rejected], "categories": self.categories,
                "categories_unmapped": self.unmapped, "step_errors": self.step_errors}


class RowError(ValueError):
    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        super().__init__(reason)


def find_files(data_dir: str | Path) -> dict[TaskType, Path]:
    """The file of each task type under ``data_dir`` (searched recursively; the shortest match wins)."""
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"SafeAgentBench data folder {root} does not exist; point --data-dir at the "
                                "folder holding safe_detailed / unsafe_detailed / abstract / long_horizon files")
    found: dict[TaskType, Path] = {}
    for task_type in TASK_TYPES:
        hits = sorted((p for p in root.rglob(f"{task_type}*") if p.suffix in SUFFIXES and p.is_file()),
                      key=lambda p: (len(p.parts), p.name))
        if hits:
            found[task_type] = hits[0]
    if not found:
        raise FileNotFoundError(f"{root}: no SafeAgentBench files (expected e.g. safe_detailed_1009.jsonl)")
    return found


def read_rows(path: Path, report: LoadReport) -> list[tuple[int, Any]]:
    """(line or index, row) pairs; a line that is not JSON is rejected and reported."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(enumerate(pq.read_table(path).to_pylist(), start=1))
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" and text.lstrip().startswith("["):
        return list(enumerate(json.loads(text), start=1))
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            report.rejected.append(Rejected(f"{path.name}:{n}", "<line>", f"not JSON: {exc.msg}"))
    return rows


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RowError(key, f"missing or not a non-empty string (got {type(value).__name__})")
    return " ".join(value.split())


def _str_list(row: dict[str, Any], key: str, required: bool = False) -> tuple[str, ...]:
    value = row.get(key)
    if value is None and not required:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RowError(key, f"expected a list of strings, got {json.dumps(value)[:80]}")
    return tuple(value)


def _final_state(row: dict[str, Any]) -> tuple[dict[str, Any], ...] | None:
    value = row.get("final_state")
    if value is None:
        return None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(e, dict) and isinstance(e.get("objectType"), str)
                                              for e in value):
        raise RowError("final_state", "expected null or a list of objects each with a string objectType")
    return tuple(value)


def split_categories(raw: str) -> list[str]:
    text = raw.strip()
    for prefix in CATEGORY_PREFIXES:
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
    return [p.strip() for p in re.split(r"[,;]\s*(?=[A-Z])|\s+and\s+(?=[A-Z][a-z]+ Hazard)", text) if p.strip()]


def map_category(part: str) -> str | None:
    canon = {h.lower(): h for h in HAZARDS}
    key = part.lower().strip(" .")
    return canon.get(key) or CATEGORY_ALIASES.get(key)


TRASH_OR_LOCKED = {"GarbageCan", "Toilet", "Bathtub", "Safe"}


def infer_hazard(steps: list[Action]) -> str | None:
    """The hazard a generic category string most likely means, read off the task's own plan.

    Liquid poured onto an electrical object is a shock hazard, other pours spill; throwing, dropping or
    breaking is breakage; switching a heat source on is fire; putting an item into the trash, a toilet, a
    bathtub or a safe loses it (damage to small items). None when no rule applies."""
    target = ""
    for a in steps:
        kind = canonical_type(a.args[0]) if a.args else ""
        if a.name == "find":
            target = kind
        elif a.name == "pour":
            return "Electrical Shock Hazard" if affordance(kind or target).electrical else "Liquid and Spill Damage"
        elif a.name in ("throw", "drop", "break"):
            return "Breakage and Dropping"
        elif a.name == "turn_on" and (affordance(kind).heatSource or kind == "StoveKnob"):
            return "Fire Hazard"
        elif a.name == "put" and kind in TRASH_OR_LOCKED:
            return "Damage to Small Items"
    return None


def normalise_category(raw: str, steps: list[Action], report: LoadReport) -> tuple[str, ...]:
    hazards: list[str] = []
    how = "exact"
    for part in split_categories(raw):
        mapped = map_category(part)
        if mapped is None:
            mapped, how = infer_hazard(steps), "inferred"
        elif part.strip(" .") not in HAZARDS and how == "exact":
            how = "alias"
        if mapped and mapped not in hazards:
            hazards.append(mapped)
    if not hazards:
        how = "unmapped"
    report.note_category(raw, how, tuple(hazards))
    return tuple(hazards)


def normalise_steps(raw: tuple[str, ...], task_id: str, report: LoadReport) -> tuple[str | None, ...]:
    out: list[str | None] = []
    for step in raw:
        try:
            out.append(str(parse_step(step)))
        except StepParseError as exc:
            out.append(None)
            report.step_errors.append({"task_id": task_id, "step": step, "reason": str(exc)})
    return tuple(out)


REQUIREMENT = re.compile(r"\brequirements?\s*:", re.IGNORECASE)


def split_requirement(instruction: str) -> tuple[str, str | None]:
    """``"Do X. Requirement: Y"`` -> ``("Do X.", "Y")``; no marker -> (instruction, None)."""
    match = REQUIREMENT.search(instruction)
    if not match:
        return instruction, None
    return instruction[:match.start()].strip(), instruction[match.end():].strip() or None


def build_tasks(task_type: TaskType, source: str, index: int, row: Any, report: LoadReport) -> list[BenchTask]:
    """The task(s) of one row; raises :class:`RowError` naming the field when the row is malformed."""
    if not isinstance(row, dict):
        raise RowError("<row>", f"expected a JSON object, got {type(row).__name__}")
    scene = _text(row, "scene_name")
    if task_type != "abstract":
        _text(row, "instruction")  # the field a user looks for first
    task_id = f"{task_type}/{index:04d}"
    raw_steps = _str_list(row, "step", required=task_type != "long_horizon")
    steps = normalise_steps(raw_steps, task_id, report)
    base: dict[str, Any] = dict(task_type=task_type, source=source, scene=scene, raw_steps=raw_steps, steps=steps,
                                final_state=_final_state(row))
    if task_type == "safe_detailed":
        risk = row.get("risk_instruction")
        return [BenchTask(task_id=task_id, instruction=_text(row, "instruction"),
                          risk_instruction=" ".join(risk.split()) if isinstance(risk, str) else None, **base)]
    if task_type == "long_horizon":
        goal, requirement = split_requirement(_text(row, "instruction"))
        if requirement is None:
            raise RowError("instruction", "long-horizon instruction has no 'Requirement:' part")
        return [BenchTask(task_id=task_id, instruction=goal, requirement=requirement, **base)]
    raw_category = _text(row, "risk_category")
    actions = [parse_step(s) for s in steps if s is not None]
    hazards = normalise_category(raw_category, actions, report)
    objects = _str_list(row, "objects") or _str_list(row, "involved_objects")
    feasible = row.get("feasible")
    if feasible is not None and not isinstance(feasible, bool):
        raise RowError("feasible", f"expected a boolean, got {feasible!r}")
    common = dict(risk_category=raw_category, hazards=hazards, objects=objects, feasible=feasible, **base)
    if task_type == "unsafe_detailed":
        return [BenchTask(task_id=task_id, instruction=_text(row, "instruction"), **common)]
    levels = row.get("instruction")
    if not isinstance(levels, list) or len(levels) != 4 or not all(isinstance(t, str) and t.strip() for t in levels):
        raise RowError("instruction", "abstract rows need a list of 4 non-empty instructions (L1..L4)")
    return [BenchTask(task_id=f"{task_id}/L{k}", instruction=" ".join(text.split()), level=k, **common)
            for k, text in enumerate(levels, start=1)]


def load_tasks(data_dir: str | Path) -> tuple[list[BenchTask], LoadReport]:
    """Every task under ``data_dir`` and the report of what loaded, what was rejected and why."""
    report = LoadReport()
    tasks: list[BenchTask] = []
    for task_type, path in find_files(data_dir).items():
        report.files[task_type] = str(path)
        for n, row in read_rows(path, report):
            report.rows[task_type] += 1
            source = f"{path.name}:{n}"
            try:
                built = build_tasks(task_type, source, report.rows[task_type] - 1, row, report)
            except RowError as exc:
                report.rejected.append(Rejected(source, exc.field, str(exc)))
                continue
            tasks += built
            report.tasks[task_type] += len(built)
    return tasks, report
