"""The language-conditioned visuomotor policy that stands in for the VLA backbone (paper §4.1, App. D.1).

ShieldVLA fine-tunes a pretrained VLA; on Dubins-VL the paper's "VLA" is a ResNet-18 image encoder
plus a frozen CLIP text encoder and a 2-layer MLP head. Nothing may be downloaded here, so
:class:`VisuomotorPolicy` is a from-scratch analogue: a small CNN over the uint8 frame, a hashed
n-gram embedding bag over the instruction, and an MLP head, trained by behaviour cloning
(:mod:`.bc`) and later by the gated PPO.

The later stages talk to the policy only through :class:`GaussianPolicy`, which is written for a
large backbone as much as for this one: raw uint8 frames and raw strings go in (preprocessing,
tokenisation and resizing are the policy's business), the policy owns its device, declares its
feature width for the safety critic, and never has to be copied (PPO keeps old log-probabilities,
not an old policy). A wrapper around e.g. OpenVLA-OFT implements ``forward`` / ``features`` and
inherits ``act`` / ``log_prob`` from :class:`ClippedGaussianMixin`.

Action distribution (the same for every implementation, so PPO ratios mean the same thing):

* the **mean is tanh-squashed** into ``[low, high]`` (``center + scale * tanh(h)``), so the
  deterministic action the gate and the safety loss ``-Q(o, ā)`` use is always a legal action and
  keeps a gradient;
* the std is **state-independent** (one learned log-std per action dimension, clamped);
* a sample ``a ~ N(mean, std)`` is **clipped** to the bounds, and log-probabilities are those of
  that clipped (censored) Gaussian: Gaussian density inside the box, the tail mass
  ``Φ((low - mean)/std)`` / ``Φ((mean - high)/std)`` at a bound (Fujita & Maeda, 2018, "Clipped
  Action Policy Gradient"). ``log_prob(act())`` is then exactly the log-probability of the action
  the environment executed, and behaviour cloning on a bang-bang expert whose actions sit on the
  bounds has a finite optimum (no tanh-inverse at ±1).
"""

from __future__ import annotations

import json
import math
import os
import re
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor, nn

from ...io import replace_dir, scratch_dir, write_json

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
KIND = "cnn_hashbag_v1"
#: a batch of observations as the Gymnasium env (or a vector env) returns them:
#: ``{"image": uint8 [B, H, W, 3] (ndarray or Tensor), "instruction": sequence of B strings}``;
#: a single unbatched observation (``[H, W, 3]``, one string) is accepted too.
ObsBatch = Mapping[str, Any]
Generators = torch.Generator | Sequence[torch.Generator] | None


