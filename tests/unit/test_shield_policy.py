"""The ShieldVLA stand-in policy, scripted demos, behaviour cloning and rollouts with frames."""

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
gym = pytest.importorskip("gymnasium")

from embodied_safety.shield.policy.bc import dihedral, split_episodes, train_bc  # noqa: E402
from embodied_safety.shield.policy.demos import DemoSet, collect_demos, episode_seeds, load_npz, read_summary  # noqa: E402
from embodied_safety.shield.policy.rollouts import RolloutSet, collect_rollouts, evaluate_policy  # noqa: E402
from embodied_safety.shield.policy.visuomotor import (  # noqa: E402
    GaussianPolicy,
    PolicyConfig,
    VisuomotorPolicy,
    clipped_gaussian_log_prob,
    hash_piece,
    instruction_pieces,
    load_policy,
    policy_for_env,
)

SIZE = 36  # the smallest frame the 8/4, 4/2, 3/1 CNN accepts


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models: one intra-op thread is as fast and does not fight other processes for the 2 cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class LineEnv(gym.Env):
    """A point on a line, drawn as a bright column; "go left" / "go right" targets ±0.6.

    Action 2-D with asymmetric bounds: ``a[0] ∈ [-1, 1]`` is the velocity, ``a[1] ∈ [0, 2]`` is ignored.
    The hazard is ``x > 0.8`` (``margin = 0.8 - x``, cost 1 inside); the episode ends on reaching the
    target or after 12 steps. The start is drawn from the reset seed.
    """

    INSTRUCTIONS = ("go left", "go right")

    def __init__(self, speed: float = 0.2):
        self.speed = speed
        self.action_space = gym.spaces.Box(np.array([-1.0, 0.0], np.float32),
                                           np.array([1.0, 2.0], np.float32))
        self.observation_space = gym.spaces.Dict({
            "image": gym.spaces.Box(0, 255, (SIZE, SIZE, 3), np.uint8), "instruction": gym.spaces.Text(32)})

    def _obs(self):
        img = np.full((SIZE, SIZE, 3), 30, np.uint8)
        col = int(round((self.x + 1) / 2 * (SIZE - 1)))
        img[:, max(col - 1, 0):col + 2] = 250
        return {"image": img, "instruction": self.instruction}

    def _info(self):
        m = 0.8 - self.x
        return {"margin": m, "cost": float(m < 0), "success": abs(self.x - self.target) < 0.1,
                "state": np.array([self.x, self.target])}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = float(self.np_random.uniform(-0.5, 0.5))
        k = int(self.np_random.integers(2))
        self.instruction, self.target = self.INSTRUCTIONS[k], (-0.6, 0.6)[k]
        self.t = 0
        return self._obs(), self._info()

    def step(self, action):
        a = np.clip(np.asarray(action, np.float64), self.action_space.low, self.action_space.high)
        self.x = float(np.clip(self.x + self.speed * a[0], -1, 1))
        self.t += 1
        info = self._info()
        return self._obs(), -abs(self.x - self.target), info["success"], self.t >= 12, info


def line_expert(info, env, rng):
    x, target = info["state"]
    return np.array([np.clip((target - x) / 0.2, -1, 1), 1.0])


def overshoot_expert(info, env, rng):
    """Always full right: crosses the hazard on "go right" episodes (and on some "go left" ones)."""
    return np.array([1.0, 0.0])


def small_policy(**kw) -> VisuomotorPolicy:
    torch.manual_seed(0)
    cfg = PolicyConfig(action_low=(-1.0, 0.0), action_high=(1.0, 2.0), image_size=(SIZE, SIZE),
                       conv_channels=(8, 16, 16), image_dim=32, text_buckets=256, text_dim=16, hidden=32,
                       **kw)
    return VisuomotorPolicy(cfg)


