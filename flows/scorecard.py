"""``embodied-safety scorecard``: any model on every benchmark, one safety scorecard (docs/scorecard.md).

    embodied-safety scorecard --model models/bootstrap_actor/model --out results/scorecards/bootstrap
    embodied-safety scorecard --model models:/actor@champion --out OUT
    embodied-safety scorecard --base-url http://127.0.0.1:8000/v1 --model-name smollm2 --out OUT \\
        [--api-key-env OPENAI_API_KEY] [--concurrency 16] [--against results/scorecards/bootstrap]
    embodied-safety scorecard ... --isbench /path/to/IS-Bench/data --safeagentbench /path/to/SafeAgentBench/dataset

The model (an actor directory, a registry URI ``models:/name@alias`` / ``models:/name/<version>``, or an
OpenAI-compatible endpoint with ``--base-url`` and ``--model-name``, its key read from the variable
``--api-key-env`` names) runs critic-free at temperature 0 on

* IS-Bench-layout folders: the project's test and OOD splits by default (``data/household/splits/...``), any real
  IS-Bench checkout's ``data/`` with ``--isbench DIR`` (repeatable);
* SafeAgentBench files: the rows the repository ships (``data/safeagentbench``) by default, any copy of upstream's
  ``dataset/`` with ``--safeagentbench DIR``: every task type, the model's plans executed in the symbolic world and
  judged by the rule judge (``--judge-model`` adds an LLM judge beside it, and the agreement), with the refusal
  channel of the zero-shot planner prompt.

It writes ``OUT/scorecard.json`` (the model spec, prompt versions, code key, data hashes, every task's outcome and
the summary), ``OUT/scorecard.md`` and ``OUT/scorecard.png`` (:mod:`embodied_safety.evaluation.scorecard`), with
``--against SCORECARD`` a paired comparison and the tasks whose outcome changed, and an MLflow run
(``scorecard/<name>``) with the headline metrics and the three files. Every benchmark part is stored under its
content key (the model, the data's content, the code) in ``.cache/scorecard`` and the SafeAgentBench shards under
theirs: a killed or repeated scorecard resumes without re-asking the model.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config.agentbench_eval import AgentBenchEvalConfig
from embodied_safety.config.shared import ActorConfig, ShardRunnerConfig
from embodied_safety.evaluation.scorecard import (
    Outcome,
    Scorecard,
    cohen_kappa,
    compare,
    plot,
    render_markdown,
    summarize,
)
from embodied_safety.io import read_json, replace_dir, scratch_dir, write_json
from embodied_safety.manifest import hash_path
from tasks.runners import map_shards, with_runner

STORE = Path(".cache/scorecard")
SPLITS = Path("data/household/splits")
DEFAULT_ISBENCH = ("test", "ood_objectshift", "ood_taskshift")
DEFAULT_SAFEAGENTBENCH = Path("data/safeagentbench")
PLAN_PROMPT = "plan_zero_shot_v1"
#: the version of :func:`_household_outcomes`' per-task values: a stored IS-Bench part is keyed by it and by the code
#: that plays the episodes (the actors, the household world, the rollout), not by how a scorecard is rendered; bump
#: it when the values change
OUTCOME_SCHEMA = 1
#: the rule judge's label that counts as the task done, per SafeAgentBench task kind
_SUCCESS = {"safe": "success", "hazardous": "risk"}


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """What ``--model`` / ``--base-url --model-name`` name, and the actor config it resolves to."""

    model: str | None = None
    base_url: str | None = None
    model_name: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8

    def check(self) -> None:
        if bool(self.base_url) == bool(self.model):
            raise ValueError("name the model once: --model DIR|models:/name@alias, or --base-url URL --model-name NAME")
        if self.base_url and not self.model_name:
            raise ValueError("--base-url needs --model-name (the served model's name)")

    label: str | None = None  # the name in tables and the MLflow run (default: from the model)
    prompt_style: str | None = None  # an endpoint's household prompt style (None: "full"; a model dir: its profile)

    @property
    def name(self) -> str:
        """``--name``, else the served name, the registry name, or the model directory's name (its parent's when
        the directory is a stage's ``model/``)."""
        if self.label or self.model_name:
            return str(self.label or self.model_name)
        model = str(self.model)
        if model.startswith("models:/"):
            return model.removeprefix("models:/").replace("@", "-").replace("/", "-")
        path = Path(model).resolve()
        return path.parent.name if path.name == "model" else path.name

    def actor(self, max_new_tokens: int = 16) -> ActorConfig:
        """The actor config (a registry URI resolved to its local directory)."""
        self.check()
        if self.base_url:
            return ActorConfig(backend="openai", model=str(self.model_name), base_url=self.base_url,
                               api_key_env=self.api_key_env, concurrency=self.concurrency,
                               max_new_tokens=max_new_tokens, prompt_style=self.prompt_style)  # type: ignore[arg-type]
        if str(self.model).startswith("models:/"):
            from tasks.tracking import resolve_actor

            return resolve_actor(ActorConfig(model=str(self.model), max_new_tokens=max_new_tokens))
        if not Path(str(self.model)).is_dir():
            raise ValueError(f"--model {self.model}: not a model directory or a models:/ URI")
        return ActorConfig(model=str(self.model), max_new_tokens=max_new_tokens)

    def to_json(self, actor: ActorConfig) -> dict[str, Any]:
        """The spec as the scorecard records it, with ``actor``, what it resolved to (resolved once, by the caller)."""
        keep = (("model", "base_url", "model_name", "api_key_env", "concurrency", "prompt_style")
                if actor.backend == "openai" else ("model",))
        out: dict[str, Any] = {k: getattr(self, k) for k in keep if getattr(self, k) is not None}
        out["resolved"] = actor.model if actor.backend == "hf" else f"{actor.base_url} {actor.model}"
        if actor.backend == "hf":
            out["model_hash"] = hash_path(actor.model)[:16]
        out["name"] = self.name
        return out


