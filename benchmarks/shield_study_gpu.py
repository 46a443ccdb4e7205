"""The ShieldVLA study's Dubins-VL runs at Table 14's budget, standalone, for a GPU machine (issue 21, item 6).

    PYTHONPATH=src:.gpu_site python3 benchmarks/shield_study_gpu.py --jobs 9 --time-budget 420 --out benchmarks/results/shield_study
    PYTHONPATH=src python benchmarks/shield_study_gpu.py --tiny --build-inputs --out /tmp/shield_tiny   # CPU test

What it runs, with the library code the ``shield_ppo`` stage runs (no Prefect, MLflow, DVC, ``flows/`` or
``tasks/``):

1. **Warm critics**, one per (margin source, critic target, warm-up) the runs use, from the BC policy and its
   rollouts (:func:`embodied_safety.shield.rl.runs.warm_start_critic`, seeded as the stage's ``warm-critic`` task):
   for the default runs the two distilled critics (rubric-search labels, the simulator's exact action values; about
   30 min each on 2 CPU cores, most of it rendering and scoring the labels' branch frames, more than a lease:
   ``--critic rubric/policy_mean/distill=DIR`` takes one built elsewhere, e.g. the stage's
   ``.cache/shield/critic_warm/<key>`` from the same inputs and warm-up), saved under
   ``<out>/critics/<margin>-<target>[-distill]/``;
2. **Runs**: every run name of ``--runs`` (``shield/rl/runs.py::RUNS``; default the study's: PPO-Lagrangian,
   ``gated_search`` -- ShieldVLA's gate with the rubric margin -- and ``gated_oracle_recovery``, the same gate with
   the ground-truth margin, the reference) × ``--seeds``, then ``--sweep-run`` at every ``--delta-sweep`` δ other
   than its own × ``--seeds``; with ``--budget cpu`` (default) at ``make shield-study``'s recipe -- params.yaml's
   CPU row of ``shield_ppo`` (KL anchor, margin dual, K = 64, τ = 0.02) at Table 14's 1 M env steps, the study's
   warm-up and 300 evaluation episodes (tests/unit/test_make_experiments.py checks the two plan the same configs);
   ``--budget paper``: Table 14 as is (K = 4, τ = 0.005). Trained by :func:`embodied_safety.shield.rl.ppo.train`
   with the policy, value heads and critic on ``--device`` and the envs, the rubric scorer and replay on the CPU.
   ``--time-budget`` stops each run's training at that many seconds; the run still records the env steps it
   reached and is evaluated; every 122 iterations, at the last and where a time budget stopped it, the policy is
   evaluated on 300 validation episodes and the best trained iterate is also read on the test episodes (validated
   checkpoints, ``shield.rl.select``, as ``make shield-study``);
3. **Evaluation** as the stage's: the deterministic policy on the held-out seeds ``episode_seed(3000, i)``
   (:func:`embodied_safety.shield.rl.evaluation.evaluate_conditions`): SR, reach, violation rate, CSC.

After each run ``<out>/results.json`` (per run and seed: steps reached, seconds, device, the evaluation) and
``<out>/table.md`` (mean ± std over seeds of SR and CSC per method, the stage's Tables 2/3 layout, the δ sweep as
Table 7, then one row per run) are rewritten atomically, so a run killed by a timeout leaves the finished rows;
``<out>/runs/<run>[-delta<δ>]-seed<s>/`` holds each run's training curve, policy and critic, and a re-run with the
same settings skips finished runs.

Inputs (DVC outputs of ``bc_policy``, ``shield_rollouts`` and ``calibrate``; options ``--bc``, ``--rollouts``,
``--calibration``): ``models/shield/bc/dubins``, ``data/shield/rollouts/dubins/rollouts.npz``,
``data/shield/calibration/dubins/platt.json``. ``--build-inputs`` writes stand-ins instead (an untrained policy,
a few of its episodes, fixed Platt scalars) under ``<out>/inputs``: for the test and a plumbing check only.
The rubric margin uses the pixel scorer (``rubric_label.backend: pixel``, the default); a VLM backend needs its
endpoint and is refused.

Measured on the H200 machine before stop 51 (the former defaults ``ppo_lag gated gated_gt`` at ``--budget paper``;
16 cores; ``--jobs 9 --time-budget 100 --eval-episodes 64 --build-inputs``, so
stand-in inputs but Table 14's loop: 16 envs × 64 steps, K = 4): nine runs at once, 1 torch thread each, reach
about 450 env steps/s each for ``ppo_lag``, 410 for ``gated`` and 950 for ``gated_gt`` (the rubric margin's pixel
scorer runs on the CPU: that is the difference), 9.8 GB of GPU memory for all nine, 12 s per warm critic. At
those rates 1 M steps take about 40 min per rubric-margin run and 18 min per ``gated_gt`` run; a 10-minute
command with ``--time-budget 420`` reaches about 170 k and 400 k steps.

Third-party modules the import closure needs (a ``sys.modules`` dump after a ``--tiny`` run, stdlib removed):
torch (with what it imports itself: typing_extensions, sympy, mpmath, and dill, pydot, tqdm / colorama where
installed), numpy, safetensors (policy and critic files), yaml (PyYAML: ``params.yaml``), gymnasium and
farama_notifications (Dubins-VL's module imports gymnasium's spaces). No prefect, mlflow, dvc, ``flows/``,
``tasks/``, MuJoCo, scikit-learn or matplotlib. gymnasium and farama_notifications are pure Python and not in the
GPU image: carry copies (e.g. from a venv's site-packages, or ``pip download --no-deps gymnasium
farama-notifications``) and put them on ``PYTHONPATH``; the script stops with a message when gymnasium is missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embodied_safety.config.params import load_params
from embodied_safety.config.rubric_label import RubricLabelConfig
from embodied_safety.config.shield_ppo import ShieldPPOConfig
from embodied_safety.io import atomic_write_text, read_json, write_json
from embodied_safety.shield.rl import report as rep
from embodied_safety.shield.rl.runs import CriticKey, EnvInputs, Job, plan, ppo_config, run_tag

ENV = "dubins"
#: the study's Dubins-VL recipe: the Makefile's SHIELD_STUDY (`make shield-study`) for this env -- its runs, seeds,
#: δ sweep, critic warm-up, evaluation episodes and the CPU row of ``shield_ppo`` at Table 14's 1 M steps
#: (tests/unit/test_make_experiments.py checks that both plan the same runs with the same configs)
RUNS = ("ppo_lag", "gated_search", "gated_oracle_recovery")
SEEDS = (0, 1, 2)
SWEEP_RUN = "gated_search"
DELTA_SWEEP = (0.2, 0.0, -0.5, -1.0)
STUDY_STEPS = 1_000_000
WARMUP = {"regress": 200, "td": 400, "branch_steps": 0, "branch_every": 3, "distill": 3000}
EVAL_EPISODES = 300
#: validated checkpoints: every this many PPO iterations (and the last) on validation episodes (``shield.rl.select``)
SELECT_EVERY = 122
#: ``--tiny``: a few hundred env steps per run, one seed, one extra δ, a handful of warm-up steps, distilled states
#: and evaluation episodes, stand-in rollouts of 2 short episodes
TINY = {"total_steps": 512, "num_envs": 4, "warmup": {"regress": 4, "td": 4, "distill": 4}, "eval_episodes": 8,
        "select_every": 1,
        "seeds": (0,), "delta_sweep": (0.0,), "critic": {"critic_pose_aux_states": 8}, "episodes": 2, "max_steps": 30}


@dataclasses.dataclass(frozen=True)
class Study:
    """What every worker needs (picklable: with ``--jobs`` workers are spawned processes sharing the GPU)."""

    cfg: ShieldPPOConfig
    label_cfg: RubricLabelConfig
    inputs: EnvInputs
    out: Path
    device: str
    overrides: dict[str, Any]  # PPOConfig fields set from the command line (total_steps, num_envs, threads)
    eval_episodes: int
    conditions: tuple[str, ...]
    time_budget: float | None
    given: dict[str, str] = dataclasses.field(default_factory=dict)  # critic name -> a warm critic dir (--critic)

    def ppo(self, run: str, seed: int, delta: float | None = None) -> Any:
        return dataclasses.replace(ppo_config(self.cfg, ENV, run, seed, delta), **self.overrides)

    def critic_dir(self, key: CriticKey) -> Path:
        """``--critic``'s dir for this critic, else ``<out>/critics/<margin>-<target>[-distill]``."""
        return Path(self.given[key.name]) if key.name in self.given else self.out / "critics" / key.name.replace("/", "-")

    def run_dir(self, job: Job) -> Path:
        return self.out / "runs" / run_tag(job.run, job.seed, job.delta)

    def spec(self, job: Job) -> dict[str, Any]:
        """What decides a run's result: a stored run is reused only when it matches."""
        return {"ppo": dataclasses.asdict(self.ppo(job.run, job.seed, job.delta)), "device": self.device,
                "eval": [self.eval_episodes, list(self.conditions)], "time_budget": self.time_budget,
                "warmup": dict(self.cfg.warmup), "inputs": [str(p) for p in self.inputs.files()],
                "select": [self.cfg.select_every, self.cfg.select_episodes[ENV]],
                "critic": None if job.critic is None else str(self.critic_dir(job.critic))}


