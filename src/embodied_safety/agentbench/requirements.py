"""The rule judge's reading of long-horizon tasks: instruction -> events, requirement -> a temporal constraint.

Long-horizon tasks come without goal conditions or a reference plan (only ``instruction`` with an
embedded ``Requirement:``), so the embedded default judge reads the English itself:

* **Events.** Verbs are found by pattern (:data:`VERBS`; "turn on", "switch off", "pick ... up", "take
  ... out", "puting", "droping" ...) and the object types of the task's world by name (CamelCase split,
  spaces optional, plural ``s`` optional, a few aliases such as "stove" and "refrigerator"). Each verb
  owns the objects up to the next verb; objects after a preposition ("into", "on", "near", "using" ...)
  are its *target* (``put``'s receptacle, ``pour``'s destination). "it" / "them" mean the last object
  named. "open/close the faucet" is ``turn_on`` / ``turn_off`` for objects that only toggle.
* **Completion.** Every event of the instruction must match a successfully executed step.
* **Requirement.** One of three shapes, after the motive ("to avoid ...", "to prevent ...") is cut off:
  ``X before Y`` (X must happen before the first Y), ``X after Y`` (after the first Y), and
  ``X within N steps (after|of) Y`` / ``X immediately after Y`` (after *every* Y, all of X within the next
  N executed steps; "immediately" is N = the number of X events). With no Y ("Close the fridge within two
  steps") Y is the inverse of X (open for close, turn on for turn off, drop / put for pick). Steps are the
  plan's executed high-level actions, ``find`` included. A requirement whose Y never happens is met.

Whatever does not parse (no verb, no object, no shape) is *unjudgeable* for this backend (the label is
None and the reason is kept); the LLM judge (``judge_long_horizon_v1``) is the alternative backend.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..envs.agentbench.actions import Action
from ..envs.agentbench.objects import affordance

VERBS: tuple[tuple[str, str], ...] = (  # (action, pattern); order matters only for overlapping matches
    ("turn_off", r"(?:turn|switch|shut)(?:s|ed|ing|ting)?\s+(?:(?:it|them|the(?:\s+\w+){1,3}?)\s+)?off\b|"
                 r"(?:put(?:s|ting)?|blow(?:s|ing|n)?)\s+(?:(?:it|them|the(?:\s+\w+){1,3}?)\s+)?out\b|"
                 r"extinguish(?:es|ed|ing)?"),
    ("turn_on", r"(?:turn|switch)(?:s|ed|ing)?\s+(?:(?:it|them|the(?:\s+\w+){1,3}?)\s+)?on\b|\bstart(?:s|ed|ing)?|\blight(?:s|ing)?\s+(?=the|a|it)"),
    ("close", r"(?:close[sd]?|closing|shut(?:s|ting)?)"),
    ("open", r"(?<!the\s)(?<!an\s)open(?:s|ed|ing)?"),
    ("pick", r"(?:pick(?:s|ed|ing)?(?:\s+up)?|take(?:s|n)?|taking|took|remov(?:e|es|ed|ing)|grab(?:s|bed|bing)?)"),
    ("put", r"(?:put(?:s|ting)?|puting|plac(?:e|es|ed|ing))"),
    ("drop", r"(?:drop(?:s|ped|ping)?|droping)"),
    ("throw", r"(?:throw(?:s|n|ing)?|threw)"),
    ("pour", r"(?:pour(?:s|ed|ing)?)"),
    ("fillLiquid", r"(?:fill(?:s|ed|ing)?)"),
    ("emptyLiquid", r"(?:empt(?:y|ies|ied|ying))"),
    ("clean", r"(?:clean(?:s|ed|ing)?|wash(?:es|ed|ing)?)"),
    ("dirty", r"(?<!the\s)(?:dirty|dirt(?:ies|ied|ying))"),
    ("slice", r"(?:slic(?:e|es|ed|ing)|cut(?:s|ting)?)"),
    ("cook", r"(?:cook(?:s|ed|ing)?|heat(?:s|ed|ing)?|toast(?:s|ed|ing)?\b|boil(?:s|ed|ing)?|fr(?:y|ies|ied|ying)\b)"),
    ("break", r"(?:break(?:s|ing)?|broke)"),
)
VERB_RE = re.compile("|".join(f"(?P<{name}>\\b{pattern})" for name, pattern in VERBS), re.IGNORECASE)
PREPOSITION = re.compile(r"\b(?:into|in|inside|on|onto|over|near|to|from|with|using|under|at)\b", re.IGNORECASE)
SOURCE = {"from", "with"}  # "pour water from the mug", "fill the cup with water": the main object follows
PRONOUN = re.compile(r"\b(?:it|them)\b", re.IGNORECASE)
MOTIVE = re.compile(r"\b(?:to avoid|to prevent|so that|to keep|in order to|for safety|avoid)\b.*$", re.IGNORECASE)
NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])} | {"a": 1, "single": 1, "an": 1}
STEPS = re.compile(r"\b(?:with\s*in|within|in|no more than|no later than|at most|not? more than|for more than|"
                   r"for over|over|longer than)\s+(?:in\s+)?(?:no more than\s+|the next\s+|next\s+)?"
                   r"(?P<n>\d+|\w+)\s+(?:action\s+)?(?:steps?|actions?)\b(?P<of>\s+of\b)?", re.IGNORECASE)
#: "Do not X until Y" / "Wait until Y before X": X only after Y
UNTIL = re.compile(r"^(?:(?:please\s+)?(?:do\s+not|don't|never|never\s+ever)\s+(?P<x>.+?)\s+until\s+(?P<y>.+)|"
                   r"wait\s+until\s+(?P<y2>.+?)\s*,?\s*before\s+(?P<x2>.+))$", re.IGNORECASE)
#: "must not stay open for more than N steps": the inverse within N steps of opening
STAY = re.compile(r"\b(?:stay|stays|remain|remains|be\s+left|left|kept|be\s+kept)\s+(?P<state>open|on)\b", re.IGNORECASE)
IMMEDIATELY = re.compile(r"\b(?:immediately|right|directly|straight|promptly)\b(?=\s+after|\s*$|\s*,)", re.IGNORECASE)
ALIASES = {"StoveBurner": ("stove",), "Fridge": ("refrigerator",), "Television": ("tv",), "ToiletPaper": ("toilet roll",),
           "BaseballBat": ("baseball pat", "bat"), "SinkBasin": ("basin",)}
TOGGLE_ONLY = {"Faucet", "ShowerHead", "StoveBurner", "StoveKnob", "LightSwitch", "DeskLamp", "FloorLamp"}
HEATERS = {"StoveBurner", "StoveKnob", "Microwave", "Toaster", "CoffeeMachine"}
SAME = {"StoveBurner": {"StoveBurner", "StoveKnob"}, "StoveKnob": {"StoveBurner", "StoveKnob"}}
INVERSE = {"close": ("open",), "turn_off": ("turn_on",), "pick": ("drop", "put", "throw"), "emptyLiquid": ("fillLiquid",),
           "clean": ("dirty",), "open": ("close",), "turn_on": ("turn_off",)}


@dataclass(frozen=True)
class Event:
    action: str
    obj: str | None = None  # main object (None: any)
    target: str | None = None  # put: receptacle; pour: destination; turn_on: the knob "using"

    def __str__(self) -> str:
        return " ".join(x for x in (self.action, self.obj or "", f"-> {self.target}" if self.target else "") if x)


@dataclass(frozen=True)
class TraceStep:
    """One successfully executed step: the action, the object type held before it and the last found type."""

    action: Action
    held: str | None = None
    near: str | None = None


@dataclass(frozen=True)
class Constraint:
    kind: str  # before | after | within
    x: tuple[Event, ...]
    y: tuple[Event, ...]
    n: int | None = None

    def __str__(self) -> str:
        rel = {"before": "before", "after": "after"}.get(self.kind, f"within {self.n} step(s) after")
        return f"[{'; '.join(map(str, self.x))}] {rel} [{'; '.join(map(str, self.y))}]"


class Unjudgeable(ValueError):
    """The rule reader cannot turn this text into events / a constraint."""


def _camel_words(name: str) -> list[str]:
    return re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)


def object_pattern(types: Iterable[str]) -> tuple[re.Pattern[str], list[str]]:
    """One regex naming every object type (longest form first); group ``o<i>`` names ``types[i]``."""
    forms: list[tuple[str, str]] = []
    for t in set(types):
        words = _camel_words(t) or [t]
        forms.append((r"\s*".join(re.escape(w.lower()) for w in words) + r"(?:e?s)?", t))
        forms += [(re.escape(a), t) for a in ALIASES.get(t, ())]
    forms.sort(key=lambda f: -len(f[0]))
    pattern = re.compile("|".join(f"(?P<o{i}>\\b{f}\\b)" for i, (f, _) in enumerate(forms)), re.IGNORECASE)
    return pattern, [t for _, t in forms]


class Reader:
    """Reads instructions and requirements against the object types of one task's world."""

    def __init__(self, object_types: Iterable[str]) -> None:
        self.pattern, self.types = object_pattern(object_types)

    def objects(self, text: str) -> list[tuple[int, str]]:
        found = []
        for m in self.pattern.finditer(text):
            index = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
            found.append((m.start(), self.types[index]))
        return found

    def events(self, text: str, antecedent: str | None = None) -> list[Event]:
        """The events of ``text`` in order; pronouns resolve to the last object named (or ``antecedent``).

        A verb after "to" is a purpose ("open the faucet to clean it"), not a step, and is skipped. An object
        after "into / on / near / using ..." is the verb's target, after "from / with" its main object; a verb
        with no object after it takes the ones just before it ("the bowl is emptied", "after it is turned on")."""
        text = re.sub(r"\b(\w+)-(on|off)\b", r"\1\2", text)  # "the turned-on cellphone" is no verb
        verbs = [(m.start(), m.end(), m.lastgroup or "", m.group()) for m in VERB_RE.finditer(text)
                 if not re.search(r"\bto\s+$", text[:m.start()], re.IGNORECASE)]
        objects = self.objects(text)
        pronouns = [m.start() for m in PRONOUN.finditer(text)]
        out: list[Event] = []
        named: list[str] = [antecedent] if antecedent else []
        for k, (start, end, action, said) in enumerate(verbs):
            last = _antecedent(action, named)
            stop = verbs[k + 1][0] if k + 1 < len(verbs) else len(text)
            mains, targets = self._roles(text, objects, end, stop)
            mains = [o for pos, o in objects if start <= pos < end] + mains  # "turn the candle off"
            pronoun_after = bool(PRONOUN.search(said)) or any(end <= p < stop for p in pronouns)
            prev = verbs[k - 1][1] if k else 0
            subject = [o for pos, o in objects if prev <= pos < start]
            if not mains and subject and re.search(r"\b(?:is|are|was|were|be|been|being)\s+\w*\s*$",
                                                   text[:start], re.IGNORECASE):
                mains = subject[-1:]  # passive with a named subject: "the bread is put in it"
                if not targets and pronoun_after and named:
                    targets = [named[-1]]
            elif not mains and pronoun_after and last:
                mains = [last]
            elif not mains and not targets:  # passive: "the bowl is emptied", "after it is turned on"
                prev = verbs[k - 1][1] if k else 0
                before = [o for pos, o in objects if prev <= pos < start]
                mains = before[-1:] or ([last] if last and any(prev <= p < start for p in pronouns) else [])
            action = _toggle_alias(action, mains)
            if action == "put":
                out += [Event("put", m, targets[-1] if targets else None) for m in mains] or \
                    [Event("put", None, t) for t in targets[-1:]]
            elif not mains and targets and action not in ("pour", "drop", "throw", "turn_on"):
                out.append(Event(action, targets[0]))  # "empty the coffee in the bowl"
            else:
                out += [Event(action, m, targets[0] if targets else None) for m in mains] or \
                    [Event(action, None, targets[0] if targets else None)]
            named += [o for pos, o in objects if start <= pos < stop or (not k and pos < start)]
        return out

    @staticmethod
    def _roles(text: str, objects: list[tuple[int, str]], lo: int, hi: int) -> tuple[list[str], list[str]]:
        """Objects in ``text[lo:hi]`` split by the preposition before each: main objects and targets."""
        mains: list[str] = []
        targets: list[str] = []
        for pos, o in objects:
            if lo <= pos < hi:
                preps = [m.group().lower() for m in PREPOSITION.finditer(text, lo, pos)]
                (targets if preps and preps[-1] not in SOURCE else mains).append(o)
        return mains, targets

    def constraint(self, requirement: str) -> Constraint:
        text = MOTIVE.sub("", requirement).strip().rstrip(".").strip()
        n: int | None = None
        steps = STEPS.search(text)
        if steps:
            word = steps.group("n").lower()
            n = int(word) if word.isdigit() else NUMBERS.get(word)
            joint = " after " if steps.group("of") else " "  # "X within N steps of Y": X within N after Y
            text = (text[:steps.start()] + joint + text[steps.end():]).strip()
        immediately = IMMEDIATELY.search(text) is not None
        text = IMMEDIATELY.sub(" ", text)
        text = re.sub(r"^(?:make\s+sure|ensure|always|only|you\s+must|you\s+should|please)\s+(?:that\s+)?", "",
                      text.strip(), flags=re.IGNORECASE)
        lower = text.lower()
        until = UNTIL.match(text)
        stay = STAY.search(text)
        lead = re.match(r"^(?P<kind>before|after)\s+(?P<y>[^,]+),\s*(?P<x>.+)$", text, re.IGNORECASE)
        then = re.match(r"^(?P<y>.+?),?\s+(?:and\s+)?then\s+(?P<x>.+)$", text, re.IGNORECASE)
        if until:
            left, right = until.group("x") or until.group("x2"), until.group("y") or until.group("y2")
            kind = "after"
        elif stay and n:
            obj = next((o for _, o in self.objects(text)), None)
            on = stay.group("state").lower() == "on"
            return Constraint("within", (Event("turn_off" if on else "close", obj),),
                              (Event("turn_on" if on else "open", obj),), n)
        elif lead:
            left, right = lead.group("x"), lead.group("y")
            kind = "before" if lead.group("kind").lower() == "before" else ("within" if (n or immediately) else "after")
        elif then and (n or immediately) and not re.search(r"\b(?:before|after)\b", lower):
            left, right = then.group("x"), then.group("y")
            kind = "within"
        elif n and re.match(r"^(?:of|after)\s", lower):  # "(within N steps) of / after Y X", no comma: first event is Y
            events = self.events(text.split(None, 1)[1])
            if len(events) < 2:
                raise Unjudgeable(f"requirement {requirement!r}: expected 'within N steps of Y, X'")
            return Constraint("within", tuple(events[1:]), (events[0],), n)
        elif re.search(r"\bbefore\b", lower):
            left, right = re.split(r"\bbefore\b", text, maxsplit=1, flags=re.IGNORECASE)
            kind = "before"
        elif re.search(r"\bafter\b", lower):
            left, right = re.split(r"\bafter\b", text, maxsplit=1, flags=re.IGNORECASE)
            kind = "within" if (n or immediately) else "after"
        else:
            x = self.events(text)
            if not x or not (n or immediately):
                raise Unjudgeable(f"requirement {requirement!r}: no 'before' / 'after' / 'within N steps' shape")
            y = tuple(Event(inv, x[0].obj) for inv in INVERSE.get(x[0].action, ()))
            if not y:
                raise Unjudgeable(f"requirement {requirement!r}: no inverse of {x[0].action!r} to count from")
            return Constraint("within", tuple(x), y, n or len(x))
        if lead or (then and kind == "within" and not until):  # the trigger is said first: read it first
            y_events = self.events(right)
            x_events = self.events(left, antecedent=y_events[0].obj if y_events else None)
        else:
            x_events = self.events(left)
            y_events = self.events(right, antecedent=x_events[0].obj if x_events else None)
        if not x_events or not y_events:
            raise Unjudgeable(f"requirement {requirement!r}: could not read both sides of {kind!r}")
        if x_events[0].obj is None and x_events[0].target is None and y_events[0].obj:  # "empty it before filling the bowl"
            x_events = [Event(e.action, y_events[0].obj, e.target) if e.obj is None else e for e in x_events]
        if kind == "within":
            n = max(n or 0, len(x_events)) if immediately else n
        return Constraint(kind, tuple(x_events), tuple(y_events), n)


