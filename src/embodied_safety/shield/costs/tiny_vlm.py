"""A tiny random LLaVA (≈160 k parameters) built offline, so the VLM wire path — system prompt, PNG data-URL
``image_url`` part, ``transformers serve`` — is exercised in tests without any download (FIELD_NOTES part 2 §2).

It is *random*: its replies never parse as rubric scores, which is exactly what the tests need to see
failures recorded per frame. Recipe: a byte-level BPE tokenizer trained on our own prompts, with ``<image>``
as a special token; CLIP vision tower (hidden 32, 2 layers, 84 px, patch 14 → 36 patches + CLS = 37 image
tokens with ``vision_feature_select_strategy="full"``); a Qwen3 text model (hidden 64, 2 layers, head_dim 32).
The two pitfalls FIELD_NOTES records, both handled here:

1. the chat template must render plain-string content *and* lists of parts, where the server has turned
   each ``image_url`` part into ``{"type": "image", "url": ...}``; a text-only template drops the image;
2. ``generation_config.json`` must say ``do_sample: true``: ``transformers serve`` only ever turns sampling
   off (at ``temperature == 0``), so without it ``temperature`` and ``seed`` would be ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

SPECIAL = ["<pad>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' or c['type'] == 'image_url' %}<image>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
IMAGE_SIZE = 84
PATCH = 14


def _corpus() -> list[str]:
    from .rubrics import RUBRIC_SETS
    from .vlm_scorer import USER_TEXT, prompt_text

    texts = [prompt_text(stem) for stem in RUBRIC_SETS] + [prompt_text("rtd_meta_v1"), USER_TEXT]
    texts += [f"{n}: {v / 10:.1f}" for n in ("PROXIMITY", "HEADING", "CONTACT", "COST", "REASON") for v in range(11)]
    return texts


def build_tiny_vlm(out_dir: str | os.PathLike[str], seed: int = 0, max_new_tokens: int = 32) -> Path:
    """Build and save the tiny random LLaVA dir (weights, processor, chat template, sampling generation config)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        GenerationConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
        Qwen3Config,
    )

    out = Path(out_dir)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(_corpus(), trainers.BpeTrainer(
        vocab_size=512, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<pad>",
                                        bos_token=None, unk_token=None)
    tokenizer.chat_template = CHAT_TEMPLATE
    image_id = tokenizer.convert_tokens_to_ids("<image>")
    n_image_tokens = (IMAGE_SIZE // PATCH) ** 2 + 1  # patches + CLS ("full" keeps the CLS token)

    torch.manual_seed(seed)
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                              image_size=IMAGE_SIZE, patch_size=PATCH, projection_dim=32)
    text = Qwen3Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=4096,
                       tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
                       eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=image_id,
                         vision_feature_select_strategy="full", vision_feature_layer=-1,
                         image_seq_length=n_image_tokens)
    model = LlavaForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=max_new_tokens,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    image_processor = CLIPImageProcessor(size={"shortest_edge": IMAGE_SIZE},
                                         crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH,
                               vision_feature_select_strategy="full", num_additional_image_tokens=1,
                               chat_template=CHAT_TEMPLATE)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