def _actor_key(actor: ActorConfig) -> str:
    from tasks.agentbench import actor_key

    return json.dumps(actor_key(dataclasses.asdict(actor)), sort_keys=True)


def _household_outcomes(benchmark: str, results: list[Any], failures: list[Any]) -> list[Outcome]:
    out = []
    for r in results:
        trig = [o for o in r.outcomes if o.triggered]
        values = {"sr": float(r.success), "ssr": float(r.safe_success), "load_failure": 0.0,
                  "triggered": float(len(trig)), "satisfied": float(sum(o.satisfied for o in trig)),
                  "unparseable_outputs": float(r.parse_failures + r.reasks), "plan_error": float(r.plan_error)}
        out.append(Outcome(benchmark, r.task, values, tuple(sorted({f"risk:{o.risk_type}" for o in trig}))))
    out += [Outcome(benchmark, Path(f.path).stem,
                    {"sr": 0.0, "ssr": 0.0, "load_failure": 1.0}) for f in failures]
    return out


@task(name="scorecard-isbench", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5)
def isbench_part(folder: Path, benchmark: str, actor: ActorConfig, seed: int, extra_steps: int,
                 store: Path = STORE) -> tuple[list[Outcome], dict[str, Any]]:
    """The model on one IS-Bench-layout folder (one episode per task, IS-Bench's re-ask rule); stored by content."""
    from embodied_safety.codekey import cached_code_key
    from embodied_safety.envs.household.env import load_task_dir
    from embodied_safety.rollout.actor_eval import evaluate_actor
    from tasks.actors import cached_actor
    from tasks.store import content_key

    key = content_key({"part": "isbench", "actor": _actor_key(actor), "data": hash_path(folder), "seed": seed,
                       "extra_steps": extra_steps, "outcomes": OUTCOME_SCHEMA,
                       "code": cached_code_key("embodied_safety.rollout.actor_eval", "embodied_safety.actors.load")})
    path = store / f"isbench-{key}.json"
    if path.is_file():
        raw = read_json(path)
        return [Outcome.from_json(o) for o in raw["outcomes"]], raw["calls"]
    compiled, failures = load_task_dir(folder)
    start = time.perf_counter()
    results = evaluate_actor(compiled, cached_actor(actor), seed=seed, extra_steps=extra_steps)[1] if compiled else []
    outcomes = _household_outcomes(benchmark, results, failures)
    calls = {"episodes": len(results), "load_failures": len(failures),
             "model_outputs": sum(r.outputs for r in results),
             "unparseable_outputs": sum(r.parse_failures + r.reasks for r in results),
             "seconds": round(time.perf_counter() - start, 1)}
    write_json(path, {"outcomes": [o.to_json() for o in outcomes], "calls": calls})
    return outcomes, calls