def batch(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return {"image": rng.integers(0, 256, (n, SIZE, SIZE, 3), dtype=np.uint8),
            "instruction": [LineEnv.INSTRUCTIONS[i % 2] for i in range(n)]}


# ------------------------------------------------------------------------------------------ policy


def test_actions_have_the_right_shapes_and_stay_in_bounds():
    p = small_policy(init_log_std=1.0)  # wide: many samples clip
    assert isinstance(p, GaussianPolicy)
    obs = batch(64)
    low, high = torch.tensor(p.action_low), torch.tensor(p.action_high)
    for det in (False, True):
        a, lp = p.act(obs, deterministic=det)
        assert a.shape == (64, 2) and lp.shape == (64,) and torch.isfinite(lp).all()
        assert (a >= low).all() and (a <= high).all()
    a, _ = p.act(obs)
    assert ((a == low) | (a == high)).any(), "wide std: some samples sit on a bound"
    mean, log_std = p(torch.from_numpy(obs["image"]), obs["instruction"])
    assert mean.shape == log_std.shape == (64, 2)
    assert (mean > low).all() and (mean < high).all()  # tanh-squashed, strictly inside
    feats = p.features(torch.from_numpy(obs["image"]), obs["instruction"])
    assert feats.shape == (64, p.feature_dim)
    enc = p.copy_encoder()  # the critic's starting point: same features, independent weights
    assert torch.equal(enc(torch.from_numpy(obs["image"]), obs["instruction"]), feats)
    with torch.no_grad():
        enc.image.fc[0].weight.zero_()
    assert torch.equal(p.features(torch.from_numpy(obs["image"]), obs["instruction"]), feats)
    single = {"image": obs["image"][0], "instruction": obs["instruction"][0]}  # an unbatched env observation
    assert p.act(single)[0].shape == (1, 2)
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert torch.equal(p.act(obs, generator=g1)[0], p.act(obs, generator=g2)[0])


def test_log_prob_matches_act_and_gradients_flow():
    p = small_policy(init_log_std=0.5)
    obs = batch(32)
    a, lp = p.act(obs)
    torch.testing.assert_close(p.log_prob(obs, a), lp, rtol=0, atol=1e-5)
    a_det, lp_det = p.act(obs, deterministic=True)
    torch.testing.assert_close(p.log_prob(obs, a_det), lp_det, rtol=0, atol=1e-5)
    p.zero_grad()
    (-p.log_prob(obs, a).mean()).backward()
    for name, param in p.named_parameters():
        assert param.grad is not None and torch.isfinite(param.grad).all(), name
        assert param.grad.abs().sum() > 0, name
    # the deterministic mean carries a gradient too (the safety loss -Q(o, ā) needs it)
    p.zero_grad()
    mean, _ = p(torch.from_numpy(obs["image"]), obs["instruction"])
    mean.sum().backward()
    assert p.head[0].weight.grad.abs().sum() > 0


def test_clipped_gaussian_is_a_distribution():
    """Density inside the box plus the two point masses integrates to one."""
    mean, log_std = torch.tensor([[0.7]]), torch.tensor([[math.log(0.5)]])
    low, high = torch.tensor([-1.0]), torch.tensor([1.0])
    xs = torch.linspace(-1 + 1e-4, 1 - 1e-4, 20001)[:, None]
    dens = clipped_gaussian_log_prob(mean.expand(len(xs), 1), log_std.expand(len(xs), 1), xs, low, high).exp()
    inside = torch.trapezoid(dens, xs[:, 0])
    masses = sum(clipped_gaussian_log_prob(mean, log_std, torch.tensor([[b]]), low, high).exp()
                 for b in (-1.0, 1.0))
    assert float(inside + masses) == pytest.approx(1.0, abs=1e-3)


def test_save_load_round_trip_is_exact(tmp_path):
    p = small_policy(symmetry="d4")
    with torch.no_grad():
        p.log_std.fill_(-0.3)
    out = p.save(tmp_path / "policy")
    assert sorted(f.name for f in out.iterdir()) == ["config.json", "model.safetensors"]
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["kind"] == "cnn_hashbag_v1" and cfg["n_parameters"] == p.n_parameters()
    q = load_policy(out)
    assert q.config == p.config
    for k, v in p.state_dict().items():
        assert torch.equal(v, q.state_dict()[k]), k
    obs = batch(8)
    p.eval()
    for x, y in zip(p(torch.from_numpy(obs["image"]), obs["instruction"]),
                    q(torch.from_numpy(obs["image"]), obs["instruction"]), strict=True):
        assert torch.equal(x, y)
    p.save(out)  # overwriting an existing dir is fine (atomic swap)
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]


def test_instruction_hashing_is_stable_and_conditioning_matters():
    assert instruction_pieces("Go  LEFT!") == ["w:go", "w:left", "b:go_left", "c:<go", "c:go>", "c:<le",
                                               "c:lef", "c:eft", "c:ft>"]
    assert hash_piece("w:left", 4096) == 1161  # CRC-32: the same in every process (unlike hash())
    p = small_policy()
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.integers(0, 256, (1, SIZE, SIZE, 3), dtype=np.uint8)).expand(16, -1, -1, -1)
    texts = ["go left", "go right"] * 8
    target = torch.tensor([[-0.8, 1.0], [0.8, 1.0]] * 8)
    opt = torch.optim.Adam(p.parameters(), lr=3e-3)
    for _ in range(60):
        loss = -p.log_prob({"image": images, "instruction": texts}, target).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    mean, _ = p(images[:2], ["go left", "go right"])
    assert mean[0, 0] < -0.4 and mean[1, 0] > 0.4


