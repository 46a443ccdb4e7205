"""TRL on CPU: score only the completion positions in the fused LM head.

TRL 1.x replaces the causal-LM head with a chunked log-prob kernel (``trl.trainer.utils.add_fused_lm_head``). On a
Triton device it scores only the positions whose label is not ``-100`` ("compact"); everywhere else it scores every
position, because on compiled backends (Neuron) a data-dependent number of positions recompiles the graph each
batch. Eager CPU has no such cost, and our SFT/DPO rows are long prompts with short completions (about 10 of 150
tokens), so scoring every position spends about a third of each step on logits nobody reads. :func:`compact_on_cpu`
makes the head compact on CPU too: the same per-token log-probs, entropy and accuracy at the labelled positions
(the kernel's CPU tiles are unchanged; only the rows it is given differ). Measured on the bootstrap actor:
``benchmarks/actor_training.py``.
"""

from __future__ import annotations

from typing import Any

_PATCHED = "_embodied_safety_compact_on_cpu"


def compact_on_cpu() -> None:
    """Idempotent: make ``trl.trainer.utils``'s head score only labelled positions on CPU devices."""
    from trl.trainer import utils

    original: Any = utils._use_triton
    if getattr(original, _PATCHED, False):
        return

    def use_compact(device: Any) -> bool:
        return getattr(device, "type", str(device)) == "cpu" or bool(original(device))

    setattr(use_compact, _PATCHED, True)
    utils._use_triton = use_compact