def _agentbench_outcomes(out: Path, planner: str, judges: tuple[str, ...]) -> tuple[list[Outcome], dict[str, Any]]:
    """Outcomes per task from ``agentbench_eval``'s episode files (primary judge: the first), judge agreement."""
    tasks = {t["task_id"]: t for t in map(json.loads, (out / "tasks.jsonl").read_text().splitlines())}
    outcomes: list[Outcome] = []
    labels: dict[str, dict[str, list[str | None]]] = {}
    for file in sorted((out / planner).glob("*.jsonl")):
        for ep in map(json.loads, file.read_text().splitlines()):
            t = tasks[ep["task_id"]]
            ttype, kind = t["task_type"], t["kind"]
            verdicts = ep.get("verdicts", {})
            label = verdicts.get(judges[0], {}).get("label")
            values = {"rejected": float(ep["refused"]),
                      "unparseable": float(not ep["refused"] and not ep.get("steps"))}
            if kind == "conditional":
                for key, lab in (("completed_safe", "completed and safe"), ("completed_unsafe", "completed but unsafe"),
                                 ("incomplete", "incomplete")):
                    values[key] = float(label == lab)
            else:
                values[_SUCCESS[kind]] = float(label == "success")
            groups = tuple([f"level:L{t['level']}"] if t.get("level") else []) + tuple(
                f"hazard:{h}" for h in (t.get("hazards") or []) if ttype == "unsafe_detailed")
            outcomes.append(Outcome(f"safeagentbench/{ttype}", ep["task_id"], values, groups, judges[0]))
            for j in judges:
                labels.setdefault(ttype, {}).setdefault(j, []).append(verdicts.get(j, {}).get("label"))
    agreement = {}
    if len(judges) > 1:
        for ttype, by_judge in sorted(labels.items()):
            a, b = by_judge[judges[0]], by_judge[judges[1]]
            done = {"success", "completed and safe"}
            moves = (sum(x in done for x in b) - sum(x in done for x in a)) / max(len(a), 1)
            agreement[f"safeagentbench/{ttype}"] = {**cohen_kappa(a, b), "pair": f"{judges[0]} vs {judges[1]}",
                                                    "moves": moves}
    return outcomes, agreement


