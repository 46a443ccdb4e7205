"""SafeAgentBench's 17 high-level actions and a tolerant parser for the step strings that name them.

The dataset's reference plans and model outputs spell the same action many ways (``turn on X``,
``turn_on X``, ``Open Fridge``, ``1. find Mug.``); :func:`parse_step` maps them onto one canonical
:class:`Action` whose ``str`` is the text the benchmark itself uses (``turn_on Candle``,
``fillLiquid Mug wine``, ``pour``). Object arguments keep their text: deciding which scene object
``"garbage can"`` means is :mod:`.objects`' and the world's job, not the parser's.

Arity (what the upstream low-level controller accepts):

* ``find pick open close slice turn_on turn_off break cook dirty clean emptyLiquid``: one object.
* ``put R``: one argument, the *receptacle*; it always places the held object. ``put in R``,
  ``put on R``, ``put down R`` and ``put Mug in R`` all become ``put R`` (the named object is dropped:
  upstream, too, puts whatever the robot holds).
* ``fillLiquid X liquid``: the liquid must be one of :data:`LIQUIDS`. When it is missing
  (``fill Mug``) it defaults to :data:`DEFAULT_LIQUID` ("water", what "fill" means in plain English);
  a liquid outside the list (``fill Mug with milk``) is a :class:`StepParseError`.
* ``drop``, ``throw``, ``pour`` act on the held object and take no argument. Tolerated extras:
  ``pour T`` / ``pour into T`` names the target (default: the object found last); ``drop X`` /
  ``throw X`` may name the held object, which the world then checks. A bare liquid (``pour water``)
  is not a target and is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .objects import is_known_type

ACTIONS: tuple[str, ...] = (
    "find", "pick", "put", "open", "close", "slice", "turn_on", "turn_off", "drop", "throw", "break", "cook",
    "dirty", "clean", "fillLiquid", "emptyLiquid", "pour",
)
LIQUIDS: tuple[str, ...] = ("water", "coffee", "wine")
DEFAULT_LIQUID = "water"

#: actions that take exactly one object argument (``put``'s is the receptacle)
ONE_OBJECT: frozenset[str] = frozenset(
    {"find", "pick", "put", "open", "close", "slice", "turn_on", "turn_off", "break", "cook", "dirty", "clean",
     "emptyLiquid"}
)
#: actions on the held object, with an optional argument (see the module docstring)
HELD_OBJECT: frozenset[str] = frozenset({"drop", "throw", "pour"})


@dataclass(frozen=True)
class Action:
    """One high-level action; ``str(action)`` is its canonical text."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return " ".join(str(part) for part in (self.name, *self.args))


class StepParseError(ValueError):
    """A step string that is not one of the 17 actions, or has the wrong arguments; the message says which."""


# Verb spellings (lower-cased, ``-`` read as ``_``): two-word forms are tried before one-word forms.
_TWO_WORD: dict[tuple[str, str], str] = {
    ("turn", "on"): "turn_on", ("toggle", "on"): "turn_on", ("switch", "on"): "turn_on",
    ("turn", "off"): "turn_off", ("toggle", "off"): "turn_off", ("switch", "off"): "turn_off",
    ("pick", "up"): "pick", ("put", "down"): "put",
    ("fill", "liquid"): "fillLiquid", ("empty", "liquid"): "emptyLiquid",
}
_ONE_WORD: dict[str, str] = {
    **{a.lower(): a for a in ACTIONS},
    "turnon": "turn_on", "toggle_on": "turn_on", "toggleon": "turn_on",
    "turnoff": "turn_off", "toggle_off": "turn_off", "toggleoff": "turn_off",
    "pickup": "pick", "pick_up": "pick",
    "fill": "fillLiquid", "fill_liquid": "fillLiquid",
    "empty": "emptyLiquid", "empty_liquid": "emptyLiquid",
}
_ARTICLES = frozenset({"a", "an", "the", "some"})
#: "top" is not one ("put Counter Top" names the CounterTop); "on top of R" is read through "on"
_PREPOSITIONS = frozenset({"in", "into", "on", "onto", "inside", "to", "at", "over", "under"})
_NUMBERING = re.compile(r"^\s*(?:step\s*\d+\s*[:.)-]?|\(?\d+\s*[.):-]|[-*\u2022>])\s*", re.IGNORECASE)
_PUNCTUATION = ".,;:!?"
_QUOTES = "\"'`"


