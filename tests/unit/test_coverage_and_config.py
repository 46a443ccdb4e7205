import pytest

from embodied_safety.config.household_suite import HouseholdSuiteConfig
from embodied_safety.config.params import from_dict, load_params
from embodied_safety.envs.household.coverage import activity_problems, behavior_coverage


def test_behavior_coverage_reports_counts_and_reasons():
    paths = activity_problems()
    assert len(paths) == 1016
    cov = behavior_coverage(paths[:120])
    assert cov["behavior/activities"] == 120
    assert 0 < cov["behavior/initialised"] <= cov["behavior/parsed"] <= 120
    assert all(r.startswith("unknown predicate") for r in cov["behavior/failure_reasons"])


def test_params_reject_unknown_keys_with_section_and_key():
    with pytest.raises(ValueError, match="household_suite: unknown key\\(s\\) \\['per_templat'\\]"):
        from_dict(HouseholdSuiteConfig, {"per_templat": 3}, "household_suite")


def test_repository_params_load():
    cfg = load_params("household_suite", HouseholdSuiteConfig)
    assert cfg.per_template >= cfg.n_dev + cfg.n_test + 1
