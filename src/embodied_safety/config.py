"""Frozen config dataclasses, one per ``params.yaml`` section; unknown keys are rejected."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

T = TypeVar("T")

DEFAULT_PARAMS = Path("params.yaml")


@dataclass(frozen=True)
class HouseholdSuiteConfig:
    """``household_suite``: the default task suite (SafeBranch App. B)."""

    seed: int = 0  # shuffles slot combinations and OOD choices
    per_template: int = 16  # slot combinations per template (train + dev + test)
    n_dev: int = 2  # dev combinations per template
    n_test: int = 3  # test combinations per template (unseen combinations of seen categories)
    contrast_every: int = 4  # every k-th combination is a contrast task (0 = none)
    taskshift_per_target: int = 2  # OOD-TaskShift tasks per held-out target category
    behavior_coverage: bool = True  # report how many BEHAVIOR-1K activities parse and initialise

    def __post_init__(self) -> None:
        if self.per_template < self.n_dev + self.n_test + 1:
            raise ValueError("household_suite.per_template must exceed n_dev + n_test")


@dataclass(frozen=True)
class EvaluateScriptedConfig:
    """``evaluate_scripted``: scripted reference policies on every split."""

    policies: tuple[Literal["golden", "golden_unsafe", "random"], ...] = ("golden", "golden_unsafe")
    splits: tuple[str, ...] = ("train", "dev", "test", "ood_objectshift", "ood_taskshift")
    extra_steps: int = 10  # step budget = golden length + extra_steps (IS-Bench)
    invalid_output: Literal["reask", "failed_step"] = "reask"  # unparseable output: asked again (IS-Bench) or a failed step
    upstream_parity: bool = False  # True: IS-Bench's (type, action)-keyed process conditions (a later one overwrites)
    seed: int = 0  # for the random policy


def from_dict(cls: type[T], raw: dict[str, Any] | None, section: str) -> T:
    """Build ``cls`` from a mapping, naming the section and key of any unknown field."""
    raw = dict(raw or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ValueError(f"params.yaml: {section}: unknown key(s) {unknown}; expected some of {sorted(fields)}")
    for key, value in list(raw.items()):
        if isinstance(value, list):
            raw[key] = tuple(value)
    return cls(**raw)


def load_params(section: str, cls: type[T], path: str | os.PathLike[str] = DEFAULT_PARAMS) -> T:
    """Read one section of ``params.yaml`` into its dataclass (defaults when the file is absent)."""
    import yaml

    path = Path(path)
    data = yaml.safe_load(path.read_text()) if path.is_file() else {}
    return from_dict(cls, (data or {}).get(section), section)


@dataclass(frozen=True)
class ActorConfig:
    """Which actor a stage uses: a local transformers model or an OpenAI-compatible endpoint."""

    backend: Literal["hf", "openai"] = "hf"
    model: str = "models/bootstrap_actor/model"  # hf: model dir or cached hub id; openai: served model name
    prompt_style: Literal["full", "compact"] | None = None  # None: the model dir's profile (hf) or "full"
    max_new_tokens: int = 16
    batch_size: int = 64  # hf: contexts per generate call
    base_url: str = "http://127.0.0.1:8000/v1"  # openai
    api_key_env: str = "OPENAI_API_KEY"  # openai: name of the variable holding the key (never the key)
    concurrency: int = 8  # openai: parallel requests
    timeout_s: float = 60.0
    max_retries: int = 3


@dataclass(frozen=True)
class TrackingConfig:
    tracking_uri: str = "sqlite:///mlruns.db"
    artifact_root: str = "mlartifacts"
    experiment: str = "embodied-safety"


@dataclass(frozen=True)
class ModelShape:
    """Qwen3 shape of the bootstrap actor. Power-of-two head_dim: 48 was 3x slower than 64 on CPU
    (FIELD_NOTES part 3)."""

    hidden_size: int = 128
    intermediate_size: int = 256
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 64
    max_position_embeddings: int = 1024


@dataclass(frozen=True)
class BootstrapActorConfig(ModelShape):
    """``bootstrap_actor``: train the embedded default actor from scratch (see actors/bootstrap.py);
    the model-shape fields are inherited from :class:`ModelShape`."""

    drop_prob: float = 0.9  # probability of dropping each safety step from a training plan
    patterns: int = 2  # sampled drop masks per train task
    renamed_fraction: float = 0.0  # share of examples that also get a renamed-objects copy (see bootstrap_data)
    recovery: bool = False  # add failure-recovery examples
    # train-time task augmentation (envs/household/suite/augment.py); the pools exclude every OOD category
    augment_extra_objects: int = 0  # copies per train task with 1..augment_extra_max neutral extra objects
    augment_extra_max: int = 2
    augment_rename_targets: int = 0  # copies per train task whose target is another same-ability category
    seed: int = 0
    observation: Literal["full", "partial"] = "full"
    sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 6, "per_device_train_batch_size": 32, "learning_rate": 2e-3,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.03, "max_length": 512, "logging_steps": 20})
    eval_split: str = "test"
    min_sr: float = 0.6  # thresholds the stage reports as pass/fail (issue 3)
    max_ssr: float = 0.15
    min_feedback_following: float = 0.8
    register_as: str = "actor-base"
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)  # overrides of TrackingConfig


@dataclass(frozen=True)
class PlannerConfig:
    """The DFS planner settings shared by ``rollouts`` and ``branches`` (SafeBranch Table 7)."""

    splits: tuple[str, ...] = ("train",)
    temperatures: tuple[float, ...] = (0.0, 0.3, 0.7, 1.0)
    seed: int = 0
    max_steps: int = 30  # decision steps per episode
    max_fails_per_step: int = 3  # failed attempts before a decision step counts as spent
    stall_window: int = 5  # executed actions without a state change that end the episode
    reject_repeats: bool = True  # anti-stall: refuse an exact repeat of the previous successful action
    observation: Literal["full", "partial"] = "full"
    actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # ActorConfig fields


@dataclass(frozen=True)
class ShardRunnerConfig:
    """Where a stage's shard tasks run (Prefect task runners).

    ``local``: in the stage's process, one after another (one batched model). ``dask`` / ``ray``: on a
    cluster, every worker loading its own model: a local one of ``runner_workers`` processes, or an
    existing one at ``runner_address`` (``tcp://host:8786`` for Dask, ``ray://host:10001`` or ``auto``
    for Ray). ``concurrency_tag`` tags the shard task runs so a Prefect concurrency limit on that tag
    (``prefect concurrency-limit create <tag> 4``) caps how many run at once, e.g. against one
    endpoint; off by default, since every tagged run costs two more API calls (docs/operations.md)."""

    task_runner: Literal["local", "dask", "ray"] = "local"
    runner_address: str | None = None
    runner_workers: int = 2
    concurrency_tag: str | None = None


@dataclass(frozen=True)
class RolloutsConfig(ShardRunnerConfig, PlannerConfig):
    """``rollouts``: the actor's own rollouts, shard = (task, temperature) (SafeBranch §4.2)."""

    chunk_size: int = 64  # shards per batched actor call group (one Prefect task)
    fault_rate: float = 0.0  # probability per step that the simulator crashes (fault injection)
    worker_fault_rate: float = 0.0  # probability per attempt that a chunk task dies (Prefect retries it)
    chunk_retries: int = 1  # Prefect retries per chunk task


