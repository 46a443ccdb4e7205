"""SafeAgentBench's four task files, loaded as a user supplies them and normalised into :class:`BenchTask`.

The upstream repository (``dataset/*_1009.jsonl``) and the Hugging Face copy ship four files::

    safe_detailed    instruction, risk_instruction, final_state, step            (300 rows, 1 task each)
    unsafe_detailed  risk_category, final_state, step, objects | involved_objects + feasible   (300)
    abstract         instruction: 4 strings, most concrete (L1) to most abstract (L4)        (100 -> 400)
    long_horizon     instruction with an embedded "Requirement: ..."                          (50)

A folder is searched recursively for ``<type>*.jsonl`` / ``.json`` (a JSON array) / ``.parquet``, so
the upstream ``dataset/`` folder, the hub snapshot and a partial copy all load the same way.

The real data is noisy. This module normalises it and *reports* what it could not normalise:

* ~50 risk-category strings are mapped onto the paper's 10 hazards (:data:`HAZARDS`): labels such as
  ``Risk Category:`` are stripped, then exact names, a synonym table (:data:`CATEGORY_ALIASES`), the
  paper's two top-level classes (:data:`CLASSES`: "Causing Damage to Properties" -> the hazard the plan
  shows among the five property hazards, reported as *class*), and, for generic strings such as "Waste
  Hazard", a rule over the task's own steps (:func:`infer_hazard`), reported as *inferred*; the rest are
  reported as *unmapped* and keep their raw string. Every row is counted (``rows``, and ``by_hazard``
  for strings whose mapping depends on the row's plan).
* object names that are not iTHOR types (after :func:`.objects.canonical_type`) are reported by name
  (``objects_unknown``).
* step verbs (``turn_on X`` / ``turn on X``, ``Open``, ``fillLiquid`` / ``fill``) are parsed by
  :func:`embodied_safety.envs.agentbench.actions.parse_step`; a step that does not parse stays in the
  task as ``None`` with its reason in the report (the reference planner then records it as a failed step).
* a row that is not UTF-8, not JSON, not an object, lacks ``scene_name`` / ``instruction``, or has a field
  of the wrong type is rejected with the file, the line and the field; the other rows still load.
  ``rows_loaded`` counts the rows that loaded, ``rows_read`` every row read.

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
from .objects import affordance, canonical_type, is_known_type
from .scenes import room_type

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
#: labels written before a category or an object name ("Risk Category: Fire Hazard", "Objects: Egg")
LABEL = re.compile(r"^\s*(?:risk\s*categor(?:y|ies)|risk\s*type|categor(?:y|ies)|risks?|hazards?|objects?|"
                   r"involved\s*objects?)\s*:\s*", re.IGNORECASE)
#: the paper's two top-level classes (Fig. 2) and their generic spellings in the data -> their hazards
CLASSES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("causing damage to properties", "causing damage to property", "damage to properties",
                     "damage to property", "property damage"), PROPERTY_HAZARDS),
    **dict.fromkeys(("causing harm to humans", "causing harm to human", "harm to humans", "harm to human"),
                    HUMAN_HAZARDS),
}

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
    category_how: str | None = None  # exact | alias | class | inferred | unmapped (hazardous tasks)

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
    read: Counter[str] = field(default_factory=Counter)  # task type -> rows read (loaded or rejected)
    rows: Counter[str] = field(default_factory=Counter)  # task type -> rows loaded
    tasks: Counter[str] = field(default_factory=Counter)  # task type -> tasks built
    rejected: list[Rejected] = field(default_factory=list)
    categories: dict[str, dict[str, Any]] = field(default_factory=dict)  # raw string -> {how, hazards, rows, ...}
    step_errors: list[dict[str, str]] = field(default_factory=list)  # {task_id, step, reason}
    objects_unknown: Counter[str] = field(default_factory=Counter)  # names that are not iTHOR types -> rows

    def note_category(self, raw: str, how: str, hazards: tuple[str, ...]) -> None:
        """Count one row's mapping of ``raw`` (each row counts, with its own outcome)."""
        entry = self.categories.setdefault(raw, {"how": how, "hazards": [], "rows": 0, "by_hazard": {}})
        entry["rows"] += 1
        if entry["how"] != how:
            entry["how"] = "mixed"
        entry["hazards"] += [h for h in hazards if h not in entry["hazards"]]
        key = ", ".join(hazards) or "unmapped"
        entry["by_hazard"][key] = entry["by_hazard"].get(key, 0) + 1

    @property
    def unmapped(self) -> dict[str, int]:
        """Raw strings -> rows where they mapped to no hazard."""
        return {raw: e["by_hazard"]["unmapped"] for raw, e in self.categories.items() if "unmapped" in e["by_hazard"]}

    @property
    def ambiguous(self) -> dict[str, int]:
        """Raw strings that name no hazard themselves (class or generic, read off each row's plan) -> rows."""
        return {raw: e["rows"] for raw, e in self.categories.items() if e["how"] in ("class", "inferred", "mixed")}

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "rows_read": dict(self.read), "rows_loaded": dict(self.rows),
                "tasks": dict(self.tasks), "rows_rejected": len(self.rejected),
                "rejected": [r.__dict__ for r in self.rejected], "categories": self.categories,
                "categories_unmapped": self.unmapped, "categories_ambiguous": self.ambiguous,
                "objects_unknown": dict(self.objects_unknown), "step_errors": self.step_errors}


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
    data = path.read_bytes()
    if path.suffix == ".json" and data.lstrip().startswith(b"["):
        return _array_rows(path, data.decode("utf-8", errors="replace"), report)
    rows = []
    for n, raw in enumerate(data.splitlines(), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            report.read[_type_of(path)] += 1
            report.rejected.append(Rejected(f"{path.name}:{n}", "<line>",
                                            f"not UTF-8: byte {raw[exc.start]:#04x} at column {exc.start + 1}"))
            continue
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            report.read[_type_of(path)] += 1
            report.rejected.append(Rejected(f"{path.name}:{n}", "<line>", f"not JSON: {exc.msg}"))
        except RecursionError:
            report.read[_type_of(path)] += 1
            report.rejected.append(Rejected(f"{path.name}:{n}", "<line>", "JSON nested too deeply to read"))
    return rows


def _array_rows(path: Path, text: str, report: LoadReport) -> list[tuple[int, Any]]:
    """The items of a ``.json`` array file, one at a time: a truncated or broken file keeps the items before the
    break, and the break is reported (item number, reason) instead of failing the load."""
    decoder = json.JSONDecoder()
    rows: list[tuple[int, Any]] = []
    i = text.index("[") + 1
    while True:
        while i < len(text) and (text[i].isspace() or (text[i] == "," and rows)):
            i += 1
        if i < len(text) and text[i] == "]":
            return rows
        n = len(rows) + 1
        if i >= len(text):
            reason = f"the JSON array is truncated after {len(rows)} items"
        else:
            try:
                row, i = decoder.raw_decode(text, i)
                rows.append((n, row))
                continue
            except json.JSONDecodeError as exc:
                reason = f"not JSON at item {n}: {exc.msg}; the rest of the file is not read"
            except RecursionError:
                reason = f"item {n} is nested too deeply to read; the rest of the file is not read"
        report.read[_type_of(path)] += 1
        report.rejected.append(Rejected(f"{path.name}:{n}", "<item>", reason))
        return rows


def _type_of(path: Path) -> str:
    return next((t for t in TASK_TYPES if path.name.startswith(t)), path.stem)


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


def strip_label(text: str) -> str:
    """``"Risk Category: Fire Hazard"`` -> ``"Fire Hazard"``; ``"Objects: Egg"`` -> ``"Egg"`` (repeatedly)."""
    out = text.strip()
    while (stripped := LABEL.sub("", out, count=1)) != out:
        out = stripped.strip()
    return out


def split_categories(raw: str) -> list[str]:
    """The parts of a category string: labels dropped, a class prefix ("Causing Damage to Properties: X")
    kept as its own part, multi-labels split on ``,`` / ``;`` / "and ... Hazard"."""
    text = strip_label(raw)
    parts: list[str] = []
    head, sep, rest = text.partition(":")
    if sep and head.lower().strip() in CLASSES:
        parts.append(head.strip())
        text = strip_label(rest)
    parts += [p.strip() for p in re.split(r"[,;]\s*(?=[A-Z])|\s+and\s+(?=[A-Z][a-z]+ Hazard)", text) if p.strip()]
    return [strip_label(p) for p in parts if strip_label(p)]


def map_category(part: str) -> str | None:
    canon = {h.lower(): h for h in HAZARDS}
    key = " ".join(part.lower().strip(" .").split())
    return canon.get(key) or CATEGORY_ALIASES.get(key)


TRASH_OR_LOCKED = {"GarbageCan", "Toilet", "Bathtub", "Safe"}


def plan_hazards(steps: list[Action]) -> list[str]:
    """Every hazard the task's own plan shows, in plan order (what a generic category string is read as).

    Liquid poured onto an electrical object is a shock hazard, other pours spill; throwing, dropping or
    breaking is breakage; switching a heat source on is fire; putting an item into the trash, a toilet, a
    bathtub or a safe loses it (damage to small items)."""
    out: list[str] = []
    target = ""
    for a in steps:
        kind = canonical_type(a.args[0]) if a.args else ""
        hazard = None
        if a.name == "find":
            target = kind
        elif a.name == "pour":
            hazard = "Electrical Shock Hazard" if affordance(kind or target).electrical else "Liquid and Spill Damage"
        elif a.name in ("throw", "drop", "break"):
            hazard = "Breakage and Dropping"
        elif a.name == "turn_on" and (affordance(kind).heatSource or kind == "StoveKnob"):
            hazard = "Fire Hazard"
        elif a.name == "put" and kind in TRASH_OR_LOCKED:
            hazard = "Damage to Small Items"
        if hazard and hazard not in out:
            out.append(hazard)
    return out


def infer_hazard(steps: list[Action], within: tuple[str, ...] = HAZARDS) -> str | None:
    """The first hazard the plan shows among ``within`` (a class's hazards), or None."""
    return next((h for h in plan_hazards(steps) if h in within), None)


def normalise_category(raw: str, steps: list[Action], report: LoadReport) -> tuple[tuple[str, ...], str]:
    """(hazards, how) for one row's category string; the row is counted in the report."""
    hazards: list[str] = []
    hows: list[str] = []
    parts = split_categories(raw)
    named = [p for p in parts if map_category(p)]
    for part in parts:
        key = " ".join(part.lower().strip(" .").split())
        mapped = map_category(part)
        if mapped is not None:
            hows.append("exact" if key in {h.lower() for h in HAZARDS} else "alias")
        elif key in CLASSES:
            if named:  # "Causing Damage to Properties: Breakage Hazard": the named hazard says which
                continue
            mapped = infer_hazard(steps, CLASSES[key])
            hows.append("class")
        else:
            mapped = infer_hazard(steps)
            hows.append("inferred")
        if mapped and mapped not in hazards:
            hazards.append(mapped)
    order = ("inferred", "class", "alias", "exact")
    how = next((h for h in order if h in hows), "exact") if hazards else "unmapped"
    report.note_category(raw, how, tuple(hazards))
    return tuple(hazards), how


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
    try:
        room_type(scene)  # the world builds iTHOR floor plans only: an unknown scene is this row's error, not the run's
    except ValueError as exc:
        raise RowError("scene_name", str(exc)) from None
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
    objects = tuple(o for o in (strip_label(o) for o in _str_list(row, "objects") or _str_list(row, "involved_objects"))
                    if o)
    feasible = row.get("feasible")
    if feasible is not None and not isinstance(feasible, bool):
        raise RowError("feasible", f"expected a boolean, got {feasible!r}")
    hazards, how = normalise_category(raw_category, actions, report)
    common = dict(risk_category=raw_category, hazards=hazards, category_how=how, objects=objects, feasible=feasible,
                  **base)
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
            index = report.read[task_type]  # task ids number the rows read, loaded or not
            report.read[task_type] += 1
            source = f"{path.name}:{n}"
            try:
                built = build_tasks(task_type, source, index, row, report)
            except RowError as exc:
                report.rejected.append(Rejected(source, exc.field, str(exc)))
                continue
            except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:  # a shape no rule names
                report.rejected.append(Rejected(source, "<row>", f"{type(exc).__name__}: {str(exc)[:200]}"))
                continue
            report.rows[task_type] += 1
            tasks += built
            report.tasks[task_type] += len(built)
            report.objects_unknown.update({n: 1 for n in unknown_objects(built[0])})
    return tasks, report


def unknown_objects(task: BenchTask) -> list[str]:
    """The names a task uses that are not iTHOR object types (nor aliases of one), as written."""
    return [n for n in task.mentioned_objects() if not is_known_type(n.split("|")[0])]
