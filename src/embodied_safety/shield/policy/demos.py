"""Scripted-expert demonstrations for behaviour cloning (the "BC-initialised policy" of App. C, Alg. 1).

The expert reads privileged simulator state, which the policy never sees: ``expert(info, env, rng)``
gets the ``info`` dict of the last ``reset`` / ``step`` (``info["state"]``), the env itself and the
episode's own random generator (for experts that randomise, e.g. a per-episode "careless" mode), and
returns an action. An expert with a ``reset(env)`` method is reset at each episode start (for
planners that keep state). :func:`scripted_expert` adapts ``envs.control.experts.expert_action``.

Seeding is per episode: episode ``i`` of a set with base seed ``s`` resets the env with
:func:`episode_seed` ``(s, i) = s * 1e6 + i`` and draws its action noise from a generator seeded by
that seed alone, so any shard of episodes can be recomputed on its own and shards concatenate to exactly the
one-shot set (``collect_demos(..., episode_seeds=...)``; :meth:`DemoSet.concat`).

Noise (DART-style): with ``noise > 0`` the *executed* action is the expert's plus Gaussian noise of
std ``noise * half-range``, clipped to the bounds, while the recorded BC target (``actions``) stays the
expert's clean action for the state actually visited. The policy then sees the states slightly off
the expert's path and the correction the expert makes there.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from ...io import atomic_write_bytes, write_json

MakeEnv = Callable[[], Any]  # -> gymnasium.Env with the {"image", "instruction"} Dict observation
Expert = Callable[[Mapping[str, Any], Any, np.random.Generator], Any]  # (info, env, rng) -> action


#: episode ``i`` of a set with base seed ``b`` resets with ``b * EPISODES_PER_BASE + i``
EPISODES_PER_BASE = 1_000_000


def episode_seed(base: int, index: int) -> int:
    """The env seed of episode ``index`` of a set with base seed ``base``, independent of the set size.

    Consecutive within a set, so a vectorised env reset with the first seed (sub-env ``j`` gets
    ``seed + j``, Gymnasium's convention) replays the same episodes; readable (``3000017`` is episode
    17 of base 3); sets with different bases never share a scene below a million episodes.
    """
    if not 0 <= index < EPISODES_PER_BASE:
        raise ValueError(f"episode index {index} out of range")
    return int(base) * EPISODES_PER_BASE + int(index)


def episode_seeds(base: int, indices: Iterable[int]) -> list[int]:
    return [episode_seed(base, i) for i in indices]


def scripted_expert(env_name: str, expert_noise: float = 0.0) -> Expert:
    """The control envs' scripted expert (``envs.control.experts.expert_action``) as an :data:`Expert`.

    ``expert_noise`` is the expert's own noise, which lands in the recorded BC target too; prefer
    :func:`collect_demos`' ``noise`` (executed action only).
    """
    from ...envs.control.experts import expert_action

    def expert(info: Mapping[str, Any], env: Any, rng: np.random.Generator) -> Any:
        return expert_action(env_name, np.asarray(info["state"]), rng, noise=expert_noise)

    return expert


# --------------------------------------------------------------------------------------------------
# npz I/O shared with rollouts


def save_npz(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray], compress: bool) -> Path:
    """Write an ``.npz`` atomically (temp file in the same folder + rename); no object arrays."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for k, v in arrays.items():
        if v.dtype == object:
            raise TypeError(f"{k}: object arrays would need pickle")
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return atomic_write_bytes(path, buf.getvalue())


def load_npz(path: str | os.PathLike[str], mmap: bool = False) -> dict[str, np.ndarray]:
    """All arrays of an ``.npz`` (never unpickling). With ``mmap``, members stored uncompressed come
    back as read-only memory maps into the archive (no copy, pages read on access); compressed
    members are read into memory as usual."""
    path = Path(path)
    if not mmap:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
        for info in zf.infolist():
            name = info.filename.removesuffix(".npy")
            if info.compress_type != zipfile.ZIP_STORED:
                with zf.open(info) as member:
                    out[name] = np.lib.format.read_array(member, allow_pickle=False)
                continue
            fh.seek(info.header_offset)
            local = fh.read(30)  # local file header: the name and extra lengths sit at bytes 26..30
            name_len = int.from_bytes(local[26:28], "little")
            extra_len = int.from_bytes(local[28:30], "little")
            start = info.header_offset + 30 + name_len + extra_len
            fh.seek(start)
            version = np.lib.format.read_magic(fh)
            fmt = np.lib.format
            read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = read_header(fh)
            if dtype.hasobject:
                raise TypeError(f"{name}: object array")
            if int(np.prod(shape)) == 0:
                out[name] = np.empty(shape, dtype)
                continue
            out[name] = np.memmap(path, dtype=dtype, mode="r", offset=fh.tell(), shape=shape,
                                  order="F" if fortran else "C")
    return out


