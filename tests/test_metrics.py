"""fairlib.metrics against independent oracles (fairlearn, AIF360, brute force) and property tests."""

import logging
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import fairlib.metrics as fm
from fairlib.core import FairlibInputError

warnings.filterwarnings("ignore")
logging.getLogger().setLevel(logging.ERROR)  # aif360 logs missing optional deps at import
import fairlearn.metrics as flm  # noqa: E402
from aif360.sklearn.metrics import (
    between_group_generalized_entropy_error,  # noqa: E402
    generalized_entropy_error,
)


def random_data(seed, n=3000, n_groups=4, two_attrs=False):
    rng = np.random.default_rng(seed)
    g1 = rng.choice([f"g{i}" for i in range(n_groups)], n, p=rng.dirichlet(np.ones(n_groups) * 5))
    y = rng.integers(0, 2, n)
    # group-dependent prediction quality so metrics are not trivially 0
    shift = pd.Series(g1).map({f"g{i}": 0.1 * i for i in range(n_groups)}).to_numpy()
    p = np.clip(0.25 + 0.45 * y + shift * rng.random(n) + 0.15 * rng.standard_normal(n), 0, 1)
    yhat = (p > 0.5).astype(int)
    sf = g1
    if two_attrs:
        g2 = rng.choice(["F", "M"], n)
        sf = pd.DataFrame({"race": g1, "sex": g2})
    return y, yhat, p, sf


