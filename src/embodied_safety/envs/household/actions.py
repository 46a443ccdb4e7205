"""The 17 IS-Bench primitives plus DONE, and a tolerant parser for action strings.

Argument conventions (IS-Bench): PLACE_ON_TOP(obj, target), PLACE_INSIDE(obj, container),
WIPE(target, tool), CUT(target, tool), SOAK_UNDER(tool, source), SOAK_INSIDE(tool, container),
FILL_WITH(target, source), POUR_INTO(container, target), SPREAD(container, target),
WAIT_FOR_FROZEN(target, fridge); the rest take one object, DONE takes none. ``WAIT(obj)`` takes one
object as upstream's does; a bare ``WAIT()`` (what models often emit) is accepted as a no-op step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: primitive -> argument roles (the arity is len(roles))
PRIMITIVES: dict[str, tuple[str, ...]] = {
    "PLACE_ON_TOP": ("obj", "target"),
    "PLACE_INSIDE": ("obj", "container"),
    "OPEN": ("obj",),
    "CLOSE": ("obj",),
    "TOGGLE_ON": ("obj",),
    "TOGGLE_OFF": ("obj",),
    "WIPE": ("target", "tool"),
    "CUT": ("target", "tool"),
    "SOAK_UNDER": ("tool", "source"),
    "SOAK_INSIDE": ("tool", "container"),
    "FILL_WITH": ("target", "source"),
    "POUR_INTO": ("container", "target"),
    "SPREAD": ("container", "target"),
    "WAIT": ("obj",),
    "WAIT_FOR_COOKED": ("target",),
    "WAIT_FOR_WASHED": ("washer",),
    "WAIT_FOR_FROZEN": ("target", "fridge"),
    "DONE": (),
}

#: primitives that may also be called with no argument (``WAIT()``: a no-op step)
OPTIONAL_ARGS = frozenset({"WAIT"})

_CALL = re.compile(r"([A-Za-z_]+)\s*\(([^()]*)\)")
_BARE = re.compile(r"\b(DONE|WAIT)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Action:
    """A parsed primitive call."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


class ActionParseError(ValueError):
    """The text holds no well-formed primitive call."""


def parse_action(text: str) -> Action:
    """Parse ``"3. open( Fridge.n.01_1 )"`` -> ``Action("OPEN", ("fridge.n.01_1",))``.

    Tolerates what models emit: numbering, surrounding prose, wrong case, spaces, quotes.
    Takes the first call whose name is a known primitive. Raises ActionParseError otherwise,
    including for a known primitive called with the wrong number of arguments.
    """
    if not isinstance(text, str):
        raise ActionParseError(f"expected a string, got {type(text).__name__}")
    for match in _CALL.finditer(text):
        name = match.group(1).upper()
        if name not in PRIMITIVES:
            continue
        raw = match.group(2).strip()
        # object names never contain whitespace: "potato .n.01_1" (a word-level model's decode) -> "potato.n.01_1"
        args = tuple(re.sub(r"\s+", "", a.strip().strip("'\"`")).lower() for a in raw.split(",")) if raw else ()
        expected = len(PRIMITIVES[name])
        if name in OPTIONAL_ARGS and not args:
            return Action(name)
        if len(args) != expected or any(not a for a in args):
            raise ActionParseError(f"{name} takes {expected} argument(s) {PRIMITIVES[name]}, got {raw!r}")
        return Action(name, args)
    bare = _BARE.search(text)
    if bare:
        return Action(bare.group(1).upper())
    raise ActionParseError(f"no known primitive in {text[:80]!r}")


def normalise_action(text: str) -> str:
    """Canonical string form, e.g. for matching trigger actions and pruning duplicates."""
    return str(parse_action(text))
