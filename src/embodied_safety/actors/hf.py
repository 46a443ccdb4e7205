"""Local transformers backend: batched generation with left padding, greedy at T=0, seeded sampling.

Generation uses the model's KV cache within each call (``use_cache=True``). Prompts are sorted by
length and cut into batches of ``batch_size`` so padding stays small; outputs are returned in the
input order. The model dir may carry ``embodied_safety.json`` naming its prompt style and, for
actors that emit bare calls, ``grammar_tokens``: then decoding is *constrained to copy* — every
generated token is either a grammar token (primitive names, punctuation, synset suffixes) or a
token of the prompt. This is valid-action masking: an argument can only name something the
actor was shown, so it can never invent an object that is not in the scene. A profile with
``"decoder": "trie"`` constrains decoding to exactly one valid call instead (``trie``; for
pretrained BPE actors such as SmolLM2). A profile with ``"proxy_names"`` (a :class:`.proxy.Lexicon`) shows the
actor a trained stand-in for each object word it never learnt to write, and maps the answer back (:mod:`.proxy`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import require_package
from ..threads import set_torch_threads
from .prompts import PromptStyle
from .proxy import Lexicon, lexicon_of, with_proxies

PROFILE_FILE = "embodied_safety.json"


def read_profile(model_dir: str | os.PathLike[str]) -> dict[str, object]:
    path = Path(model_dir) / PROFILE_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


class HFActor:
    """Any local causal LM (model dir or hub id already in the local cache)."""

    def __init__(self, model: str | os.PathLike[str], max_new_tokens: int = 32, batch_size: int = 32,
                 prompt_style: PromptStyle | None = None, threads: int | None = None, proxy_names: bool = True) -> None:
        require_package("transformers", "train")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            set_torch_threads(threads)
        self.name = str(model)
        tokenizer = AutoTokenizer.from_pretrained(model)
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32)
        profile = read_profile(model) if Path(model).is_dir() else {}
        self._setup(loaded, tokenizer, profile, max_new_tokens, batch_size, prompt_style, proxy_names)

    @classmethod
    def from_loaded(cls, model: Any, tokenizer: Any, profile: dict[str, object], max_new_tokens: int = 32,
                    batch_size: int = 64) -> HFActor:
        """Wrap a model already in memory (e.g. mid-training, for checkpoint selection); it is put in eval mode."""
        actor = cls.__new__(cls)
        actor.name = getattr(model, "name_or_path", "in-memory")
        actor._setup(model, tokenizer, profile, max_new_tokens, batch_size, None)
        return actor

    def _setup(self, model: Any, tokenizer: Any, profile: dict[str, object], max_new_tokens: int, batch_size: int,
               prompt_style: PromptStyle | None, proxy_names: bool = True) -> None:
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
        self.lexicon: Lexicon | None = lexicon_of(profile) if proxy_names else None

    def _texts(self, prompts: list[str]) -> list[str]:
        return [self.tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                                   add_generation_prompt=True) for p in prompts]

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int | Sequence[int] = 0) -> list[str]:
        """``seed`` an int: the global torch RNG is seeded once for the call (samples depend on the batch). One seed
        per prompt: each prompt samples from its own generator (Gumbel-max over ``logits / T``, the same
        distribution as ``do_sample``), so its output does not depend on the other prompts of the batch. With a
        lexicon in the profile, unseen object words are shown as proxies (:mod:`.proxy`)."""
        if self.lexicon is not None:
            return with_proxies(self._generate, self.lexicon, prompts, temperature, seed)
        return self._generate(prompts, temperature, seed)

    def _generate(self, prompts: list[str], temperature: float, seed: int | Sequence[int]) -> list[str]:
        import torch

        texts = self._texts(prompts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[str] = [""] * len(texts)
        per_row = not isinstance(seed, int)
        if per_row and len(seed) != len(prompts):  # type: ignore[arg-type]
            raise ValueError(f"{len(seed)} seeds for {len(prompts)} prompts")  # type: ignore[arg-type]
        torch.manual_seed(0 if per_row else seed)  # type: ignore[arg-type]
        sample = temperature > 0
        kwargs: dict[str, Any] = ({"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
                                  if sample and not per_row else {"do_sample": False})
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            enc = self.tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True,
                                 add_special_tokens=False).to(self.model.device)  # the model may sit on a GPU
            processors: list[Any] = []
            if self.grammar_ids is not None:
                processors.append(_CopyOrGrammar(enc["input_ids"], self.grammar_ids, len(self.tokenizer),
                                                 enc.get("attention_mask")))
            elif self.tries is not None:
                processors.append(self.tries.processor([prompts[i] for i in idx], enc["input_ids"].shape[1]))
            if sample and per_row:
                processors.append(_RowSampler([int(seed[i]) for i in idx], temperature))  # type: ignore[index]
            if processors:
                kwargs["logits_processor"] = processors
            with torch.inference_mode():
                gen = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, use_cache=True,
                                          pad_token_id=self.tokenizer.pad_token_id,
                                          eos_token_id=self.tokenizer.eos_token_id, **kwargs)
            new = gen[:, enc["input_ids"].shape[1]:]
            for i, row in zip(idx, new, strict=True):
                out[i] = self.tokenizer.decode(row, skip_special_tokens=True).strip()
        return out


class _RowSampler:
    """Logits processor: temperature sampling by Gumbel-max with one generator per row, so a row's sample depends
    only on its own seed (greedy decoding then picks ``argmax(logits / T + Gumbel noise)``)."""

    def __init__(self, seeds: list[int], temperature: float) -> None:
        import torch

        self.temperature = temperature
        self.generators = [torch.Generator().manual_seed(s % 2**63) for s in seeds]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        u = torch.stack([torch.rand(scores.shape[1], generator=g, dtype=torch.float64) for g in self.generators])
        gumbel = -torch.log(-torch.log(u.clamp(1e-300, 1.0 - 1e-16)))
        return scores.float() / self.temperature + gumbel.to(scores.device, torch.float32)


class _CopyOrGrammar:
    """Logits processor: only grammar tokens and tokens present in the row's prompt may be generated (the padding
    of a shorter row is not part of its prompt, so a row is decoded the same alone or in a batch)."""

    def __init__(self, input_ids: Any, grammar_ids: list[int], vocab_size: int, attention_mask: Any = None) -> None:
        import torch

        mask = torch.zeros(input_ids.shape[0], vocab_size, dtype=torch.bool, device=input_ids.device)
        mask[:, grammar_ids] = True
        if attention_mask is not None:  # padding positions point at a grammar token instead (already allowed)
            input_ids = input_ids.masked_fill(attention_mask == 0, grammar_ids[0])
        mask.scatter_(1, input_ids, True)
        self.blocked = ~mask

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return scores.masked_fill(self.blocked[:, : scores.shape[1]], float("-inf"))
