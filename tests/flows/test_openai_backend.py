"""OpenAIActor against a real ``transformers serve`` on loopback, and its retry policy against scripted faults."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("transformers")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from embodied_safety.actors.openai_backend import OpenAIActor  # noqa: E402
from embodied_safety.actors.parsing import parse_output  # noqa: E402
from embodied_safety.llm.chat import EndpointError  # noqa: E402

pytestmark = pytest.mark.slow

TEXTS = ["DONE ( )", "TOGGLE_OFF ( sink.n.01_1 )", "WIPE ( electric_fan.n.01_1 , paper_towel.n.01_1 )",
         "Your input : task_instruction : clean the fan", "user assistant"]
PROMPTS = ["Your input: clean the fan", "Your input: turn off the sink", "Your input: wipe the fan"]


def tiny_actor_dir(out: Path) -> Path:
    """A random tiny Qwen3 actor dir, saved exactly as trained bootstrap actors are (do_sample true)."""
    from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer

    tokenizer = train_tokenizer(TEXTS)
    shape = ModelShape(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=32)
    return save_actor_dir(build_model(tokenizer, shape, seed=0), tokenizer, out, max_new_tokens=8)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base_url, model name) of one real server for the whole module (start-up is ~5-10 s)."""
    from embodied_safety.actors.serve import serve_model

    model_dir = str(tiny_actor_dir(tmp_path_factory.mktemp("actor") / "tiny"))
    with serve_model(model_dir, timeout_s=120) as base_url:
        yield base_url, model_dir


def test_generate_against_transformers_serve(served: tuple[str, str]) -> None:
    base_url, model = served
    with OpenAIActor(base_url, model, prompt_style="compact", max_tokens=8, timeout_s=30, max_retries=0) as actor:
        greedy = actor.generate(PROMPTS, temperature=0.0)
        assert len(greedy) == 3 and all(isinstance(t, str) for t in greedy)
        assert actor.generate(PROMPTS, temperature=0.0) == greedy  # greedy is repeatable
        assert not any("im_start" in t for t in greedy), greedy  # the chat template does not leak into answers
        for seed in (0, 1):
            sampled = actor.generate(PROMPTS, temperature=1.0, seed=seed)
            assert len(sampled) == 3 and all(isinstance(t, str) for t in sampled)
            for text in sampled + greedy:
                parse_output(text)  # a failure is recorded in the result, never raised


def test_rollout_through_the_endpoint(served: tuple[str, str]) -> None:
    """The batched rollout runner drives episodes through the OpenAI-compatible backend."""
    from embodied_safety.envs.household.env import compile_task
    from embodied_safety.rollout.runner import RolloutSettings, run_batched
    from tests.helpers import fan_task

    base_url, model = served
    with OpenAIActor(base_url, model, prompt_style="compact", max_tokens=8, timeout_s=30, max_retries=1) as actor:
        runs = run_batched([compile_task(fan_task()), compile_task(fan_task(name="fan2"))], actor, 0.7, 0,
                           RolloutSettings(max_steps=3))
    assert all(1 <= len(r.records) <= 3 * 3 for r in runs)
    assert all(r.records[0].prompt.startswith("Your input:") for r in runs)


def test_llm_critic_end_to_end_through_the_endpoint(served: tuple[str, str], tmp_path: Path) -> None:
    """The LLM critic backend over the real server: the paper's prompt goes out, the tiny random model's
    answer fails schema validation, is re-asked, then recorded as a failed repair; the unsafe action
    is never committed."""
    from embodied_safety.branch.collect import BranchSettings, collect_branches
    from embodied_safety.critics.llm import LLMCritic
    from embodied_safety.envs.household.env import compile_task
    from tests.helpers import GoldenUnsafeActor, fan_task

    base_url, model = served
    c = compile_task(fan_task())
    with OpenAIActor(base_url, model, prompt_style="full", max_tokens=16, timeout_s=30, max_retries=1) as gen:
        critic = LLMCritic(gen, model, cache_dir=tmp_path, retries=1)
        [ep] = collect_branches([c], "train", GoldenUnsafeActor([c]), 0.0, 0, BranchSettings(), critic=critic)
    assert critic.calls == 2 and critic.failures == 1
    assert ep.end == "critic_failed" and ep.branches[0].failure.startswith("critic: invalid critic output")
    assert "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)" not in [r.action for r in ep.episode.world.history]


