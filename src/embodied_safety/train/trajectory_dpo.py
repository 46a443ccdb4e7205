"""Trajectory DPO baselines (paper App. F.3, Table 4): safe vs unsafe *trajectories* of the same task.

The two sides come from separate episodes and share no decision context beyond the task, so the
preference is at trajectory granularity. The objective is DPO's with the same ``beta``, applied to
trajectory log-likelihoods: log pi(tau) = sum_t log pi(a_t | h_t), each step in its own context,

    L = -log sigma(beta * [(log pi(tau+) - log ref(tau+)) - (log pi(tau-) - log ref(tau-))]),

with the reference = the frozen starting checkpoint. TRL's ``DPOTrainer`` needs one prompt shared by
both sides, which trajectories do not have, so this is a small loop of its own; the params use
``DPOConfig`` field names and the logged metrics TRL's names (``rewards/accuracies``, ...).

* Safe side: the corrected episodes of the branches stage that ended safe and successful
  (``safe_episodes.jsonl``, cue-free prompts) — the bootstrap actor almost never ends safe
  unaided (9 of 1,184 rollouts), so the paper's "own safe rollouts" are its critic-corrected ones.
* Unsafe side: the actor's own rollouts of the same task that were not safe (``success_matched``:
  only those that still completed the task, so the contrast is safe success vs unsafe success).
"""

from __future__ import annotations

import os
import random
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..records import Trajectory
from .common import Evaluate, Log, Selector, TrainResult, finish, load_trainable

Step = tuple[str, str]  # (prompt the actor saw, its completion)
ALLOWED = {"learning_rate", "num_train_epochs", "per_device_train_batch_size", "beta", "max_length", "logging_steps",
           "max_steps", "weight_decay", "use_cpu"}


def trajectory_pairs(safe_episodes: Sequence[dict[str, Any]], rollouts: Iterable[Trajectory], limit: int,
                     success_matched: bool, seed: int = 0) -> list[dict[str, Any]]:
    """Up to ``limit`` (safe, unsafe) trajectory pairs, each unsafe rollout paired with a safe episode of its task."""
    safe: dict[str, list[list[Step]]] = defaultdict(list)
    for e in safe_episodes:
        steps = [(s["messages"][0]["content"], s["messages"][-1]["content"]) for s in e["steps"]]
        if steps and steps not in safe[e["task"]]:
            safe[e["task"]].append(steps)
    pairs = []
    for t in sorted(rollouts, key=lambda r: (r.task, r.temperature, r.shard_id)):
        if t.safe_success or t.task not in safe or (success_matched and not t.success) or not t.steps:
            continue
        options = safe[t.task]
        chosen = options[sum(p["task"] == t.task for p in pairs) % len(options)]
        pairs.append({"task": t.task, "temperature": t.temperature, "rejected_success": t.success,
                      "chosen": chosen, "rejected": [(s.prompt, s.raw_output) for s in t.steps]})
    random.Random(seed).shuffle(pairs)
    return pairs[:limit]


def _encode(tok: Any, steps: Sequence[Step], max_length: int) -> list[tuple[list[int], int]]:
    """Each step -> (token ids of prompt + completion, number of prompt tokens), chat template applied."""
    out = []
    for prompt, completion in steps:
        user = [{"role": "user", "content": prompt}]
        head = tok.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
        full = tok.apply_chat_template(user + [{"role": "assistant", "content": completion}], tokenize=False)
        ids = tok(full, add_special_tokens=False)["input_ids"][:max_length]
        n_prompt = min(len(tok(head, add_special_tokens=False)["input_ids"]), len(ids) - 1)
        out.append((ids, n_prompt))
    return out


