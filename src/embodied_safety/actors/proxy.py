"""Proxy names: an unseen object word is shown to a from-scratch actor as a seen word with the same affordances.

The embedded bootstrap actor has no pretraining: an object category it never wrote in training (95 of the 96
OOD-TaskShift tasks hold one) has an untrained embedding, and the actor fills that slot with a seen object
(docs/training.md). A pretrained LLM knows that an apple pie is a food like a burrito. This wrapper gives
the small actor that one piece of knowledge from the environment's own catalog: before generation, each object
category of the prompt whose word the actor never wrote in a completion is replaced, in every form
(``apple_pie.n.01_1``, ``apple_pie``, ``apple pie``), by a *trained* category with exactly the same catalog
abilities that is not already in the prompt — the one that co-occurred most with the prompt's other objects in the
training prompts, so it likely played the same role there (:func:`proxy_map`); the output is mapped back, so the environment only ever sees
the real names. A category with no such proxy stays as it is.

It is delexicalisation (as in task-oriented dialogue) restricted to the words the model cannot know, with the
catalog's affordances choosing the stand-in. The bootstrap stage stores the :class:`Lexicon` in the actor's profile
(``bootstrap_actor.proxy_names``); derived actors (SFT, SafeBranch) copy the profile, and every backend that reads it
(:class:`.hf.HFActor`, :class:`.openai_backend.OpenAIActor` on a local dir) applies it unless told not to
(``proxy_names=False``, the "plain" numbers the reports show beside it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..envs.household.suite.catalog import CATALOG

#: an instance name in a prompt: ``apple_pie.n.01_1`` -> category ``apple_pie.n.01``
INSTANCE = re.compile(r"(?<![A-Za-z_])([a-z][a-z_]*\.n\.\d+)_\d+")
#: the goal line of the actor prompts (``actor_{compact,full}_v1``): the objects the task is about
GOALS = re.compile(r"task_goals:(.*)")
INSTRUCTION = re.compile(r"task_instruction:(.*)")


def stem(category: str) -> str:
    return category.split(".", 1)[0]


def substitute(text: str, mapping: Mapping[str, str]) -> str:
    """Replace whole object words of ``mapping`` (and their spaced forms, ``frying pan`` for ``frying_pan``) at once."""
    if not mapping:
        return text
    forms = {**mapping, **{k.replace("_", " "): v.replace("_", " ") for k, v in mapping.items() if "_" in k}}
    pattern = re.compile(r"(?<![A-Za-z_])(" + "|".join(re.escape(k) for k in sorted(forms, key=len, reverse=True))
                         + r")(?![A-Za-z_])")
    return pattern.sub(lambda m: forms[m.group(1)], text)


@dataclass
class Lexicon:
    """What the actor learnt to write: per object category, how often it occurs in a training completion
    (``counts``), and how often it does so in a prompt that also holds each other category (``cooc``)."""

    counts: dict[str, int] = field(default_factory=dict)
    cooc: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def from_examples(cls, pairs: Iterable[tuple[str, str]]) -> Lexicon:
        """From ``(prompt, completion)`` training pairs."""
        counts: Counter[str] = Counter()
        cooc: dict[str, Counter[str]] = {}
        for prompt, completion in pairs:
            objects = {m.group(1) for m in INSTANCE.finditer(prompt)}
            for cat in {m.group(1) for m in INSTANCE.finditer(completion.replace(" ", ""))}:
                counts[cat] += 1
                cooc.setdefault(cat, Counter()).update(objects - {cat})
        return cls(dict(counts), {k: dict(v) for k, v in cooc.items()})

    def to_json(self) -> dict[str, object]:
        return {"counts": self.counts, "cooc": self.cooc}


def proxy_map(prompt: str, lexicon: Lexicon) -> dict[str, str]:
    """``{unseen category: proxy category}`` for the prompt's objects. A proxy is a trained category with the same
    catalog abilities whose word the prompt does not hold; the one that co-occurred most in training with the
    prompt's known objects (the role it played there is likely the one needed here), then the most frequent, then
    by name. A category is unseen when its word was never written in a training completion. Only the categories of
    the task's goals are proxied (a whole prompt's when it has no goal line): an unseen *distractor* shown as a
    word the actor knows in a task role would pull the plan towards it (OOD-ObjectShift)."""
    cats = sorted({m.group(1) for m in INSTANCE.finditer(prompt)})
    goals, instruction = GOALS.search(prompt), INSTRUCTION.search(prompt)
    in_goals = {m.group(1) for m in INSTANCE.finditer(goals.group(1))} if goals else set(cats)
    if instruction:  # and the objects the instruction names (a tool, a container)
        said = instruction.group(1)
        in_goals |= {c for c in cats if re.search(r"(?<![A-Za-z_])" + re.escape(stem(c).replace("_", " "))
                                                  + r"(?![A-Za-z_])", said)}
    written = {stem(c) for c in lexicon.counts}
    known = [c for c in cats if c in lexicon.counts]
    words, out = {stem(c) for c in cats}, {}
    for cat in cats:
        if stem(cat) in written or cat not in CATALOG or cat not in in_goals:
            continue
        same = [c for c in lexicon.counts if set(CATALOG.get(c, ("?",))) == set(CATALOG[cat])
                and stem(c) not in words and c not in out.values()]
        if same:
            def score(c: str) -> tuple[int, int, str]:
                together = lexicon.cooc.get(c, {})
                return (-sum(together.get(k, 0) for k in known), -lexicon.counts[c], c)
            out[cat] = min(same, key=score)
    return out


def apply_proxies(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with each category of ``mapping`` replaced: instance names (``apple_pie.n.01_1`` ->
    ``salmon.n.03_1``, the instance index kept), then the bare words in both forms (``apple pie`` -> ``salmon``)."""
    if not mapping:
        return text
    def spaced(cat: str) -> str:  # a word-level actor decodes ``salmon .n.03_1``: the suffix is its own token
        word, _, suffix = cat.partition(".")
        return re.escape(word) + r"\s*" + re.escape("." + suffix)

    by_form = {re.sub(r"\s+", "", k): v for k, v in mapping.items()}
    cats = re.compile(r"(?<![A-Za-z_])(" + "|".join(spaced(k) for k in sorted(mapping, key=len, reverse=True))
                      + r")(?=_\d)")
    text = cats.sub(lambda m: by_form[re.sub(r"\s+", "", m.group(1))], text)
    return substitute(text, {stem(k): stem(v) for k, v in mapping.items()})


#: the actor profile's key (``embodied_safety.json``) holding the :class:`Lexicon`; absent = no proxy names
PROFILE_KEY = "proxy_names"


def lexicon_of(profile: Mapping[str, object]) -> Lexicon | None:
    """The profile's lexicon, or None when the actor was saved without proxy names."""
    raw = profile.get(PROFILE_KEY)
    if not isinstance(raw, dict):
        return None
    return Lexicon(dict(raw["counts"]), {k: dict(v) for k, v in raw["cooc"].items()})


def with_proxies(generate: Callable[[list[str], float, int | Sequence[int]], list[str]], lexicon: Lexicon,
                 prompts: list[str], temperature: float, seed: int | Sequence[int]) -> list[str]:
    """``generate`` on the prompts with proxy names in, the outputs with the real names back."""
    maps = [proxy_map(p, lexicon) for p in prompts]
    raw = generate([apply_proxies(p, m) for p, m in zip(prompts, maps, strict=True)], temperature, seed)
    return [apply_proxies(r, {v: k for k, v in m.items()}) for r, m in zip(raw, maps, strict=True)]