@runtime_checkable
class GaussianPolicy(Protocol):
    """What BC, rollouts, PPO and the safety critic need from a policy, whatever its size.

    Nothing here assumes the whole model fits one batch or one device, or that it can be copied:
    callers pass raw frames and strings and may chunk batches themselves; all tensors come back
    on :attr:`device`. Actions and log-stds are in environment units.
    """

    action_dim: int
    feature_dim: int

    @property
    def action_low(self) -> np.ndarray: ...

    @property
    def action_high(self) -> np.ndarray: ...

    @property
    def device(self) -> torch.device: ...

    def forward(self, images: Tensor, instructions: Sequence[str]) -> tuple[Tensor, Tensor]:
        """uint8 [B, H, W, 3] + B strings -> (mean [B, A] inside the bounds, log_std [B, A])."""
        ...

    def __call__(self, images: Tensor, instructions: Sequence[str]) -> tuple[Tensor, Tensor]:
        """``forward`` through ``nn.Module.__call__`` (hooks)."""
        ...

    def features(self, images: Tensor, instructions: Sequence[str]) -> Tensor:
        """The fused encoder output [B, feature_dim] a safety critic can start from (§4.1, App. D)."""
        ...

    def from_features(self, features: Tensor) -> tuple[Tensor, Tensor]:
        """(mean, log_std) from :meth:`features`' output: ``forward = from_features ∘ features``."""
        ...

    def act(self, obs: ObsBatch, deterministic: bool = False,
            generator: Generators = None) -> tuple[Tensor, Tensor]:
        """(action [B, A] within the bounds, log_prob [B]); no gradient. Deterministic = the mean.

        ``generator``: one CPU generator for the batch, or one per row (so an episode's sampled actions
        depend on its own seed only, whatever else shares the batch).
        """
        ...

    def log_prob(self, obs: ObsBatch, actions: Tensor) -> Tensor:
        """log π(a | o) [B] of the clipped Gaussian, differentiable (the PPO ratio and the BC loss)."""
        ...

    # the nn.Module surface training code uses (a wrapper may return only its trainable part, e.g. LoRA)
    def parameters(self) -> Iterator[nn.Parameter]: ...

    def train(self, mode: bool = True) -> Any: ...

    def eval(self) -> Any: ...

    def state_dict(self) -> Mapping[str, Tensor]: ...

    def load_state_dict(self, state: Mapping[str, Tensor], strict: bool = True) -> Any: ...

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write a dir that the matching loader rebuilds (here: ``config.json`` + ``model.safetensors``)."""
        ...


# --------------------------------------------------------------------------------------------------
# the action distribution (shared by every implementation)


def clipped_gaussian_log_prob(mean: Tensor, log_std: Tensor, actions: Tensor, low: Tensor,
                              high: Tensor) -> Tensor:
    """log-probability [B] of ``actions`` under N(mean, exp(log_std)) clipped to [low, high] per dim."""
    std = log_std.exp()
    tol = 1e-6 * (high - low)
    inside = -0.5 * ((actions - mean) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)
    below = torch.special.log_ndtr((low - mean) / std)
    above = torch.special.log_ndtr((mean - high) / std)
    lp = torch.where(actions <= low + tol, below, torch.where(actions >= high - tol, above, inside))
    return lp.sum(-1)


def gaussian_entropy(log_std: Tensor) -> Tensor:
    """Entropy [B] of the unclipped Gaussian: the PPO bonus term (the clipped distribution mixes in point
    masses at the bounds, so it has no differential entropy of its own)."""
    return (log_std + 0.5 * math.log(2 * math.pi * math.e)).sum(-1)


def _noise(mean: Tensor, generator: Generators) -> Tensor:
    """Standard normal noise shaped like ``mean``, drawn on the CPU (where generators live)."""
    if generator is None or isinstance(generator, torch.Generator):
        noise = torch.randn(mean.shape, generator=generator, dtype=mean.dtype)
    else:
        if len(generator) != mean.shape[0]:
            raise ValueError(f"{len(generator)} generators for a batch of {mean.shape[0]}")
        noise = torch.stack([torch.randn(mean.shape[1:], generator=g, dtype=mean.dtype) for g in generator])
    return noise.to(mean.device)


def as_obs_batch(obs: ObsBatch) -> tuple[Any, list[str]]:
    """(images [B, H, W, 3], instructions) from a batched or single observation dict."""
    images, instr = obs["image"], obs["instruction"]
    if images.ndim == 3:
        images = images[None]
    instructions = [instr] if isinstance(instr, str) else [str(s) for s in instr]
    if len(instructions) != images.shape[0]:
        raise ValueError(f"{images.shape[0]} images but {len(instructions)} instructions")
    return images, instructions


class ClippedGaussianMixin:
    """``act`` / ``log_prob`` for any ``nn.Module`` whose ``forward`` returns (mean, log_std).

    A large backbone wrapper needs only ``forward``, ``features``, the bounds and ``device``.
    """

    action_low: np.ndarray
    action_high: np.ndarray
    device: torch.device

    def _images(self, images: Any) -> Tensor:
        return torch.as_tensor(np.asarray(images) if not isinstance(images, Tensor) else images,
                               device=self.device)

    def _bounds(self) -> tuple[Tensor, Tensor]:
        return (torch.as_tensor(self.action_low, device=self.device),
                torch.as_tensor(self.action_high, device=self.device))

    def act(self, obs: ObsBatch, deterministic: bool = False,
            generator: Generators = None) -> tuple[Tensor, Tensor]:
        images, instructions = as_obs_batch(obs)
        low, high = self._bounds()
        with torch.no_grad():
            mean, log_std = self(self._images(images), instructions)  # type: ignore[operator]
            if deterministic:
                actions = mean
            else:
                noise = _noise(mean, generator)
                actions = torch.clamp(mean + log_std.exp() * noise, low, high)
            return actions, clipped_gaussian_log_prob(mean, log_std, actions, low, high)

    def log_prob(self, obs: ObsBatch, actions: Tensor) -> Tensor:
        images, instructions = as_obs_batch(obs)
        mean, log_std = self(self._images(images), instructions)  # type: ignore[operator]
        low, high = self._bounds()
        return clipped_gaussian_log_prob(mean, log_std, torch.as_tensor(actions, device=mean.device,
                                                                        dtype=mean.dtype), low, high)


# --------------------------------------------------------------------------------------------------
# the from-scratch stand-in


@dataclass(frozen=True)
class PolicyConfig:
    """Architecture; saved as ``config.json`` beside the weights, so a saved dir rebuilds itself."""

    action_low: tuple[float, ...]
    action_high: tuple[float, ...]
    image_size: tuple[int, int] = (84, 84)  # frames of another size are resized (bilinear) to this
    conv_channels: tuple[int, int, int] = (32, 64, 64)  # Nature-DQN layout: 8x8/4, 4x4/2, 3x3/1
    image_dim: int = 256
    text_buckets: int = 4096  # hashed n-gram vocabulary
    text_dim: int = 64
    hidden: int = 256  # 2-layer MLP head, Tanh (App. D.1)
    init_log_std: float = -1.0  # in normalised action units (std ≈ 0.37 of the half-range)
    log_std_bounds: tuple[float, float] = (-5.0, 1.0)
    # how the task transforms under the square's symmetries: "d4" = the frame is a top-down view of a square
    # workspace and the action a turn rate, so a rotated frame keeps its action and a mirrored one negates it
    # (Dubins-VL); BC then augments with those maps (bc.dihedral). "none": no such symmetry.
    symmetry: str = "none"
    kind: str = field(default=KIND)

    def __post_init__(self) -> None:
        if len(self.action_low) != len(self.action_high) or not all(
                lo < hi for lo, hi in zip(self.action_low, self.action_high, strict=True)):
            raise ValueError(f"bad action bounds {self.action_low} / {self.action_high}")

    @property
    def action_dim(self) -> int:
        return len(self.action_low)

    @classmethod
    def for_space(cls, image_shape: Sequence[int], low: Sequence[float], high: Sequence[float],
                  **kw: Any) -> PolicyConfig:
        """From an env's observation image shape (H, W, 3) and action-space bounds."""
        return cls(action_low=tuple(float(x) for x in np.ravel(low)),
                   action_high=tuple(float(x) for x in np.ravel(high)),
                   image_size=(int(image_shape[0]), int(image_shape[1])), **kw)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PolicyConfig:
        names = cls.__dataclass_fields__
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in names})


