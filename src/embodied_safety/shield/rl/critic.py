"""The Hamilton–Jacobi safety critic Q_s(o, a) (ShieldVLA §3, §4.1, Eq. 4, App. A, App. D).

``Q_s(o, a) = MLP(encoder(o) ⊕ embed(a))``: the encoder is an independent copy of the policy's (App. D.1:
"initialised from the policy's encoder"), fine-tuned with the head (Dubins-VL) or frozen (TurtleBot-Nav,
Franka-Reach); the action embedding is a linear layer over the action normalised to ``[-1, 1]``. Gradients
reach the policy only through the action input (the safety loss ``-Q_s(o, ā_θ(o))``).

**The target, and where it differs from the paper.** Eq. (4) reads
``y = (1-γ)ℓ(o) + γ(1-done)·min{ℓ(o), Q̄(o', a')}`` and the text says "terminal states return their
immediate margin". The formula does not do that: with ``done = 1`` it returns ``(1-γ)ℓ(o)``, which for
γ = 0.99 is 1 % of the margin, so a transition *into* a contact (Franka-Reach ends episodes on contact)
looks safe whatever the contact frame's margin. We treat a terminal observation as absorbing with its own
margin, whose fixed point under the operator is ``Q(o_T) = ℓ(o_T)``::

    y = (1-γ)·ℓ(o) + γ·min{ℓ(o), B},   B = ℓ(o')            if the episode terminated at o',
                                       B = Q̄(o', a')         otherwise (time-limit truncation bootstraps).

This is the operator of App. A with the terminal state made absorbing, so Proposition 1 still holds
(:func:`tabular_backup` is it, in the tabular case, and the unit tests check its fixed point).

**The next action.** ``target: policy_mean`` is App. D.1 / D.2: ``B = Q̄(o', ā_θ(o'))``, the policy's
deterministic mean, so ``Q_s`` is the safety value of the *current* policy. ``target: best`` is the operator of
App. A (Eq. 3, and the tabular :func:`tabular_backup`): ``B = max_{a' ∈ C(o')} Q̄(o', a')`` over a candidate set
``C(o')`` = the policy mean plus a grid over the action range (:func:`candidate_actions`), so ``Q_s(o, a) < 0``
means "after ``a``, no continuation stays safe" (the selective gate; docs/shield_ppo.md). With ``twin=True``
two critics are trained and every ``Q̄`` is the smaller of the two target heads (clipped double-Q, App. D.4),
taken per candidate before the max. Targets are Polyak-averaged (``τ``).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from ...io import replace_dir, scratch_dir, write_json
from .exits import exit_mask

if TYPE_CHECKING:
    from .state_aux import PoseAux

CONFIG_FILE = "critic.json"
WEIGHTS_FILE = "critic.safetensors"


# --------------------------------------------------------------------------------------------------
# the operator


def hj_target(margin: Tensor, bootstrap: Tensor, gamma: float) -> Tensor:
    """``(1-γ)ℓ(o) + γ·min{ℓ(o), B}`` (Eq. 4 with the terminal fix above; ``B`` is chosen by the caller)."""
    return (1.0 - gamma) * margin + gamma * torch.minimum(margin, bootstrap)


def bootstrap_value(q_next: Tensor, margin_next: Tensor, terminated: Tensor) -> Tensor:
    """``ℓ(o')`` where the episode terminated at ``o'`` (absorbing), else the target critic's ``Q̄(o', a')``."""
    return torch.where(terminated.bool(), margin_next, q_next)


def candidate_actions(mean: Tensor, low: Tensor, high: Tensor, k: int) -> Tensor:
    """``[B, 1 + A·k, A]``: the policy mean, then for each action dimension the mean with that coordinate
    replaced by each of ``k`` evenly spaced values in ``[low, high]`` (for one action dimension: the mean plus a
    ``k``-point grid over the range; axis lines keep the set linear in ``A`` for Franka-Reach's 7 joints)."""
    b, a = mean.shape
    grid = torch.stack([torch.linspace(float(lo), float(hi), k, dtype=mean.dtype) for lo, hi in zip(low, high, strict=True)])
    lines = mean[:, None, None, :].expand(b, a, k, a).clone()  # [B, dim, k, A]
    idx = torch.arange(a, device=mean.device)
    lines[:, idx, :, idx] = grid.to(mean.device).unsqueeze(1).expand(a, b, k)
    return torch.cat([mean[:, None, :], lines.reshape(b, a * k, a)], dim=1)


def best_of(q: Tensor, candidates: Tensor) -> tuple[Tensor, Tensor]:
    """``(max_c q[:, c], argmax action [B, A])`` from per-candidate values ``q`` [B, C] and ``candidates``
    [B, C, A]; ties go to the first candidate (the policy mean)."""
    value, idx = q.max(dim=1)
    return value, candidates[torch.arange(len(idx), device=idx.device), idx]


def nearest_safe(q: Tensor, candidates: Tensor, delta: float) -> Tensor:
    """``[B, A]``: per row, the candidate nearest the policy mean (candidate 0) among those with ``q > delta``, the
    least-restrictive correction of a safety filter; the best candidate (:func:`best_of`) where none clears ``delta``."""
    dist = (candidates - candidates[:, :1]).norm(dim=-1)  # [B, C]
    dist = torch.where(q > delta, dist, torch.full_like(dist, float("inf")))
    idx = torch.where(torch.isfinite(dist.min(dim=1).values), dist.argmin(dim=1), q.argmax(dim=1))
    return candidates[torch.arange(len(idx), device=idx.device), idx]


def tabular_backup(q: np.ndarray, margin: np.ndarray, transition: np.ndarray, gamma: float,
                   terminal: np.ndarray | None = None) -> np.ndarray:
    """One application of the discounted safety operator on a finite MDP (App. A, Eq. 3).

    ``q`` [S, A]; ``margin`` [S]; ``transition`` [S, A, S] (rows sum to 1); ``terminal`` [S] marks absorbing
    states whose value is their margin. ``(T Q)(s, a) = (1-γ)ℓ(s) + γ min{ℓ(s), E_{s'} B(s')}`` with
    ``B(s') = ℓ(s')`` on terminal ``s'`` and ``max_a' Q(s', a')`` elsewhere.
    """
    v = q.max(axis=1)
    if terminal is not None:
        v = np.where(terminal, margin, v)
    expect = transition @ v  # [S, A]
    return (1.0 - gamma) * margin[:, None] + gamma * np.minimum(margin[:, None], expect)


def tabular_fixed_point(margin: np.ndarray, transition: np.ndarray, gamma: float,
                        terminal: np.ndarray | None = None, tol: float = 1e-10,
                        max_iter: int = 100_000) -> tuple[np.ndarray, int]:
    """Iterate :func:`tabular_backup` from zero to a sup-norm change below ``tol``; returns (Q*, iterations)."""
    q = np.zeros(transition.shape[:2])
    for i in range(1, max_iter + 1):
        nxt = tabular_backup(q, margin, transition, gamma, terminal)
        if np.max(np.abs(nxt - q)) < tol:
            return nxt, i
        q = nxt
    raise RuntimeError(f"no convergence in {max_iter} backups")


def to_device(batch: Mapping[str, Any], device: torch.device) -> dict[str, Any]:
    """``batch`` with every tensor moved to ``device`` (a no-op on the device it is on); other values as they are."""
    return {k: v.to(device) if isinstance(v, Tensor) else v for k, v in batch.items()}


# --------------------------------------------------------------------------------------------------
# the network


@dataclass(frozen=True)
class CriticConfig:
    """Table 14's safety-critic rows plus the architecture choices of App. D."""

    gamma: float = 0.99
    lr: float = 3e-4
    tau: float = 0.005
    hidden: tuple[int, ...] = (256, 256)
    batch_size: int = 256
    steps_per_iter: int = 4  # K off-policy gradient steps per PPO iteration
    buffer_size: int = 200_000
    action_embed: int = 32
    freeze_encoder: bool = False  # App. D.1 fine-tunes (Dubins-VL); D.2 / D.4 freeze
    twin: bool = False  # clipped double-Q (App. D.4, Franka-Reach)
    max_grad_norm: float = 10.0
    #: the bootstrap's next action: ``policy_mean`` = App. D.1 (the current policy's safety value); ``best`` =
    #: App. A's max over ``a'``, taken over the policy mean and a grid (the HJ value: the selective gate)
    target: Literal["policy_mean", "best"] = "policy_mean"
    candidates: int = 9  # grid points per action dimension for ``target: best`` (and the recovery action)
    #: the critic's image encoder: ``policy`` = App. D.1, a copy of the policy's (Nature-DQN) encoder; ``keypoints``
    #: = a fresh :class:`~embodied_safety.shield.policy.keypoints.KeypointImageEncoder` beside a copy of the policy's
    #: instruction encoder (Dubins-VL: the policy's encoder does not read the heading on new episodes)
    encoder: Literal["policy", "keypoints"] = "policy"
    #: weight of the warm-up's auxiliary pose regression (:mod:`.state_aux`; Dubins-VL, whose frames' states are
    #: replayed); 0 = off
    pose_aux: float = 0.0
    #: jittered rendered states beside the replay's frames for the pose regression (:func:`.state_aux.jittered_states`)
    pose_aux_states: int = 0
    #: the BC warm-up: ``td`` = regression onto ℓ, then Eq. (4) TD steps (:func:`warm_start`); ``distill`` = the
    #: oracle reference, a regression onto the simulator's action values (:mod:`.distill`; Dubins-VL, ``gated_oracle``)
    warmup: Literal["td", "distill"] = "td"

    def __post_init__(self) -> None:
        if self.warmup not in ("td", "distill"):
            raise ValueError(f"critic warmup {self.warmup!r}: expected td | distill")
        if self.target not in ("policy_mean", "best"):
            raise ValueError(f"critic target {self.target!r}: expected policy_mean | best")
        if self.encoder not in ("policy", "keypoints"):
            raise ValueError(f"critic encoder {self.encoder!r}: expected policy | keypoints")
        if self.pose_aux < 0 or self.pose_aux_states < 0:
            raise ValueError(f"critic pose_aux {self.pose_aux} / pose_aux_states {self.pose_aux_states}: must be >= 0")
        if self.candidates < 2:
            raise ValueError(f"critic candidates {self.candidates}: need at least 2 grid points (the bounds)")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CriticConfig:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in known})


