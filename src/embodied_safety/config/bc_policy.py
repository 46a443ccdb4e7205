"""The ``bc_policy`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from embodied_safety.config.control_envs import ENV_KEYS, env_defaults


@dataclass(frozen=True)
class BCPolicyConfig:
    """``bc_policy``: behaviour cloning of the visuomotor policy per env, evaluated on held-out seeds."""

    envs: tuple[str, ...] = ENV_KEYS
    epochs: dict[str, int] = env_defaults("bc_policy.epochs")
    eval_episodes: dict[str, int] = env_defaults("bc_policy.eval_episodes")
    batch_size: int = 64
    lr: float = 3e-4
    shift: int = 4  # random-shift augmentation, pixels
    seed: int = 0
    #: training seeds per env (``seed``, ``seed + 1``, …), the run kept by ``select_by`` on the shared selection
    #: episodes (shield/policy/start.py: fit_restarts); 1 = one run
    restarts: dict[str, int] = env_defaults("bc_policy.restarts")
    threads: int = 2
    # checkpoint: "sr" = closed-loop SR on the selection seeds (ties: violation rate, then held-out NLL), every
    # eval_every epochs and at each round's end; "sr_1se" = the lowest violation rate among the checkpoints whose SR
    # is within one standard error of the best (shield/policy/bc.py: pick_checkpoint); "nll" = lowest held-out NLL
    # (the old rule). Envs without a vectorised env are not evaluated per epoch and fall back to "nll".
    select_by: Literal["sr", "sr_1se", "nll"] = "sr_1se"
    select_episodes: dict[str, int] = env_defaults("bc_policy.select_episodes")
    eval_every: int = 5
    # DAgger with the privileged scripted expert (shield/policy/dagger.py): rounds after the BC epochs, the
    # policy's own episodes per round (labelled by the expert, aggregated), retraining epochs per round
    dagger_rounds: dict[str, int] = env_defaults("bc_policy.dagger_rounds")
    dagger_episodes: dict[str, int] = env_defaults("bc_policy.dagger_episodes")
    dagger_epochs: dict[str, int] = env_defaults("bc_policy.dagger_epochs")
    dagger_beta: float = 0.0  # round r executes the expert's action with probability beta**r (0: policy only)
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)