_WORD = re.compile(r"[a-z0-9]+")


def instruction_pieces(text: str) -> list[str]:
    """Word unigrams, word bigrams and per-word character trigrams (with ``<`` ``>`` word boundaries).

    Trigrams give unseen words (``crimson``, a typo) a representation close to seen ones sharing
    pieces; bigrams keep a little word order (``left of`` vs ``of left``).
    """
    words = _WORD.findall(text.lower())
    pieces = [f"w:{w}" for w in words] + [f"b:{a}_{b}" for a, b in zip(words, words[1:], strict=False)]
    for w in words:
        padded = f"<{w}>"
        pieces += [f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2)]
    return pieces or ["e:<empty>"]


def hash_piece(piece: str, buckets: int) -> int:
    """Stable across processes and platforms (CRC-32; Python's ``hash`` is salted per process)."""
    return zlib.crc32(piece.encode()) % buckets


class InstructionEncoder(nn.Module):
    """Hashed n-gram embedding bag (mean) + Linear/ReLU: a text encoder with no tokenizer files."""

    def __init__(self, buckets: int, dim: int) -> None:
        super().__init__()
        self.buckets = buckets
        self.bag = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.proj = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        self._cache: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        got = self._cache.get(text)
        if got is None:
            if len(self._cache) > 65536:
                self._cache.clear()
            got = self._cache[text] = [hash_piece(p, self.buckets) for p in instruction_pieces(text)]
        return got

    def forward(self, instructions: Sequence[str]) -> Tensor:
        device = self.bag.weight.device
        # instructions repeat within a batch (one per episode): embed each distinct one once
        uniq = list(dict.fromkeys(instructions))
        rows = [self.ids(t) for t in uniq]
        flat = torch.tensor([i for r in rows for i in r], dtype=torch.long, device=device)
        offsets = torch.tensor(np.cumsum([0] + [len(r) for r in rows[:-1]]), dtype=torch.long, device=device)
        emb = self.proj(self.bag(flat, offsets))
        index = {t: i for i, t in enumerate(uniq)}
        return emb[torch.tensor([index[t] for t in instructions], device=device)]