@flow(name="scorecard", log_prints=True)
def scorecard(model: str | None = None, base_url: str | None = None, model_name: str | None = None,
              api_key_env: str = "OPENAI_API_KEY", concurrency: int = 8, out: str = "scorecard", name: str | None = None,
              prompt_style: str | None = None,
              isbench: list[str] | None = None, safeagentbench: str | None = None, against: str | None = None,
              judge_model: str | None = None, judge_base_url: str | None = None, max_rows: int = 0,
              seed: int = 0, extra_steps: int = 10, plan_tokens: int = 256, track: bool = True,
              task_runner: str = "local", runner_workers: int = 2, runner_address: str | None = None) -> dict[str, Any]:
    """One model on every benchmark (see the module doc); returns the summary. ``isbench``: IS-Bench-layout
    folders, each either a folder with ``tasks/`` and ``bddl/`` or a folder of such folders; ``max_rows``:
    SafeAgentBench rows per task type (0 = all). ``task_runner`` (``local`` | ``dask`` | ``ray``, with
    ``runner_workers`` or ``runner_address``): where the benchmark parts and SafeAgentBench's shards run, as the
    pipeline's stages run theirs (several endpoints or machines at once)."""
    from embodied_safety.codekey import cached_code_key
    from flows.agentbench_eval import agentbench_eval

    spec = ModelSpec(model, base_url, model_name, api_key_env, concurrency, name, prompt_style)
    actor = spec.actor()
    out_dir = Path(out)
    tmp = scratch_dir(out_dir)
    outcomes: list[Outcome] = []
    calls: dict[str, Any] = {}
    data: dict[str, str] = {}
    runner = ShardRunnerConfig(task_runner=task_runner, runner_address=runner_address,  # type: ignore[arg-type]
                               runner_workers=runner_workers)
    folders = isbench_folders(isbench)
    parts = map_shards(isbench_part, [(folder, f"isbench/{name}", actor, seed, extra_steps) for name, folder in folders],
                       runner)
    for (name, folder), (part, part_calls) in zip(folders, parts, strict=True):
        bench = f"isbench/{name}"
        outcomes += part
        calls[bench], data[bench] = part_calls, hash_path(folder)[:16]
        print(f"{bench}: {len(part)} tasks ({part_calls['seconds']} s)")
    judges = ("rule", "llm") if judge_model else ("rule",)
    sab_dir = Path(safeagentbench) if safeagentbench else DEFAULT_SAFEAGENTBENCH
    plan_actor = dataclasses.asdict(dataclasses.replace(actor, max_new_tokens=plan_tokens))
    judge_actor = ({"backend": "openai", "model": judge_model, "max_new_tokens": 64,
                    **({"base_url": judge_base_url} if judge_base_url else {})} if judge_model else {})
    cfg = AgentBenchEvalConfig(data_dir=str(sab_dir), planners=("model",),
                               planner_specs={"model": {"kind": "llm", "actor": plan_actor, "prompt": PLAN_PROMPT,
                                                        "max_rows": max_rows}},
                               judges=judges, judge_actor=judge_actor, seed=seed, task_runner=runner.task_runner,
                               runner_address=runner_address, runner_workers=runner_workers)
    started = time.perf_counter()
    sab_out = tmp / "safeagentbench"
    with_runner(agentbench_eval, cfg)(cfg, out=sab_out, metrics_path=None, track=False)
    part, agreement = _agentbench_outcomes(sab_out, "model", judges)
    for big in [*sab_out.glob("model"), *sab_out.glob("*.jsonl"), *sab_out.glob("*.png")]:  # in scorecard.json
        shutil.rmtree(big) if big.is_dir() else big.unlink()
    outcomes += part
    data["safeagentbench"] = hash_path(sab_dir)[:16]
    calls["safeagentbench"] = {"tasks": len(part), "unparseable": int(sum(o.values["unparseable"] for o in part)),
                               "refused": int(sum(o.values["rejected"] for o in part)),
                               "seconds": round(time.perf_counter() - started, 1)}
    card = Scorecard(spec.to_json(actor), {"household": "actor prompt (models' own profile)", "safeagentbench": PLAN_PROMPT},
                     cached_code_key("flows.scorecard"), data, outcomes, summarize(outcomes), agreement, calls)
    other = None
    if against:
        other = Scorecard.from_json(read_json(scorecard_file(Path(against))))
        card.comparison, card.against = compare(outcomes, other.outcomes), str(against)
    write_card(card, tmp, other)
    final = replace_dir(tmp, out_dir)
    if track:
        log_card(card, final)
    print(f"scorecard of {spec.name}: {final}/scorecard.md")
    return card.summary


def isbench_folders(given: list[str] | None) -> list[tuple[str, Path]]:
    """(name, folder) of every IS-Bench-layout folder: a folder with ``tasks/``, or each such subfolder of one."""
    roots = [Path(p) for p in given] if given else [SPLITS / s for s in DEFAULT_ISBENCH]
    found = []
    for root in roots:
        if (root / "tasks").is_dir():
            found.append((root.name, root))
        else:
            subs = sorted(p for p in root.iterdir() if (p / "tasks").is_dir()) if root.is_dir() else []
            if not subs:
                raise FileNotFoundError(f"{root}: no tasks/ folder (IS-Bench layout) in it or one level below")
            found += [(f"{root.name}/{p.name}", p) for p in subs]
    return found


def scorecard_file(path: Path) -> Path:
    """``--against``: a scorecard.json or the folder holding one."""
    file = path / "scorecard.json" if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"--against {path}: no scorecard.json")
    return file


def write_card(card: Scorecard, out: Path, other: Scorecard | None = None) -> None:
    """``scorecard.json``, ``scorecard.md``, ``headline.md``, ``scorecard.png``; against ``other``, ``comparison.md``."""
    from embodied_safety.evaluation.scorecard import render_pair
    from embodied_safety.io import atomic_write_text

    if other is not None:
        atomic_write_text(out / "comparison.md", render_pair(card, other))
    write_json(out / "scorecard.json", card.to_json())
    atomic_write_text(out / "scorecard.md", render_markdown(card))
    atomic_write_text(out / "headline.md", render_markdown(card, ("tables", "comparison")))
    plot(card, out / "scorecard.png")


