"""Paper-style report tables: best cells bold, missing cells dashed, the funnel and the selected checkpoint."""

from embodied_safety.evaluation.report import dynamics_table, funnel_table, markdown_table, table2


def test_best_value_per_column_is_bold_and_missing_cells_are_dashes():
    out = markdown_table(["m", "a", "b"], [("x", [0.5, None], []), ("y", [0.7, 0.1], ["3"])])
    lines = out.splitlines()
    assert lines[2] == "| x | 0.500 | - |" and lines[3] == "| y | **0.700** | **0.100** | 3 |"


def test_table2_has_every_split_and_the_cost_column():
    methods = {"Base": {"test/sr": 0.8, "test/ssr": 0.01, "test/srec": 0.03},
               "SafeBranch": {"test/sr": 0.6, "test/ssr": 0.5, "test/srec": 0.9}}
    out = table2(methods, ("test", "ood_taskshift"), {"Base": "0", "SafeBranch": "0"})
    assert "OOD-TaskShift SSR" in out and "test-time module calls" in out
    assert "| SafeBranch | 0.600 | **0.500** | **0.900** | - | - | - | 0 |" in out


def test_funnel_and_dynamics_tables():
    f = {"data/pairs_extracted": 10, "data/pairs_judged": 8, "data/pairs_final": 5,
         "data/pairs_extracted/risk/fire": 4, "data/pairs_judged/risk/fire": 4, "data/pairs_final/risk/fire": 2}
    out = funnel_table(f)
    assert "| all | 10 | 8 | 5 | 0.50 |" in out and "| risk/fire | 4 | 4 | 2 | 0.50 |" in out
    curve = [{"step": 0, "sr": 0.9, "ssr": 0.9, "srec": 0}, {"step": 4, "sr": 0.5, "ssr": 0.3, "srec": 0},
             {"step": 8, "sr": 0.6, "ssr": 0.3, "srec": 0}]
    rows = dynamics_table({"v": curve}).splitlines()
    assert rows[2].endswith("|  |") and rows[4].endswith("| **yes** |")  # step 0 never selected; ties -> higher SR


def test_t_interval_over_seeds():
    from embodied_safety.evaluation.stats import t_interval

    mean, half = t_interval([0.1, 0.2, 0.3])
    # t(0.975, 2) = 4.3027; sd 0.1; n 3
    assert abs(mean - 0.2) < 1e-12 and abs(half - 4.302653 * 0.1 / 3 ** 0.5) < 1e-5
    one = t_interval([0.4])
    assert one[0] == 0.4 and one[1] != one[1]  # one seed: no interval (nan)


def test_paired_bootstrap_interval_and_the_paired_table():
    from embodied_safety.evaluation.report import paired_table
    from embodied_safety.evaluation.stats import compare, paired_bootstrap

    a, b = [1.0] * 30 + [0.0] * 10, [0.0] * 25 + [1.0] * 15
    mean, lo, hi = paired_bootstrap(a, b, n=2000, seed=0)
    assert mean == 0.375 and lo < mean < hi and lo > 0  # an interval that excludes 0
    assert paired_bootstrap(a, b, n=2000, seed=0) == (mean, lo, hi)  # seeded
    same = paired_bootstrap(a, a, n=500, seed=1)
    assert same == (0.0, 0.0, 0.0)
    seeds_a = [{"t1": {"sr": 1, "ssr": 1}, "t2": {"sr": 1, "ssr": 0}}, {"t1": {"sr": 1, "ssr": 0}, "t2": {"sr": 1, "ssr": 0}}]
    seeds_b = [{"t1": {"sr": 0, "ssr": 0}, "t2": {"sr": 1, "ssr": 0}, "t3": {"sr": 1, "ssr": 1}}]
    cmp = compare(seeds_a, seeds_b, n=200)
    assert cmp["ssr"][0] == 0.25 and cmp["sr"][0] == 0.5 and cmp["ssr"][3] == 2  # t3 unpaired: dropped
    table = paired_table({"safebranch vs sft_only": {"test": {"ssr": [0.25, 0.1, 0.4, 40], "sr": [-0.1, -0.3, 0.1, 40]}}},
                         ("test",))
    assert "| safebranch vs sft_only | +0.250 [+0.100, +0.400] * | -0.100 [-0.300, +0.100] | 40 |" in table
