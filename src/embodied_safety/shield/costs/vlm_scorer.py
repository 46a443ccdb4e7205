"""VLM rubric scorer (§4.2 stage ii, App. E.4): the verbatim system prompts over any OpenAI-compatible
chat endpoint, one request per frame with the frame attached as a PNG data URL ``image_url`` part.

* Prompts: ``prompts/<stem>.txt`` hold E.4.1–E.4.3 byte for byte (Franka-Reach's is ours, in the E.4.2
  layout: the paper prints none). Rubrics an RTD round adds are appended in the E.4.3 layout by
  :func:`render_prompt` (rubric blocks after the last one, the response format rewritten); appending
  OBSTACLE_EDGE_PROXIMITY and OBSTACLE_OVERLAP to E.4.2 reproduces E.4.3 exactly (a unit test checks it).
* User turn: "a single sentence asking the model to score the rubrics for the attached ego frame" (E.4).
* Parsing follows the format each prompt demands: E.4.1's ``{"scores": [...], "reasoning": ...}`` (the first
  JSON object in the reply, ``scores`` a list of K numbers in rubric order) or E.4.2/E.4.3's ``NAME: <float>``
  lines (every rubric exactly once; ``COST``/``REASON`` are ignored, ρ is computed here). Every score must be
  a number in [0, 1]. Each frame is one shared structured ask (:func:`embodied_safety.llm.ask.ask_cached`): an
  invalid reply is re-asked up to ``retries`` times (the first ask at ``temperature``, re-asks at
  ``retry_temperature`` with seed ``seed + attempt``, since a greedy re-ask repeats itself); then the frame is
  recorded as failed — a NaN row and its error — never guessed, never raised.
* Cache: every answer, failures included, is stored on disk under a content hash of (model, system prompt,
  user text, frame bytes), so a re-run makes no new calls (``retry_failed=True`` re-asks cached failures).
* Client: :class:`~embodied_safety.llm.chat.OpenAIChat` (or anything with ``name`` and ``chat``). An endpoint
  that fails for good (:class:`~embodied_safety.llm.chat.EndpointError`, after the client's own retries) is
  not one bad frame: it propagates, and the caller marks the shard failed.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ...llm.ask import Answer, ask_cached, cache_key
from ...llm.parsing import json_object
from .pixel_scorer import as_batch
from .rubrics import Rubric, RubricSet

USER_TEXT = "Score the rubrics for the attached ego frame."
WRAP = 70  # the column E.4.3's appended rubric blocks are wrapped at
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_FORMAT_LINE = re.compile(r"^([A-Z][A-Z0-9_]*): <float 0-1>$", re.MULTILINE)
_JSON_NAME = re.compile(r'\{"name": "([A-Z][A-Z0-9_]*)"')


@cache
def prompt_text(stem: str) -> str:
    """The stored prompt ``shield/costs/prompts/<stem>.txt`` (without its final newline)."""
    path = resources.files(__package__).joinpath("prompts", f"{stem}.txt")
    if not path.is_file():
        raise FileNotFoundError(f"no prompt shield/costs/prompts/{stem}.txt")
    return path.read_text(encoding="utf-8").removesuffix("\n")


def covered_rubrics(text: str, response_format: str) -> list[str]:
    """Rubric names a stored prompt asks for, in order (its response-format lines or JSON entries)."""
    return (_JSON_NAME if response_format == "json" else _FORMAT_LINE).findall(text)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, WRAP, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False)


def rubric_block(index: int, rubric: Rubric) -> str:
    """One rubric in the E.4.2/E.4.3 layout (``RUBRIC 6 — NAME (weight=4):``, provenance, wrapped levels)."""
    lines = [f"RUBRIC {index} — {rubric.name} (weight={rubric.weight}):"]
    if rubric.provenance:
        lines.append(f"  [{rubric.provenance}]")
    lines += _wrap(rubric.description, "  ", "  ")
    for value, text in rubric.levels:
        lines += _wrap(text, f"  {value:.1f} = ", " " * 8)
    return "\n".join(lines)


def json_entry(rubric: Rubric) -> str:
    """One rubric as an E.4.1 JSON list entry."""
    import json

    pad = " " * 14
    levels = f",\n{pad}".join(f'"{v:.1f}": {json.dumps(t, ensure_ascii=False)}' for v, t in rubric.levels)
    return (f'  {{"name": "{rubric.name}", "weight": {rubric.weight},\n'
            f'   "definition": {json.dumps(rubric.description, ensure_ascii=False)},\n'
            f'   "levels": {{{levels}}}}}')


def render_prompt(rubric_set: RubricSet) -> str:
    """The system prompt for ``rubric_set``: the stored verbatim prompt, plus any rubrics it does not cover."""
    base = prompt_text(rubric_set.prompt)
    covered = covered_rubrics(base, rubric_set.response_format)
    if list(rubric_set.names[:len(covered)]) != covered:
        raise ValueError(f"prompt {rubric_set.prompt}.txt asks for {covered}, but the rubric set starts with "
                         f"{list(rubric_set.names[:len(covered)])}")
    extra = rubric_set.rubrics[len(covered):]
    if not extra:
        return base
    if rubric_set.response_format == "json":
        head, sep, tail = base.rpartition("\n]")
        if not sep:
            raise ValueError(f"prompt {rubric_set.prompt}.txt: no closing ']' of the rubric list")
        return head + ",\n" + ",\n".join(json_entry(r) for r in extra) + sep + tail
    head, sep, fmt = base.partition("RESPONSE FORMAT (exactly ")
    if not sep:
        raise ValueError(f"prompt {rubric_set.prompt}.txt: no 'RESPONSE FORMAT (exactly N lines' block")
    blocks = "\n\n".join(rubric_block(len(covered) + i + 1, r) for i, r in enumerate(extra))
    anchor = "SCORING INSTRUCTIONS:" if "SCORING INSTRUCTIONS:" in head else None
    if anchor:
        before, _, after = head.partition(anchor)
        head = f"{before}{blocks}\n\n{anchor}{after}"
    else:
        head = f"{head.rstrip()}\n\n{blocks}\n\n"
    count, rest = fmt.split(" lines", 1)
    header, _, body = rest.partition("\n")
    kept = [ln for ln in body.split("\n") if not _FORMAT_LINE.fullmatch(ln)]
    lines = [f"{n}: <float 0-1>" for n in rubric_set.names] + kept
    return f"{head}{sep}{len(rubric_set.names) + len(kept)} lines{header}\n" + "\n".join(lines)


def parse_scores(text: str, rubric_set: RubricSet) -> list[float]:
    """The K scores of a reply, in rubric order; raises ValueError naming what is wrong."""
    names = rubric_set.names
    if rubric_set.response_format == "json":
        values = json_object(text).get("scores")
        if not isinstance(values, list) or len(values) != len(names):
            raise ValueError(f"'scores' must be a list of {len(names)} numbers; got {values!r}"[:200])
        pairs = list(zip(names, values, strict=True))
    else:
        pairs = []
        for name in names:
            found = re.findall(rf"^[ \t]*{name}[ \t]*:[ \t]*({_NUMBER})", text, flags=re.MULTILINE)
            if not found:
                raise ValueError(f"no '{name}: <float>' line in {text[:120]!r}")
            if len({float(v) for v in found}) > 1:
                raise ValueError(f"conflicting values for {name}: {found}")
            pairs.append((name, float(found[0])))
    out = []
    for name, v in pairs:
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"{name} = {v!r} is not a number in [0, 1]")
        out.append(float(v))
    return out


def png_bytes(frame: np.ndarray) -> bytes:
    from PIL import Image  # a matplotlib dependency, so always present with it

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(frame), mode="RGB").save(buf, format="PNG")
    return buf.getvalue()


def image_part(frame: np.ndarray) -> dict[str, Any]:
    """An OpenAI chat ``image_url`` content part carrying the frame as a base64 PNG data URL."""
    url = "data:image/png;base64," + base64.b64encode(png_bytes(frame)).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url}}


def frame_digest(frame: np.ndarray) -> bytes:
    frame = np.ascontiguousarray(frame)
    return f"{frame.dtype}{frame.shape}".encode() + frame.tobytes()


class ChatClient(Protocol):
    """What the scorer and the LLM proposer need: a model name and one chat completion per call."""

    name: str

    def chat(self, messages: list[dict[str, Any]], temperature: float = 0.0, seed: int = 0) -> str: ...


def chat_each(client: ChatClient) -> Callable[[list[list[dict[str, Any]]], float, int], list[str]]:
    """The ``complete`` of :func:`~embodied_safety.llm.ask.ask_batch` over a chat client: one request per item,
    every item at the attempt's temperature and seed."""
    return lambda batch, temperature, seed: [client.chat(m, temperature, seed) for m in batch]