# ------------------------------------------------------------------------------------------ demos


def assert_demos_equal(a: DemoSet, b: DemoSet):
    for name in DemoSet.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_demos_are_reproducible_and_shardable(tmp_path):
    seeds = episode_seeds(7, range(10))
    assert seeds[3] == 7_000_003
    whole = collect_demos(LineEnv, line_expert, n_episodes=10, seed=7, noise=0.3)
    assert_demos_equal(whole, collect_demos(LineEnv, line_expert, episode_seeds=seeds, noise=0.3))
    shards = [collect_demos(LineEnv, line_expert, episode_seeds=seeds[:4], noise=0.3),
              collect_demos(LineEnv, line_expert, episode_seeds=seeds[4:], noise=0.3)]
    assert_demos_equal(whole, DemoSet.concat(shards))
    assert not np.array_equal(whole.actions, whole.executed), "noise perturbs the executed action only"
    assert (whole.executed[:, 0] >= -1).all() and (whole.executed[:, 0] <= 1).all()
    assert whole.n_episodes == 10 and whole.n_steps == int(whole.episode_length.sum())
    assert whole.dones.sum() == 10 and whole.dones[np.cumsum(whole.episode_length) - 1].all()
    assert set(whole.step_instructions()) == {"go left", "go right"}
    assert_demos_equal(whole.episodes([4, 5, 6, 7, 8, 9]), shards[1])
    path = whole.save(tmp_path / "demos.npz")
    assert_demos_equal(whole, DemoSet.load(path))
    summary = read_summary(path)
    assert summary["episodes"] == 10 and summary["steps"] == whole.n_steps
    assert summary["success_rate"] == pytest.approx(whole.episode_success.mean())
    assert 0 <= summary["violation_rate"] <= 1
    assert load_npz(path)["instructions"].dtype.kind == "U"  # plain arrays, no pickle


# ------------------------------------------------------------------------------------------ bc


def test_bc_reduces_loss_deterministically(tmp_path):
    demos = collect_demos(LineEnv, line_expert, n_episodes=12, seed=1, noise=0.2)
    train, val = split_episodes(12, 0.25, seed=0)
    assert len(val) == 3 and not set(train) & set(val)
    runs = []
    for _ in range(2):
        p = small_policy()
        hist = train_bc(p, demos, epochs=6, batch_size=16, lr=3e-3, seed=0, val_fraction=0.25, shift=2,
                        plot_path=tmp_path / "bc.png")
        runs.append(hist)
    h = runs[0]
    assert [r["loss"] for r in h.rows] == [r["loss"] for r in runs[1].rows]  # same seed, same run
    assert h.rows[-1]["loss"] < h.rows[0]["loss"]
    assert min(r["val_loss"] for r in h.rows) < h.rows[0]["val_loss"]
    assert h.best_epoch == 1 + int(np.argmin([r["val_loss"] for r in h.rows]))
    assert h.final()["train_episodes"] == 9 and (tmp_path / "bc.png").stat().st_size > 0


def test_bc_with_eval_fn_logs_metrics():
    demos = collect_demos(LineEnv, line_expert, n_episodes=4, seed=1)
    calls = []

    def fake_eval(policy):
        calls.append(1)
        return {"sr": 0.5}

    hist = train_bc(small_policy(), demos, epochs=3, batch_size=32, seed=0, eval_fn=fake_eval, eval_every=2)
    assert len(calls) == 2 and "sr" in hist.rows[1] and "sr" not in hist.rows[0]


def test_dihedral_maps_each_frame_and_its_action_by_one_square_symmetry():
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.integers(0, 256, (64, 9, 9, 3), dtype=np.uint8))
    actions = torch.from_numpy(rng.uniform(0.1, 1.0, (64, 1)).astype(np.float32))
    out, acts = dihedral(images, actions, torch.Generator().manual_seed(0))
    seen = set()
    for i in range(64):
        mirrored = bool(acts[i, 0] < 0)
        assert abs(float(acts[i, 0])) == float(actions[i, 0])
        x = images[i].flip(1) if mirrored else images[i]
        k = [j for j in range(4) if torch.equal(out[i], torch.rot90(x, j, dims=(0, 1)))]
        assert k, i
        seen.add((mirrored, k[0]))
    assert len(seen) == 8  # every element of D4 is drawn
    again = dihedral(images, actions, torch.Generator().manual_seed(0))
    assert torch.equal(again[0], out) and torch.equal(again[1], acts)
    with pytest.raises(ValueError, match="square"):
        dihedral(images[:, :8], actions, torch.Generator())
    with pytest.raises(ValueError, match="symmetric"):  # the line env's second action lives in [0, 2]
        train_bc(small_policy(), collect_demos(LineEnv, line_expert, n_episodes=2, seed=0), epochs=1, symmetry="d4")