def margin(study: Study, kind: str) -> Any:
    """The margin source of a run, chosen as the stage's (``embodied_safety.shield.costs.sources.margin_for``)."""
    from embodied_safety.shield.costs.sources import margin_for

    return margin_for(ENV, kind, study.inputs.calibration, study.label_cfg, study.out / "cache")


def _threads(study: Study) -> None:
    from embodied_safety.threads import set_torch_threads

    set_torch_threads(int(study.overrides.get("threads", 2)))


def warm_critic(study: Study, key: CriticKey, critic_cfg: Any) -> tuple[CriticKey, float]:
    """One warm critic (seeded as the stage's ``warm-critic`` task) into ``critics/<margin>-<target>``; kept
    when already there. Returns (key, seconds)."""
    import torch

    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import rollout_margins, warm_start_critic

    path = study.critic_dir(key)
    if (path / "critic.json").is_file():
        return key, 0.0
    _threads(study)
    t0 = time.perf_counter()
    torch.manual_seed(0)
    policy = load_policy(study.inputs.bc, device=study.device)
    source = margin(study, key[0])
    rs, ell = rollout_margins(source, study.inputs.rollouts)
    critic, extra = warm_start_critic(ENV, policy, rs, ell, critic_cfg, dict(study.cfg.warmup), source=source)
    critic.save(path, extra={**extra, "device": study.device})
    seconds = time.perf_counter() - t0
    print(f"warm critic {'/'.join(key)}: {extra['transitions']} transitions, {seconds:.1f} s on {study.device}",
          flush=True)
    return key, seconds


