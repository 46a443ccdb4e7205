"""The whole SafeBranch chain on SmolLM2-135M with LoRA, standalone (issue 20, item 8), for a GPU machine.

    python benchmarks/smollm2_safebranch_gpu.py [--model models/smollm2] [--splits data/household/splits]
    python benchmarks/smollm2_safebranch_gpu.py --tiny      # CPU: 3 train tasks, 1 dev / test task, 1 step per phase

1. Base actor: SmolLM2-135M-Instruct (``models/smollm2``, stage ``smollm2``; converted from the wheel if
   missing) + LoRA SFT on the bootstrap data (most safety steps dropped: the unsafe habit), compact
   prompts, decoding constrained to one valid call by a trie over the context's calls (``actors.trie``).
2. Branch collection on the train tasks with the rule critics, rule judge, pruning, relabelled pairs.
3. SFT-only, golden replay only (control), BranchPO-only and SafeBranch (SFT -> BranchPO) with the
   stage's mixtures (``variants.datasets``: chosen + golden replay; after-repair and contrast pairs;
   DPO + NLL), each checkpoint selected on dev by ``evaluation.selection`` (SR floor = base dev SR - 0.05).
4. Critic-free SR / SSR / SRec per eval split -> ``table2.md``; per-task paired bootstrap CIs ->
   ``paired.md``; everything in ``results.json`` under ``--out``.
No rollouts stage, so no Trajectory DPO row.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from embodied_safety.actors.bootstrap_data import DataSettings, bootstrap_examples
from embodied_safety.actors.hf import PROFILE_FILE, HFActor
from embodied_safety.branch.collect import BranchSettings, collect_branches
from embodied_safety.branch.dataset import preference_row, prune, replay_rows, sft_row
from embodied_safety.branch.golden import extra_pairs, golden_replay
from embodied_safety.branch.judge import judge
from embodied_safety.envs.household.env import CompiledTask, compile_task, load_task_dir
from embodied_safety.evaluation.report import paired_table, table2
from embodied_safety.evaluation.selection import floor_from
from embodied_safety.evaluation.stats import compare, per_task
from embodied_safety.io import atomic_write_text, read_json, write_json
from embodied_safety.rollout.actor_eval import evaluate_actor
from embodied_safety.train.safebranch import train_branchpo, train_sft
from embodied_safety.train.variants import LABELS, RECIPES, datasets

VARIANTS = ("sft_only", "golden_replay_only", "branchpo_only", "safebranch")
PAIRED = (("safebranch", "sft_only"), ("safebranch", "golden_replay_only"))
LORA = {"r": 16, "lora_alpha": 32, "lora_dropout": 0.05}
HEAD = ("sr", "ssr", "srec")


def tiny_splits() -> dict[str, list[CompiledTask]]:
    """Three train template tasks (one a contrast task), one dev and one test task, built in memory:
    no DVC data needed. A 135M model on 2 CPU cores takes seconds per generation round."""
    from embodied_safety.envs.household.suite.generate import _combos, instantiate
    from embodied_safety.envs.household.suite.templates import TEMPLATES

    picked = [t for t in TEMPLATES if t.name in ("wash_laundry", "cook_on_stove", "mop_floor")]
    return {part: [compile_task(instantiate(t, _combos(t, 0)[i], part == "train" and j == 0, part))
                   for j, t in enumerate(picked)][:3 if part == "train" else 1]
            for i, part in enumerate(("train", "dev", "test"))}


def start_dir(model: Path, work: Path, max_new_tokens: int) -> Path:
    """A copy of the SmolLM2 actor dir with compact prompts (what collection uses) and the trie decoder."""
    if not (model / "config.json").is_file():
        from embodied_safety.actors.smollm2 import convert_smollm2

        convert_smollm2(model)
    out = work / "smollm2"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(model, out)
    profile = read_json(out / PROFILE_FILE) if (out / PROFILE_FILE).is_file() else {}
    profile.pop("grammar_tokens", None)  # the trie replaces copy-or-grammar masking
    write_json(out / PROFILE_FILE, {**profile, "prompt_style": "compact", "decoder": "trie",
                                    "max_new_tokens": max_new_tokens})
    return out


def actor(path: Path, device: str, max_new_tokens: int) -> HFActor:
    a = HFActor(path, max_new_tokens=max_new_tokens, batch_size=64)
    a.model.to(device)
    return a


def branch_data(train: list[CompiledTask], base: HFActor, temperatures: tuple[float, ...], settings: BranchSettings,
                seed: int) -> dict[str, Any]:
    """Critic-in-the-loop collection, rule judge, pruning: the branches stage in one call."""
    raw, replay = [], []
    for t in temperatures:
        for e in collect_branches(train, "train", base, t, seed, settings):
            raw += e.branches
            result = e.episode.result()
            if e.branches and result.success and result.safe_success:
                replay += replay_rows(e.compiled, e.actions)
    by_name = {c.name: c for c in train}
    final = prune([b for b in raw if b.accepted and judge(by_name[b.task], b).accept])
    return {"raw": len(raw), "final": final, "pairs": [preference_row(b) for b in final],
            "pairs_fb": [preference_row(b, with_feedback=True) for b in final], "sft": [sft_row(b) for b in final],
            "replay": replay}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=Path("models/smollm2"))
    parser.add_argument("--splits", type=Path, default=Path("data/household/splits"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/smollm2_safebranch"))
    parser.add_argument("--tiny", action="store_true", help="CPU, 3 train tasks, 1 step per phase, no dev selection")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tasks", type=int, default=0, help="first N tasks per split (0 = all)")
    args = parser.parse_args(argv)
    t0 = time.time()
    device = "cuda" if torch.cuda.is_available() and not args.tiny else "cpu"
    gpu = device == "cuda"
    if args.tiny:
        splits, eval_splits = tiny_splits(), ("test",)
    else:
        eval_splits = ("test", "ood_objectshift", "ood_taskshift")
        splits = {s: load_task_dir(args.splits / s)[0] for s in ("train", "dev", *eval_splits)}
    if args.max_tasks:
        splits = {k: v[:args.max_tasks] for k, v in splits.items()}
    work = args.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    tokens = 40
    start = start_dir(args.model, work, tokens)
    common = {"use_cpu": not gpu, "bf16": gpu, "max_length": 1024, "logging_steps": 10}
    budget = {"max_steps": 1, "per_device_train_batch_size": 1} if args.tiny else {"per_device_train_batch_size": 16}
    base_p = {**common, **budget, "num_train_epochs": 2, "learning_rate": 5e-4, "lr_scheduler_type": "cosine",
              "warmup_steps": 0.05}
    sft_p = {**common, **budget, "num_train_epochs": 3, "learning_rate": 5e-4, "lr_scheduler_type": "cosine",
             "warmup_steps": 0.05}
    dpo_p = {**common, **budget, "num_train_epochs": 1, "learning_rate": 5e-6, "beta": 0.1,
             "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 1.0]}
    extra_steps = 0 if args.tiny else 10

    def evaluate(a: HFActor) -> dict[str, float]:
        m, _ = evaluate_actor(splits["dev"], a, extra_steps=extra_steps)
        return {k: float(m[f"eval/{k}"]) for k in HEAD}

    # 1. base actor: LoRA SFT on the bootstrap data (safety steps mostly dropped)
    examples = bootstrap_examples(splits["train"], DataSettings(drop_prob=0.9, patterns=2, seed=args.seed))
    rows = [{"messages": [{"role": "user", "content": e.prompt}, {"role": "assistant", "content": e.completion}]}
            for e in examples]
    base_dir = work / "base"
    train_sft(start, rows, base_dir, base_p, args.seed, peft=LORA)
    base = actor(base_dir, device, tokens)
    base_dev = evaluate(base)
    floor = floor_from(base_dev["sr"], 0.05)
    print(f"base: {len(rows)} examples; dev {base_dev}; floor {floor:.3f} ({time.time() - t0:.0f} s)")
    # 2. branches
    settings = BranchSettings(max_steps=8 if args.tiny else 30, max_repair_attempts=2 if args.tiny else 6)
    got = branch_data(splits["train"], base, (0.0,) if args.tiny else (0.0, 0.3, 0.7, 1.0), settings, args.seed)
    data = datasets(got["pairs"], got["pairs_fb"], got["sft"], got["replay"], [], [],
                    golden=golden_replay(splits["train"]),
                    extra_pairs=extra_pairs(("after_repair", "contrast"), splits["train"], got["final"]))
    print(f"branches: {got['raw']} repairs -> {len(got['pairs'])} pairs; " + ", ".join(f"{k} {len(v)}" for k, v in data.items()))
    # 3. variants (chains share their SFT prefix)
    trainers = {"sft": (train_sft, sft_p), "branchpo": (train_branchpo, dpo_p)}
    done: dict[tuple[str, ...], Path] = {}
    results: dict[str, Any] = {"base": {}, "variants": {}, "base_dev": base_dev, "sr_floor": floor}
    per: dict[str, dict[str, dict]] = {}

    def run_eval(name: str, a: HFActor) -> dict[str, float]:
        out: dict[str, float] = {}
        per[name] = {}
        for s in eval_splits:
            m, res = evaluate_actor(splits[s], a, extra_steps=extra_steps)
            out.update({f"{s}/{k}": float(m[f"eval/{k}"]) for k in HEAD})
            per[name][s] = per_task(res)
        return out

    results["base"] = run_eval("base", base)
    for v in VARIANTS:
        path, prev = base_dir, ()
        for phase in RECIPES[v]:
            key = (*prev, f"{phase.kind}-{phase.data}")
            if key not in done:
                if not data[phase.data]:
                    print(f"{v}: no {phase.data} data; phase skipped")
                    done[key] = path
                else:
                    fn, params = trainers[phase.kind]
                    out = work / "__".join(key)
                    steps = -(-len(data[phase.data]) // 16) * int(params["num_train_epochs"])
                    fn(path, data[phase.data], out, params, args.seed, peft=LORA,  # tiny: no dev selection
                       evaluate=None if args.tiny else evaluate, eval_every=max(1, steps // 8), sr_floor=floor)
                    done[key] = out
            path, prev = done[key], key
        results["variants"][v] = run_eval(v, actor(path, device, tokens))
        print(f"{v}: {results['variants'][v]} ({time.time() - t0:.0f} s)")
    methods = {LABELS["base"].replace("bootstrap actor", "SmolLM2-135M + LoRA bootstrap"): results["base"],
               **{LABELS[v]: m for v, m in results["variants"].items()}}
    results["paired"] = {f"{a} vs {b}": {s: compare([per[a][s]], [per[b][s]], n=10000, seed=args.seed)
                                         for s in eval_splits} for a, b in PAIRED}
    results["seconds"] = time.time() - t0
    results["device"] = torch.cuda.get_device_name(0) if gpu else "cpu"
    atomic_write_text(args.out / "table2.md", f"# Table 2, SmolLM2-135M + LoRA ({results['device']}, seed {args.seed}, "
                      f"{results['seconds']:.0f} s; critic-free, trie decoder, dev floor {floor:.3f})\n\n"
                      + table2(methods, eval_splits))
    atomic_write_text(args.out / "paired.md", "# Per-task paired differences, 95 % bootstrap CI\n\n"
                      + paired_table(results["paired"], eval_splits))
    write_json(args.out / "results.json", results)
    print((args.out / "table2.md").read_text())
    return results


if __name__ == "__main__":
    main()