SEEDS = range(8)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("two_attrs", [False, True])
def test_against_fairlearn(seed, two_attrs):
    y, yhat, _, sf = random_data(seed, two_attrs=two_attrs)
    kw = dict(sensitive_features=sf)
    assert fm.demographic_parity_difference(y, yhat, **kw, min_support=0) == pytest.approx(
        flm.demographic_parity_difference(y, yhat, **kw), abs=1e-9
    )
    assert fm.equalized_odds_difference(y, yhat, **kw, min_support=0) == pytest.approx(
        flm.equalized_odds_difference(y, yhat, **kw), abs=1e-9
    )
    assert fm.disparate_impact_ratio(y, yhat, **kw, min_support=0) == pytest.approx(
        flm.demographic_parity_ratio(y, yhat, **kw), abs=1e-9
    )
    # equal opportunity and predictive parity through MetricFrame
    mf = flm.MetricFrame(
        metrics={"tpr": flm.true_positive_rate, "ppv": lambda a, b: (a[b == 1] == 1).mean()},
        y_true=y,
        y_pred=yhat,
        sensitive_features=sf,
    )
    assert fm.equal_opportunity_difference(y, yhat, **kw, min_support=0) == pytest.approx(
        mf.difference()["tpr"], abs=1e-9
    )
    assert fm.predictive_parity_difference(y, yhat, **kw, min_support=0) == pytest.approx(
        mf.difference()["ppv"], abs=1e-9
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_against_fairlearn(seed):
    y, yhat, _, sf = random_data(seed)
    w = np.random.default_rng(seed + 100).uniform(0.1, 3, len(y))
    assert fm.demographic_parity_difference(
        y, yhat, sensitive_features=sf, sample_weight=w, min_support=0
    ) == pytest.approx(
        flm.demographic_parity_difference(y, yhat, sensitive_features=sf, sample_weight=w), abs=1e-9
    )
    assert fm.equalized_odds_difference(
        y, yhat, sensitive_features=sf, sample_weight=w, min_support=0
    ) == pytest.approx(
        flm.equalized_odds_difference(y, yhat, sensitive_features=sf, sample_weight=w), abs=1e-9
    )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("two_attrs", [False, True])
def test_theil_against_aif360(seed, two_attrs):
    y, yhat, _, sf = random_data(seed, two_attrs=two_attrs)
    assert fm.theil_index(y, yhat) == pytest.approx(
        generalized_entropy_error(y, yhat, alpha=1), abs=1e-12
    )
    if two_attrs:
        idx = pd.MultiIndex.from_frame(sf)
        names = list(sf.columns)
    else:
        idx = pd.Index(sf, name="g")
        names = "g"
    oracle = between_group_generalized_entropy_error(
        pd.Series(y, index=idx), yhat, prot_attr=names, alpha=1
    )
    assert fm.between_group_theil_index(
        y, yhat, sensitive_features=sf, min_support=0
    ) == pytest.approx(oracle, abs=1e-12)


def test_theil_decomposition_bounds():
    y, yhat, _, sf = random_data(3)
    total = fm.theil_index(y, yhat)
    between = fm.between_group_theil_index(y, yhat, sensitive_features=sf, min_support=0)
    assert 0 <= between <= total


def brute_ece(y, p, n_bins=10):
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    return sum(
        abs(y[b == k].mean() - p[b == k].mean()) * (b == k).sum()
        for k in range(n_bins)
        if (b == k).any()
    ) / len(y)


def brute_mce(y, p, n_bins=10):
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    return max(abs(y[b == k].mean() - p[b == k].mean()) for k in range(n_bins) if (b == k).any())


@pytest.mark.parametrize("seed", SEEDS)
def test_calibration_against_brute_force(seed):
    y, _, p, sf = random_data(seed)
    eces = {g: brute_ece(y[sf == g], p[sf == g]) for g in np.unique(sf)}
    mces = {g: brute_mce(y[sf == g], p[sf == g]) for g in np.unique(sf)}
    gap = fm.calibration_gap(y, p, sensitive_features=sf, min_support=0)
    assert gap == pytest.approx(max(eces.values()) - min(eces.values()), abs=1e-12)
    worst = fm.calibration_gap(
        y, p, sensitive_features=sf, min_support=0, calibration="worst_group_mce"
    )
    assert worst == pytest.approx(max(mces.values()), abs=1e-12)


def test_group_table_against_sklearn():
    from sklearn.metrics import confusion_matrix

    y, yhat, p, sf = random_data(1)
    t = fm.group_table(y, yhat, sensitive_features=sf, y_prob=p)
    for g in np.unique(sf):
        tn, fp, fn, tp = confusion_matrix(y[sf == g], yhat[sf == g], labels=[0, 1]).ravel()
        row = t.loc[g]
        assert row.TPR == pytest.approx(tp / (tp + fn)) and row.FPR == pytest.approx(fp / (fp + tn))
        assert row.PPV == pytest.approx(tp / (tp + fp)) and row.NPV == pytest.approx(tn / (tn + fn))
        assert row.accuracy == pytest.approx((tp + tn) / (tp + tn + fp + fn))
        assert row.ECE == pytest.approx(brute_ece(y[sf == g], p[sf == g]))


def test_batch_weights_match_single():
    y, yhat, p, sf = random_data(2, n=500)
    W = np.random.default_rng(0).poisson(1.0, (5, len(y))).astype(float)
    ct = fm.count_table(y, yhat, sf, y_prob=p, sample_weight=W, min_support=0)
    for name in fm.AUDIT_METRICS:
        batch = fm.metric_from_counts(name, ct.counts, ct.bins)
        for b in range(5):
            single = fm.count_table(y, yhat, sf, y_prob=p, sample_weight=W[b], min_support=0)
            assert batch[b] == pytest.approx(
                float(fm.metric_from_counts(name, single.counts, single.bins)),
                abs=1e-12,
                nan_ok=True,
            )


# ---- undefined quantities and exclusions -------------------------------------------------------


def test_undefined_tpr_is_nan_with_reason_not_zero():
    y = [1] * 40 + [0] * 40
    yhat = [1, 0] * 40
    g = ["a"] * 40 + ["b"] * 40  # group b has no positives
    v = fm.equal_opportunity_difference(y, yhat, sensitive_features=g)
    assert np.isnan(v) and "TPR undefined for group(s) ['b']" in v.reason
    assert flm.equal_opportunity_difference(y, yhat, sensitive_features=g) == pytest.approx(
        0.5
    )  # fairlearn's silent 0


def test_undefined_ppv_and_single_group():
    v = fm.predictive_parity_difference(
        [1, 0] * 30, [0, 0] * 15 + [1, 0] * 15, sensitive_features=["a"] * 30 + ["b"] * 30
    )
    assert np.isnan(v) and "no records with y_pred == 1" in v.reason
    v = fm.demographic_parity_difference([1, 0] * 30, [1, 0] * 30, sensitive_features=["a"] * 60)
    assert np.isnan(v) and "at least two groups" in v.reason


def test_small_groups_excluded_and_listed():
    y, yhat, _, _ = random_data(0, n=200)
    g = np.array(["big"] * 150 + ["mid"] * 40 + ["tiny"] * 10)
    v = fm.demographic_parity_difference(y, yhat, sensitive_features=g)
    assert v.excluded == {"tiny": 10}
    keep = g != "tiny"
    assert v == pytest.approx(
        flm.demographic_parity_difference(y[keep], yhat[keep], sensitive_features=g[keep])
    )


def test_di_zero_over_zero():
    v = fm.disparate_impact_ratio([1, 0] * 30, [0] * 60, sensitive_features=["a", "b"] * 30)
    assert np.isnan(v) and "0/0" in v.reason


# ---- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, arg",
    [
        (
            lambda: fm.demographic_parity_difference(
                [1, 0, 1], [1, 0], sensitive_features=["a", "b", "a"]
            ),
            "y_pred",
        ),
        (
            lambda: fm.equalized_odds_difference(
                [0, 1, 2], [1, 0, 1], sensitive_features=list("aab")
            ),
            "y_true",
        ),
        (
            lambda: fm.equalized_odds_difference(
                [0, 1, 1], [1, 0, 3], sensitive_features=list("aab")
            ),
            "y_pred",
        ),
        (lambda: fm.calibration_gap([0, 1], [0.1, 1.1], sensitive_features=list("ab")), "y_prob"),
        (
            lambda: fm.calibration_gap([0, 1], [0.1, np.nan], sensitive_features=list("ab")),
            "y_prob",
        ),
        (lambda: fm.demographic_parity_difference([], [], sensitive_features=[]), "y_true"),
        (
            lambda: fm.audit([1, 0], [1, 0], sensitive_features=list("ab"), metrics=["nope"]),
            "metrics",
        ),
        (lambda: fm.metric_from_counts("nope", np.zeros((2, 2, 2))), "metric"),
        (
            lambda: fm.demographic_parity_difference(
                [1, 0], [1, 0], sensitive_features=["a", None]
            ),
            "sensitive_features",
        ),
        (
            lambda: fm.demographic_parity_difference(
                [1, 0], [1, 0], sensitive_features=list("ab"), sample_weight=[1, -1]
            ),
            "sample_weight",
        ),
        (
            lambda: fm.calibration_gap(
                [0, 1], [0.1, 0.2], sensitive_features=list("ab"), calibration="bad"
            ),
            "calibration",
        ),
    ],
)
def test_bad_input_names_argument(call, arg):
    with pytest.raises(ValueError) as e:
        call()
    assert isinstance(e.value, FairlibInputError) and e.value.argument == arg
    assert f"`{arg}`" in str(e.value)