def _trajectory_logps(model: Any, encoded: Sequence[Sequence[tuple[list[int], int]]], pad_id: int, device: str,
                      chunk: int = 64) -> Any:
    """sum_t log p(completion_t | prompt_t) for each trajectory (completion tokens only)."""
    import torch

    flat = [(i, ids, n) for i, traj in enumerate(encoded) for ids, n in traj]
    total = torch.zeros(len(encoded), device=device)
    for start in range(0, len(flat), chunk):
        part = flat[start:start + chunk]
        width = max(len(ids) for _, ids, _ in part)
        input_ids = torch.full((len(part), width), pad_id, dtype=torch.long)
        attn = torch.zeros((len(part), width), dtype=torch.long)
        mask = torch.zeros((len(part), width), dtype=torch.bool)
        for row, (_, ids, n) in enumerate(part):
            input_ids[row, :len(ids)] = torch.tensor(ids)
            attn[row, :len(ids)] = 1
            mask[row, n:len(ids)] = True
        input_ids, attn, mask = input_ids.to(device), attn.to(device), mask.to(device)
        logits = model(input_ids=input_ids, attention_mask=attn).logits[:, :-1].float()
        token_logps = torch.gather(logits.log_softmax(-1), 2, input_ids[:, 1:, None]).squeeze(2)
        per_step = (token_logps * mask[:, 1:]).sum(1)
        index = torch.tensor([i for i, _, _ in part], device=device)
        total = total.index_add(0, index, per_step)
    return total


def train_trajectory_dpo(start: str | os.PathLike[str], pairs: Sequence[dict[str, Any]], out: str | os.PathLike[str],
                         dpo: dict[str, Any], seed: int, log: Log | None = None, peft: dict[str, Any] | None = None,
                         evaluate: Evaluate | None = None, eval_every: int = 0,
                         sr_floor: float | None = None) -> TrainResult:
    import torch
    import torch.nn.functional as F

    unknown = set(dpo) - ALLOWED
    if unknown:
        raise ValueError(f"trajectory DPO params: unknown fields {sorted(unknown)} (allowed: {sorted(ALLOWED)})")
    start, out = Path(start), Path(out)
    device = "cuda" if not dpo.get("use_cpu", True) and torch.cuda.is_available() else "cpu"
    torch.manual_seed(seed)
    model, tok = load_trainable(start, peft)
    model.to(device).train()
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    max_length = int(dpo.get("max_length", 512))
    chosen = [_encode(tok, p["chosen"], max_length) for p in pairs]
    rejected = [_encode(tok, p["rejected"], max_length) for p in pairs]
    with torch.no_grad():
        from transformers import AutoModelForCausalLM

        ref = AutoModelForCausalLM.from_pretrained(start, dtype=torch.float32).to(device).eval()
        ref_c, ref_r = _trajectory_logps(ref, chosen, pad_id, device), _trajectory_logps(ref, rejected, pad_id, device)
        del ref
    beta, batch = float(dpo.get("beta", 0.1)), int(dpo.get("per_device_train_batch_size", 8))
    per_epoch = -(-len(pairs) // batch)
    total = int(dpo.get("max_steps", 0)) or int(per_epoch * float(dpo.get("num_train_epochs", 1)))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=float(dpo.get("learning_rate", 1e-6)), weight_decay=float(dpo.get("weight_decay", 0.0)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1 - s / max(total, 1)))
    selector = Selector(evaluate, eval_every, start, log, "dpo_dev", sr_floor)
    selector.step(model, 0)
    gen, order, step, losses, t0 = torch.Generator().manual_seed(seed), [], 0, [], time.time()
    logging_steps = int(dpo.get("logging_steps", 10))
    while step < total:
        if not order:
            order = torch.randperm(len(pairs), generator=gen).tolist()
        idx, order = order[:batch], order[batch:]
        pc = _trajectory_logps(model, [chosen[i] for i in idx], pad_id, device)
        pr = _trajectory_logps(model, [rejected[i] for i in idx], pad_id, device)
        rc, rr = beta * (pc - ref_c[idx]), beta * (pr - ref_r[idx])
        loss = -F.logsigmoid(rc - rr).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        step += 1
        losses.append(float(loss.detach()))
        if log and (step % logging_steps == 0 or step == total):
            log({"dpo/loss": float(loss.detach()), "dpo/rewards/chosen": float(rc.mean()), "dpo/rewards/rejected": float(rr.mean()),
                 "dpo/rewards/accuracies": float((rc > rr).float().mean()), "dpo/rewards/margins": float((rc - rr).mean()),
                 "dpo/learning_rate": sched.get_last_lr()[0]}, step)
        selector.step(model, step, final=step == total)
    return finish(model, tok, start, out, selector, {"dpo/loss": sum(losses) / max(len(losses), 1),
                                                      "dpo/seconds": time.time() - t0, "dpo/pairs": float(len(pairs)),
                                                      "dpo/steps": float(step)})
