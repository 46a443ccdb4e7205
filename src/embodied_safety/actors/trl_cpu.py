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


class BucketedSampler:
    """Random batches with little padding: per epoch, shuffle, cut the order into chunks of ``bucket`` batches, sort
    each chunk by length, split it into batches and shuffle the batches. ``bucket=1`` is a plain shuffle.

    Our SFT rows run from about 90 to 300 tokens, so a random batch of 32 is padded to 1.66x its real tokens and every
    step computes attention and MLPs on padding. A chunk of 4 batches sorted by length pads to 1.16x (4: a 1.3x shorter
    step); each batch is drawn from ``bucket`` random batches' worth of rows (128 of ~2,000 at 4 x 32), unlike
    transformers' ``group_by_length`` (50-batch mega-chunks), which on the bootstrap actor left test SR at 0.0
    against 0.71 (the batches become per-template). Deterministic in (``seed``, epoch); the trainer calls :meth:`set_epoch`.
    """

    def __init__(self, lengths: Any, batch_size: int, bucket: int, seed: int) -> None:
        import numpy as np

        self.lengths = np.asarray(lengths)
        self.batch_size, self.bucket, self.seed, self.epoch = batch_size, max(int(bucket), 1), seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Any:
        import numpy as np

        rng = np.random.default_rng([self.seed, self.epoch])
        order = rng.permutation(len(self.lengths))
        size = self.batch_size * self.bucket
        for start in range(0, len(order), size):
            chunk = order[start:start + size]
            chunk = chunk[np.argsort(self.lengths[chunk], kind="stable")]
            batches = [chunk[i:i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
            for b in rng.permutation(len(batches)):
                yield from (int(i) for i in batches[b])


#: our one key in the TRL params dicts of ``params.yaml`` (``sft:``): the chunk size of :class:`BucketedSampler`
LENGTH_BUCKET = "length_bucket"


def trainer_with_sampler(trainer_cls: type, params: dict[str, Any]) -> tuple[type, dict[str, Any]]:
    """(the trainer class to build, the params without ``length_bucket``): TRL sees only its own field names.

    With ``length_bucket`` > 0 the class is ``trainer_cls`` (a TRL trainer on a tokenised dataset with ``input_ids``)
    drawing its batches with :class:`BucketedSampler`; without it (or <= 0), ``trainer_cls`` itself (transformers'
    random sampler)."""
    params = dict(params)
    bucket = int(params.pop(LENGTH_BUCKET, 0) or 0)
    if bucket <= 0:
        return trainer_cls, params

    class Bucketed(trainer_cls):  # type: ignore[misc, valid-type]
        def _get_train_sampler(self, train_dataset: Any = None) -> Any:
            data = self.train_dataset if train_dataset is None else train_dataset
            lengths = [len(ids) for ids in data["input_ids"]]
            return BucketedSampler(lengths, self.args.train_batch_size * self.args.gradient_accumulation_steps,
                                   bucket, self.args.seed)

    Bucketed.__name__ = f"Bucketed{trainer_cls.__name__}"
    return Bucketed, params