# ---- properties ----------------------------------------------------------------------------------

data = st.integers(0, 10_000).map(lambda s: random_data(s, n=300, n_groups=3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data, st.randoms(use_true_random=False))
def test_invariant_to_row_order_and_group_names(d, rnd):
    y, yhat, p, sf = d
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    renamed = np.char.add("renamed_", sf.astype(str))
    for name in fm.AUDIT_METRICS:
        kw = dict(y_prob=p) if name == "Cal" else {}
        a = fm.audit(y, yhat, sensitive_features=sf, metrics=[name], min_support=0, **kw).value(
            name
        )
        kwp = dict(y_prob=p[perm]) if name == "Cal" else {}
        b = fm.audit(
            y[perm],
            yhat[perm],
            sensitive_features=renamed[perm],
            metrics=[name],
            min_support=0,
            **kwp,
        ).value(name)
        assert a == pytest.approx(b, abs=1e-12, nan_ok=True)


@settings(max_examples=40, deadline=None)
@given(data)
def test_bounds(d):
    y, yhat, p, sf = d
    di = fm.disparate_impact_ratio(y, yhat, sensitive_features=sf, min_support=0)
    assert 0 <= di <= 1
    for f in (
        fm.demographic_parity_difference,
        fm.equal_opportunity_difference,
        fm.equalized_odds_difference,
        fm.predictive_parity_difference,
    ):
        v = f(y, yhat, sensitive_features=sf, min_support=0)
        assert np.isnan(v) or 0 <= v <= 1
    assert fm.between_group_theil_index(y, yhat, sensitive_features=sf, min_support=0) >= 0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 20), st.integers(0, 20), st.integers(2, 5))
def test_di_is_one_when_selection_rates_equal(k, extra, n_groups):
    # every group: k selected out of k + extra + 1
    yhat = np.r_[np.ones(k), np.zeros(extra + 1)].astype(int)
    y = np.zeros_like(yhat)
    Y = np.tile(y, n_groups)
    YH = np.tile(yhat, n_groups)
    g = np.repeat(np.arange(n_groups), len(yhat))
    assert fm.disparate_impact_ratio(Y, YH, sensitive_features=g, min_support=0) == pytest.approx(
        1.0
    )
    assert fm.demographic_parity_difference(
        Y, YH, sensitive_features=g, min_support=0
    ) == pytest.approx(0.0)
    assert fm.four_fifths_rule(Y, YH, sensitive_features=g, min_support=0).passed


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_integer_weights_equal_repeated_rows(seed):
    y, yhat, p, sf = random_data(seed, n=120, n_groups=3)
    w = np.random.default_rng(seed).integers(0, 4, len(y))
    rep = np.repeat(np.arange(len(y)), w)
    for name in fm.AUDIT_METRICS:
        kw = dict(y_prob=p) if name == "Cal" else {}
        a = fm.audit(
            y, yhat, sensitive_features=sf, metrics=[name], sample_weight=w, min_support=0, **kw
        ).value(name)
        kwr = dict(y_prob=p[rep]) if name == "Cal" else {}
        b = fm.audit(
            y[rep], yhat[rep], sensitive_features=sf[rep], metrics=[name], min_support=0, **kwr
        ).value(name)
        assert a == pytest.approx(b, abs=1e-12, nan_ok=True)


def test_handbook_example_fails_four_fifths():
    """The chapter's directional ratio 1.66 is reverse disparity: min/max = 1/1.66 < 0.8 must fail."""
    g = np.array([0] * 500 + [1] * 500)
    yhat = np.r_[np.ones(249), np.zeros(251), np.ones(150), np.zeros(350)].astype(int)
    v = fm.four_fifths_rule(None, yhat, sensitive_features=g)
    assert v.passed is False and v.ratio == pytest.approx(150 / 249)
    assert (v.lowest_group, v.highest_group) == (1, 0)
