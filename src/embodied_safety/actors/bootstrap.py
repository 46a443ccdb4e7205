"""The bootstrap actor: a word-level tokenizer and a tiny Qwen3 model trained from scratch with TRL.

It is the embedded default actor, so the whole pipeline runs with no download. The tokenizer is
trained with ``tokenizers`` on the training text plus the household catalog's category names
(the environment's vocabulary, as a pretrained model's vocabulary would cover them); the model is
a ``Qwen3ForCausalLM`` trained by ``trl.SFTTrainer`` on prompt-completion examples (loss on the
completion only). It emits the bare primitive call (``TOGGLE_OFF ( sink.n.01_1 )``); the output
parser accepts that form as well as Box 10's JSON.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.shared import ModelShape
from ..envs.household.suite.catalog import CATALOG
from ..threads import set_torch_threads
from .bootstrap_data import Example
from .hf import PROFILE_FILE
from .proxy import PROFILE_KEY as PROXY_KEY
from .proxy import Lexicon
from .trl_cpu import compact_on_cpu, trainer_with_sampler

SPECIAL = ["<pad>", "<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: ``transformers serve`` splits the assistant reply out of the decoded text with this template; without
#: it the word-level tokenizer's decoded prompt tail leaks into served answers ("<|im_start|> <unk>DONE ( )").
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor_pattern": r"<\|im_start\|> \S+",
    "fields": {"content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "content": "text"}},
}
#: punctuation split off as its own token
PUNCT = r"[(),:;\"{}\[\]]"
#: the synset suffix of an instance name is its own token, so ``potato`` in the instruction and in
#: ``potato.n.01_1`` is the same token and the model can copy object names it never saw in this role
SYNSET_SUFFIX = r"\.n\.\d+(?:_\d+)?"


@dataclass(frozen=True)
class TrainSettings:
    """Fields passed straight to ``trl.SFTConfig`` (TRL's own names), plus the seed and threads."""

    sft: dict[str, Any] = field(default_factory=lambda: {
        "num_train_epochs": 6, "per_device_train_batch_size": 16, "learning_rate": 1e-3,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.03, "max_length": 512, "logging_steps": 20,
    })
    seed: int = 0
    threads: int = 2


def vocabulary_texts(examples: Sequence[Example]) -> list[str]:
    cats = [f"{c}_{i}" for c in CATALOG for i in range(1, 5)]
    return [e.prompt for e in examples] + [e.completion for e in examples] + cats


def train_tokenizer(texts: Sequence[str]) -> Any:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex(PUNCT), behavior="isolated"),
         pre_tokenizers.Split(Regex(SYNSET_SUFFIX), behavior="isolated")])
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=SPECIAL, min_frequency=1))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   eos_token="<|im_end|>", bos_token=None)
    fast.chat_template = CHAT_TEMPLATE
    fast.response_template = RESPONSE_TEMPLATE
    return fast


def grammar_tokens(tokenizer: Any) -> list[str]:
    """Tokens a bare primitive call is made of besides object words: names, punctuation, synset suffixes."""
    from ..envs.household.actions import PRIMITIVES

    vocab = tokenizer.get_vocab()
    suffixes = [t for t in vocab if re.fullmatch(SYNSET_SUFFIX, t)]
    return sorted({*PRIMITIVES, "(", ")", ",", *suffixes} & set(vocab))


def build_model(tokenizer: Any, shape: ModelShape, seed: int) -> Any:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen3Config(vocab_size=len(tokenizer), tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
                      **shape.__dict__)
    return Qwen3ForCausalLM(cfg)


def sft_dataset(examples: Sequence[Example]) -> Any:
    from datasets import Dataset

    return Dataset.from_list([{"prompt": [{"role": "user", "content": e.prompt}],
                               "completion": [{"role": "assistant", "content": e.completion}]} for e in examples])


def save_actor_dir(model: Any, tokenizer: Any, out_dir: str | os.PathLike[str], max_new_tokens: int,
                   lexicon: Lexicon | None = None) -> Path:
    """Save a sampling-enabled actor dir: weights, tokenizer, generation config (do_sample), compact profile (with
    the proxy-name lexicon when given, :mod:`.proxy`)."""
    from transformers import GenerationConfig

    out_dir = Path(out_dir)
    model.generation_config = GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=max_new_tokens,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    profile: dict[str, Any] = {"prompt_style": "compact", "max_new_tokens": max_new_tokens, "kind": "bootstrap",
                               "grammar_tokens": grammar_tokens(tokenizer)}
    if lexicon is not None:
        profile[PROXY_KEY] = lexicon.to_json()
    (out_dir / PROFILE_FILE).write_text(json.dumps(profile, indent=2, sort_keys=True))
    return out_dir


def train_bootstrap_actor(examples: Sequence[Example], out_dir: str | os.PathLike[str], shape: ModelShape,
                          train: TrainSettings, log: Callable[[dict[str, float], int], None] | None = None,
                          max_new_tokens: int = 16, proxy_names: bool = False) -> dict[str, float]:
    """Train and save an HF model dir (safetensors, tokenizer, chat template, generation config); with
    ``proxy_names`` the profile holds the examples' :class:`.proxy.Lexicon`."""
    from transformers import TrainerCallback
    from trl import SFTConfig, SFTTrainer

    set_torch_threads(train.threads)
    compact_on_cpu()  # score only the completion positions (trl_cpu.py)
    out_dir = Path(out_dir)
    tokenizer = train_tokenizer(vocabulary_texts(examples))
    model = build_model(tokenizer, shape, train.seed)

    class _Log(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any) -> None:
            if log and logs:
                log({f"losses/{k}" if k in ("loss", "grad_norm") else f"charts/{k}": float(v)
                     for k, v in logs.items() if isinstance(v, int | float)}, state.global_step)

    trainer_cls, sft = trainer_with_sampler(SFTTrainer, train.sft)  # length_bucket: trl_cpu.BucketedSampler
    args = SFTConfig(output_dir=str(out_dir.parent / f".{out_dir.name}.trainer"), use_cpu=True, bf16=False,
                     gradient_checkpointing=False, report_to="none", save_strategy="no", seed=train.seed,
                     dataloader_num_workers=0, **sft)
    trainer = trainer_cls(model=model, args=args, train_dataset=sft_dataset(examples), processing_class=tokenizer,
                          callbacks=[_Log()])
    t0 = time.time()
    result = trainer.train()
    model = trainer.model
    lexicon = Lexicon.from_examples((e.prompt, e.completion) for e in examples) if proxy_names else None
    save_actor_dir(model, tokenizer, out_dir, max_new_tokens, lexicon)
    return {"train/loss": float(result.training_loss), "train/seconds": time.time() - t0,
            "train/examples": float(len(examples)), "train/params": float(sum(p.numel() for p in model.parameters()))}