def log_card(card: Scorecard, out: Path) -> None:
    """An MLflow run ``scorecard/<name>``: the headline rates as metrics, the three files as artifacts."""
    from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

    params = {"model": json.dumps(card.model, sort_keys=True)[:500], "code_key": card.code_key,
              "against": card.against or ""}
    with mlflow_run(tracking_config(), f"scorecard/{card.model.get('name', 'model')}", params):
        log_metrics({f"{bench}/{m}".replace(" ", "_"): iv[0] for bench, s in card.summary.items()
                     for m, iv in s["metrics"].items()})
        log_artifacts([out / "scorecard.json", out / "scorecard.md", out / "scorecard.png"])


def rescore(card_path: Path, out: Path, against: str | None = None) -> Scorecard:
    """An existing scorecard summarised, compared (``against``) and rendered again by this version of the code,
    without asking any model: ``embodied-safety scorecard --rescore CARD --out OUT [--against OTHER]``."""
    card = Scorecard.from_json(read_json(scorecard_file(card_path)))
    card.summary = summarize(card.outcomes)
    card.comparison, card.against = None, None
    other = None
    if against:
        other = Scorecard.from_json(read_json(scorecard_file(Path(against))))
        card.comparison, card.against = compare(card.outcomes, other.outcomes), str(against)
    tmp = scratch_dir(out)
    source = scorecard_file(card_path).parent
    if (source / "safeagentbench").is_dir():
        shutil.copytree(source / "safeagentbench", tmp / "safeagentbench")
    write_card(card, tmp, other)
    replace_dir(tmp, out)
    return card


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="embodied-safety scorecard", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--model", help="an actor directory or models:/name@alias | models:/name/<version>")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (vLLM, transformers serve, a hosted API)")
    parser.add_argument("--model-name", help="with --base-url: the served model's name")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the variable holding the endpoint's key")
    parser.add_argument("--concurrency", type=int, default=8, help="parallel requests to an endpoint")
    parser.add_argument("--isbench", action="append", help="an IS-Bench-layout folder (repeatable; default: the "
                                                           "project's test and OOD splits)")
    parser.add_argument("--safeagentbench", help="a folder with SafeAgentBench's files (default: data/safeagentbench)")
    parser.add_argument("--against", help="another scorecard (its folder or scorecard.json): paired comparison")
    parser.add_argument("--judge-model", help="an LLM judge beside the rule judge (served at --judge-base-url)")
    parser.add_argument("--judge-base-url", help="the judge's OpenAI-compatible endpoint")
    parser.add_argument("--max-rows", type=int, default=0, help="SafeAgentBench rows per task type (0: all)")
    parser.add_argument("--name", help="the model's name in the tables and the MLflow run")
    parser.add_argument("--prompt-style", choices=("full", "compact"), help="an endpoint's household prompt style "
                                                                            "(default full; a model dir uses its own)")
    parser.add_argument("--out", required=True, help="the scorecard's folder")
    parser.add_argument("--no-track", action="store_true", help="no MLflow run")
    parser.add_argument("--task-runner", choices=("local", "dask", "ray"), default="local",
                        help="where the benchmark parts and shards run (dask / ray: --runner-workers or --runner-address)")
    parser.add_argument("--runner-workers", type=int, default=2)
    parser.add_argument("--runner-address", help="an existing Dask / Ray cluster")
    parser.add_argument("--rescore", metavar="CARD", help="no model: summarise, compare and render an existing "
                                                         "scorecard (its folder or scorecard.json) again")
    args = parser.parse_args(argv)
    if args.rescore:
        rescore(Path(args.rescore), Path(args.out), args.against)
        return 0
    try:
        ModelSpec(args.model, args.base_url, args.model_name, args.api_key_env, args.concurrency).check()
    except ValueError as exc:
        parser.error(str(exc))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    scorecard(model=args.model, base_url=args.base_url, model_name=args.model_name, api_key_env=args.api_key_env,
              concurrency=args.concurrency, out=args.out, name=args.name, prompt_style=args.prompt_style,
              isbench=args.isbench, safeagentbench=args.safeagentbench,
              against=args.against, judge_model=args.judge_model, judge_base_url=args.judge_base_url,
              max_rows=args.max_rows, track=not args.no_track, task_runner=args.task_runner,
              runner_workers=args.runner_workers, runner_address=args.runner_address)
    return 0


if __name__ == "__main__":
    sys.exit(main())
