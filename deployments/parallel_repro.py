"""`dvc repro` with the DAG's independent parts side by side (what `make demo` runs).

DVC reproduces one stage at a time and holds one lock per workspace, so two `dvc repro` cannot share it. The
pipeline has parts that meet only in a final stage (`report`): the SafeBranch chain, the ShieldVLA chain, the
SafeAgentBench pair. Each *relocatable* part with work to do may run in a scratch git worktree (a lane) that
shares this workspace's DVC cache, Prefect server, MLflow store and shard stores, while the other parts run
here. DVC's run-cache records each stage run in a lane (its deps, params and command -> its outputs), so the
closing `dvc repro` here finds those stages cached, checks their outputs out and writes exactly the
`dvc.lock` a one-at-a-time repro writes. If a lane fails, the closing repro simply runs its stages here.

A part stays here when it cannot move: a persistent output (the rollout shard store resumes in place) or an
input outside the repository (a relative path such as ``../shared`` means something else in a worktree).
Parts go to lanes largest first (by stages to run), each to the lane with the least work so far.

Lanes = cores // threads per stage. Every stage runs torch with ``OMP_NUM_THREADS`` threads (1 by default,
:data:`embodied_safety.threads.STAGE_THREADS`: torch's CPU results depend on the thread count, and the committed
``dvc.lock`` is made with 1), so a 2-core machine runs two lanes: the SafeBranch chain here, the ShieldVLA chain and
SafeAgentBench in a worktree. The pipeline's models are small and keep a second thread mostly waiting: two
one-thread processes did 1.2-1.65x the work of one two-thread process (``benchmarks/ppo_lanes.py``, the bootstrap
actor runs). Waiting OpenMP threads sleep (``OMP_WAIT_POLICY=PASSIVE``)
instead of spinning.

    python deployments/parallel_repro.py [--lanes N] [--dry-run] [--status FILE|-] [dvc repro args...]

With ``dvc repro`` arguments (targets, ``-f``, ...) it runs one plain ``dvc repro`` with them.

``--status``: the JSON of ``dvc status --json`` when the caller already has it (saves ~10 s).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from embodied_safety.threads import STAGE_THREADS, thread_cap

#: gitignored state shared with every lane (MLflow's store and artifacts, the content-keyed shard stores)
SHARED_STATE = ("mlruns.db", "mlartifacts", ".cache")
LANES_DIR = Path(".dvc/tmp/lanes")  # .dvc/ is ignored by git and by DVC's stage collection


@dataclasses.dataclass
class Part:
    """A connected part of the DAG (final joining stages excluded)."""

    stages: list[str]  # addressing, e.g. "shield_ppo@dubins"
    todo: list[str]  # the stages of this part `dvc status` reports changed
    relocatable: bool
    why_not: str = ""


def parts(repo_root: Path, changed: set[str]) -> tuple[list[Part], list[str]]:
    """The DAG's parts and its joining stages (stages that nothing depends on and whose upstream spans parts).

    A *root* stage (one that reads no other stage's outputs, e.g. ``household_suite``) does not tie the parts that
    read it together: each such part carries its roots and runs them itself when they are out of date. Roots are
    cheap and deterministic (seconds, byte-identical outputs), so a lane re-running one costs little and lets the
    part move (``alfred_port`` needs only the household splits: it runs beside ShieldVLA, not after SafeBranch)."""
    import networkx as nx
    from dvc.repo import Repo

    with Repo(str(repo_root)) as repo:
        graph = repo.index.graph  # edges: stage -> a stage it depends on
        sinks = {n for n in graph if graph.in_degree(n) == 0}
        roots = {n for n in graph if graph.out_degree(n) == 0 and n not in sinks}
        inner = graph.subgraph([n for n in graph if n not in sinks and n not in roots])
        groups = [set(c) for c in nx.weakly_connected_components(inner)]
        groups += [{r} for r in roots if not any(r in nx.descendants(graph, n) for g in groups for n in g)
                   and not any(r in nx.descendants(graph, s) for s in sinks)]
        joins = []
        for sink in sorted(sinks, key=lambda s: s.addressing):
            below = nx.descendants(graph, sink)
            touched = [g for g in groups if g & below]
            if len(touched) > 1:
                joins.append(sink.addressing)
            elif touched:
                touched[0].add(sink)
            else:
                groups.append({sink})
        for group in groups:  # each part with the roots it reads
            group |= {d for n in list(group) for d in nx.descendants(graph, n) if d in roots}
        out = []
        root = repo_root.resolve()
        for group in groups:
            names = sorted(s.addressing for s in group)
            why = _why_not_relocatable(group, root)
            out.append(Part(names, [n for n in names if n in changed], relocatable=not why, why_not=why))
    return out, joins


def _why_not_relocatable(group: set, root: Path) -> str:
    for stage in sorted(group, key=lambda s: s.addressing):
        for out in stage.outs:
            if out.persist:
                return f"{stage.addressing} keeps a persistent output ({out.def_path})"
        for dep in stage.deps:
            path = Path(os.path.abspath(os.path.join(stage.wdir, dep.def_path)))
            if dep.protocol != "local" or not path.is_relative_to(root):
                return f"{stage.addressing} reads {dep.def_path} outside the repository"
    return ""


#: minutes a stage took at the demo budget on a 2-core machine, one thread (``make demo``'s log); lanes are filled by
#: these, largest part first, so the long SafeBranch chain gets a lane to itself. A stage not listed counts 0.5.
MINUTES = {"bootstrap_actor": 6.2, "safebranch": 7.0, "alfred_port": 2.5, "branches": 1.0, "rollouts": 0.6,
           "baselines": 0.5, "bc_policy": 5.5, "shield_ppo@dubins": 3.7, "shield_demos": 0.3, "shield_rollouts": 0.3}


def weight(part: Part) -> float:
    return sum(MINUTES.get(s, 0.5) for s in part.todo)


def assign(todo: list[Part], lanes: int) -> list[list[Part]]:
    """Lane 0 is this workspace; a part that cannot move stays in it; the rest largest first (by :data:`MINUTES`)
    to the least loaded lane."""
    plan: list[list[Part]] = [[] for _ in range(max(lanes, 1))]
    load = [0.0] * len(plan)
    for part in sorted(todo, key=lambda p: (p.relocatable, -weight(p), p.stages)):
        lane = 0 if not part.relocatable else min(range(len(plan)), key=lambda i: (load[i], i))
        plan[lane].append(part)
        load[lane] += weight(part)
    return plan


def stage_env() -> dict[str, str]:
    """The environment every stage runs in: pinned intra-op threads, sleeping OpenMP waits."""
    return {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS") or str(STAGE_THREADS),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY") or "PASSIVE"}


def default_lanes() -> int:
    return max(1, (os.cpu_count() or 1) // (thread_cap() or STAGE_THREADS))


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def make_worktree(root: Path, path: Path) -> None:
    """A git worktree of the workspace as it is now: uncommitted edits (``git stash create``) and untracked files
    included, DVC's cache shared, gitignored state (MLflow, shard stores) linked to this workspace's."""
    if path.exists():
        remove_worktree(root, path)
    rev = _git("stash", "create", cwd=root) or "HEAD"
    path.parent.mkdir(parents=True, exist_ok=True)
    _git("worktree", "add", "--quiet", "--detach", str(path), rev, cwd=root)
    for name in _git("ls-files", "-z", "--others", "--exclude-standard", cwd=root).split("\0"):
        if name and not (root / name).is_dir():  # a linked store (a lane of a lane) is linked again below
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, path / name)
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        cache_dir = repo.cache.local_cache_dir
    subprocess.run(["dvc", "config", "--local", "cache.dir", os.path.abspath(cache_dir)], cwd=path, check=True)
    for name in SHARED_STATE:
        target = root / name
        if name != "mlruns.db":
            target.mkdir(parents=True, exist_ok=True)
        if target.exists():  # no database: not this project's store (init_tracking creates it)
            (path / name).symlink_to(target.resolve())


def remove_worktree(root: Path, path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=root, capture_output=True)
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True)


def init_tracking(root: Path) -> None:
    """Create this project's MLflow database (schema migrations) before two lanes could race to create it."""
    if (root / "tasks" / "tracking.py").is_file() and not (root / "mlruns.db").exists():
        subprocess.run([sys.executable, "-c", "from tasks.tracking import ensure_experiment, tracking_config\n"
                        "ensure_experiment(tracking_config())"], cwd=root, check=True)


def _targets(lane: list[Part]) -> list[str]:
    return [s for part in lane for s in part.todo]


def run(root: Path, plan: list[list[Part]], joins: list[str]) -> int:
    env = stage_env()
    started = time.monotonic()
    away = [(i, lane) for i, lane in enumerate(plan) if i > 0 and lane]
    procs = []
    if away:
        init_tracking(root)
    for i, lane in away:
        path = root / LANES_DIR / str(i)
        make_worktree(root, path)
        log = root / LANES_DIR / f"{i}.log"
        lane_env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(path / "src"), env.get("PYTHONPATH")]))}
        targets = _targets(lane)
        # the lane's own outputs of up-to-date upstream stages come from the shared cache (missing ones: rerun)
        subprocess.run(["dvc", "checkout", "--quiet", *targets], cwd=path, env=lane_env, capture_output=True)
        print(f"[lane {i}] {len(targets)} stages in {path.relative_to(root)} (log {log.relative_to(root)}): "
              f"{' '.join(targets)}", flush=True)
        with open(log, "w") as fh:
            procs.append((i, path, log, subprocess.Popen(["dvc", "repro", *targets], cwd=path, env=lane_env,
                                                           stdout=fh, stderr=subprocess.STDOUT)))
    if plan[0]:
        print(f"[lane 0] {len(_targets(plan[0]))} stages here: {' '.join(_targets(plan[0]))}", flush=True)
        here = subprocess.run(["dvc", "repro", *_targets(plan[0])], cwd=root, env=env).returncode
        print(f"[lane 0] {'done' if here == 0 else f'FAILED ({here})'} after {time.monotonic() - started:.0f} s",
              flush=True)
    for i, path, log, proc in procs:
        code = proc.wait()
        print(f"[lane {i}] {'done' if code == 0 else f'FAILED ({code}); its stages run here next'} after "
              f"{time.monotonic() - started:.0f} s", flush=True)
        if code:
            print("".join(log.read_text().splitlines(keepends=True)[-40:]), file=sys.stderr)
        remove_worktree(root, path)
    print(f"closing repro here (lanes' stages come from the run-cache; joins: {' '.join(joins) or 'none'})",
          flush=True)
    return subprocess.run(["dvc", "repro"], cwd=root, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lanes", type=int, default=default_lanes(), help="lanes including this workspace "
                        "(default: cores // OMP_NUM_THREADS, 1 on a 2-core machine)")
    parser.add_argument("--status", help="the JSON of `dvc status --json` (a file, or - for stdin)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    args, repro_args = parser.parse_known_args(argv)
    root = Path.cwd()
    if repro_args:  # targets or options for dvc: one plain repro (in the stages' environment)
        return subprocess.run(["dvc", "repro", *repro_args], cwd=root, env=stage_env()).returncode
    if args.lanes <= 1 and not args.dry_run:
        print(f"one lane (cores {os.cpu_count()}, {stage_env()['OMP_NUM_THREADS']} threads per stage): dvc repro",
              flush=True)
        return subprocess.run(["dvc", "repro"], cwd=root, env=stage_env()).returncode
    if args.status:
        text = sys.stdin.read() if args.status == "-" else Path(args.status).read_text()
    else:
        text = subprocess.run(["dvc", "status", "--json"], cwd=root, check=True, capture_output=True,
                              text=True).stdout
    changed = set(json.loads(text or "{}"))
    found, joins = parts(root, changed)
    plan = assign([p for p in found if p.todo], args.lanes)
    for i, lane in enumerate(plan):
        for part in lane:
            where = "here" if i == 0 else f"lane {i}"
            note = f" (stays here: {part.why_not})" if not part.relocatable else ""
            print(f"plan: {where}: {' '.join(part.todo)}{note}", flush=True)
    if args.dry_run:
        return 0
    return run(root, plan, joins)


if __name__ == "__main__":
    sys.exit(main())