@dataclass(frozen=True)
class BranchesConfig(ShardRunnerConfig, PlannerConfig):
    """``branches``: online branch collection with critics, judge, prune (SafeBranch §4.2, App. D)."""

    max_repair_attempts: int = 6  # Table 7: max BeforeBDDL retries
    max_recursion: int = 6  # Table 7: max Phase-3 (deep backtrack) recursion
    critic_backend: Literal["rule", "llm"] = "rule"
    critic: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm: ActorConfig fields of the critic model
    judge_backend: Literal["rule", "llm"] = "rule"
    judge: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm: ActorConfig fields of the judge model


@dataclass(frozen=True)
class BaselinesConfig(ShardRunnerConfig):
    """``baselines``: inference-time safety baselines with the base actor (SafeBranch App. C, F.4).

    Each (method, split) is one shard. Module backends: ``rule`` reads the simulator's ground truth;
    ``llm`` uses the paper's prompts through ``verifier`` / ``value`` / ``critic`` (ActorConfig
    fields; the default is the actor's own model, as in the paper's same-backbone baselines)."""

    methods: tuple[Literal["self_verification", "lookahead", "full_critic"], ...] = (
        "self_verification", "lookahead", "full_critic")
    splits: tuple[str, ...] = ("test", "ood_objectshift", "ood_taskshift")
    actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # default: rollouts.actor (the base actor)
    extra_steps: int = 10  # step budget = golden length + extra_steps (IS-Bench)
    seed: int = 0
    retries: int = 3  # Self-Verification: re-prompts after an unsafe verdict (R, App. C.1)
    k: int = 2  # Lookahead: candidates per step (App. C.2)
    lookahead_temperature: float = 0.7  # sampling temperature of the k candidates
    max_repair_attempts: int = 6  # full critic: Table 7
    max_recursion: int = 6
    verifier_backend: Literal["rule", "llm"] = "rule"
    verifier: dict[str, Any] = dataclasses.field(default_factory=dict)
    value_backend: Literal["rule", "llm"] = "rule"
    value: dict[str, Any] = dataclasses.field(default_factory=dict)
    critic_backend: Literal["rule", "llm"] = "rule"
    critic: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class AlfredPortConfig(ModelShape):
    """``alfred_port``: the SafetyALFRED port (SafeBranch B.6) on an offline corpus of turns.

    ``corpus``: a folder with ``train.json``, ``dev.json`` and ``test.json`` in the SafetyALFRED
    (LLaVA-style) format; empty: record them from the household splits named in ``record``. The
    embedded base actor (the model-shape fields) is trained on the train turns with
    ``drop_prob`` of the safety steps skipped, and to follow category hints."""

    corpus: str = ""
    record: dict[str, str] = dataclasses.field(default_factory=lambda: {
        "train": "train", "dev": "dev", "test": "test"})
    drop_prob: float = 0.9
    seed: int = 0
    base_sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 6, "per_device_train_batch_size": 32, "learning_rate": 2e-3,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.03, "max_length": 512, "logging_steps": 20})
    sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {  # SFT warm-up on chosen + replay
        "num_train_epochs": 1, "per_device_train_batch_size": 32, "learning_rate": 1e-3, "max_length": 512,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.05, "logging_steps": 10})
    branchpo: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 1e-4, "beta": 0.1,
        "max_length": 512, "logging_steps": 4})
    eval_every: dict[str, int] = dataclasses.field(default_factory=lambda: {"sft": 10, "branchpo": 4})
    # SFT replay as in the household stage: golden_replay = every gold train turn (the golden trajectories),
    # corrected_episodes = only the non-hazard train turns (the earlier mixture)
    sft_data: Literal["golden_replay", "corrected_episodes"] = "golden_replay"
    max_dev_sr_drop: float | None = 0.05  # selection floor: dev non-hazard accuracy >= the base's - this
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)


