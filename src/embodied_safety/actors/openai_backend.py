"""OpenAI-compatible chat backend: one chat request per prompt, bounded thread pool, our own retry policy.

Works against any ``/v1/chat/completions`` endpoint (OpenAI, vllm, ``transformers serve``). Each prompt
is one request with a single user message, the call's ``temperature`` and a per-request seed
``seed + index``; ``n`` is never used because ``transformers serve`` ignores it (FIELD_NOTES part 2 §1).

With ``transformers serve`` a ``temperature > 0`` only samples when the served model dir's
``generation_config.json`` has ``do_sample: true`` (the server never turns sampling on, only off at
``temperature == 0``); our actor dirs (bootstrap, SmolLM2 conversion) are saved that way. The server
seeds the *global* torch RNG per request, so with ``concurrency > 1`` sampled outputs are not
reproducible request by request; use ``concurrency=1`` when they must be.

Timeouts, connection errors, HTTP 429 and 5xx are retried with exponential backoff
(``backoff_s * 2**attempt``); the openai client's own retries are disabled so the policy is ours.
After the last attempt, or on any other API error, :class:`EndpointError` is raised; the caller (a
rollout shard) records it as a failed shard.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..errors import require_package
from .prompts import PromptStyle

LOCAL_API_KEY = "EMPTY"  # what local servers (transformers serve, vllm) accept when no key is set


class EndpointError(RuntimeError):
    """An OpenAI-compatible endpoint failed for good: names the base URL, the attempts and the last error."""

    def __init__(self, base_url: str, attempts: int, last_error: BaseException) -> None:
        self.base_url = base_url
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"endpoint {base_url} failed after {attempts} attempt(s): "
                         f"{type(last_error).__name__}: {last_error}")


def _retryable(exc: BaseException) -> bool:
    import openai

    # APITimeoutError is a subclass of APIConnectionError; InternalServerError covers every 5xx.
    return isinstance(exc, openai.APIConnectionError | openai.RateLimitError | openai.InternalServerError)


class OpenAIActor:
    """An actor served behind an OpenAI-compatible chat endpoint (the key is read from ``api_key_env``)."""

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY",
                 prompt_style: PromptStyle = "full", max_tokens: int = 32, timeout_s: float = 60.0,
                 max_retries: int = 3, backoff_s: float = 1.0, concurrency: int = 4) -> None:
        require_package("openai", "llm")
        from openai import OpenAI

        if max_retries < 0 or concurrency < 1 or timeout_s <= 0 or backoff_s < 0:
            raise ValueError("OpenAIActor: need max_retries >= 0, concurrency >= 1, timeout_s > 0, backoff_s >= 0; "
                             f"got {max_retries}, {concurrency}, {timeout_s}, {backoff_s}")
        self.base_url = base_url
        self.name = model
        self.prompt_style: PromptStyle = prompt_style
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.concurrency = concurrency
        # The key goes straight into the client and is never kept on this object or logged.
        self._client = OpenAI(base_url=base_url, api_key=os.environ.get(api_key_env) or LOCAL_API_KEY,
                              timeout=timeout_s, max_retries=0)

    def __repr__(self) -> str:
        return f"OpenAIActor(base_url={self.base_url!r}, model={self.name!r}, prompt_style={self.prompt_style!r})"

    def _request(self, prompt: str, temperature: float, seed: int) -> str:
        response = self._client.chat.completions.create(
            model=self.name, messages=[{"role": "user", "content": prompt}], max_tokens=self.max_tokens,
            temperature=temperature, seed=seed)
        if not response.choices:
            return ""
        return (response.choices[0].message.content or "").strip()

    def _complete(self, prompt: str, temperature: float, seed: int) -> str:
        """One prompt, retried on transient failures; raises :class:`EndpointError` when it gives up."""
        import openai

        for attempt in range(self.max_retries + 1):
            try:
                return self._request(prompt, temperature, seed)
            except openai.OpenAIError as exc:
                if not _retryable(exc) or attempt == self.max_retries:
                    raise EndpointError(self.base_url, attempt + 1, exc) from exc
                time.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int = 0) -> list[str]:
        """One completion per prompt, in input order; request ``i`` uses seed ``seed + i``."""
        if not prompts:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(prompts))) as pool:
            futures: list[Future[str]] = [pool.submit(self._complete, p, temperature, seed + i)
                                          for i, p in enumerate(prompts)]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIActor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
