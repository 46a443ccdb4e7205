"""Lexical rows: the environment's object vocabulary for a from-scratch actor (issue 20, item 5; an experiment).

The bootstrap actor's word-level tokenizer covers every catalog category (:func:`.bootstrap.vocabulary_texts`, as a
pretrained model's vocabulary would), but the *model* learns only the words of its training tasks. OOD-TaskShift's
target categories occur nowhere in the train split (by construction, and the augmentation pools exclude them), so
their embeddings stay at their random initialisation and, tied to the output layer, are only ever pushed down by
the softmax: the actor cannot read or name them, whatever its size. A pretrained LLM knows every object name from
pretraining. These rows are the nearest thing for the embedded actor: for each catalog category, short task-free
"find the object" prompts in the actor's input format (instruction, object list, observation) whose completion is
the object's instance name. No household primitive, goal or plan appears, so the OOD split's tasks (a template
with a new target) stay unseen; what the rows teach is the vocabulary, over every category alike.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..envs.household.predicates import short_name
from ..envs.household.suite.catalog import CATALOG
from .bootstrap_data import Example
from .prompts import template

#: the instruction of a lexical row (no household task starts with it)
INSTRUCTION = "Find the {words}."


def lexicon_examples(per_category: int, seed: int, distractors: int = 3,
                     categories: Sequence[str] | None = None, style: str = "compact") -> list[Example]:
    """``per_category`` rows for each catalog category (every one, fixed furniture included): the category among
    ``distractors`` other random categories in the object list, in random order; the completion is its instance
    name (``apple_pie.n.01_1``). Deterministic in ``seed``."""
    if per_category <= 0:
        return []
    cats = sorted(categories if categories is not None else CATALOG)
    rng = random.Random(seed)
    rows = []
    for cat in cats:
        for _ in range(per_category):
            others = rng.sample([c for c in cats if c != cat], min(distractors, len(cats) - 1))
            objects = [f"{c}_1" for c in [cat, *others]]
            rng.shuffle(objects)
            prompt = template(f"actor_{style}_v1").format(
                feedback="", task_instruction=INSTRUCTION.format(words=short_name(cat).replace("_", " ")),
                objects=", ".join(objects), object_abilities="none", task_goals="none", wash_rules="none",
                observation="\n".join(f"{o}: -" for o in objects), history="none")
            rows.append(Example(prompt, f"{cat}_1", "lexicon", f"lexicon:{cat}"))
    return rows
