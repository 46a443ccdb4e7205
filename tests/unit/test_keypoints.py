"""The keypoint image encoder (shield/policy/keypoints.py): a spatial softmax reads positions with shared weights."""

from __future__ import annotations

import pytest
import torch

from embodied_safety.shield.policy.keypoints import KeypointImageEncoder, SpatialSoftmax


def test_spatial_softmax_returns_the_hot_position_of_each_channel() -> None:
    ss = SpatialSoftmax(5, 9)
    x = torch.zeros(2, 3, 5, 9)
    x[0, 0, 1, 6] = 50.0  # row 1 of 5, column 6 of 9
    x[0, 1, 4, 0] = 50.0  # bottom-left corner
    x[1, 2, 2, 4] = 50.0  # the centre
    kp = ss(x).reshape(2, 3, 2)
    torch.testing.assert_close(kp[0, 0], torch.tensor([-1 + 2 * 6 / 8, -1 + 2 * 1 / 4]), atol=1e-4, rtol=0)
    torch.testing.assert_close(kp[0, 1], torch.tensor([-1.0, 1.0]), atol=1e-4, rtol=0)
    torch.testing.assert_close(kp[1, 2], torch.tensor([0.0, 0.0]), atol=1e-4, rtol=0)
    # a flat map has its keypoint at the centre
    torch.testing.assert_close(kp[0, 2], torch.tensor([0.0, 0.0]), atol=1e-6, rtol=0)


def test_spatial_softmax_temperature_is_learned() -> None:
    ss = SpatialSoftmax(4, 4)
    x = torch.randn(3, 2, 4, 4)
    ss(x).sum().backward()
    assert ss.log_temp.grad is not None and torch.isfinite(ss.log_temp.grad)


def _frame(row: int, col: int) -> torch.Tensor:
    img = torch.full((1, 84, 84, 3), 200, dtype=torch.uint8)
    img[0, row:row + 4, col:col + 2] = torch.tensor([30, 30, 220], dtype=torch.uint8)  # a 4 x 2 px mark
    return img


def test_a_shifted_mark_moves_the_keypoints_but_not_the_channel_maxima() -> None:
    torch.manual_seed(0)
    enc = KeypointImageEncoder()
    with torch.no_grad():
        a = enc.feature_map(_frame(40, 40).permute(0, 3, 1, 2).float() / 127.5 - 1)
        b = enc.feature_map(_frame(40, 48).permute(0, 3, 1, 2).float() / 127.5 - 1)  # 8 px = 2 cells of the stride-4 map
    # the convolution is shared across positions: the same mark gives the same responses, two cells over
    torch.testing.assert_close(a[..., :, 8:14], b[..., :, 10:16])
    torch.testing.assert_close(a.amax(dim=(2, 3)), b.amax(dim=(2, 3)))
    # at a low temperature a channel that fires hardest at the mark puts its keypoint there: it moves two cells right
    pool = enc.conv[-1].keypoints
    pool.log_temp.data.fill_(-8.0)
    with torch.no_grad():
        kp_a, kp_b = pool(a).reshape(-1, 2), pool(b).reshape(-1, 2)
    hot = a.amax(dim=(2, 3))[0] > a[0, :, 0, 0] + 0.01  # the background is uniform: its response is any corner's
    assert hot.sum() >= 2
    step = 2.0 / (a.shape[-1] - 1)
    torch.testing.assert_close(kp_b[hot, 0] - kp_a[hot, 0], torch.full((int(hot.sum()),), 2 * step), atol=1e-4, rtol=0)
    torch.testing.assert_close(kp_b[hot, 1], kp_a[hot, 1], atol=1e-4, rtol=0)


def test_encoder_interface_matches_the_policy_image_encoder() -> None:
    enc = KeypointImageEncoder(dim=32)
    frames = torch.randint(0, 255, (5, 84, 84, 3), dtype=torch.uint8)
    assert enc(frames).shape == (5, 32)
    assert enc(torch.randint(0, 255, (2, 64, 64, 3), dtype=torch.uint8)).shape == (2, 32)  # resized
    with pytest.raises(ValueError, match="uint8"):
        enc(frames.float())