def test_dubins_vl_is_d4_symmetric():
    """What the ``d4`` augmentation assumes: the frame of a rotated (mirrored) state is the rotated (mirrored)
    frame, pixel for pixel, and the scripted expert turns the same way (the other way)."""
    from embodied_safety.envs.control.dubins import DubinsVLEnv, DubinsVLVec, _Batch, wrap
    from embodied_safety.envs.control.experts import dubins_expert
    from embodied_safety.shield.policy.visuomotor import env_symmetry

    obs, info = DubinsVLVec(48, render=True).reset(seed=5)
    s0, img = info["state"], obs["image"]

    def rotate(s):  # +90 degrees about the workspace centre
        s = s.copy()
        pts = s[:, [0, 1, 3, 4, 5, 6]].reshape(-1, 3, 2)
        s[:, [0, 1, 3, 4, 5, 6]] = np.stack([-pts[..., 1], pts[..., 0]], -1).reshape(-1, 6)
        s[:, 2] = wrap(s[:, 2] + np.pi / 2)
        return s

    def mirror(s):  # x -> -x
        s = s.copy()
        s[:, [0, 3, 5]] *= -1
        s[:, 2] = wrap(np.pi - s[:, 2])
        return s

    def render(s):
        b = _Batch(len(s), 1, 0.1, 100, 10, None, True)
        b.state = s.copy()
        for i in range(len(s)):
            b.background[i] = b._draw_background(i)
        return b.frames()

    u = dubins_expert(s0, None)[:, 0]
    np.testing.assert_array_equal(render(rotate(s0)), np.rot90(img, 1, axes=(1, 2)))
    np.testing.assert_array_equal(render(mirror(s0)), img[:, :, ::-1])
    np.testing.assert_allclose(dubins_expert(rotate(s0), None)[:, 0], u, atol=1e-9)
    # mirrored, the expert turns the other way: its tie-break (gentlest turn, then toward the goal's side) is
    # mirror-equivariant (argmin alone took the lowest tied turn rate, the highest seen in the mirror)
    np.testing.assert_allclose(dubins_expert(mirror(s0), None)[:, 0], -u, atol=1e-9)
    env = DubinsVLEnv()
    assert env_symmetry(env) == "d4" and policy_for_env(env).config.symmetry == "d4"
    assert env_symmetry(LineEnv()) == "none" and small_policy().config.symmetry == "none"


# ------------------------------------------------------------------------------------------ rollouts


class OvershootPolicy(VisuomotorPolicy):
    """Deterministically full right: the episode bit is then a known function of the scene."""

    def forward(self, images, instructions):
        mean, log_std = super().forward(images, instructions)
        return torch.stack([torch.full_like(mean[:, 0], 0.999), mean[:, 1]], dim=1), log_std


def test_rollouts_record_frames_and_the_episode_bit(tmp_path):
    torch.manual_seed(0)
    p = OvershootPolicy(small_policy().config)
    seeds = episode_seeds(3, range(6))
    ro = collect_rollouts(LineEnv, p, seeds=seeds, deterministic=True, n_envs=4)
    # same episodes as the expert that always drives right, whose costs are known
    ref = collect_demos(LineEnv, overshoot_expert, episode_seeds=seeds)
    assert ro.n_episodes == 6 and ro.n_frames == int((ro.episode_length + 1).sum())
    np.testing.assert_array_equal(ro.episode_length, ref.episode_length)
    for e in range(6):
        fr = ro.frame_episode == e
        assert ro.frame_t[fr].tolist() == list(range(int(fr.sum())))
        assert ro.episode_unsafe[e] == int((ro.cost[fr] > 0).any()) == int(ref.episode_unsafe[e])
        assert (ro.label[fr] == ro.episode_unsafe[e]).all()
        assert np.isnan(ro.actions[fr][-1]).all() and not np.isnan(ro.actions[fr][:-1]).any()
        assert ro.episode_cost[e] == pytest.approx(ref.costs[ref.episode == e].sum())
    assert 0 < ro.episode_unsafe.sum() < 6, "mixed labels in this seed set"
    assert ro.frames.shape == (ro.n_frames, SIZE, SIZE, 3) and ro.frames.dtype == np.uint8
    assert ro.frame_instructions()[0] in LineEnv.INSTRUCTIONS
    path = ro.save(tmp_path / "ro.npz")  # compressed
    raw = ro.save(tmp_path / "raw.npz", compress=False)
    assert raw.stat().st_size > path.stat().st_size
    mapped = RolloutSet.load(raw)
    assert isinstance(mapped.frames, np.memmap)
    for back in (RolloutSet.load(path), mapped):
        for name in RolloutSet.__dataclass_fields__:
            np.testing.assert_array_equal(getattr(back, name), getattr(ro, name), err_msg=name)
    summary = json.loads(path.with_suffix(".json").read_text())
    assert summary["episodes"] == 6 and summary["frames"] == ro.n_frames
    assert summary["violation_rate"] == pytest.approx(ro.episode_unsafe.mean())


