"""Versioned prompt templates (SafeBranch App. E.1, Boxes 10, 11 and 7) and their rendering.

* ``actor_full_v1``: the deployment actor prompt (Box 10 content) for instruction-tuned LLMs.
* ``actor_compact_v1``: the same input slots without the instruction preamble, object abilities
  and wash rules, for the tiny bootstrap actor trained from scratch (it cannot use the preamble,
  and every token of it costs training time).
* ``rejection_v1`` (Box 11) and ``feedback_v1`` (the critic cue): inserted *immediately before*
  the literal anchor ``Your input:``, so hindsight relabelling (Box 7) is "drop everything between
  the preamble and the anchor" and yields the cue-free prompt byte for byte. (Box 7 says "strip
  everything before the anchor", which with Box 10 would also strip the preamble; the paper's
  canonical relabel, "use the rejected sample's input", is what this placement makes exact.)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

ANCHOR = "Your input:"
PromptStyle = Literal["full", "compact"]
PROMPT_VERSION = "v1"


@cache
def template(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text()


@dataclass(frozen=True)
class Cue:
    """Critic feedback plus the rejected proposal, shown to the actor during branch construction."""

    mode: str  # INSERT | REPLACE | REPLAN
    feedback: str
    prev_action: str
    prev_reasoning: str = ""

    def render(self) -> str:
        fb = template("feedback_v1").format(mode=self.mode, feedback=self.feedback)
        rej = template("rejection_v1").format(prev_action=self.prev_action, prev_reasoning=self.prev_reasoning or "-",
                                              rejection_reason=self.feedback)
        return f"{fb}{rej}\n"


def strip_cue(prompt: str) -> str:
    """Hindsight relabel: remove a cue block inserted before the anchor (no-op on cue-free prompts)."""
    head, sep, tail = prompt.partition(ANCHOR)
    if not sep:
        raise ValueError(f"prompt has no {ANCHOR!r} anchor")
    marker = template("feedback_v1").split("(", 1)[0]  # "[Safety constraint] "
    cut = head.find(marker)
    return (head if cut < 0 else head[:cut]) + sep + tail
