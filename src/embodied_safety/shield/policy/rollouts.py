"""Policy rollouts with frames: stage (i) of the rubric-cost pipeline (paper §4.2) and policy evaluation.

Every frame the policy saw is kept, *including each episode's final frame* (the contact frame when
an env ends an episode on contact), with the ground-truth per-frame ``cost`` and ``margin`` for
evaluation only: the rubric scorers read ``frames``, calibration reads the per-episode safety bit.

The episode label follows §4.2 ("did anything unsafe happen during this rollout?"): ``unsafe = 1`` iff
any frame of the episode, the reset frame included, has ``cost > 0``; it is broadcast to every frame
(``label``) as the weak per-frame label of the Platt calibration, where ``y = 1`` means unsafe.
Metrics follow §5.2: SR is Safe+Reach (``success`` and not ``unsafe``); CSC is the mean over
episodes of the summed per-step cost (the costs ``step`` returned; App. D.1's ``Σ_t c(s_t)``).

Several episodes run in lockstep on ``n_envs`` env copies so the policy sees batches; episode ``i``
resets its env with its own seed and samples its actions from its own torch generator, so its
trajectory does not depend on which other episodes share the batch (up to float rounding of batched
matmuls). A vectorised env (``DubinsVLVec``, faster: one numpy step for all sub-envs) plays the same
episodes through the ``make_vec`` argument of :func:`collect_rollouts`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...io import write_json
from .demos import MakeEnv, _info_float, _instruction_ids, episode_seeds, load_npz, save_npz, summary_path
from .visuomotor import GaussianPolicy

#: num_envs -> vectorised env (batched reset/step, same-step autoreset, ``info["final_image"]``)
MakeVec = Callable[[int], Any]


@dataclass
class RolloutSet:
    """Frame arrays have length N (frames, ``sum(episode_length + 1)``), ``episode_*`` arrays length E.

    Frames of one episode are contiguous and in time order, episodes in seed-list order. The action,
    its log-probability and the reward belong to the frame the action was taken on; they are NaN on
    each episode's final frame. With ``record_frames=False`` ``frames`` is empty (shape [0, H, W, 3]),
    every other array is complete.
    """

    frames: np.ndarray  # uint8 [N, H, W, 3]
    frame_episode: np.ndarray  # int32 [N]
    frame_t: np.ndarray  # int32 [N], 0 = the reset frame
    cost: np.ndarray  # float32 [N] ground-truth cost of the frame's state (evaluation only)
    margin: np.ndarray  # float32 [N] ground-truth margin ℓ*(s) (NaN when the env reports none)
    label: np.ndarray  # uint8 [N] the episode's unsafe bit, broadcast
    actions: np.ndarray  # float32 [N, A]
    log_probs: np.ndarray  # float32 [N]
    rewards: np.ndarray  # float32 [N]
    instruction_id: np.ndarray  # int32 [N] into ``instructions``
    instructions: np.ndarray  # str [K]
    episode_seeds: np.ndarray  # int64 [E]
    episode_unsafe: np.ndarray  # uint8 [E] 1 if any frame had cost > 0 (§4.2)
    episode_success: np.ndarray  # bool [E] info["success"] on any step (reach)
    episode_return: np.ndarray  # float32 [E]
    episode_length: np.ndarray  # int32 [E] steps (frames - 1)
    episode_cost: np.ndarray  # float32 [E] summed per-step cost

    @property
    def n_frames(self) -> int:
        return int(self.frame_episode.shape[0])

    @property
    def n_episodes(self) -> int:
        return int(self.episode_seeds.shape[0])

    def frame_instructions(self, index: np.ndarray | slice | None = None) -> list[str]:
        ids = self.instruction_id if index is None else self.instruction_id[index]
        return [str(self.instructions[i]) for i in ids]

    def summary(self) -> dict[str, float | int]:
        e = max(self.n_episodes, 1)
        unsafe = self.episode_unsafe.astype(bool)
        return {"episodes": self.n_episodes, "frames": self.n_frames,
                "violation_rate": float(unsafe.sum() / e),
                "reach_rate": float(self.episode_success.sum() / e),
                "sr": float((self.episode_success & ~unsafe).sum() / e),
                "csc": float(self.episode_cost.mean()) if self.n_episodes else 0.0,
                "mean_return": float(self.episode_return.mean()) if self.n_episodes else 0.0,
                "mean_length": float(self.episode_length.mean()) if self.n_episodes else 0.0,
                "unsafe_frame_rate": float((self.cost > 0).mean()) if self.n_frames else 0.0}

    def save(self, path: str | os.PathLike[str], compress: bool = True) -> Path:
        """``path`` (.npz) + summary ``.json``, atomically. Rendered frames compress 20-170x and
        decompress at 30-80 µs a frame, so compressed is the default; ``compress=False`` stores the
        arrays raw so that :meth:`load` memory-maps them (a shard reads only the frames it touches)."""
        path = save_npz(path, {f.name: getattr(self, f.name) for f in fields(self)}, compress=compress)
        write_json(summary_path(path), self.summary())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str], mmap: bool = True) -> RolloutSet:
        """Plain arrays; with ``mmap``, members stored uncompressed are read-only memory maps."""
        arrays = load_npz(path, mmap=mmap)
        return cls(**{f.name: arrays[f.name] for f in fields(cls)})

    @classmethod
    def concat(cls, sets: Sequence[RolloutSet]) -> RolloutSet:
        """Shards in order, episode indices offset (the arrays are copied into memory)."""
        if not sets:
            raise ValueError("nothing to concatenate")
        instructions, ids = _instruction_ids([t for s in sets for t in s.frame_instructions()])
        offsets = np.cumsum([0] + [s.n_episodes for s in sets[:-1]])
        cat = {f.name: np.concatenate([np.asarray(getattr(s, f.name)) for s in sets]) for f in fields(cls)
               if f.name not in ("instructions", "instruction_id", "frame_episode")}
        ep = np.concatenate([s.frame_episode + o for s, o in zip(sets, offsets, strict=True)])
        ep = ep.astype(np.int32)
        return cls(instruction_id=ids, instructions=instructions, frame_episode=ep, **cat)


@dataclass
class _Episode:
    """One episode's buffers while it runs."""

    index: int
    seed: int
    generator: torch.Generator
    frames: list[np.ndarray]
    texts: list[str]
    cost: list[float]
    margin: list[float]
    actions: list[np.ndarray]
    log_probs: list[float]
    rewards: list[float]
    success: bool = False
    obs: Mapping[str, Any] | None = None  # the latest observation, the one the next action is taken on

    @classmethod
    def start(cls, index: int, seed: int, obs: Mapping[str, Any], info: Mapping[str, Any],
              keep: bool) -> _Episode:
        ep = cls(index, seed, torch.Generator().manual_seed(int(seed)), [], [], [], [], [], [], [])
        ep.observe(obs, info, keep)
        return ep

    def observe(self, obs: Mapping[str, Any], info: Mapping[str, Any], keep: bool) -> None:
        self.obs = obs
        if keep:
            self.frames.append(np.asarray(obs["image"], dtype=np.uint8))
        self.texts.append(str(obs["instruction"]))
        self.cost.append(_info_float(info, "cost", 0.0))
        self.margin.append(_info_float(info, "margin", float("nan")))
        self.success = self.success or bool(info.get("success", False))

    def acted(self, action: np.ndarray, log_prob: float, reward: float) -> None:
        self.actions.append(action)
        self.log_probs.append(log_prob)
        self.rewards.append(reward)


