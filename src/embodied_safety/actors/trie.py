"""Trie-constrained decoding over the valid calls of a context, for pretrained (BPE) actors.

The embedded word-level actor is constrained by copy-or-grammar masking (``hf._CopyOrGrammar``). A
pretrained tokenizer splits object names into arbitrary pieces, so that mask does not carry over.
Here every generation step may only extend a prefix of some valid call: a primitive of
``actions.PRIMITIVES`` at its arity over the objects in the prompt's ``objects_list``. The
reply is exactly one call, then end of sequence. An actor dir opts in with ``"decoder": "trie"`` in
its profile (``embodied_safety.json``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import permutations
from typing import Any

from ..envs.household.actions import PRIMITIVES

END = -1  # trie key: a complete call ends here
_OBJECTS = re.compile(r"objects_list:\s*\[?([^\n\]]*)")


def prompt_objects(prompt: str) -> tuple[str, ...]:
    """The object names of the (first) ``objects_list`` line of an actor prompt."""
    m = _OBJECTS.search(prompt)
    return tuple(o.strip() for o in m.group(1).split(",") if o.strip()) if m else ()


def valid_calls(objects: Sequence[str]) -> list[str]:
    """Every primitive call at its arity over distinct ``objects``, plus ``DONE()`` and ``WAIT()``."""
    out = ["DONE()", "WAIT()"]
    for name, roles in PRIMITIVES.items():
        if len(roles) == 1:
            out += [f"{name}({o})" for o in objects]
        elif len(roles) == 2:
            out += [f"{name}({a}, {b})" for a, b in permutations(objects, 2)]
    return out


def build_trie(sequences: Sequence[Sequence[int]]) -> dict[int, Any]:
    root: dict[int, Any] = {}
    for seq in sequences:
        node = root
        for t in seq:
            node = node.setdefault(int(t), {})
        node[END] = {}
    return root


class TrieConstraint:
    """Logits processor: row ``i`` may only extend a path of ``tries[i]``; end of sequence once a call is complete."""

    def __init__(self, tries: Sequence[dict[int, Any]], prompt_len: int, eos_id: int) -> None:
        self.tries, self.prompt_len, self.eos_id = list(tries), prompt_len, eos_id

    def allowed(self, row: int, generated: Sequence[int]) -> list[int]:
        node = self.tries[row]
        for t in generated:
            if t == self.eos_id or t not in node:
                return [self.eos_id]  # finished (or off the trie: only ending is left)
            node = node[t]
        return [k for k in node if k != END] + ([self.eos_id] if END in node else [])

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        # one device->host copy of the generated ids and one scatter per step (a per-row copy and index write
        # costs a GPU synchronisation each: 64 rows x 40 tokens per generate call)
        rows: list[int] = []
        cols: list[int] = []
        for i, generated in enumerate(input_ids[:, self.prompt_len:].tolist()):
            allowed = self.allowed(i, generated)
            rows += [i] * len(allowed)
            cols += allowed
        mask = torch.ones_like(scores, dtype=torch.bool)
        mask[torch.tensor(rows, device=scores.device), torch.tensor(cols, device=scores.device)] = False
        return scores.masked_fill(mask, float("-inf"))


class TrieCache:
    """Tries per object list for one tokenizer (a context's calls are tokenized once)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._tries: dict[tuple[str, ...], dict[int, Any]] = {}

    def trie(self, prompt: str) -> dict[int, Any]:
        objects = prompt_objects(prompt)
        if objects not in self._tries:
            ids = self.tokenizer(valid_calls(objects), add_special_tokens=False)["input_ids"]
            self._tries[objects] = build_trie(ids)
        return self._tries[objects]

    def processor(self, prompts: Sequence[str], prompt_len: int) -> TrieConstraint:
        return TrieConstraint([self.trie(p) for p in prompts], prompt_len, int(self.tokenizer.eos_token_id))
