"""The VLM rubric scorer and the RTD LLM proposer against a real ``transformers serve`` on loopback, serving the
tiny random LLaVA built offline: frames go out as PNG data URLs, the random model's replies never parse, so
every frame is a recorded failure, and the content-hash cache answers the second run without a request."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("openai")
pytest.importorskip("transformers")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from embodied_safety.envs.control import palette as P  # noqa: E402
from embodied_safety.llm.chat import OpenAIChat  # noqa: E402
from embodied_safety.shield.costs.rubrics import DUBINS_VL, TURTLEBOT_NAV  # noqa: E402
from embodied_safety.shield.costs.vlm_scorer import USER_TEXT, VLMScorer, render_prompt  # noqa: E402

pytestmark = pytest.mark.slow

IMAGE_TOKENS = 37  # (84 / 14)^2 patches + CLS


def ego(bottom: int) -> np.ndarray:
    img = np.empty((96, 96, 3), np.uint8)
    img[:48], img[48:] = P.TURTLEBOT_SKY, P.TURTLEBOT_FLOOR
    img[bottom - 30: bottom + 1, 38:58] = P.TURTLEBOT_OBSTACLE
    return img


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    from embodied_safety.actors.serve import serve_model
    from embodied_safety.shield.costs.tiny_vlm import build_tiny_vlm

    model_dir = str(build_tiny_vlm(tmp_path_factory.mktemp("vlm") / "tiny-llava", max_new_tokens=16))
    with serve_model(model_dir, timeout_s=180) as base_url:
        yield base_url, model_dir


def test_scores_go_through_the_server_fail_per_frame_and_are_cached(served, tmp_path) -> None:
    base_url, model = served
    frames = np.stack([ego(60), ego(90), np.zeros((96, 96, 3), np.uint8)])
    with OpenAIChat(base_url, model, max_tokens=16, timeout_s=120, max_retries=1) as client:
        scorer = VLMScorer(client, TURTLEBOT_NAV, cache_dir=tmp_path / "cache", retries=1)
        out = scorer.score_detailed(frames)
        assert out.calls == client.requests == 3 * 2  # each frame asked, then re-asked once
        assert all(len(r) == 2 and all(isinstance(t, str) for t in r) for r in out.raw)
        assert np.isnan(out.scores).all() and sorted(out.errors) == [0, 1, 2]
        assert all("PROXIMITY" in e for e in out.errors.values()) and scorer.failures == 3
        per_request = client.prompt_tokens / client.requests
        # the same turn without the image part: the difference is the image's tokens, so the PNG reached the model
        before = client.prompt_tokens
        client.chat([{"role": "system", "content": render_prompt(TURTLEBOT_NAV)},
                     {"role": "user", "content": [{"type": "text", "text": USER_TEXT}]}], temperature=0.0)
        assert per_request - (client.prompt_tokens - before) == IMAGE_TOKENS
        # a re-run is answered by the cache: no request leaves
        n = client.requests
        again = scorer.score_detailed(frames)
        assert again.calls == 0 and again.cache_hits == 3 and client.requests == n
        assert sorted(again.errors) == [0, 1, 2]
        # the JSON-format prompt (E.4.1) over the same path
        dub = VLMScorer(client, DUBINS_VL, cache_dir=None, retries=0).score_detailed(frames[:1, :84, :84])
        assert dub.calls == 1 and 0 in dub.errors and "JSON" in dub.errors[0]


def test_llm_proposer_sends_both_frames(served, tmp_path) -> None:
    from embodied_safety.shield.costs.rtd import LLMProposer

    base_url, model = served
    with OpenAIChat(base_url, model, max_tokens=16, timeout_s=120, max_retries=1) as client:
        proposer = LLMProposer(client, cache_dir=tmp_path, retries=0)
        assert proposer.propose(ego(90), ego(60), TURTLEBOT_NAV) is None  # random model: no valid criterion
        assert client.requests == 1 and proposer.errors and proposer.calls == 1
        assert client.prompt_tokens > 2 * IMAGE_TOKENS
        assert proposer.propose(ego(90), ego(60), TURTLEBOT_NAV) is None and client.requests == 1  # cached