VARIANTS = ("sft_only", "golden_replay_only", "branchpo_only", "safebranch", "trajectory_dpo", "trajectory_dpo_success_matched",
            "sft_only_fb", "branchpo_only_fb", "safebranch_fb", "safebranch_extracted", "safebranch_judged")


@dataclass(frozen=True)
class SafeBranchConfig:
    """``safebranch``: the Table 2 / 4 / 13 variants over seeds (SafeBranch §4.1-4.2, App. F, Table 5).

    ``sft`` / ``branchpo`` / ``trajectory_dpo`` hold TRL field names (``SFTConfig`` / ``DPOConfig``).
    ``sweep`` lists learning rates per sweep key (``sft``, ``branchpo`` via SafeBranch, ``branchpo_only``,
    ``trajectory_dpo``): the first seed trains each, the dev split picks one by (SSR, SR), and every
    variant then uses its picks (App. F.5: selection by rollouts, never by reward accuracy). A
    missing key keeps params' rate.
    """

    seeds: tuple[int, ...] = (0, 1, 2)
    variants: tuple[str, ...] = VARIANTS
    peft: dict[str, Any] | None = dataclasses.field(default_factory=lambda: {"r": 16, "lora_alpha": 32,
                                                                              "lora_dropout": 0.05})
    sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 3, "per_device_train_batch_size": 32, "learning_rate": 1e-3, "lr_scheduler_type": "cosine",
        "warmup_steps": 0.05, "max_length": 512, "logging_steps": 20})
    branchpo: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 1e-5, "beta": 0.1,
        "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 1.0], "max_length": 512, "logging_steps": 10})
    trajectory_dpo: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 1e-5, "beta": 0.1,
        "max_length": 512, "logging_steps": 10})
    sweep: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=lambda: {
        "sft": (3e-4, 1e-3, 3e-3), "branchpo": (1e-5, 1e-4, 1e-3), "branchpo_only": (1e-5, 1e-4, 1e-3),
        "trajectory_dpo": (1e-5, 1e-4, 1e-3)})
    dev_split: str = "dev"
    eval_every: dict[str, int] = dataclasses.field(default_factory=lambda: {  # optimizer steps between dev-split
        "sft": 20, "branchpo": 4, "trajectory_dpo": 4})                    # evaluations per phase (F.5)
    max_dev_evals: int = 12  # cap per phase: larger data sets are evaluated every steps / max_dev_evals steps
    eval_splits: tuple[str, ...] = ("test", "ood_objectshift", "ood_taskshift")
    registered_model: str = "actor"
    # SFT replay (D.5): golden_replay = the golden plan of every train task; corrected_episodes = the critic-
    # corrected episodes that ended safe and successful (the earlier default)
    sft_data: str = "golden_replay"
    # extra cue-free BranchPO pairs (branch.golden): after_repair (next plan action / DONE() over a repeat of
    # the safety action), contrast (a contrast task's plan step over the safety step it makes unnecessary)
    branchpo_pairs: tuple[str, ...] = ("after_repair", "contrast")
    train_split: str = "train"  # the tasks the golden replay and the contrast pairs come from
    max_dev_sr_drop: float | None = 0.05  # selection: max dev SSR s.t. dev SR >= base dev SR - this (None: off)
    paired_bootstrap: int = 10000  # resamples of the per-task paired comparisons (0: none)
    # a label in results.json and every report table: demo = make demo's budget, study = make study's (issue 19)
    scale: Literal["demo", "study"] = "demo"
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)  # overrides of TrackingConfig

    def __post_init__(self) -> None:
        if self.sft_data not in ("golden_replay", "corrected_episodes"):
            raise ValueError(f"safebranch.sft_data: {self.sft_data!r}; known: golden_replay, corrected_episodes")
        bad_pairs = set(self.branchpo_pairs) - {"after_repair", "contrast"}
        if bad_pairs:
            raise ValueError(f"safebranch.branchpo_pairs: unknown {sorted(bad_pairs)}; known: after_repair, contrast")
        unknown = set(self.variants) - set(VARIANTS)
        if unknown:
            raise ValueError(f"safebranch.variants: unknown {sorted(unknown)}; known: {list(VARIANTS)}")
        bad = set(self.sweep) - {"sft", "branchpo", "branchpo_only", "trajectory_dpo"}
        if bad:
            raise ValueError(f"safebranch.sweep: unknown key(s) {sorted(bad)}; known: sft, branchpo, branchpo_only, "
                             "trajectory_dpo")
        try:  # YAML 1.1 reads `1e-5` (no dot) as a string; `dvc exp run -S` writes rates that way
            rates = {k: tuple(float(x) for x in v) for k, v in self.sweep.items()}
        except (TypeError, ValueError) as e:
            raise ValueError(f"safebranch.sweep: learning rates must be numbers: {e}") from e
        object.__setattr__(self, "sweep", rates)