def _assemble(done: list[_Episode], image_shape: tuple[int, ...], action_dim: int) -> RolloutSet:
    done = sorted(done, key=lambda e: e.index)
    nan_a = np.full(action_dim, np.nan, np.float32)
    frames = [f for e in done for f in e.frames]
    unsafe = np.asarray([any(c > 0 for c in e.cost) for e in done], np.uint8)
    lengths = np.asarray([len(e.actions) for e in done], np.int32)
    instructions, ids = _instruction_ids([t for e in done for t in e.texts])
    return RolloutSet(
        frames=np.stack(frames) if frames else np.zeros((0, *image_shape), np.uint8),
        frame_episode=np.concatenate([np.full(len(e.cost), i, np.int32) for i, e in enumerate(done)]),
        frame_t=np.concatenate([np.arange(len(e.cost), dtype=np.int32) for e in done]),
        cost=np.asarray([c for e in done for c in e.cost], np.float32),
        margin=np.asarray([m for e in done for m in e.margin], np.float32),
        label=np.repeat(unsafe, lengths + 1),
        actions=np.stack([a for e in done for a in [*e.actions, nan_a]]).astype(np.float32),
        log_probs=np.asarray([x for e in done for x in [*e.log_probs, np.nan]], np.float32),
        rewards=np.asarray([x for e in done for x in [*e.rewards, np.nan]], np.float32),
        instruction_id=ids, instructions=instructions,
        episode_seeds=np.asarray([e.seed for e in done], np.int64), episode_unsafe=unsafe,
        episode_success=np.asarray([e.success for e in done], bool),
        episode_return=np.asarray([sum(e.rewards) for e in done], np.float32), episode_length=lengths,
        episode_cost=np.asarray([sum(e.cost[1:]) for e in done], np.float32))


