"""A keypoint image encoder: convolutions, then a spatial softmax instead of a flatten (Levine et al. 2016).

The policy's :class:`~.visuomotor.ImageEncoder` (Nature-DQN: strided convolutions, then a fully connected layer over
the *flattened* map) must learn a small pattern — Dubins-VL's 2 × 4 px heading tick — separately at every place in
the frame; on a rollout the heading is a function of the place, so it learns the place and reads the heading to about
0.3 rad on new episodes (docs/shield_ppo.md). Here each channel of the last convolution becomes the
expected (x, y) of its softmax over positions — a keypoint, computed by the same weights wherever the car is — plus
the channel's global maximum. Trained from scratch on the same frames it reads the heading on held-out episodes to
0.04 rad (``experiments/encoder_readout.py``). Not yet wired into a stage: the BC policy with it starts
worse at the stage's BC budget (SR 0.19 vs 0.325, one seed); the critic is where it is measured.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .visuomotor import ImageEncoder


class SpatialSoftmax(nn.Module):
    """[B, C, H, W] -> [B, 2C]: each channel's expected (x, y) in [-1, 1] under its softmax over positions.

    x grows to the right, y downwards (image rows); the temperature is learned (``log_temp``, starting at 1).
    """

    def __init__(self, height: int, width: int) -> None:
        super().__init__()
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, height), torch.linspace(-1, 1, width), indexing="ij")
        self.register_buffer("grid", torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1), persistent=False)
        self.log_temp = nn.Parameter(torch.zeros(()))

    def forward(self, x: Tensor) -> Tensor:
        b, c = x.shape[:2]
        attn = torch.softmax(x.reshape(b, c, -1) / self.log_temp.exp(), dim=-1)  # [B, C, HW]
        return (attn @ self.grid).reshape(b, 2 * c)


class KeypointPool(nn.Module):
    """[B, C, H, W] -> [B, 3C]: the channels' keypoints (:class:`SpatialSoftmax`) and their global maxima."""

    def __init__(self, height: int, width: int) -> None:
        super().__init__()
        self.keypoints = SpatialSoftmax(height, width)

    def forward(self, x: Tensor) -> Tensor:
        return torch.cat([self.keypoints(x), x.amax(dim=(2, 3))], dim=1)


class KeypointImageEncoder(ImageEncoder):
    """uint8 [B, H, W, 3] -> conv 4×4/2, 3×3/2, 3×3/1 -> :class:`KeypointPool` -> Linear/ReLU -> [B, dim].

    :class:`~.visuomotor.ImageEncoder` with another ``conv`` (it ends in the pool, not a flatten) and ``fc``; the
    input checks, scaling and resizing are the parent's ``forward``, so either can sit in an
    :class:`~.visuomotor.Encoder`'s ``image`` slot. About 2× the Nature-DQN encoder's multiply-adds at 84 × 84
    (16 M vs 8 M: the first layer keeps 41 × 41 positions instead of 20 × 20).
    """

    def __init__(self, size: tuple[int, int] = (84, 84), channels: tuple[int, int, int] = (32, 64, 32),
                 dim: int = 256) -> None:
        nn.Module.__init__(self)  # the parent's layers are not built: this class replaces both
        self.size = tuple(size)
        c1, c2, c3 = channels
        trunk = [nn.Conv2d(3, c1, 4, stride=2), nn.ReLU(), nn.Conv2d(c1, c2, 3, stride=2), nn.ReLU(),
                 nn.Conv2d(c2, c3, 3, stride=1)]
        with torch.no_grad():
            h, w = nn.Sequential(*trunk)(torch.zeros(1, 3, *self.size)).shape[-2:]
        self.conv = nn.Sequential(*trunk, KeypointPool(int(h), int(w)))
        self.fc = nn.Sequential(nn.Linear(3 * c3, dim), nn.ReLU())

    def feature_map(self, x: Tensor) -> Tensor:
        """The last convolution's map [B, C, H, W] of normalised float frames (what the pool reads)."""
        return self.conv[:-1](x)