@dataclass(frozen=True)
class PromoteConfig:
    """``promote``: the champion rule for the registry (``python -m flows.promote``)."""

    registered_model: str = "actor"
    max_sr_drop: float = 0.1  # a candidate may lose at most this much dev SR against the champion
    base_model: str = "actor-base"  # with no champion a candidate must beat this model's newest version
    base_max_sr_drop: float = 0.05  # ... by dev SSR, losing at most this much dev SR (the selection margin)
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class AgentBenchEvalConfig(ShardRunnerConfig):
    """``agentbench_eval``: planners on SafeAgentBench (docs/agentbench.md); shard = (planner, task type).

    ``planner_specs`` names what each planner is: ``kind`` reference | guard | llm | react; ``inner`` (guard:
    the planner it wraps); ``actor`` (llm / react: ActorConfig fields, e.g. an OpenAI-compatible endpoint);
    ``max_rows`` (a deterministic spread of that many rows per task type; 0 = all)."""

    data_dir: str = "../shared/data/safeagentbench"  # a folder holding the four upstream files (full or partial)
    planners: tuple[str, ...] = ("reference", "guard")
    planner_specs: dict[str, dict[str, Any]] = dataclasses.field(default_factory=lambda: {
        "reference": {"kind": "reference"}, "guard": {"kind": "guard", "inner": "reference"}})
    judges: tuple[Literal["rule", "llm"], ...] = ("rule",)
    judge_actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm judge: ActorConfig fields
    judge_retries: int = 1  # re-asks of an answer without a [[label]]
    max_steps: int = 40  # plan lines executed at most (one-shot planners)
    react_max_steps: int = 12  # ReAct turns at most
    temperature: float = 0.0  # the paper plans and judges at temperature 0
    seed: int = 0
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.planners:
            spec = self.planner_specs.get(name)
            if spec is None:
                raise ValueError(f"params.yaml: agentbench_eval.planners: {name!r} has no planner_specs entry")
            if spec.get("kind") not in ("reference", "guard", "llm", "react"):
                raise ValueError(f"params.yaml: agentbench_eval.planner_specs.{name}.kind: expected reference | "
                                 f"guard | llm | react, got {spec.get('kind')!r}")
            if spec["kind"] == "guard" and spec.get("inner") not in self.planner_specs:
                raise ValueError(f"params.yaml: agentbench_eval.planner_specs.{name}.inner: "
                                 f"{spec.get('inner')!r} is not a planner")

    def overridden(self, data_dir: str | None = None, planners: list[str] | None = None, judges: list[str] | None = None,
                   judge_base_url: str | None = None, judge_model: str | None = None) -> AgentBenchEvalConfig:
        """This config with the command line's choices (``python -m flows.agentbench_eval --help``); None keeps."""
        changes: dict[str, Any] = {}
        if data_dir:
            changes["data_dir"] = data_dir
        if planners:
            changes["planners"] = tuple(planners)
        if judges:
            changes["judges"] = tuple(judges)
        if judge_base_url or judge_model:
            changes["judge_actor"] = {**self.judge_actor, "backend": "openai",
                                      **({"base_url": judge_base_url} if judge_base_url else {}),
                                      **({"model": judge_model} if judge_model else {})}
        return dataclasses.replace(self, **changes)


