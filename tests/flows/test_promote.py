"""The champion rule against a real MLflow registry (SQLite store), rollback, and loading
``models:/actor@champion`` as an actor."""

import pytest

pytest.importorskip("mlflow")

from embodied_safety.config.promote import PromoteConfig
from embodied_safety.config.shared import ActorConfig, TrackingConfig
from embodied_safety.train.promotion import decide  # noqa: E402

pytestmark = pytest.mark.slow


def test_rule_needs_higher_ssr_and_bounded_sr_drop():
    champ = {"ssr": 0.4, "sr": 0.8}
    assert not decide({"ssr": 0.1, "sr": 0.5}, None, 0.1)[0]  # no champion, no base to beat
    assert decide({"ssr": 0.1, "sr": 0.5}, None, 0.1, {"ssr": 0.0, "sr": 0.52})[0]
    assert not decide({"ssr": 0.4, "sr": 0.9}, champ, 0.1)[0]  # equal SSR is not better
    assert not decide({"ssr": 0.6, "sr": 0.65}, champ, 0.1)[0]  # SR drop 0.15 > 0.1
    assert decide({"ssr": 0.6, "sr": 0.71}, champ, 0.1)[0]
    assert not decide({"sr": 0.9}, champ, 0.1)[0]  # no dev SSR recorded


def test_promote_rollback_and_load_champion(tmp_path, prefect_harness, monkeypatch):
    from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer
    from embodied_safety.actors.hf import HFActor
    from flows.promote import promote, rollback, show, tag_base_dev
    from tasks.tracking import mlflow_run, register_model_dir, resolve_actor

    monkeypatch.chdir(tmp_path)
    track = {"tracking_uri": f"sqlite:///{tmp_path}/mlflow.db", "artifact_root": str(tmp_path / "artifacts")}
    cfg = PromoteConfig(registered_model="actor", max_sr_drop=0.1, tracking=track)
    tok = train_tokenizer(["Your input: - task_instruction: clean the stove.n.01_1", "DONE()"])
    shape = ModelShape(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=16)
    dev = [(0.10, 0.80), (0.05, 0.90), (0.50, 0.60), (0.30, 0.75)]  # (SSR, SR) of versions 1..4
    for i, (ssr, sr) in enumerate(dev):
        model_dir = save_actor_dir(build_model(tok, shape, seed=i), tok, tmp_path / f"m{i}", 8)
        with mlflow_run(TrackingConfig(**track), f"candidate-{i}"):
            register_model_dir("actor", model_dir, tags={"dev_ssr": str(ssr), "dev_sr": str(sr), "seed": str(i)})

    import mlflow

    from embodied_safety.manifest import cpu_model

    tags = mlflow.MlflowClient(track["tracking_uri"]).search_runs(
        [mlflow.get_experiment_by_name(TrackingConfig(**track).experiment).experiment_id])[0].data.tags
    assert tags["cpu_model"] == cpu_model() and tags["cpu_model"] != "unknown" and "git_commit" in tags
    refused = promote(cfg, "1")  # no champion and no base actor to beat: not promoted
    assert not refused["promoted"] and refused["champion"] is None and "base" in refused["reason"]
    base_dir = save_actor_dir(build_model(tok, shape, seed=9), tok, tmp_path / "base", 8)
    with mlflow_run(TrackingConfig(**track), "base"):
        register_model_dir("actor-base", base_dir)
    assert tag_base_dev(cfg, {"ssr": 0.0, "sr": 0.95}) == "1"
    assert not promote(cfg, "1")["promoted"]  # SSR up, but dev SR 0.80 is 0.15 below the base's 0.95
    tag_base_dev(cfg, {"ssr": 0.0, "sr": 0.82})
    assert promote(cfg, "1")["champion"] == "1"  # no champion yet: beats the base (SR drop 0.02 <= 0.05)
    assert not promote(cfg, "2")["promoted"]  # lower SSR
    rejected = promote(cfg, "3")  # SSR up but SR drops 0.2 > 0.1
    assert not rejected["promoted"] and "SR drops" in rejected["reason"] and rejected["champion"] == "1"
    assert promote(cfg)["champion"] == "4"  # newest version by default: SSR up, SR drop 0.05
    assert show(cfg)["aliases"] == {"champion": "4", "previous": "1"}
    assert not promote(cfg, "4")["promoted"]  # already champion

    local = resolve_actor(ActorConfig(model="models:/actor@champion"), TrackingConfig(**track)).model
    assert (tmp_path / "m3" / "model.safetensors").read_bytes() == (tmp_path / local / "model.safetensors").read_bytes()
    assert len(HFActor(local).generate(["Your input: - task_instruction: clean"], 0.0)) == 1

    assert rollback(cfg) == {"champion": "1", "demoted": "4"}
    assert show(cfg)["aliases"] == {"champion": "1", "previous": None}
    with pytest.raises(ValueError, match="previous"):
        rollback(cfg)
    with pytest.raises(ValueError, match="no alias"):
        resolve_actor(ActorConfig(model="models:/actor@nonexistent"), TrackingConfig(**track))