def summary_path(path: str | os.PathLike[str]) -> Path:
    """``x/demos.npz`` -> ``x/demos.json``."""
    return Path(path).with_suffix(".json")


def _instruction_ids(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    uniq = list(dict.fromkeys(texts))
    index = {t: i for i, t in enumerate(uniq)}
    ids = np.asarray([index[t] for t in texts], dtype=np.int32)
    return np.asarray(uniq if uniq else [""], dtype=str), ids


# --------------------------------------------------------------------------------------------------
# the demo set


@dataclass
class DemoSet:
    """Expert transitions; step arrays have length N (steps), ``episode_*`` arrays length E.

    Step ``t`` holds the frame the expert acted on (``images``: o_t), the clean expert action (the BC
    target), the executed (noisy) action, and the reward, margin, cost and done flag that ``step``
    returned (margin/cost of the state *after* the action).
    """

    images: np.ndarray  # uint8 [N, H, W, 3]
    instruction_id: np.ndarray  # int32 [N] into ``instructions``
    instructions: np.ndarray  # str [K], the distinct instructions
    actions: np.ndarray  # float32 [N, A] expert action (BC target)
    executed: np.ndarray  # float32 [N, A] action sent to the env
    rewards: np.ndarray  # float32 [N]
    margins: np.ndarray  # float32 [N] ground-truth margin after the step (NaN if the env gives none)
    costs: np.ndarray  # float32 [N] 0/1
    dones: np.ndarray  # bool [N] terminated or truncated
    episode: np.ndarray  # int32 [N] episode index within this set
    episode_seeds: np.ndarray  # int64 [E]
    episode_success: np.ndarray  # bool [E] info["success"] at any step
    episode_unsafe: np.ndarray  # bool [E] any step with cost > 0
    episode_return: np.ndarray  # float32 [E]
    episode_length: np.ndarray  # int32 [E]

    @property
    def n_steps(self) -> int:
        return int(self.images.shape[0])

    @property
    def n_episodes(self) -> int:
        return int(self.episode_seeds.shape[0])

    def step_instructions(self, index: np.ndarray | slice | None = None) -> list[str]:
        ids = self.instruction_id if index is None else self.instruction_id[index]
        return [str(self.instructions[i]) for i in ids]

    def summary(self) -> dict[str, float | int]:
        e = max(self.n_episodes, 1)
        return {"episodes": self.n_episodes, "steps": self.n_steps,
                "success_rate": float(self.episode_success.sum() / e),
                "violation_rate": float(self.episode_unsafe.sum() / e),
                "safe_success_rate": float((self.episode_success & ~self.episode_unsafe).sum() / e),
                "mean_return": float(self.episode_return.mean()) if self.n_episodes else 0.0,
                "mean_length": float(self.episode_length.mean()) if self.n_episodes else 0.0,
                "instructions": int(len(set(self.instruction_id.tolist())))}

    def episodes(self, which: Sequence[int] | np.ndarray) -> DemoSet:
        """The listed episodes (renumbered 0..len-1 in that order)."""
        which = np.asarray(which, dtype=np.int64)
        parts = []
        for new, old in enumerate(which):
            m = self.episode == old
            parts.append((new, np.flatnonzero(m)))
        idx = np.concatenate([p for _, p in parts]) if parts else np.zeros(0, np.int64)
        ep = (np.concatenate([np.full(len(p), n, np.int32) for n, p in parts]) if parts
              else np.zeros(0, np.int32))
        texts = self.step_instructions(idx)
        instructions, ids = _instruction_ids(texts)
        return DemoSet(self.images[idx], ids, instructions, self.actions[idx], self.executed[idx],
                       self.rewards[idx], self.margins[idx], self.costs[idx], self.dones[idx], ep,
                       self.episode_seeds[which], self.episode_success[which], self.episode_unsafe[which],
                       self.episode_return[which], self.episode_length[which])

    @classmethod
    def concat(cls, sets: Sequence[DemoSet]) -> DemoSet:
        """Shards in order, episode indices offset: concat(collect(seeds[:5]), collect(seeds[5:])) ==
        collect(seeds)."""
        if not sets:
            raise ValueError("nothing to concatenate")
        texts = [t for s in sets for t in s.step_instructions()]
        instructions, ids = _instruction_ids(texts)
        offsets = np.cumsum([0] + [s.n_episodes for s in sets[:-1]])
        cat = {f.name: np.concatenate([getattr(s, f.name) for s in sets]) for f in fields(cls)
               if f.name not in ("instructions", "instruction_id", "episode")}
        episode = np.concatenate([s.episode + o for s, o in zip(sets, offsets, strict=True)]).astype(np.int32)
        return cls(instruction_id=ids, instructions=instructions, episode=episode, **cat)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """``path`` (.npz, compressed) and the summary beside it (``.json``), each written atomically."""
        path = save_npz(path, {f.name: getattr(self, f.name) for f in fields(self)}, compress=True)
        write_json(summary_path(path), self.summary())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DemoSet:
        arrays = load_npz(path)
        return cls(**{f.name: arrays[f.name] for f in fields(cls)})


def _info_float(info: Mapping[str, Any], key: str, default: float) -> float:
    v = info.get(key, default)
    return float(np.asarray(v).reshape(())) if v is not None else default


def collect_demos(make_env: MakeEnv, expert: Expert, n_episodes: int = 10, seed: int = 0, noise: float = 0.0,
                  episode_seeds: Sequence[int] | None = None, max_steps: int | None = None) -> DemoSet:
    """Roll the expert out for ``n_episodes`` episodes (seeds ``episode_seed(seed, 0..n-1)``), or for the
    given ``episode_seeds`` (a shard; ``n_episodes`` and ``seed`` are then ignored).

    ``max_steps`` cuts an episode the env did not end (the env's own time limit normally does).
    """
    if episode_seeds is None:
        episode_seeds = [episode_seed(seed, i) for i in range(n_episodes)]
    env = make_env()
    low = np.asarray(env.action_space.low, dtype=np.float32)
    high = np.asarray(env.action_space.high, dtype=np.float32)
    keys = ("images", "texts", "actions", "executed", "rewards", "margins", "costs", "dones", "episode")
    steps: dict[str, list[Any]] = {k: [] for k in keys}
    success, unsafe, returns, lengths = [], [], [], []
    try:
        for e, s in enumerate(episode_seeds):
            obs, info = env.reset(seed=int(s))
            if hasattr(expert, "reset"):
                expert.reset(env)
            rng = np.random.default_rng([int(s), 1])  # noise stream of this episode alone
            expert_rng = np.random.default_rng([int(s), 2])
            ok, bad, ret, t = False, False, 0.0, 0
            while True:
                a = np.asarray(expert(info, env, expert_rng), dtype=np.float32).reshape(low.shape)
                exe = a
                if noise > 0:
                    jitter = noise * (high - low) / 2 * rng.standard_normal(a.shape)
                    exe = np.clip(a + jitter, low, high).astype(np.float32)
                steps["images"].append(np.asarray(obs["image"], dtype=np.uint8))
                steps["texts"].append(str(obs["instruction"]))
                obs, r, term, trunc, info = env.step(exe)
                t += 1
                done = bool(term or trunc) or (max_steps is not None and t >= max_steps)
                cost = _info_float(info, "cost", 0.0)
                steps["actions"].append(a)
                steps["executed"].append(exe)
                steps["rewards"].append(float(r))
                steps["margins"].append(_info_float(info, "margin", float("nan")))
                steps["costs"].append(cost)
                steps["dones"].append(done)
                steps["episode"].append(e)
                ok = ok or bool(info.get("success", False))
                bad = bad or cost > 0
                ret += float(r)
                if done:
                    break
            success.append(ok)
            unsafe.append(bad)
            returns.append(ret)
            lengths.append(t)
    finally:
        env.close()
    instructions, ids = _instruction_ids(steps["texts"])
    shape = tuple(env.observation_space["image"].shape)
    return DemoSet(
        images=np.stack(steps["images"]) if steps["images"] else np.zeros((0, *shape), np.uint8),
        instruction_id=ids, instructions=instructions,
        actions=np.asarray(steps["actions"], np.float32).reshape(-1, low.size),
        executed=np.asarray(steps["executed"], np.float32).reshape(-1, low.size),
        rewards=np.asarray(steps["rewards"], np.float32), margins=np.asarray(steps["margins"], np.float32),
        costs=np.asarray(steps["costs"], np.float32), dones=np.asarray(steps["dones"], bool),
        episode=np.asarray(steps["episode"], np.int32), episode_seeds=np.asarray(episode_seeds, np.int64),
        episode_success=np.asarray(success, bool), episode_unsafe=np.asarray(unsafe, bool),
        episode_return=np.asarray(returns, np.float32), episode_length=np.asarray(lengths, np.int32))


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(summary_path(path).read_text())