class QHead(nn.Module):
    """``MLP(feature ⊕ tanh(W a_norm))`` -> scalar."""

    def __init__(self, feature_dim: int, action_dim: int, hidden: Sequence[int], embed: int) -> None:
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(action_dim, embed), nn.Tanh())
        layers: list[nn.Module] = []
        width = feature_dim + embed
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, feature: Tensor, action_norm: Tensor) -> Tensor:
        return self.mlp(torch.cat([feature, self.embed(action_norm)], dim=-1)).squeeze(-1)


class SafetyCritic(nn.Module):
    """Encoder (a copy of the policy's) + one or two Q heads; ``q`` is the pessimistic (min) head output."""

    def __init__(self, encoder: nn.Module, feature_dim: int, action_low: Sequence[float],
                 action_high: Sequence[float], config: CriticConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = encoder
        self.feature_dim = feature_dim
        a = len(action_low)
        self.heads = nn.ModuleList([QHead(feature_dim, a, config.hidden, config.action_embed)
                                    for _ in range(2 if config.twin else 1)])
        low = torch.as_tensor(np.asarray(action_low, dtype=np.float32))
        high = torch.as_tensor(np.asarray(action_high, dtype=np.float32))
        self.register_buffer("center", (high + low) / 2, persistent=False)
        self.register_buffer("scale", (high - low) / 2, persistent=False)
        if config.freeze_encoder:
            self.encoder.requires_grad_(False)

    @classmethod
    def from_policy(cls, policy: Any, config: CriticConfig) -> SafetyCritic:
        """App. D: an independent module initialised from the policy's encoder, on the policy's device (the
        new head is initialised on the CPU, so its weights do not depend on the device); with ``encoder:
        keypoints`` its image part is a fresh keypoint encoder of the same output width."""
        encoder = copy.deepcopy(policy.encoder)
        if config.encoder == "keypoints":
            encoder.image = keypoint_image_encoder(policy.config)
        return cls(encoder, int(policy.feature_dim), policy.action_low, policy.action_high, config).to(policy.device)

    @property
    def device(self) -> torch.device:
        """Where the critic's weights (and every tensor it returns) live."""
        return self.center.device

    def embed(self, images: Tensor, instructions: Sequence[str]) -> Tensor:
        """Observation features (no gradient when the encoder is frozen)."""
        if self.config.freeze_encoder:
            with torch.no_grad():
                return self.encoder(images, instructions)
        return self.encoder(images, instructions)

    def q_all(self, feature: Tensor, action: Tensor) -> Tensor:
        """[heads, B] from precomputed features and actions in env units."""
        a = (action - self.center) / self.scale
        return torch.stack([h(feature, a) for h in self.heads])

    def q_features(self, feature: Tensor, action: Tensor) -> Tensor:
        return self.q_all(feature, action).min(dim=0).values

    def q_candidates(self, feature: Tensor, candidates: Tensor) -> Tensor:
        """``[B, C]``: the pessimistic (min-over-heads) value of each candidate action ``[B, C, A]``."""
        b, c, a = candidates.shape
        f = feature.unsqueeze(1).expand(b, c, feature.shape[-1]).reshape(b * c, -1)
        return self.q_features(f, candidates.reshape(b * c, a)).reshape(b, c)

    def candidates(self, mean: Tensor) -> Tensor:
        """:func:`candidate_actions` of this critic's action range (``config.candidates`` per dimension)."""
        return candidate_actions(mean, self.center - self.scale, self.center + self.scale, self.config.candidates)

    def next_value(self, feature: Tensor, mean: Tensor) -> Tensor:
        """``Q(o', ā)`` (``target: policy_mean``, App. D.1) or ``max_{a' ∈ C(o')} Q(o', a')`` (``best``, App. A)."""
        if self.config.target == "policy_mean":
            return self.q_features(feature, mean)
        return self.q_candidates(feature, self.candidates(mean)).max(dim=1).values

    def forward(self, images: Tensor, instructions: Sequence[str], action: Tensor) -> Tensor:
        return self.q_features(self.embed(images, instructions), action)

    def save(self, path: str | os.PathLike[str], extra: Mapping[str, Any] | None = None) -> Path:
        """``critic.json`` (config, encoder architecture, bounds) + ``critic.safetensors``, swapped in atomically."""
        from safetensors.torch import save_file

        tmp = scratch_dir(path)
        write_json(tmp / CONFIG_FILE, {"critic": asdict(self.config), "feature_dim": self.feature_dim,
                                       "action_low": self.center.sub(self.scale).tolist(),
                                       "action_high": self.center.add(self.scale).tolist(), **(extra or {})})
        save_file({k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()},
                  str(tmp / WEIGHTS_FILE))
        return replace_dir(tmp, path)


def keypoint_image_encoder(policy_config: Any) -> nn.Module:
    """A fresh keypoint image encoder with the policy's input size and image feature width."""
    from ..policy.keypoints import KeypointImageEncoder

    return KeypointImageEncoder(tuple(policy_config.image_size), dim=int(policy_config.image_dim))


def load_critic(path: str | os.PathLike[str], policy_config: Any) -> SafetyCritic:
    """Rebuild a saved critic; its encoder has the architecture of ``policy_config`` (a ``PolicyConfig``)."""
    from safetensors.torch import load_file

    from ..policy.visuomotor import Encoder

    path = Path(path)
    meta = json.loads((path / CONFIG_FILE).read_text())
    config = CriticConfig.from_json(meta["critic"])
    encoder = Encoder(policy_config)
    if config.encoder == "keypoints":
        encoder.image = keypoint_image_encoder(policy_config)
    critic = SafetyCritic(encoder, int(meta["feature_dim"]), meta["action_low"], meta["action_high"], config)
    critic.load_state_dict(load_file(str(path / WEIGHTS_FILE)), strict=True)
    return critic.eval()


# --------------------------------------------------------------------------------------------------
# replay and training


class ReplayBuffer:
    """A ring buffer of ``(o, a, ℓ(o), o', ℓ(o'), terminated)`` with uint8 frames (or float states, ``dtype``)
    and instruction ids."""

    def __init__(self, capacity: int, image_shape: Sequence[int], action_dim: int, seed: int = 0,
                 dtype: Any = np.uint8) -> None:
        self.capacity = int(capacity)
        self.image = np.zeros((self.capacity, *image_shape), dtype=dtype)
        self.next_image = np.zeros_like(self.image)
        self.instruction = np.zeros(self.capacity, dtype=np.int32)
        self.action = np.zeros((self.capacity, action_dim), dtype=np.float32)
        self.margin = np.zeros(self.capacity, dtype=np.float32)
        self.next_margin = np.zeros(self.capacity, dtype=np.float32)
        self.terminated = np.zeros(self.capacity, dtype=np.float32)
        self.vocab: dict[str, int] = {}
        self.words: list[str] = []
        self.size = 0
        self.ptr = 0
        self.rng = np.random.default_rng(seed)

    def _ids(self, instructions: Sequence[str]) -> np.ndarray:
        out = np.empty(len(instructions), dtype=np.int32)
        for i, s in enumerate(instructions):
            if s not in self.vocab:
                self.vocab[s] = len(self.words)
                self.words.append(s)
            out[i] = self.vocab[s]
        return out

    def add(self, image: np.ndarray, instructions: Sequence[str], action: np.ndarray, margin: np.ndarray,
            next_image: np.ndarray, next_margin: np.ndarray, terminated: np.ndarray) -> None:
        n = len(image)
        idx = (self.ptr + np.arange(n)) % self.capacity
        self.image[idx], self.next_image[idx] = image, next_image
        self.instruction[idx] = self._ids(instructions)
        self.action[idx] = np.asarray(action, dtype=np.float32).reshape(n, -1)
        self.margin[idx], self.next_margin[idx] = margin, next_margin
        self.terminated[idx] = terminated
        self.ptr = int((self.ptr + n) % self.capacity)
        self.size = int(min(self.size + n, self.capacity))

    def indices(self, batch_size: int) -> np.ndarray:
        """The next ``batch_size`` uniform indices from the buffer's generator (what :meth:`sample` draws)."""
        if self.size == 0:
            raise ValueError("sampling an empty replay buffer")
        return self.rng.integers(0, self.size, size=batch_size)

    def instructions(self, idx: np.ndarray) -> list[str]:
        return [self.words[i] for i in self.instruction[idx]]

    def sample(self, batch_size: int) -> dict[str, Any]:
        idx = self.indices(batch_size)
        return {"image": torch.from_numpy(self.image[idx]), "next_image": torch.from_numpy(self.next_image[idx]),
                "instruction": [self.words[i] for i in self.instruction[idx]],
                "action": torch.from_numpy(self.action[idx]), "margin": torch.from_numpy(self.margin[idx]),
                "next_margin": torch.from_numpy(self.next_margin[idx]),
                "terminated": torch.from_numpy(self.terminated[idx])}


class FeatureReplay:
    """Replay of encoder *features* for a critic whose encoder is frozen (after the warm start): the critic's
    features of ``o`` and ``o'`` and the policy's features of ``o'`` (for ``a' = ā_θ(o')`` under the current
    policy head). A TD step is then an MLP step, so K can be large on a CPU."""

    def __init__(self, capacity: int, critic_dim: int, policy_dim: int, action_dim: int, seed: int = 0) -> None:
        self.capacity = int(capacity)
        self.arrays = {"feature": np.zeros((self.capacity, critic_dim), np.float32),
                       "next_feature": np.zeros((self.capacity, critic_dim), np.float32),
                       "next_policy_feature": np.zeros((self.capacity, policy_dim), np.float32),
                       "action": np.zeros((self.capacity, action_dim), np.float32),
                       "margin": np.zeros(self.capacity, np.float32), "next_margin": np.zeros(self.capacity, np.float32),
                       "terminated": np.zeros(self.capacity, np.float32)}
        self.size = self.ptr = 0
        self.rng = np.random.default_rng(seed)

    def add(self, **batch: Any) -> None:
        n = len(batch["feature"])
        idx = (self.ptr + np.arange(n)) % self.capacity
        for k, a in self.arrays.items():
            v = batch[k]
            a[idx] = (v.detach().cpu().numpy() if isinstance(v, Tensor) else np.asarray(v)).reshape(a[idx].shape)
        self.ptr = int((self.ptr + n) % self.capacity)
        self.size = int(min(self.size + n, self.capacity))

    def sample(self, batch_size: int) -> dict[str, Tensor]:
        if self.size == 0:
            raise ValueError("sampling an empty replay buffer")
        idx = self.rng.integers(0, self.size, size=batch_size)
        return {k: torch.from_numpy(a[idx]) for k, a in self.arrays.items()}


#: (next images, instructions) -> a' (the policy's deterministic mean), no gradient
NextAction = Callable[[Tensor, Sequence[str]], Tensor]


class CriticTrainer:
    """Algorithm 1 lines 4–5: K TD steps on replay against Eq. (4), each followed by a Polyak target update.

    Algorithm 1 updates the target once per iteration (after the K steps); we update it after every step, as
    TD3 / SAC do, because CPU budgets have ~10² iterations, not the paper's ~10⁴ (docs/shield_ppo.md).
    """

    def __init__(self, critic: SafetyCritic, seed: int = 0) -> None:
        self.critic = critic
        self.target = copy.deepcopy(critic).requires_grad_(False).eval()
        self.optimizer = torch.optim.Adam([p for p in critic.parameters() if p.requires_grad], lr=critic.config.lr,
                                          foreach=True)  # as shield/policy/bc.py
        self.updates = 0

    @torch.no_grad()
    def target_value(self, next_feature: Tensor, next_action: Tensor, margin: Tensor, next_margin: Tensor,
                     terminated: Tensor) -> Tensor:
        """Eq. (4)'s ``y`` from the *target* critic's features of ``o'`` and the next action ``a'``."""
        q_next = self.target.next_value(next_feature, next_action)
        return hj_target(margin, bootstrap_value(q_next, next_margin, terminated), self.critic.config.gamma)

    def fit(self, feature: Tensor, action: Tensor, y: Tensor) -> tuple[Tensor, dict[str, float]]:
        """The squared error of every head's ``Q(o, a)`` (from the online critic's features) against ``y``."""
        qs = self.critic.q_all(feature, action)
        loss = ((qs - y.unsqueeze(0)) ** 2).mean()
        return loss, {"critic_loss": float(loss.detach()), "q_mean": float(qs.detach().mean()),
                      "target_mean": float(y.mean())}

    def loss(self, batch: Mapping[str, Any], next_action: NextAction) -> tuple[Tensor, dict[str, float]]:
        with torch.no_grad():
            a_next = next_action(batch["next_image"], batch["instruction"])
            y = self.target_value(self.target.embed(batch["next_image"], batch["instruction"]), a_next,
                                  batch["margin"], batch["next_margin"], batch["terminated"])
        return self.fit(self.critic.embed(batch["image"], batch["instruction"]), batch["action"], y)

    def loss_features(self, batch: Mapping[str, Tensor],
                      next_action: Callable[[Tensor], Tensor]) -> tuple[Tensor, dict[str, float]]:
        """Eq. (4) on a :class:`FeatureReplay` batch (frozen encoder); ``next_action``: policy features -> ā."""
        with torch.no_grad():
            y = self.target_value(batch["next_feature"], next_action(batch["next_policy_feature"]),
                                  batch["margin"], batch["next_margin"], batch["terminated"])
        return self.fit(batch["feature"], batch["action"], y)

    def step(self, loss: Tensor, target: bool = True) -> None:
        """One optimiser step on ``loss`` (gradient clipped), then the Polyak target update (``target``)."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.critic.parameters(), self.critic.config.max_grad_norm)
        self.optimizer.step()
        if target:
            self.polyak()
            self.updates += 1

    def update(self, buffer: ReplayBuffer | FeatureReplay, next_action: Callable[..., Tensor],
               steps: int | None = None) -> dict[str, float]:
        """K TD steps; ``next_action`` takes (images, instructions) for a :class:`ReplayBuffer` and policy
        features for a :class:`FeatureReplay`."""
        cfg = self.critic.config
        stats: dict[str, float] = {}
        self.critic.train()
        for _ in range(cfg.steps_per_iter if steps is None else steps):
            batch = to_device(buffer.sample(cfg.batch_size), self.critic.device)
            if isinstance(buffer, FeatureReplay):
                loss, stats = self.loss_features(batch, next_action)
            else:
                loss, stats = self.loss(batch, next_action)
            self.step(loss)
        self.critic.eval()
        return stats

    @torch.no_grad()
    def polyak(self) -> None:
        tau = self.critic.config.tau
        for p, tp in zip(self.critic.parameters(), self.target.parameters(), strict=True):
            tp.mul_(1.0 - tau).add_(p.detach(), alpha=tau)


# --------------------------------------------------------------------------------------------------
# the BC warm-up


def transition_frames(frame_episode: np.ndarray) -> np.ndarray:
    """The frame index of each transition's ``o`` in :func:`replay_from_rollouts`' buffer order (its ``o'`` is the
    next frame): every frame but its episode's last."""
    ep = np.asarray(frame_episode)
    return np.flatnonzero(ep[:-1] == ep[1:])


def replay_from_rollouts(rollouts: Any, margins: np.ndarray, max_steps: int, capacity: int | None = None,
                         seed: int = 0, exit_margin: float | None = None) -> ReplayBuffer:
    """Transitions ``(o_t, a_t, ℓ(o_t), o_{t+1}, ℓ(o_{t+1}), terminated)`` of a :class:`~embodied_safety.shield.policy.rollouts.RolloutSet`
    (frames in episode order, each episode's final frame last), with per-frame margins ``margins``.
    An episode shorter than ``max_steps`` ended by termination; one of ``max_steps`` steps was truncated.
    ``exit_margin``: where a termination was not a success (Dubins-VL: the car left the workspace), the final
    frame's margin is capped at this value (``PPOConfig.exit_is_failure``)."""
    ep = np.asarray(rollouts.frame_episode)
    cur = transition_frames(ep)
    nxt = cur + 1
    last = np.r_[ep[1:] != ep[:-1], True]  # the final frame of each episode
    lengths = np.asarray(rollouts.episode_length)
    terminated = last[nxt] & (lengths[ep[nxt]] < max_steps)
    if exit_margin is not None:
        exits = nxt[terminated & exit_mask(rollouts.episode_success, lengths, max_steps)[ep[nxt]]]
        margins = margins.copy()
        margins[exits] = np.minimum(margins[exits], exit_margin)
    frames = np.asarray(rollouts.frames)
    buf = ReplayBuffer(capacity or len(cur), frames.shape[1:], np.asarray(rollouts.actions).shape[1], seed=seed)
    instr = rollouts.frame_instructions()
    for s in range(0, len(cur), 4096):
        c, x = cur[s:s + 4096], nxt[s:s + 4096]
        buf.add(frames[c], [instr[i] for i in c], np.asarray(rollouts.actions)[c], margins[c], frames[x], margins[x],
                terminated[s:s + 4096].astype(np.float32))
    return buf


def encode_frames(fn: Callable[[Tensor, Sequence[str]], Tensor], frames: np.ndarray, instructions: Sequence[str],
            chunk: int = 1024, device: torch.device | str = "cpu") -> Tensor:
    """``fn`` over every frame (moved to ``device`` a chunk at a time), ``chunk`` at a time, no gradient."""
    with torch.no_grad():
        return torch.cat([fn(torch.from_numpy(frames[i:i + chunk]).to(device), instructions[i:i + chunk])
                          for i in range(0, len(frames), chunk)])


def warm_start(trainer: CriticTrainer, buffer: ReplayBuffer, next_action: NextAction, regress_steps: int,
               td_steps: int, log: Callable[[dict[str, float], int], None] | None = None,
               cache: bool = True, aux: PoseAux | None = None,
               aux_targets: Tensor | None = None) -> list[dict[str, float]]:
    """The BC warm-up before online training: regress ``Q_s(o, a)`` onto ``ℓ(o)`` (the operator's upper bound:
    every fixed point has ``Q ≤ ℓ``), copy it into the target, then ``td_steps`` Eq. (4) steps on the BC
    policy's own transitions. Without it the gate sees ``Q ≈ 0 < δ`` everywhere for the first ~1/(1-γ)
    backups and routes every sample to the safety loss.

    ``cache`` (the default) computes what does not change during the warm-up once per buffer transition instead
    of once per sampled one: the next action ``a' = next_action(o')`` (the BC policy is fixed here), and with a
    frozen critic encoder (``freeze_encoder``) the critic's features of ``o`` and ``o'``, so every step is an MLP
    step. The target critic then reads the online encoder's features of ``o'``: its own encoder is a Polyak
    average of that frozen encoder with itself, the same weights up to float rounding. The batches are the same
    indices from the buffer's generator, so the result is the uncached one's up to float rounding
    (``cache=False``: every step re-encodes its batch; the baseline of ``benchmarks/safety_critic.py``).

    ``aux`` (:class:`.state_aux.PoseAux`, with ``aux_targets`` = the pose of each buffer transition's ``o``) adds the
    pose regression to every step of both phases; it trains the encoder, so it needs ``freeze_encoder: false``."""
    critic, cfg = trainer.critic, trainer.critic.config
    if aux is not None:
        if cfg.freeze_encoder or not cache:
            raise ValueError("the pose regression trains the critic's encoder: it needs freeze_encoder: false "
                             "and the cached warm-up")
        if aux_targets is None or len(aux_targets) != buffer.size:
            raise ValueError(f"aux_targets: one pose per buffer transition ({buffer.size}) is needed")
        aux_targets = aux_targets.to(critic.device)
        aux.to(critic.device)
    if not cache:
        return _warm_start_uncached(trainer, buffer, next_action, regress_steps, td_steps, log)
    n, dev = buffer.size, critic.device
    words = buffer.instructions(np.arange(n))
    a_next = encode_frames(next_action, buffer.next_image[:n], words, device=dev) if td_steps else None
    frozen = cfg.freeze_encoder
    feats = encode_frames(critic.encoder, buffer.image[:n], words, device=dev) if frozen else None
    next_feats = encode_frames(critic.encoder, buffer.next_image[:n], words, device=dev) if frozen and td_steps else None
    tensors = {k: torch.from_numpy(getattr(buffer, k)[:n]).to(dev)
               for k in ("action", "margin", "next_margin", "terminated")}

    def embed(idx: np.ndarray, online: bool = True) -> Tensor:
        if online and feats is not None:
            return feats[torch.from_numpy(idx).to(dev)]
        if not online and next_feats is not None:
            return next_feats[torch.from_numpy(idx).to(dev)]
        net = critic if online else trainer.target
        return net.embed(torch.from_numpy(buffer.image[idx] if online else buffer.next_image[idx]).to(dev),
                         buffer.instructions(idx))

    def fit(idx: np.ndarray, ti: Tensor, y: Tensor, target: bool) -> tuple[Tensor, dict[str, float]]:
        f = embed(idx)
        loss, stats = trainer.fit(f, tensors["action"][ti], y)
        if aux is not None and aux_targets is not None:
            pose = aux.loss(critic.encoder, f, aux_targets[ti])
            loss, stats = loss + pose, {**stats, "pose_loss": float(pose.detach())}
        trainer.step(loss, target=target)
        if aux is not None:
            aux.step()
        return loss, stats

    rows: list[dict[str, float]] = []
    critic.train()
    for i in range(regress_steps):
        idx = buffer.indices(cfg.batch_size)
        ti = torch.from_numpy(idx).to(dev)
        _, stats = fit(idx, ti, tensors["margin"][ti], target=False)
        if (i + 1) % 50 == 0:
            rows.append({"phase": 0.0, "step": float(i + 1),
                         **{k: v for k, v in stats.items() if k in ("critic_loss", "pose_loss")}})
    trainer.target.load_state_dict(critic.state_dict())
    for i in range(td_steps):
        assert a_next is not None
        idx = buffer.indices(cfg.batch_size)
        ti = torch.from_numpy(idx).to(dev)
        with torch.no_grad():
            y = trainer.target_value(embed(idx, online=False), a_next[ti], tensors["margin"][ti],
                                     tensors["next_margin"][ti], tensors["terminated"][ti])
        _, stats = fit(idx, ti, y, target=True)
        if (i + 1) % 50 == 0:
            rows.append({"phase": 1.0, "step": float(regress_steps + i + 1), **stats})
    return _finish(critic, rows, log)


def _finish(critic: SafetyCritic, rows: list[dict[str, float]],
            log: Callable[[dict[str, float], int], None] | None) -> list[dict[str, float]]:
    critic.eval()
    if log is not None:
        for r in rows:
            log({k: v for k, v in r.items() if k not in ("phase", "step")}, int(r["step"]))
    return rows


def _warm_start_uncached(trainer: CriticTrainer, buffer: ReplayBuffer, next_action: NextAction,
                         regress_steps: int, td_steps: int,
                         log: Callable[[dict[str, float], int], None] | None) -> list[dict[str, float]]:
    """:func:`warm_start` as it was before the cache: every step encodes its sampled frames (critic, target and
    policy encoders)."""
    critic, cfg = trainer.critic, trainer.critic.config
    rows: list[dict[str, float]] = []
    critic.train()
    for i in range(regress_steps):
        b = to_device(buffer.sample(cfg.batch_size), critic.device)
        loss, _ = trainer.fit(critic.embed(b["image"], b["instruction"]), b["action"], b["margin"])
        trainer.step(loss, target=False)
        if (i + 1) % 50 == 0:
            rows.append({"phase": 0.0, "step": float(i + 1), "critic_loss": float(loss.detach())})
    trainer.target.load_state_dict(critic.state_dict())
    for i in range(td_steps):
        stats = trainer.update(buffer, next_action, steps=1)
        if (i + 1) % 50 == 0:
            rows.append({"phase": 1.0, "step": float(regress_steps + i + 1), **stats})
    return _finish(critic, rows, log)
