"""Parse actor output into ``{"action", "reasoning"}``; anything unusable is a recorded failure."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..envs.household.actions import ActionParseError, parse_action
from ..llm.parsing import first_json_object


@dataclass(frozen=True)
class ParsedOutput:
    raw: str
    action: str | None  # canonical primitive call, None when unparseable
    reasoning: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.action is not None


def parse_output(raw: str) -> ParsedOutput:
    """Prefer a JSON object with an ``action`` field; fall back to the first primitive call in the text."""
    reasoning = ""
    candidates = []
    obj = first_json_object(raw)
    if obj is not None and isinstance(obj.get("action"), str):
        candidates.append(obj["action"])
        reasoning = str(obj.get("reasoning", ""))
    candidates.append(raw)
    error = None
    for text in candidates:
        try:
            return ParsedOutput(raw, str(parse_action(text)), reasoning)
        except ActionParseError as exc:
            error = str(exc)
    return ParsedOutput(raw, None, reasoning, error)


def format_output(action: str, reasoning: str = "") -> str:
    """The target format the bootstrap actor is trained to emit (and Box 10 asks for)."""
    return json.dumps({"action": action, "reasoning": reasoning})
