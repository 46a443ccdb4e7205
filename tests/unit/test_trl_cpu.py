"""The compact fused LM head on CPU scores the labelled positions exactly as the full one does."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")


def _outputs(compact: bool, monkeypatch):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from trl.trainer import utils

    if compact:
        from embodied_safety.actors.trl_cpu import compact_on_cpu

        compact_on_cpu()
        first = utils._use_triton
        compact_on_cpu()  # idempotent: one wrapper, not a wrapper of the wrapper
        assert utils._use_triton is first
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(Qwen3Config(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=1, head_dim=16))
    utils.add_fused_lm_head(model, outputs=("log_probs", "entropy", "is_top1"))
    ids = torch.randint(0, 50, (3, 12), generator=torch.Generator().manual_seed(1))
    labels = ids.clone()
    labels[:, :9] = -100  # a long prompt, a short completion
    labels[2, :] = -100   # a row with nothing to score
    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
    out.loss.backward()
    grad = next(model.parameters()).grad.clone()
    return out, grad


def test_compact_head_on_cpu_matches_the_full_head(monkeypatch):
    from trl.trainer import utils

    original = utils._use_triton
    try:
        full, full_grad = _outputs(False, monkeypatch)
        compact, compact_grad = _outputs(True, monkeypatch)
        assert utils._use_triton(torch.device("cpu")) is True
    finally:
        utils._use_triton = original
    assert torch.allclose(full.loss, compact.loss, atol=1e-6)
    for a, b in ((full.log_probs, compact.log_probs), (full.entropy, compact.entropy), (full.is_top1, compact.is_top1)):
        assert torch.allclose(a.float(), b.float(), atol=1e-5)
    assert torch.allclose(full_grad, compact_grad, atol=1e-6)


def _padding(order, lengths, batch):
    import numpy as np

    lengths = np.asarray(lengths)
    return sum(lengths[order[i:i + batch]].max() * len(order[i:i + batch]) for i in range(0, len(order), batch)) / lengths.sum()


def test_bucketed_sampler_is_a_seeded_permutation_per_epoch_with_less_padding():
    import numpy as np

    from embodied_safety.actors.trl_cpu import BucketedSampler

    lengths = np.random.default_rng(0).integers(80, 300, 1000)
    s = BucketedSampler(lengths, batch_size=32, bucket=4, seed=7)
    first = list(s)
    assert sorted(first) == list(range(1000)) and len(s) == 1000
    assert list(BucketedSampler(lengths, 32, 4, 7)) == first  # same seed and epoch -> same order
    s.set_epoch(1)
    assert list(s) != first and sorted(s) == list(range(1000))  # a new shuffle each epoch
    plain = list(BucketedSampler(lengths, 32, 1, 7))  # bucket 1: a plain shuffle
    assert _padding(first, lengths, 32) < 0.85 * _padding(plain, lengths, 32)
    # every batch is still drawn from a random slice: batch means spread like the data, not sorted by length
    means = [lengths[first[i:i + 32]].mean() for i in range(0, 992, 32)]
    assert np.corrcoef(np.arange(len(means)), means)[0, 1] < 0.5


def test_length_bucket_is_ours_and_never_reaches_trl():
    from trl import SFTTrainer

    from embodied_safety.actors.trl_cpu import trainer_with_sampler

    cls, params = trainer_with_sampler(SFTTrainer, {"learning_rate": 1e-3, "length_bucket": 4})
    assert params == {"learning_rate": 1e-3} and issubclass(cls, SFTTrainer) and cls is not SFTTrainer
    cls, params = trainer_with_sampler(SFTTrainer, {"learning_rate": 1e-3})
    assert cls is SFTTrainer and params == {"learning_rate": 1e-3}
