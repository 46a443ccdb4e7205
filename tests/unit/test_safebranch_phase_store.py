"""A SafeBranch training phase is stored by content key: a rerun (a killed stage or study) copies the stored
checkpoint instead of training it again; any input that changes the phase trains afresh."""

from __future__ import annotations

from pathlib import Path

import tasks.safebranch as sb
from embodied_safety.train.common import TrainResult
from embodied_safety.train.variants import Phase


def test_a_finished_phase_is_reused_and_a_changed_one_retrained(tmp_path: Path, monkeypatch) -> None:
    calls = []

    def fake_train(start, phase, data, out, params, seed, peft, dev_dir, eval_every, sr_floor):  # noqa: ANN001, ANN202
        calls.append(params["learning_rate"])
        out.mkdir(parents=True)
        (out / "model.safetensors").write_bytes(b"weights-%d" % len(calls))
        return TrainResult({"dev/sr": 0.5}, [{"step": 1.0, "sr": 0.5}]), [({"loss": 1.0}, 1)]

    monkeypatch.setattr(sb, "train_phase", fake_train)
    for name in ("base", "dev"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_text(name)
    args = dict(start=tmp_path / "base", phase=Phase("sft", "sft"), data=[{"prompt": "p", "completion": "c"}],
                params={"learning_rate": 1e-3}, seed=0, peft=None, dev_dir=tmp_path / "dev", eval_every=10,
                store=tmp_path / "store")
    first = sb.phase_task.fn(out=tmp_path / "run1" / "sft", **args)
    again = sb.phase_task.fn(out=tmp_path / "run2" / "sft", **args)  # the killed stage's rerun
    assert calls == [1e-3] and again == first
    assert (tmp_path / "run2" / "sft" / "model.safetensors").read_bytes() == b"weights-1"
    sb.phase_task.fn(out=tmp_path / "run3" / "sft", **{**args, "params": {"learning_rate": 3e-4}})
    assert calls == [1e-3, 3e-4]
    (tmp_path / "base" / "f.txt").write_text("another start model")
    sb.phase_task.fn(out=tmp_path / "run4" / "sft", **args)
    assert len(calls) == 3