def _row(batch: Mapping[str, Any], j: int) -> dict[str, Any]:
    return {k: v[j] for k, v in batch.items() if not k.startswith("_") and hasattr(v, "__getitem__")}


def _run_single(make_env: MakeEnv, policy: GaussianPolicy, seeds: list[int], deterministic: bool, n_envs: int,
                keep: bool, max_steps: int | None) -> tuple[list[_Episode], tuple[int, ...]]:
    """``n_envs`` Gymnasium env copies in lockstep; a slot starts the next queued seed when its episode
    ends."""
    queue = list(enumerate(seeds))[::-1]
    envs = [make_env() for _ in range(max(1, min(n_envs, len(queue))))]
    image_shape = tuple(envs[0].observation_space["image"].shape)
    slots: list[_Episode | None] = [None] * len(envs)
    finished: list[_Episode] = []

    def start(k: int) -> None:
        slots[k] = None
        if queue:
            i, s = queue.pop()
            obs, info = envs[k].reset(seed=s)
            slots[k] = _Episode.start(i, s, obs, info, keep)

    try:
        for k in range(len(envs)):
            start(k)
        while any(slots):
            live = [k for k, e in enumerate(slots) if e is not None]
            eps = [e for e in slots if e is not None]
            obs = {"image": np.stack([np.asarray(e.obs["image"], np.uint8) for e in eps]),  # type: ignore[index]
                   "instruction": [str(e.obs["instruction"]) for e in eps]}  # type: ignore[index]
            actions, log_probs = policy.act(obs, deterministic=deterministic,
                                            generator=[e.generator for e in eps])
            actions_np = actions.detach().cpu().numpy().astype(np.float32)
            log_probs_np = log_probs.detach().cpu().numpy().astype(np.float32)
            for j, k in enumerate(live):
                ep = eps[j]
                nxt, r, term, trunc, info = envs[k].step(actions_np[j])
                ep.acted(actions_np[j], float(log_probs_np[j]), float(r))
                ep.observe(nxt, info, keep)
                if term or trunc or (max_steps is not None and len(ep.actions) >= max_steps):
                    finished.append(ep)
                    start(k)
    finally:
        for env in envs:
            env.close()
    return finished, image_shape


def _consecutive_chunks(items: list[tuple[int, int]], size: int) -> list[list[tuple[int, int]]]:
    """Runs of (index, seed) with consecutive seeds, at most ``size`` long."""
    chunks: list[list[tuple[int, int]]] = []
    for item in items:
        if chunks and len(chunks[-1]) < size and item[1] == chunks[-1][-1][1] + 1:
            chunks[-1].append(item)
        else:
            chunks.append([item])
    return chunks