class ImageEncoder(nn.Module):
    """uint8 [B, H, W, 3] -> float [-1, 1] NCHW (resized to the configured size) -> CNN -> [B, image_dim]."""

    def __init__(self, size: tuple[int, int], channels: tuple[int, int, int], dim: int) -> None:
        super().__init__()
        self.size = tuple(size)
        c1, c2, c3 = channels
        self.conv = nn.Sequential(nn.Conv2d(3, c1, 8, stride=4), nn.ReLU(),
                                  nn.Conv2d(c1, c2, 4, stride=2), nn.ReLU(),
                                  nn.Conv2d(c2, c3, 3, stride=1), nn.ReLU(), nn.Flatten())
        with torch.no_grad():
            flat = self.conv(torch.zeros(1, 3, *self.size)).shape[1]
        self.fc = nn.Sequential(nn.Linear(flat, dim), nn.ReLU())

    def forward(self, images: Tensor) -> Tensor:
        if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[-1] != 3:
            raise ValueError(f"expected uint8 [B, H, W, 3], got {images.dtype} {tuple(images.shape)}")
        x = images.permute(0, 3, 1, 2).float().div_(127.5).sub_(1.0)
        if tuple(x.shape[-2:]) != self.size:
            x = nn.functional.interpolate(x, size=self.size, mode="bilinear", align_corners=False)
        return self.fc(self.conv(x))


class Encoder(nn.Module):
    """(uint8 frames, instructions) -> [B, image_dim + text_dim]: the part a safety critic starts from."""

    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        self.image = ImageEncoder(config.image_size, config.conv_channels, config.image_dim)
        self.text = InstructionEncoder(config.text_buckets, config.text_dim)
        self.dim = config.image_dim + config.text_dim

    def forward(self, images: Tensor, instructions: Sequence[str]) -> Tensor:
        return torch.cat([self.image(images), self.text(list(instructions))], dim=-1)