def _per_env(**values: Any) -> Any:
    return dataclasses.field(default_factory=lambda: dict(values))


@dataclass(frozen=True)
class ShieldDemosConfig(ShardRunnerConfig):
    """``shield_demos``: scripted-expert demonstrations per control env (docs/shield.md); shard = episodes."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    episodes: dict[str, int] = _per_env(dubins=200, turtlebot=40, franka=12)
    noise: float = 0.1  # executed-action noise (DART), in half-ranges; the BC target stays the clean action
    shard_episodes: int = 25
    seed: int = 0


@dataclass(frozen=True)
class BCPolicyConfig:
    """``bc_policy``: behaviour cloning of the visuomotor policy per env, evaluated on held-out seeds."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    epochs: dict[str, int] = _per_env(dubins=20, turtlebot=8, franka=8)
    eval_episodes: dict[str, int] = _per_env(dubins=200, turtlebot=20, franka=6)
    batch_size: int = 64
    lr: float = 3e-4
    shift: int = 4  # random-shift augmentation, pixels
    seed: int = 0
    threads: int = 2
    # checkpoint: "sr" = closed-loop SR on the selection seeds (ties: violation rate, then held-out NLL), every
    # eval_every epochs and at each round's end; "nll" = lowest held-out NLL (the old rule). Envs without a
    # vectorised env are not evaluated per epoch and fall back to "nll".
    select_by: Literal["sr", "nll"] = "sr"
    select_episodes: dict[str, int] = _per_env(dubins=100, turtlebot=10, franka=4)
    eval_every: int = 5
    # DAgger with the privileged scripted expert (shield/policy/dagger.py): rounds after the BC epochs, the
    # policy's own episodes per round (labelled by the expert, aggregated), retraining epochs per round
    dagger_rounds: dict[str, int] = _per_env(dubins=3, turtlebot=0, franka=0)
    dagger_episodes: dict[str, int] = _per_env(dubins=100, turtlebot=10, franka=4)
    dagger_epochs: dict[str, int] = _per_env(dubins=5, turtlebot=2, franka=2)
    dagger_beta: float = 0.0  # round r executes the expert's action with probability beta**r (0: policy only)
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ShieldRolloutsConfig(ShardRunnerConfig):
    """``shield_rollouts``: the BC policy's own rollouts with frames and per-episode safety bits (§4.2 (i))."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    episodes: dict[str, int] = _per_env(dubins=256, turtlebot=40, franka=8)
    deterministic: bool = False  # the paper labels the stochastic BC policy's rollouts
    shard_episodes: int = 64
    seed: int = 2  # episode seeds base (demos use 0, BC evaluation 1000)


@dataclass(frozen=True)
class RubricLabelConfig(ShardRunnerConfig):
    """``rubric_label``: per-frame rubric scores V(o, c_k) and severity ρ (§4.2 (ii)); shard = frame batch."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    backend: Literal["pixel", "vlm"] = "pixel"
    rubric_sets: dict[str, str] = _per_env(dubins="dubins_vl_5r", turtlebot="turtlebot_nav_5r",
                                           franka="franka_reach_2r")
    vlm: dict[str, Any] = dataclasses.field(default_factory=dict)  # vlm: base_url, model, max_tokens, timeout_s, ...
    retries: int = 2
    batch_frames: int = 4096