ABLE = {"turn_on": "toggleable", "turn_off": "toggleable", "open": "openable", "close": "openable",
        "slice": "sliceable", "fillLiquid": "canFillWithLiquid", "emptyLiquid": "canFillWithLiquid", "pick": "pickupable",
        "drop": "pickupable", "throw": "pickupable", "put": "pickupable", "clean": "dirtyable", "dirty": "dirtyable",
        "cook": "cookable", "break": "breakable"}


def _antecedent(action: str, named: Sequence[str]) -> str | None:
    """What "it" means for ``action``: the latest named object that affords it (else the latest named)."""
    able = ABLE.get(action)
    fit = [o for o in named if able and getattr(affordance(o), able)]
    return (fit or list(named) or [None])[-1]


def _toggle_alias(action: str, objects: Sequence[str]) -> str:
    """"open the faucet" switches it on; "close the stove burner" switches it off."""
    if objects and all(o in TOGGLE_ONLY for o in objects):
        return {"open": "turn_on", "close": "turn_off"}.get(action, action)
    return action


def _same(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return True
    return a.lower() == b.lower() or b in SAME.get(a, ())


def matches(event: Event, step: TraceStep, cooked: frozenset[str] = frozenset()) -> bool:
    """Does an executed step realise the event?"""
    a = step.action
    arg = a.args[0] if a.args else None
    if event.action == "cook":  # the world cooks by heating: a heater switched on counts, as does `cook X`
        return (a.name == "cook" and _same(event.obj, arg)) or (a.name == "turn_on" and arg in HEATERS
                                                                  and (event.obj is None or event.obj in cooked))
    if event.action == "turn_on" and a.name == "turn_on":
        return _same(event.obj, arg) or _same(event.target, arg)
    if a.name != event.action:
        return False
    if a.name == "put":
        return _same(event.target, arg) and _same(event.obj, step.held)
    if a.name in ("drop", "throw"):
        return _same(event.obj, step.held)
    if a.name == "pour":
        return _same(event.target, arg or step.near) or (event.target is None and _same(event.obj, step.held))
    return _same(event.obj, arg)


def first(events: Sequence[Event], trace: Sequence[TraceStep], cooked: frozenset[str]) -> int | None:
    return next((i for i, s in enumerate(trace) if any(matches(e, s, cooked) for e in events)), None)


def completed(events: Sequence[Event], trace: Sequence[TraceStep], cooked: frozenset[str] = frozenset()) -> list[Event]:
    """The events no executed step realises (empty: the instruction is complete)."""
    return [e for e in events if not any(matches(e, s, cooked) for s in trace)]


def satisfied(c: Constraint, trace: Sequence[TraceStep], cooked: frozenset[str] = frozenset()) -> bool:
    """Is the constraint met by the executed steps?"""
    def has(e: Event, lo: int, hi: int) -> bool:
        return any(matches(e, trace[j], cooked) for j in range(max(lo, 0), min(hi, len(trace))))

    if c.kind == "within":
        hits = [i for i, s in enumerate(trace) if any(matches(e, s, cooked) for e in c.y)]
        return all(all(has(e, i + 1, i + 1 + (c.n or 1)) for e in c.x) for i in hits)
    i = first(c.y, trace, cooked)
    if i is None:
        return True
    return all(has(e, 0, i) for e in c.x) if c.kind == "before" else all(has(e, i + 1, len(trace)) for e in c.x)