@dataclass
class VLMScores:
    """Scores [N, K] (NaN rows for failed frames), per-frame errors, requests made, cache hits."""

    scores: np.ndarray
    errors: dict[int, str]
    raw: list[tuple[str, ...]]
    calls: int
    cache_hits: int

    @property
    def ok(self) -> np.ndarray:
        return ~np.isnan(self.scores).any(axis=1)


@dataclass
class VLMScorer:
    """The rubric set's prompt over a :class:`ChatClient`, per frame, cached; see the module docstring."""

    client: ChatClient
    rubric_set: RubricSet
    cache_dir: Path | None = None
    retries: int = 2
    temperature: float = 0.0
    retry_temperature: float = 0.7
    seed: int = 0
    concurrency: int = 1
    retry_failed: bool = False
    user_text: str = USER_TEXT
    calls: int = field(default=0, init=False)
    failures: int = field(default=0, init=False)

    def messages(self, frame: np.ndarray) -> list[dict[str, Any]]:
        return [{"role": "system", "content": render_prompt(self.rubric_set)},
                {"role": "user", "content": [image_part(frame), {"type": "text", "text": self.user_text}]}]

    def cache_key(self, frame: np.ndarray) -> str:
        return cache_key(self.client.name, render_prompt(self.rubric_set), self.user_text, frame_digest(frame))

    def _ask(self, frame: np.ndarray, key: str) -> Answer:
        [answer] = ask_cached(chat_each(self.client), [self.messages(frame)], [key],
                              lambda t: parse_scores(t, self.rubric_set), self.cache_dir, self.client.name,
                              self.retries, self.temperature, self.retry_temperature, self.seed,
                              retry_failed=self.retry_failed)
        return answer

    def score_detailed(self, frames: np.ndarray) -> VLMScores:
        frames = as_batch(frames)
        keys = [self.cache_key(f) for f in frames]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # identical frames are asked once
        todo = sorted(first.values())
        if self.concurrency > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo))) as pool:
                answers = dict(zip(todo, pool.map(lambda i: self._ask(frames[i], keys[i]), todo), strict=True))
        else:
            answers = {i: self._ask(frames[i], keys[i]) for i in todo}
        k = len(self.rubric_set.rubrics)
        scores = np.full((len(frames), k), np.nan)
        errors: dict[int, str] = {}
        raw: list[tuple[str, ...]] = []
        for n, key in enumerate(keys):
            a = answers[first[key]]
            raw.append(a.raw)
            if a.ok:
                scores[n] = a.value
            else:
                errors[n] = a.error or "invalid"
        calls = sum(a.calls for a in answers.values())
        hits = sum(a.calls == 0 for a in answers.values())
        self.calls += calls
        self.failures += sum(not a.ok for a in answers.values())
        return VLMScores(scores, errors, raw, calls, hits)

    def score(self, frames: np.ndarray) -> np.ndarray:
        """V [N, K] in the rubric set's polarity; NaN rows for frames whose reply stayed invalid."""
        return self.score_detailed(frames).scores

    def with_rubrics(self, rubric_set: RubricSet) -> VLMScorer:
        new = replace(self, rubric_set=rubric_set)
        new.calls, new.failures = 0, 0
        return new


def text_with_images(text: str, frames: Sequence[np.ndarray]) -> list[dict[str, Any]]:
    """A user turn with a text prompt followed by several frames (the RTD proposer's two-frame query)."""
    return [{"role": "user", "content": [{"type": "text", "text": text}, *(image_part(f) for f in frames)]}]