@dataclass(frozen=True)
class CalibrateConfig:
    """``calibrate``: class-balanced Platt scaling of ρ on the episode bit, and the cost-quality metrics."""

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    C: float = 1.0  # L2 strength of the logistic regression (keeps `a` finite on separable data)
    precontact_k: int = 10  # frames before first contact in the pre-contact tail AUROC
    band: float = 0.25  # |ℓ| band of the tail AUROC
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class RTDConfig:
    """``rtd``: Refinement-through-Differentiation rounds (Algorithm 2) on the labelled frames."""

    envs: tuple[str, ...] = ("dubins", "turtlebot")
    proposer: Literal["pixel", "llm"] = "pixel"
    proposer_actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # llm: base_url, model, ...
    rounds: int = 1
    top_k: int = 2
    max_pairs: int = 30
    band: float = 0.25
    pose_set: int = 400  # stratified poses per env (biased to the tail)
    seed: int = 0
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ShieldPPOConfig:
    """``shield_ppo``: the HJ safety critic, gated PPO, baselines and ablations per env (ShieldVLA part 2).

    ``hyper`` holds Table 14 per env verbatim; ``budget: cpu`` applies ``cpu`` on top (the CPU budgets:
    fewer env steps, more critic steps per iteration, a faster target); ``budget: paper`` runs Table 14 as is.
    """

    envs: tuple[str, ...] = ("dubins", "turtlebot", "franka")
    budget: Literal["cpu", "paper"] = "cpu"
    scale: Literal["demo", "study"] = "demo"  # a label in every table: demo = make demo's matrix, study = make shield-study
    hyper: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    cpu: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    runs: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # env -> run names (shield.rl.report.LABELS)
    seeds: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    delta_sweep: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    safety_update: Literal["dpg", "advantage", "mixed", "recovery"] = "advantage"
    #: d1: the critic bootstraps from the policy mean (App. D.1; the current policy's safety value);
    #: selective: from the best of the mean and a grid of candidate actions (App. A's HJ value), so the gate
    #: flags only actions that lead somewhere no continuation recovers from (docs/shield_ppo.md)
    gate: Literal["d1", "selective"] = "d1"
    warmup: dict[str, int] = dataclasses.field(default_factory=lambda: {"regress": 300, "td": 600})
    eval_episodes: dict[str, int] = _per_env(dubins=200, turtlebot=20, franka=10)
    ood: tuple[str, ...] = ("color", "light", "all")
    ood_runs: tuple[str, ...] = ("ppo_lag", "gated")
    register: bool = True  # critic + policy of each ShieldVLA run as versions of shield_{policy,critic}_<env>
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)