def run_job(study: Study, job: Job) -> dict[str, Any]:
    """Train one (run, seed) from the BC policy on ``study.device`` (stopping at the time budget), evaluate it,
    store it in ``runs/<tag>/`` with the stage's own function (:func:`embodied_safety.shield.rl.runs.train_and_store`);
    the result row (reused when a stored one has the same spec)."""
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import load_critic
    from embodied_safety.shield.rl.runs import train_and_store

    path, spec = study.run_dir(job), study.spec(job)
    if (path / "result.json").is_file():
        stored = read_json(path / "result.json")
        if stored.get("spec") == json.loads(json.dumps(spec)):
            print(f"{path.name}: stored", flush=True)
            return stored
    _threads(study)
    pcfg = study.ppo(job.run, job.seed, job.delta)
    policy = load_policy(study.inputs.bc, device=study.device)
    critic = load_critic(study.critic_dir(job.critic), policy.config) if job.critic is not None else None
    t0 = time.perf_counter()
    row = train_and_store(ENV, policy, margin(study, pcfg.margin), pcfg, path, critic=critic,
                          eval_episodes=study.eval_episodes, conds=list(study.conditions),
                          select_every=study.cfg.select_every, select_episodes=study.cfg.select_episodes[ENV],
                          time_budget=study.time_budget, progress=lambda m: print(m, flush=True),
                          extra={"run": job.run, "seed": job.seed, "delta_default": job.delta is None,
                                 "device": study.device, "spec": spec})
    row["wall_seconds"] = time.perf_counter() - t0
    row["steps_per_s"] = row["steps"] / max(row["train_seconds"], 1e-9)
    row["final_dual"] = row["history"][-1]["dual"] if row["history"] else 0.0
    write_json(path / "result.json", row)
    ev = row["eval"]
    print(f"{path.name}: {row['steps']} steps in {row['train_seconds']:.0f} s ({row['steps_per_s']:.0f} steps/s) on "
          f"{study.device}; SR {ev['in']['sr']:.3f} CSC {ev['in']['csc']:.2f}", flush=True)
    return row


#: ``--budget`` -> the table's title
BUDGET_TITLE = {"cpu": "the study's recipe (the CPU row at Table 14's steps)", "paper": "Table 14 as is"}


