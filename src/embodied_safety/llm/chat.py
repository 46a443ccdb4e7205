"""OpenAI-compatible chat client: one ``/v1/chat/completions`` request per call, our own retry policy.

Works against any such endpoint (OpenAI, vLLM, ``transformers serve``). A call sends full chat messages
(system turn, ``image_url`` parts), ``max_tokens``, the call's ``temperature`` and ``seed``, and an optional
``extra`` request body (vLLM's ``allowed_token_ids``); ``n`` is never used because ``transformers serve``
ignores it. Timeouts, connection errors, HTTP 429 and 5xx are retried with exponential backoff
(``backoff_s * 2**attempt``); the openai client's own retries are disabled so the policy is ours. After the
last attempt, or on any other API error, :class:`EndpointError` is raised: the caller (a rollout or scoring
shard) records a failed shard. Answered requests and the server-reported tokens are counted (thread-safe).

The served actor (:class:`~embodied_safety.actors.openai_backend.OpenAIActor`) and the VLM rubric scorer and
RTD proposer (:mod:`embodied_safety.shield`) both build on this class.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Self

from ..errors import require_package

LOCAL_API_KEY = "EMPTY"  # what local servers (transformers serve, vllm) accept when no key is set


class EndpointError(RuntimeError):
    """An OpenAI-compatible endpoint failed for good: names the base URL, the attempts and the last error."""

    def __init__(self, base_url: str, attempts: int, last_error: BaseException) -> None:
        self.base_url = base_url
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"endpoint {base_url} failed after {attempts} attempt(s): "
                         f"{type(last_error).__name__}: {last_error}")


def retryable(exc: BaseException) -> bool:
    import openai

    # APITimeoutError is a subclass of APIConnectionError; InternalServerError covers every 5xx.
    return isinstance(exc, openai.APIConnectionError | openai.RateLimitError | openai.InternalServerError)


class OpenAIChat:
    """A model behind an OpenAI-compatible chat endpoint (the key is read from ``api_key_env``)."""

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", max_tokens: int = 256,
                 timeout_s: float = 60.0, max_retries: int = 3, backoff_s: float = 1.0) -> None:
        require_package("openai", "llm")
        from openai import OpenAI

        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0:
            raise ValueError(f"{type(self).__name__}: need max_retries >= 0, timeout_s > 0, backoff_s >= 0; "
                             f"got {max_retries}, {timeout_s}, {backoff_s}")
        self.base_url = base_url
        self.name = model
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        # The key goes straight into the client and is never kept on this object or logged.
        self._client = OpenAI(base_url=base_url, api_key=os.environ.get(api_key_env) or LOCAL_API_KEY,
                              timeout=timeout_s, max_retries=0)
        self._lock = threading.Lock()
        self.requests = 0  # answered requests (retries of failed transport attempts not counted)
        self.prompt_tokens = 0  # as the server reports them: image tokens included
        self.completion_tokens = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.name!r})"

    def _request(self, messages: list[dict[str, Any]], temperature: float, seed: int,
                 extra: dict[str, Any] | None = None) -> str:
        response = self._client.chat.completions.create(
            model=self.name, messages=messages, max_tokens=self.max_tokens, temperature=temperature, seed=seed,
            extra_body=extra)
        with self._lock:
            self.requests += 1
            if response.usage is not None:
                self.prompt_tokens += response.usage.prompt_tokens or 0
                self.completion_tokens += response.usage.completion_tokens or 0
        if not response.choices:
            return ""
        return (response.choices[0].message.content or "").strip()

    def chat(self, messages: list[dict[str, Any]], temperature: float = 0.0, seed: int = 0,
             extra: dict[str, Any] | None = None) -> str:
        """One reply, retried on transient failures; raises :class:`EndpointError` when it gives up."""
        import openai

        for attempt in range(self.max_retries + 1):
            try:
                return self._request(messages, temperature, seed, extra)
            except openai.OpenAIError as exc:
                if not retryable(exc) or attempt == self.max_retries:
                    raise EndpointError(self.base_url, attempt + 1, exc) from exc
                time.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")

    def owned_by(self) -> set[str]:
        """The ``owned_by`` of the endpoint's ``/v1/models`` entries (empty when it cannot say)."""
        import openai

        try:
            return {str(getattr(m, "owned_by", None)) for m in self._client.models.list().data}
        except openai.OpenAIError:
            return set()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
