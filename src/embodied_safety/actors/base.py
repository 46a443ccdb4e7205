"""The actor interface: a batch of prompts and a temperature in, raw text samples out."""

from __future__ import annotations

from typing import Protocol

from .prompts import PromptStyle


class Actor(Protocol):
    """Any backend (local transformers, OpenAI-compatible endpoint) that samples next actions."""

    prompt_style: PromptStyle

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int = 0) -> list[str]:
        """One raw completion per prompt (parse with :func:`embodied_safety.actors.parsing.parse_output`)."""
        ...
