"""Local transformers backend: batched generation with left padding, greedy at T=0, seeded sampling.

Generation uses the model's KV cache within each call (``use_cache=True``). Prompts are sorted by
length and cut into batches of ``batch_size`` so padding stays small; outputs are returned in the
input order. The model dir may carry ``embodied_safety.json`` naming its prompt style and, for
actors that emit bare calls, ``grammar_tokens``: then decoding is *constrained to copy* — every
generated token is either a grammar token (primitive names, punctuation, synset suffixes) or a
token of the prompt. This is valid-action masking: an argument can only name something the
actor was shown, so it can never invent an object that is not in the scene. A profile with
``"decoder": "trie"`` constrains decoding to exactly one valid call instead (``trie``; for
pretrained BPE actors such as SmolLM2).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import require_package
from .prompts import PromptStyle

PROFILE_FILE = "embodied_safety.json"


def read_profile(model_dir: str | os.PathLike[str]) -> dict[str, object]:
    path = Path(model_dir) / PROFILE_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


class HFActor:
    """Any local causal LM (model dir or hub id already in the local cache)."""

    def __init__(self, model: str | os.PathLike[str], max_new_tokens: int = 32, batch_size: int = 32,
                 prompt_style: PromptStyle | None = None, threads: int | None = None) -> None:
        require_package("transformers", "train")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        self.name = str(model)
        tokenizer = AutoTokenizer.from_pretrained(model)
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32)
        profile = read_profile(model) if Path(model).is_dir() else {}
        self._setup(loaded, tokenizer, profile, max_new_tokens, batch_size, prompt_style)

    @classmethod
    def from_loaded(cls, model: Any, tokenizer: Any, profile: dict[str, object], max_new_tokens: int = 32,
                    batch_size: int = 64) -> HFActor:
        """Wrap a model already in memory (e.g. mid-training, for checkpoint selection); it is put in eval mode."""
        actor = cls.__new__(cls)
        actor.name = getattr(model, "name_or_path", "in-memory")
        actor._setup(model, tokenizer, profile, max_new_tokens, batch_size, None)
        return actor

    def _setup(self, model: Any, tokenizer: Any, profile: dict[str, object], max_new_tokens: int, batch_size: int,
               prompt_style: PromptStyle | None) -> None:
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = model.eval()
        self.prompt_style: PromptStyle = prompt_style or profile.get("prompt_style", "full")  # type: ignore[assignment]
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        grammar = profile.get("grammar_tokens")
        self.grammar_ids: list[int] | None = (
            sorted({i for t in grammar for i in self.tokenizer.convert_tokens_to_ids([t]) if i is not None}
                   | {self.tokenizer.eos_token_id}) if isinstance(grammar, list) else None)
        from .trie import TrieCache

        self.tries: TrieCache | None = TrieCache(self.tokenizer) if profile.get("decoder") == "trie" else None

    def _texts(self, prompts: list[str]) -> list[str]:
        return [self.tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                                   add_generation_prompt=True) for p in prompts]

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int = 0) -> list[str]:
        import torch

        texts = self._texts(prompts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[str] = [""] * len(texts)
        torch.manual_seed(seed)
        sample = temperature > 0
        kwargs = {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0} if sample else {"do_sample": False}
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            enc = self.tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True,
                                 add_special_tokens=False).to(self.model.device)  # the model may sit on a GPU
            if self.grammar_ids is not None:
                kwargs["logits_processor"] = [_CopyOrGrammar(enc["input_ids"], self.grammar_ids, len(self.tokenizer))]
            elif self.tries is not None:
                kwargs["logits_processor"] = [self.tries.processor([prompts[i] for i in idx], enc["input_ids"].shape[1])]
            with torch.inference_mode():
                gen = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, use_cache=True,
                                          pad_token_id=self.tokenizer.pad_token_id,
                                          eos_token_id=self.tokenizer.eos_token_id, **kwargs)
            new = gen[:, enc["input_ids"].shape[1]:]
            for i, row in zip(idx, new, strict=True):
                out[i] = self.tokenizer.decode(row, skip_special_tokens=True).strip()
        return out


class _CopyOrGrammar:
    """Logits processor: only grammar tokens and tokens present in the row's prompt may be generated."""

    def __init__(self, input_ids: Any, grammar_ids: list[int], vocab_size: int) -> None:
        import torch

        mask = torch.zeros(input_ids.shape[0], vocab_size, dtype=torch.bool, device=input_ids.device)
        mask[:, grammar_ids] = True
        mask.scatter_(1, input_ids, True)
        self.blocked = ~mask

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return scores.masked_fill(self.blocked[:, : scores.shape[1]], float("-inf"))