def table(rows: Sequence[dict[str, Any]], meta: dict[str, Any]) -> str:
    """Mean ± std over seeds per method (:func:`~embodied_safety.shield.rl.report.table_main`), the δ sweep
    (:func:`~embodied_safety.shield.rl.report.table_delta`) when it ran, then one row per run with the steps it
    reached."""
    budget = "none" if meta["time_budget"] is None else f"{meta['time_budget']:g} s"
    lines = [f"# ShieldVLA study runs, Dubins-VL, {BUDGET_TITLE[meta['budget']]}, {meta['device_name']}",
             "", f"{len(rows)} of {meta['planned']} runs finished; training time budget per run: {budget}; "
             f"{meta['eval_episodes']} evaluation episodes.", ""]
    main = [r for r in rows if r["delta_default"]]
    if main:
        lines.append(rep.table_main(main))
    chosen = rep.selected_rows(main)
    if chosen:
        lines.append("Validated checkpoints (the best trained iterate on validation episodes, read on the test "
                     f"episodes)\n\n{rep.table_main(chosen)}")
    if len(main) < len(rows):
        lines.append(f"δ sweep\n\n{rep.table_delta(rows, ENV)}")
    if rows:
        lines += ["| run | δ | seed | env steps | of | train s | steps/s | SR | reach | violation rate | CSC |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            e = r["eval"]["in"]
            lines.append(f"| {r['run']} | {r['delta']:g} | {r['seed']} | {r['steps']:,} | {r['target_steps']:,} | "
                         f"{r['train_seconds']:.0f} | {r['steps_per_s']:.0f} | {e['sr']:.3f} | {e['reach_rate']:.3f} | "
                         f"{e['violation_rate']:.3f} | {e['csc']:.2f} |")
    return "\n".join(lines) + "\n"


def write_results(out: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """``results.json`` and ``table.md``, each replaced atomically."""
    order = [*meta["runs"], meta["sweep_run"]]
    rows = sorted(rows, key=lambda r: (not r["delta_default"], order.index(r["run"]), r["delta"], r["seed"]))
    write_json(out / "results.json", {"meta": meta, "rows": [{k: v for k, v in r.items() if k not in ("spec", "history")}
                                                             for r in rows]})
    atomic_write_text(out / "table.md", table(rows, meta))


def build_inputs(root: Path, episodes: int = 8, max_steps: int = 100) -> EnvInputs:
    """Stand-in inputs: an untrained Dubins-VL policy, ``episodes`` of its rollouts (at most ``max_steps`` steps
    each), fixed Platt scalars."""
    import torch

    from embodied_safety.envs.control.dubins import DubinsVLEnv, DubinsVLVec
    from embodied_safety.shield.costs.calibrate import PlattCalibration
    from embodied_safety.shield.policy.demos import episode_seeds
    from embodied_safety.shield.policy.rollouts import collect_rollouts
    from embodied_safety.shield.policy.visuomotor import policy_for_env

    inputs = EnvInputs(ENV, root / "bc", root / "rollouts.npz", root / "calibration")
    torch.manual_seed(0)
    env = DubinsVLEnv()
    policy = policy_for_env(env)
    env.close()
    policy.save(inputs.bc)
    collect_rollouts(None, policy, seeds=episode_seeds(1, range(episodes)), max_steps=max_steps,
                     make_vec=lambda n: DubinsVLVec(n, render=True)).save(inputs.rollouts)
    PlattCalibration(a=4.0, b=-1.0).save(inputs.calibration / "platt.json")
    return inputs


@contextmanager
def _thread_env(threads: int) -> Iterator[None]:
    """The BLAS / OpenMP thread variables (those not set already) at ``threads`` while workers are spawned."""
    names = [k for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k not in os.environ]
    os.environ.update({k: str(threads) for k in names})
    try:
        yield
    finally:
        for k in names:
            os.environ.pop(k, None)


def _map(jobs: int, threads: int, fn: Callable[..., Any], calls: list[tuple[Any, ...]],
         done: Callable[[Any], None]) -> None:
    """``fn(*call)`` for every call, in ``jobs`` spawned processes of ``threads`` threads when ``jobs > 1``;
    ``done`` on each result as it arrives."""
    if jobs <= 1 or len(calls) <= 1:
        for call in calls:
            done(fn(*call))
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with _thread_env(threads), ProcessPoolExecutor(min(jobs, len(calls)), mp_context=mp.get_context("spawn")) as pool:
        for future in as_completed([pool.submit(fn, *call) for call in calls]):
            done(future.result())


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/shield_study"))
    p.add_argument("--device", help="torch device of the policy and critic (default: cuda if available; --tiny: cpu)")
    p.add_argument("--runs", nargs="+", default=list(RUNS), help="run names of shield/rl/runs.py::RUNS")
    p.add_argument("--budget", choices=("cpu", "paper"), default="cpu",
                   help="cpu: the study's recipe (params.yaml's CPU row of shield_ppo at --total-steps, as make "
                        "shield-study); paper: Table 14 as is (K = 4, τ = 0.005, no KL anchor, the dual on the cost)")
    p.add_argument("--delta-sweep", nargs="*", type=float, help=f"the δ values {SWEEP_RUN} is re-trained at "
                   f"(default {list(DELTA_SWEEP)}; none: no sweep; --tiny: {list(TINY['delta_sweep'])})")
    p.add_argument("--sweep-run", default=SWEEP_RUN, help="the run the δ sweep re-trains")
    p.add_argument("--seeds", nargs="+", type=int, help=f"default {list(SEEDS)} (--tiny: 0)")
    p.add_argument("--total-steps", type=int, help=f"env steps per run (default: Table 14's {STUDY_STEPS:,})")
    p.add_argument("--num-envs", type=int, help="parallel envs per run (default: the stage's 16)")
    p.add_argument("--jobs", type=int, default=1, help="runs in parallel processes (sharing the GPU)")
    p.add_argument("--threads", type=int, help="torch CPU threads per process (default: cores // jobs)")
    p.add_argument("--time-budget", type=float, help="seconds of training per run; then it is evaluated")
    p.add_argument("--eval-episodes", type=int, help=f"default {EVAL_EPISODES} (--tiny: {TINY['eval_episodes']})")
    p.add_argument("--conditions", nargs="+", default=["in"], help="evaluation conditions: in, color, light, all")
    p.add_argument("--warmup", nargs=3, type=int, metavar=("REGRESS", "TD", "DISTILL"), help="critic warm-up steps "
                   f"(default {WARMUP['regress']} {WARMUP['td']} {WARMUP['distill']}, the study matrix)")
    p.add_argument("--critic", action="append", default=[], metavar="NAME=DIR",
                   help="a warm critic built elsewhere, e.g. rubric/policy_mean/distill=.cache/shield/critic_warm/<key> "
                        "(the stage's, from the same inputs and warm-up): the distilled critics take about 30 min each "
                        "on 2 CPU cores, longer than a GPU lease")
    p.add_argument("--params", type=Path, default=Path("params.yaml"))
    p.add_argument("--bc", type=Path, default=Path(f"models/shield/bc/{ENV}"))
    p.add_argument("--rollouts", type=Path, default=Path(f"data/shield/rollouts/{ENV}/rollouts.npz"))
    p.add_argument("--calibration", type=Path, default=Path(f"data/shield/calibration/{ENV}"),
                   help="the dir with platt.json")
    p.add_argument("--build-inputs", action="store_true", help="stand-in inputs under <out>/inputs (tests)")
    p.add_argument("--tiny", action="store_true", help="CPU, a few hundred steps per run, 1 seed (the test)")
    return p.parse_args(argv)


def study_config(args: argparse.Namespace) -> ShieldPPOConfig:
    """``shield_ppo`` of ``--params`` with the study's Dubins-VL recipe (or ``--tiny``'s) and the command line on top:
    the runs, seeds, δ sweep, warm-up, evaluation episodes and the CPU row at :data:`STUDY_STEPS`."""
    tiny = TINY if args.tiny else {}
    warmup = {**WARMUP, **tiny.get("warmup", {})}
    if args.warmup:
        warmup.update(zip(("regress", "td", "distill"), args.warmup, strict=True))
    seeds = args.seeds or list(tiny.get("seeds", SEEDS))
    sweep = list(args.delta_sweep if args.delta_sweep is not None else tiny.get("delta_sweep", DELTA_SWEEP))
    base = load_params("shield_ppo", ShieldPPOConfig, args.params)
    # the study's CPU row at 1 M steps (the total steps of --total-steps / --tiny go on top, as a PPOConfig override)
    cpu = {**base.cpu, ENV: {**base.cpu.get(ENV, {}), "total_steps": STUDY_STEPS, **tiny.get("critic", {})}}
    return dataclasses.replace(base, budget=args.budget, scale="study", cpu=cpu, runs={ENV: list(args.runs)},
                              seeds={ENV: seeds}, delta_sweep={ENV: sweep} if sweep else {}, sweep_run=args.sweep_run,
                              warmup=warmup, eval_episodes={**base.eval_episodes, ENV: EVAL_EPISODES}, register=False,
                              select_every=tiny.get("select_every", SELECT_EVERY))


def make_study(args: argparse.Namespace) -> Study:
    import torch

    tiny = TINY if args.tiny else {}
    device = args.device or ("cpu" if args.tiny or not torch.cuda.is_available() else "cuda")
    cfg = study_config(args)
    label_cfg = load_params("rubric_label", RubricLabelConfig, args.params)
    if label_cfg.backend != "pixel":
        raise SystemExit(f"rubric_label.backend {label_cfg.backend!r}: this script scores frames with the pixel scorer")
    jobs = max(1, args.jobs)
    overrides: dict[str, Any] = {"threads": args.threads or max(1, (os.cpu_count() or 2) // jobs)}
    for key, value in (("total_steps", args.total_steps or tiny.get("total_steps")),
                       ("num_envs", args.num_envs or tiny.get("num_envs"))):
        if value:
            overrides[key] = int(value)
    if args.build_inputs:
        inputs = build_inputs(args.out / "inputs", tiny.get("episodes", 8), tiny.get("max_steps", 100))
    else:
        inputs = EnvInputs(ENV, args.bc, args.rollouts, args.calibration)
        missing = [p for p in inputs.files() if not Path(p).exists()]
        if missing:
            raise SystemExit(f"missing inputs {missing}: run the bc_policy, shield_rollouts and calibrate stages "
                             "(or pass --bc / --rollouts / --calibration, or --build-inputs for stand-ins)")
    given = dict(c.split("=", 1) for c in args.critic)
    for name, path in given.items():
        if not (Path(path) / "critic.json").is_file():
            raise SystemExit(f"--critic {name}={path}: no critic.json there")
    return Study(cfg, label_cfg, inputs, args.out, device, overrides,
                 args.eval_episodes or tiny.get("eval_episodes", cfg.eval_episodes[ENV]), tuple(args.conditions),
                 args.time_budget, given)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    import importlib.util

    import torch

    args = parse(argv)
    if importlib.util.find_spec("gymnasium") is None:  # Dubins-VL's module imports it; workers would fail late
        raise SystemExit("gymnasium is not importable: put gymnasium and farama_notifications (pure Python) on "
                         "PYTHONPATH (see the module docstring)")
    args.out.mkdir(parents=True, exist_ok=True)
    study = make_study(args)
    todo = plan(study.cfg, ENV)
    gpu = study.device.startswith("cuda")
    meta: dict[str, Any] = {"device": study.device, "device_name": torch.cuda.get_device_name(study.device) if gpu
                            else "cpu", "torch": torch.__version__, "runs": list(args.runs),
                            "seeds": study.cfg.seeds[ENV], "budget": study.cfg.budget,
                            "sweep_run": study.cfg.sweep_run, "delta_sweep": study.cfg.delta_sweep.get(ENV, []),
                            "planned": len(todo.jobs), "time_budget": study.time_budget,
                            "eval_episodes": study.eval_episodes, "conditions": list(study.conditions),
                            "warmup": dict(study.cfg.warmup), "overrides": study.overrides,
                            "inputs": study.inputs.files(), "jobs": args.jobs, "critic_seconds": {}}
    t0 = time.perf_counter()
    print(f"{len(todo.critics)} warm critics, {len(todo.jobs)} runs on {meta['device_name']}, "
          f"{args.jobs} at a time", flush=True)

    def critic_done(got: tuple[CriticKey, float]) -> None:
        meta["critic_seconds"][got[0].name] = got[1]

    threads = int(study.overrides["threads"])
    _map(args.jobs, threads, warm_critic, [(study, k, c) for k, c in todo.critics.items()], critic_done)
    rows: list[dict[str, Any]] = []

    def run_done(row: dict[str, Any]) -> None:
        rows.append(row)
        meta["elapsed_seconds"] = time.perf_counter() - t0
        write_results(args.out, rows, meta)

    write_results(args.out, rows, meta)
    _map(args.jobs, threads, run_job, [(study, job) for job in todo.jobs], run_done)
    print((args.out / "table.md").read_text(), flush=True)
    return read_json(args.out / "results.json")


if __name__ == "__main__":
    main()