def _run_vec(make_vec: MakeVec, policy: GaussianPolicy, seeds: list[int], deterministic: bool, n_envs: int,
             keep: bool, max_steps: int | None) -> tuple[list[_Episode], tuple[int, ...]]:
    """One vectorised env per run of consecutive seeds: sub-env ``j`` of ``reset(seed=s)`` plays seed
    ``s + j``
    (Gymnasium's convention, which ``DubinsVLVec`` follows), and only each sub-env's first episode is kept
    (the autoreset ones are stepped with zero actions and dropped)."""
    finished: list[_Episode] = []
    image_shape: tuple[int, ...] = ()
    for chunk in _consecutive_chunks(list(enumerate(seeds)), max(1, n_envs)):
        vec = make_vec(len(chunk))
        try:
            obs, info = vec.reset(seed=chunk[0][1])
            image_shape = tuple(obs["image"].shape[1:])
            eps = [_Episode.start(i, s, _row(obs, j), _row(info, j), keep) for j, (i, s) in enumerate(chunk)]
            live = np.ones(len(chunk), bool)
            zero = np.zeros((len(chunk), *np.shape(policy.action_low)), np.float32)
            while live.any():
                idx = np.flatnonzero(live)
                texts = [str(t) for t in np.asarray(obs["instruction"])[idx]]
                batch = {"image": obs["image"][idx], "instruction": texts}
                actions, log_probs = policy.act(batch, deterministic=deterministic,
                                                generator=[eps[j].generator for j in idx])
                actions_np = actions.detach().cpu().numpy().astype(np.float32)
                log_probs_np = log_probs.detach().cpu().numpy().astype(np.float32)
                full = zero.copy()
                full[idx] = actions_np
                obs, reward, term, trunc, info = vec.step(full)
                final = np.asarray(info.get("_final", np.zeros(len(chunk), bool)))
                for n, j in enumerate(idx):
                    ep = eps[j]
                    done = bool(term[j] or trunc[j])
                    frame = info["final_image"][j] if done and final[j] else obs["image"][j]
                    ep.acted(actions_np[n], float(log_probs_np[n]), float(reward[j]))
                    ep.observe({"image": frame, "instruction": obs["instruction"][j]}, _row(info, j), keep)
                    if done or (max_steps is not None and len(ep.actions) >= max_steps):
                        live[j] = False
                        finished.append(ep)
        finally:
            vec.close()
    return finished, image_shape


def collect_rollouts(make_env: MakeEnv | None, policy: GaussianPolicy, n_episodes: int | None = None,
                     seeds: Sequence[int] | None = None, deterministic: bool = False, *, seed: int = 0,
                     n_envs: int = 8, record_frames: bool = True, max_steps: int | None = None,
                     make_vec: MakeVec | None = None) -> RolloutSet:
    """Run ``policy`` for one episode per seed: ``seeds``, or ``episode_seeds(seed, range(n_episodes))``.

    ``n_envs`` env copies step in lockstep (batching the policy); with ``make_vec`` (``n -> vector env``,
    e.g. ``lambda n: DubinsVLVec(n, render=True)``) a vectorised env of up to ``n_envs`` sub-envs is used
    instead of ``make_env``, with the same episodes for the same seeds. ``max_steps`` cuts an episode
    the env did not end.
    """
    if seeds is None:
        if n_episodes is None:
            raise ValueError("give n_episodes or seeds")
        seeds = episode_seeds(seed, range(n_episodes))
    elif n_episodes is not None and n_episodes != len(seeds):
        raise ValueError(f"n_episodes={n_episodes} but {len(seeds)} seeds")
    seeds = episode_list(seeds)
    with eval_mode(policy):
        if make_vec is not None:
            finished, image_shape = _run_vec(make_vec, policy, seeds, deterministic, n_envs, record_frames,
                                             max_steps)
        elif make_env is not None:
            finished, image_shape = _run_single(make_env, policy, seeds, deterministic, n_envs, record_frames,
                                                max_steps)
        else:
            raise ValueError("give make_env or make_vec")
    return _assemble(finished, image_shape, int(np.size(policy.action_low)))


def episode_list(seeds: Sequence[int]) -> list[int]:
    """``seeds`` as ints, one episode each; an empty list is an error."""
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("no episodes to run")
    return out


@contextmanager
def eval_mode(policy: GaussianPolicy) -> Iterator[GaussianPolicy]:
    """``policy`` in eval mode for the block, its training flag restored after."""
    was_training = bool(getattr(policy, "training", False))
    policy.eval()
    try:
        yield policy
    finally:
        policy.train(was_training)


def evaluate_policy(make_env: MakeEnv | None, policy: GaussianPolicy, seeds: Sequence[int],
                    deterministic: bool = True, **kw: Any) -> dict[str, float | int]:
    """SR (Safe+Reach), reach rate, violation rate, CSC, return over one episode per seed; no frames kept.
    ``kw``: ``n_envs``, ``max_steps``, ``make_vec`` as for :func:`collect_rollouts`."""
    return collect_rollouts(make_env, policy, seeds=seeds, deterministic=deterministic, record_frames=False,
                            **kw).summary()


def eval_fn(make_env: MakeEnv | None, seeds: Sequence[int],
            **kw: Any) -> Callable[[GaussianPolicy], dict[str, float]]:
    """An ``eval_fn`` for :func:`.bc.train_bc`: the deterministic policy on fixed seeds."""

    def run(policy: GaussianPolicy) -> dict[str, float]:
        return {k: float(v) for k, v in evaluate_policy(make_env, policy, seeds, **kw).items()}

    return run