def test_stochastic_rollouts_depend_on_the_episode_seed_only():
    p = small_policy(init_log_std=0.0)
    seeds = episode_seeds(5, range(5))
    a = collect_rollouts(LineEnv, p, seeds=seeds, n_envs=5)
    b = collect_rollouts(LineEnv, p, seeds=seeds, n_envs=2)
    c = RolloutSet.concat([collect_rollouts(LineEnv, p, seeds=seeds[:2], n_envs=1),
                           collect_rollouts(LineEnv, p, seeds=seeds[2:], n_envs=3)])
    for other in (b, c):
        np.testing.assert_array_equal(a.episode_length, other.episode_length)
        np.testing.assert_allclose(a.actions, other.actions, atol=1e-5)
        np.testing.assert_array_equal(a.frame_episode, other.frame_episode)
    metrics = evaluate_policy(LineEnv, p, seeds)
    assert set(metrics) >= {"sr", "violation_rate", "csc", "reach_rate"}
    assert collect_rollouts(LineEnv, p, seeds=seeds, record_frames=False).frames.shape[0] == 0


# ------------------------------------------------------------------------------------------ Dubins-VL


def dubins_factories():
    dubins = pytest.importorskip("embodied_safety.envs.control.dubins")
    pytest.importorskip("embodied_safety.envs.control.experts")
    make_env = dubins.DubinsVLEnv
    try:  # the registered id, once the package registers it
        import embodied_safety.envs.control  # noqa: F401

        if "embodied_safety/DubinsVL-v0" in gym.registry:
            def make_env():
                return gym.make("embodied_safety/DubinsVL-v0")
    except ImportError:
        pass
    return make_env, lambda n: dubins.DubinsVLVec(n, render=True)


def test_dubins_demos_bc_rollouts_end_to_end(tmp_path):
    from embodied_safety.shield.policy.demos import scripted_expert

    make_env, make_vec = dubins_factories()
    demos = collect_demos(make_env, scripted_expert("DubinsVL"), n_episodes=3, seed=0, noise=0.1,
                          max_steps=30)
    assert demos.images.shape[1:] == (84, 84, 3) and demos.n_episodes == 3
    assert np.isfinite(demos.margins).all()
    assert np.array_equal(demos.costs, (demos.margins < 0).astype(np.float32))
    torch.manual_seed(0)
    env = make_env()
    policy = policy_for_env(env)
    env.close()
    assert policy.config.image_size == (84, 84) and policy.action_dim == 1
    hist = train_bc(policy, demos, epochs=2, batch_size=32, lr=1e-3, seed=0, val_fraction=0.34)
    assert hist.rows[-1]["loss"] < hist.rows[0]["loss"]
    seeds = episode_seeds(1, range(3))
    single = collect_rollouts(make_env, policy, seeds=seeds, max_steps=12, n_envs=3)
    vec = collect_rollouts(None, policy, seeds=seeds, max_steps=12, make_vec=make_vec)
    for name in ("frames", "cost", "margin", "label", "frame_episode", "episode_unsafe", "episode_length"):
        np.testing.assert_array_equal(getattr(single, name), getattr(vec, name), err_msg=name)
    np.testing.assert_allclose(single.actions, vec.actions, atol=1e-5)
    for e in range(3):
        assert vec.episode_unsafe[e] == int((vec.cost[vec.frame_episode == e] > 0).any())
    back = RolloutSet.load(vec.save(tmp_path / "dubins.npz"))
    np.testing.assert_array_equal(back.frames, vec.frames)