def test_unknown_model_is_not_retried(served: tuple[str, str]) -> None:
    base_url, model = served
    actor = OpenAIActor(base_url, model + "-missing", max_tokens=4, timeout_s=30, max_retries=3, backoff_s=0.01)
    with pytest.raises(EndpointError, match="after 1 attempt"):
        actor.generate(["hello"])


COMPLETION = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "TOGGLE_OFF ( sink.n.01_1 )"}}]}


Reply = Callable[[int, dict], tuple[int, dict] | None]


class Scripted:
    """A loopback HTTP server answering the i-th request (1-based) with ``reply(i, request)``.

    ``reply`` returns ``(status, json body)``, or None to hang until the test ends.
    """

    def __init__(self, reply: Reply) -> None:
        self.attempts = 0
        self.release = threading.Event()
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with lock:
                    outer.attempts += 1
                    attempt = outer.attempts
                answer = reply(attempt, request)
                if answer is None:
                    outer.release.wait(10)
                    return
                status, body = answer
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted() -> Iterator[Callable[[Reply], Scripted]]:
    servers: list[Scripted] = []

    def start(reply: Reply) -> Scripted:
        servers.append(Scripted(reply))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


UNAVAILABLE = (503, {"error": {"message": "overloaded", "type": "server_error"}})


def test_retries_transient_errors_then_succeeds(scripted) -> None:
    server = scripted(lambda i, req: UNAVAILABLE if i <= 2 else (200, COMPLETION))
    actor = OpenAIActor(server.base_url, "m", max_retries=2, backoff_s=0.01, timeout_s=5)
    assert actor.generate(["p"]) == ["TOGGLE_OFF ( sink.n.01_1 )"]
    assert server.attempts == 3


def test_gives_up_after_max_retries(scripted) -> None:
    server = scripted(lambda i, req: UNAVAILABLE)
    actor = OpenAIActor(server.base_url, "m", max_retries=2, backoff_s=0.01, timeout_s=5)
    with pytest.raises(EndpointError, match=r"127\.0\.0\.1.*after 3 attempt.*InternalServerError") as info:
        actor.generate(["p"])
    assert server.attempts == 3 and info.value.base_url == server.base_url


def test_timeout_raises_endpoint_error(scripted) -> None:
    server = scripted(lambda i, req: None)
    actor = OpenAIActor(server.base_url, "m", max_retries=1, backoff_s=0.01, timeout_s=0.5)
    t0 = time.monotonic()
    with pytest.raises(EndpointError, match="APITimeoutError"):
        actor.generate(["p"])
    assert server.attempts == 2 and time.monotonic() - t0 < 5


def test_one_request_per_prompt_in_order_with_seed_plus_index(scripted) -> None:
    def echo(i: int, request: dict) -> tuple[int, dict]:
        prompt = request["messages"][0]["content"]
        time.sleep(0.05 * (ord(prompt) % 3))  # finish out of order
        content = f"{prompt} seed={request['seed']} t={request['temperature']} n={request.get('n')}"
        return 200, {**COMPLETION, "choices": [{**COMPLETION["choices"][0],
                                                "message": {"role": "assistant", "content": content}}]}

    server = scripted(echo)
    actor = OpenAIActor(server.base_url, "m", concurrency=3, timeout_s=5)
    assert actor.generate(["a", "b", "c", "d"], temperature=0.7, seed=10) == [
        "a seed=10 t=0.7 n=None", "b seed=11 t=0.7 n=None", "c seed=12 t=0.7 n=None", "d seed=13 t=0.7 n=None"]
    assert server.attempts == 4