def parse_step(text: str) -> Action:
    """Parse one plan step into its canonical :class:`Action` (raises :class:`StepParseError`)."""
    raw = str(text)
    cleaned = _NUMBERING.sub("", raw.strip().strip(_QUOTES).strip())
    tokens = cleaned.strip(_QUOTES + _PUNCTUATION + " \t").split()
    if not tokens:
        raise StepParseError(f"empty step {raw!r}")
    name, rest = _verb(tokens, raw)
    if name in ONE_OBJECT:
        if name == "put":
            rest = _after_preposition(rest)
        arg = _object_text(rest)
        if not arg:
            raise StepParseError(f"{raw!r}: {name} needs an object" + (" (the receptacle)" if name == "put" else ""))
        return Action(name, (arg,))
    if name == "fillLiquid":
        return _fill(rest, raw)
    # drop / throw / pour: the held object; an optional argument
    arg = _object_text(_after_preposition(rest) if name == "pour" else _before_preposition(rest))
    if name == "pour" and arg.lower() in LIQUIDS:
        arg = ""  # "pour water": the liquid is what is held, not a target
    return Action(name, (arg,) if arg else ())


def _verb(tokens: list[str], raw: str) -> tuple[str, list[str]]:
    first = tokens[0].lower().replace("-", "_")
    if len(tokens) > 1 and (first, tokens[1].lower()) in _TWO_WORD:
        return _TWO_WORD[(first, tokens[1].lower())], tokens[2:]
    if first in _ONE_WORD:
        return _ONE_WORD[first], tokens[1:]
    raise StepParseError(f"{raw!r}: unknown action verb {tokens[0]!r}; expected one of {', '.join(ACTIONS)}")


def _object_text(tokens: list[str]) -> str:
    words = [t.strip(_QUOTES + ",") for t in tokens]
    while words and words[0].lower() in _ARTICLES:
        words = words[1:]
    return " ".join(w for w in words if w)


def _after_preposition(tokens: list[str]) -> list[str]:
    """``[Mug, in, the, Sink]`` -> ``[the, Sink]``; ``[on, top, of, Desk]`` -> ``[Desk]``; no preposition: all."""
    for i, tok in enumerate(tokens):
        if tok.lower() in _PREPOSITIONS:
            tail = tokens[i + 1:]
            while tail and tail[0].lower() in {"top", "of", "to"}:
                tail = tail[1:]
            return tail
    return tokens


def _before_preposition(tokens: list[str]) -> list[str]:
    for i, tok in enumerate(tokens):
        if tok.lower() in _PREPOSITIONS:
            return tokens[:i]
    return tokens


def _fill(tokens: list[str], raw: str) -> Action:
    lowered = [t.lower() for t in tokens]
    if "with" in lowered:
        i = lowered.index("with")
        obj, liquid = _object_text(tokens[:i]), _object_text(tokens[i + 1:]).lower()
    elif len(tokens) >= 2 and lowered[-1] in LIQUIDS:
        obj, liquid = _object_text(tokens[:-1]), lowered[-1]
    else:
        obj, liquid = _object_text(tokens), ""
        head = _object_text(tokens[:-1])
        if len(tokens) >= 2 and not is_known_type(obj) and is_known_type(head):
            obj, liquid = head, lowered[-1]  # "fillLiquid Mug milk": a known object and a bad liquid
    if not obj:
        raise StepParseError(f"{raw!r}: fillLiquid needs an object and a liquid ({', '.join(LIQUIDS)})")
    if not liquid:
        liquid = DEFAULT_LIQUID
    if liquid not in LIQUIDS:
        raise StepParseError(f"{raw!r}: liquid {liquid!r} is not one of {', '.join(LIQUIDS)}")
    return Action("fillLiquid", (obj, liquid))