class VisuomotorPolicy(ClippedGaussianMixin, nn.Module):
    """CNN(image) ⊕ hashed-bag(instruction) -> 2-layer Tanh MLP -> tanh-squashed mean; free log-std."""

    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        self.config = config
        self.action_dim = config.action_dim
        self.encoder = Encoder(config)
        self.feature_dim = self.encoder.dim
        self.head = nn.Sequential(nn.Linear(self.feature_dim, config.hidden), nn.Tanh(),
                                  nn.Linear(config.hidden, config.hidden), nn.Tanh(),
                                  nn.Linear(config.hidden, config.action_dim))
        self.log_std = nn.Parameter(torch.full((config.action_dim,), float(config.init_log_std)))
        low = torch.tensor(config.action_low, dtype=torch.float32)
        high = torch.tensor(config.action_high, dtype=torch.float32)
        self.register_buffer("center", (high + low) / 2, persistent=False)
        self.register_buffer("scale", (high - low) / 2, persistent=False)

    @property
    def action_low(self) -> np.ndarray:  # type: ignore[override]
        return np.asarray(self.config.action_low, dtype=np.float32)

    @property
    def action_high(self) -> np.ndarray:  # type: ignore[override]
        return np.asarray(self.config.action_high, dtype=np.float32)

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return self.log_std.device

    def features(self, images: Tensor, instructions: Sequence[str]) -> Tensor:
        return self.encoder(images, instructions)

    def copy_encoder(self) -> Encoder:
        """An independent copy of the encoder (same weights): the paper's Dubins-VL critic initialisation
        (App. D.1: "initialised from the policy's encoder, fine-tuned jointly with the critic head")."""
        import copy

        return copy.deepcopy(self.encoder)

    def forward(self, images: Tensor, instructions: Sequence[str]) -> tuple[Tensor, Tensor]:
        return self.from_features(self.features(images, instructions))

    def from_features(self, features: Tensor) -> tuple[Tensor, Tensor]:
        """(mean, log_std) from encoder features: PPO with a frozen encoder computes features once per rollout."""
        h = self.head(features)
        mean = self.center + self.scale * torch.tanh(h)
        lo, hi = self.config.log_std_bounds
        log_std = (self.log_std.clamp(lo, hi) + self.scale.log()).expand_as(mean)
        return mean, log_std

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``config.json`` + ``model.safetensors`` into a fresh dir swapped into place atomically."""
        from safetensors.torch import save_file

        tmp = scratch_dir(path)
        write_json(tmp / CONFIG_FILE, {**asdict(self.config), "n_parameters": self.n_parameters()})
        tensors = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}
        save_file(tensors, str(tmp / WEIGHTS_FILE))
        return replace_dir(tmp, path)


def load_policy(path: str | os.PathLike[str], device: str | torch.device = "cpu") -> VisuomotorPolicy:
    """Rebuild a saved policy dir. Weights come from safetensors only: no pickle is ever unpickled."""
    from safetensors.torch import load_file

    path = Path(path)
    cfg = json.loads((path / CONFIG_FILE).read_text())
    if cfg.get("kind") != KIND:
        raise ValueError(f"{path}: policy kind {cfg.get('kind')!r}, this loader reads {KIND!r}")
    policy = VisuomotorPolicy(PolicyConfig.from_json(cfg))
    policy.load_state_dict(load_file(str(path / WEIGHTS_FILE)), strict=True)
    return policy.to(device).eval()


def env_symmetry(env: Any) -> str:
    """The symmetry of an env's task (:attr:`PolicyConfig.symmetry`): ``"d4"`` for Dubins-VL (every variant:
    the +Color / +Light perturbations recolour pixels, which commutes with rotating and mirroring), else
    ``"none"``."""
    from ...envs.control.dubins import DubinsVLEnv

    return "d4" if isinstance(getattr(env, "unwrapped", env), DubinsVLEnv) else "none"


def policy_for_env(env: Any, **kw: Any) -> VisuomotorPolicy:
    """A fresh policy sized for a Gymnasium env with the ``{"image", "instruction"}`` observation, declaring
    the env's symmetry (:func:`env_symmetry`) unless ``kw`` sets one."""
    image_space = env.observation_space["image"]
    kw.setdefault("symmetry", env_symmetry(env))
    return VisuomotorPolicy(PolicyConfig.for_space(image_space.shape, env.action_space.low,
                                                   env.action_space.high, **kw))
