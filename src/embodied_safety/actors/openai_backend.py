"""OpenAI-compatible chat backend: one chat request per prompt, bounded thread pool, our own retry policy.

Works against any ``/v1/chat/completions`` endpoint (OpenAI, vllm, ``transformers serve``). Each prompt
is one request with a single user message, the call's ``temperature`` and a per-request seed
``seed + index``; ``n`` is never used because ``transformers serve`` ignores it (FIELD_NOTES part 2 §1).

With ``transformers serve`` a ``temperature > 0`` only samples when the served model dir's
``generation_config.json`` has ``do_sample: true`` (the server never turns sampling on, only off at
``temperature == 0``); our actor dirs (bootstrap, SmolLM2 conversion) are saved that way. The server
seeds the *global* torch RNG per request, so with ``concurrency > 1`` sampled outputs are not
reproducible request by request; use ``concurrency=1`` when they must be.

With vLLM (``make vllm-serve``) a served actor dir whose profile names ``grammar_tokens`` (the bootstrap
actors) decodes under the same copy-or-grammar mask as the in-process backend (``HFActor``): each
request carries vLLM's ``allowed_token_ids`` = grammar tokens + EOS + the tokens of its own chat prompt,
so greedy answers equal ``HFActor``'s. This needs the model name to be the served dir's path (vLLM's
default served name) and is switched on only when ``/v1/models`` says ``owned_by: vllm`` (``transformers
serve`` rejects unknown fields). One difference remains: in a batch ``HFActor`` lets left-padded rows
emit the pad token (it is in their prompt ids); a served request never has padding.

The request, its retry policy (timeouts, connection errors, HTTP 429 and 5xx, exponential backoff) and
:class:`~embodied_safety.llm.chat.EndpointError` come from :class:`~embodied_safety.llm.chat.OpenAIChat`,
which this class extends with prompts, per-request seeds and a bounded thread pool; the caller (a rollout
shard) records an ``EndpointError`` as a failed shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..llm.chat import OpenAIChat
from .prompts import PromptStyle


class CopyOrGrammarIds:
    """Per-prompt allowed token ids of a model dir's copy-or-grammar profile (``HFActor``'s mask, one row)."""

    def __init__(self, tokenizer: Any, grammar_ids: list[int]) -> None:
        self.tokenizer = tokenizer
        self.grammar_ids = set(grammar_ids)

    @classmethod
    def from_model_dir(cls, model: str) -> CopyOrGrammarIds | None:
        """None unless ``model`` is a local dir whose profile names grammar tokens (and transformers is here)."""
        from .hf import read_profile

        if not Path(model).is_dir():
            return None
        grammar = read_profile(model).get("grammar_tokens")
        if not isinstance(grammar, list):
            return None
        try:
            from transformers import AutoTokenizer
        except ImportError:
            return None
        tokenizer = AutoTokenizer.from_pretrained(model)
        ids = {i for t in grammar for i in tokenizer.convert_tokens_to_ids([t]) if i is not None}
        return cls(tokenizer, sorted(ids | {tokenizer.eos_token_id}))

    def allowed(self, prompt: str) -> list[int]:
        text = self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                  add_generation_prompt=True)
        return sorted(self.grammar_ids | set(self.tokenizer(text, add_special_tokens=False)["input_ids"]))


class OpenAIActor(OpenAIChat):
    """An actor served behind an OpenAI-compatible chat endpoint (the key is read from ``api_key_env``)."""

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY",
                 prompt_style: PromptStyle | None = "full", max_tokens: int = 32, timeout_s: float = 60.0,
                 max_retries: int = 3, backoff_s: float = 1.0, concurrency: int = 4, proxy_names: bool = True) -> None:
        if concurrency < 1:
            raise ValueError(f"OpenAIActor: need concurrency >= 1; got {concurrency}")
        super().__init__(base_url, model, api_key_env, max_tokens, timeout_s, max_retries, backoff_s)
        if prompt_style is None:  # as HFActor: the served dir's profile names it, else "full"
            from .hf import read_profile

            prompt_style = read_profile(model).get("prompt_style", "full") if Path(model).is_dir() else "full"  # type: ignore[assignment]
        self.prompt_style: PromptStyle = prompt_style  # type: ignore[assignment]
        self.concurrency = concurrency
        self._mask = CopyOrGrammarIds.from_model_dir(model)
        self.lexicon = None  # proxy names (actors/proxy.py) when the served dir's profile has them
        if proxy_names and Path(model).is_dir():
            from .hf import read_profile
            from .proxy import lexicon_of

            self.lexicon = lexicon_of(read_profile(model))
        self._use_mask: bool | None = None if self._mask else False  # decided by the first generate()

    def __repr__(self) -> str:
        return f"OpenAIActor(base_url={self.base_url!r}, model={self.name!r}, prompt_style={self.prompt_style!r})"

    def _complete(self, prompt: str, temperature: float, seed: int, extra: dict[str, Any] | None = None) -> str:
        """One prompt as a single user message, retried as :meth:`OpenAIChat.chat` retries."""
        return self.chat([{"role": "user", "content": prompt}], temperature, seed, extra)

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int | Sequence[int] = 0) -> list[str]:
        """One completion per prompt, in input order; request ``i`` uses seed ``seed + i`` (or ``seed[i]``)."""
        if not prompts:
            return []
        if self.lexicon is not None:
            from .proxy import with_proxies

            return with_proxies(self._requests, self.lexicon, prompts, temperature, seed)
        return self._requests(prompts, temperature, seed)

    def _requests(self, prompts: list[str], temperature: float, seed: int | Sequence[int]) -> list[str]:
        if self._use_mask is None:
            self._use_mask = "vllm" in self.owned_by()
        # tokenized here, in one thread (a fast tokenizer is not safe to share between threads)
        extras = ([{"allowed_token_ids": self._mask.allowed(p)} for p in prompts] if self._use_mask and self._mask
                  else [None] * len(prompts))
        seeds = [seed + i for i in range(len(prompts))] if isinstance(seed, int) else [int(s) for s in seed]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(prompts))) as pool:
            futures: list[Future[str]] = [pool.submit(self._complete, p, temperature, s, extra)
                                          for p, s, extra in zip(prompts, seeds, extras, strict=True)]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
