"""fairlib.vfr: allocation, Algorithm-1 summary, point-estimate audit grid, VFR grid, errors.

Oracles: brute force for the allocation and the VFR summary, fairlearn for the point estimates,
and the grid's own single-cell calls for order independence.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
import fairlearn.metrics as flm

from fairlib.core import cell_seed, FairlibInputError
from fairlib.counts import AUDIT_METRICS
from fairlib.core import largest_remainder
from fairlib.resample import draw_counts, index_resample_values
from fairlib.records import audit_data
from fairlib.reliability import summarise_resamples, verdict_flip_rate, TAU_VFR
from fairlib.vfr.axis1 import audit_grid, vfr_grid, axis1_summary


def _panel(n=3000, seed=0, models=("m1", "m2")):
    rng = np.random.default_rng(seed)
    attrs = dict(
        race=rng.choice(["W", "B", "O", "A"], n, p=[0.6, 0.2, 0.18, 0.02]),
        sex=rng.choice(["F", "M"], n),
        ethnicity=rng.choice(["H", "NH"], n, p=[0.3, 0.7]),
        age_bucket=rng.choice(["P", "Y", "M", "E"], n, p=[0.1, 0.2, 0.3, 0.4]),
    )
    y = rng.binomial(1, 0.45, n)
    frames = []
    for j, mo in enumerate(models):
        p = 1 / (
            1
            + np.exp(-(rng.normal(0, 1, n) + (1.5 + j) * (2 * y - 1) + 0.3 * (attrs["sex"] == "F")))
        )
        frames.append(
            pd.DataFrame(dict(model=mo, y_true=y, y_prob=p, y_pred=(p >= 0.5).astype(int), **attrs))
        )
    return pd.concat(frames, ignore_index=True)


# --- allocation (the one definition lives in fairlib.core) -----------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 10_000), min_size=1, max_size=12).filter(lambda s: sum(s) > 0),
    st.integers(1, 50_000),
)
def test_allocation_properties(sizes, N):
    m = largest_remainder(sizes, N)
    q = N * np.asarray(sizes, float) / sum(sizes)
    assert m.sum() == N
    assert (np.abs(m - q) < 1).all()  # floor or ceil of each quota
    assert (m[np.asarray(sizes) == 0] == 0).all()
    frac = q - np.floor(q)
    up = m > np.floor(q)
    if up.any() and (~up).any():
        assert frac[up].min() >= frac[~up].max() - 1e-12


def test_allocation_brute_force_and_default_is_the_cohort():
    sizes, N = np.array([7, 3, 5, 1]), 9
    q = N * sizes / sizes.sum()
    best = min(
        (np.abs(np.array(c) - q).sum(), c) for c in np.ndindex(*(sizes * 0 + N + 1)) if sum(c) == N
    )[1]
    assert largest_remainder(sizes, N).tolist() == list(best)
    d = _panel(500).query("model == 'm1'")
    data = audit_data(d.y_true, d.y_pred, d.race)  # resample_size None = the cohort size
    assert data.resample_size == 500 and (data.m == data.n_gy).all()


# --- Algorithm 1 summary ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=60), st.sampled_from(list(AUDIT_METRICS)))
def test_summary_matches_brute_force(vals, metric):
    spec = AUDIT_METRICS[metric]
    r = summarise_resamples(vals, metric, resample_size=100)
    passes = [
        (abs(v) if spec.uses_abs else v) >= spec.threshold
        if spec.direction == ">="
        else (abs(v) if spec.uses_abs else v) <= spec.threshold
        for v in vals
    ]
    K = len(vals)
    n_pass = sum(passes)
    assert r.n_pass == n_pass and r.n_resamples == K
    assert r.vfr == min(n_pass, K - n_pass) / K and 0 <= r.vfr <= 0.5
    assert r.dominant_verdict == ("Pass" if n_pass > K / 2 else "Fail")
    assert r.flipped == (0 < n_pass < K)
    assert r.ci[0] <= r.ci[1]
    sd = np.std(vals, ddof=1)
    if sd > 0:
        assert r.stability_margin == pytest.approx(abs(np.mean(vals) - spec.threshold) / sd)


def test_summary_tie_is_fail_and_degenerate_margin_reasons():
    assert summarise_resamples([0.9, 0.7], "DI", resample_size=10).dominant_verdict == "Fail"
    r = summarise_resamples([0.9, 0.9, 0.9], "DI", resample_size=10)
    assert r.stability_margin == np.inf and "SD(M) = 0" in r.reason
    r = summarise_resamples([0.8, 0.8], "DI", resample_size=10)
    assert np.isnan(r.stability_margin) and "undefined" in r.reason
    r = summarise_resamples([np.nan, np.nan, 0.9], "DI", resample_size=10)
    assert (
        r.n_undefined == 2
        and r.n_pass == 1
        and np.isnan(r.stability_margin)
        and "undefined" in r.reason
    )
    assert (
        r.vfr == 0 and not r.auditable and not r.stable
    )  # VFR over the one defined resample; flagged


# --- one cell -----------------------------------------------------------------------------------


def test_vfr_result_fields_and_seed_determinism():
    d = _panel().query("model == 'm1'")
    kw = dict(sensitive_features=d.sex, metric="SPD", n_resamples=300, resample_size=2000)
    a = verdict_flip_rate(d.y_true, d.y_pred, **kw, seed=5)
    b = verdict_flip_rate(d.y_true, d.y_pred, **kw, seed=5)
    c = verdict_flip_rate(d.y_true, d.y_pred, **kw, seed=6)
    assert np.array_equal(a.metric_values, b.metric_values) and not np.array_equal(
        a.metric_values, c.metric_values
    )
    assert a.metric_values.shape == (300,) and (a.n_resamples, a.resample_size, a.metric) == (
        300,
        2000,
        "SPD",
    )
    assert a.ci == tuple(np.percentile(a.metric_values, [2.5, 97.5]))
    assert a.stable == (a.vfr <= TAU_VFR)
    g = verdict_flip_rate(
        d.y_true, d.y_pred, **kw, seed=np.random.default_rng(5)
    )  # a Generator is a seed too
    assert np.array_equal(g.metric_values, a.metric_values)
    assert a.group_sizes == {"F": int((d.sex == "F").sum()), "M": int((d.sex == "M").sum())}


def test_deprecated_names_and_positional_call_still_work():
    d = _panel(800).query("model == 'm1'")
    new = verdict_flip_rate(
        d.y_true,
        d.y_pred,
        sensitive_features=d.sex,
        metric="DI",
        n_resamples=40,
        resample_size=500,
        seed=1,
    )
    with pytest.warns(DeprecationWarning):
        old = verdict_flip_rate(d.y_true, d.y_pred, d.sex, "DI", K=40, N=500, rng=1)
    assert np.array_equal(old.metric_values, new.metric_values)
    with pytest.warns(DeprecationWarning):
        assert old.ci95 == new.ci and old.K == 40 and old.N == 500
    with pytest.raises(FairlibInputError, match="`K`"):
        verdict_flip_rate(
            d.y_true, d.y_pred, sensitive_features=d.sex, metric="DI", K=4, n_resamples=4
        )


def test_resample_strata_sizes_are_exact():
    "Each resampled table has exactly m_gy records per stratum (the stratified design)."
    d = _panel().query("model == 'm1'")
    data = audit_data(d.y_true, d.y_pred, d.race, resample_size=1234)
    assert data.m.sum() == 1234
    c = draw_counts(data, 50, 0)
    assert (c.sum(-1) == data.m).all()
    np.testing.assert_allclose(data.m / 1234, data.n_gy / data.n_gy.sum(), atol=1 / 1234)


def test_one_group_set_fixed_on_the_cohort():
    "A group above min_support in the cohort stays in every resample, even when its resampled share is < 30."
    d = _panel().query("model == 'm1'")  # race A: ~60 of 3000 records
    n_a = int((d.race == "A").sum())
    assert 30 <= n_a < 100
    r = verdict_flip_rate(
        d.y_true,
        d.y_pred,
        sensitive_features=d.race,
        metric="DI",
        n_resamples=30,
        resample_size=1000,
        seed=0,
    )  # A gets ~20 records per resample
    assert r.excluded == {} and r.group_sizes["A"] == n_a
    data = audit_data(d.y_true, d.y_pred, d.race, resample_size=1000)
    i = index_resample_values(data, "DI", 30, 0)
    assert data.included.all() and not np.isnan(i).any()
    # the point estimate is over the same four groups
    assert r.value == pytest.approx(
        audit_grid(d, attributes=["race"], metrics=["DI"]).value.iloc[0]
    )
    small = _panel(1000).query("model == 'm1'")  # A: ~20 records < 30: excluded once
    r2 = verdict_flip_rate(
        small.y_true,
        small.y_pred,
        sensitive_features=small.race,
        metric="DI",
        n_resamples=20,
        seed=0,
    )
    assert list(r2.excluded) == ["A"] and r2.excluded["A"] == int((small.race == "A").sum())
    r0 = verdict_flip_rate(
        small.y_true,
        small.y_pred,
        sensitive_features=small.race,
        metric="DI",
        n_resamples=20,
        seed=0,
        min_support=0,
    )  # min_support=0 keeps every group
    assert r0.excluded == {}


def test_undefined_is_not_stable():
    "Part 1's report: a one-group cohort gave VFR 0, stable; now the VFR is undefined with its reason."
    rng = np.random.default_rng(0)
    y, yp = rng.binomial(1, 0.5, 200), rng.binomial(1, 0.5, 200)
    r = verdict_flip_rate(y, yp, sensitive_features=["A"] * 200, metric="SPD", n_resamples=100)
    assert (
        np.isnan(r.vfr)
        and r.stable is False
        and r.n_undefined == 100
        and r.dominant_verdict == "Undefined"
    )
    assert "point estimate" in r.reason and not r.flipped


def test_undefined_resamples_counted_apart_with_reason():
    rng = np.random.default_rng(0)
    g = np.repeat(["a", "b"], 500)
    y = rng.binomial(1, 0.5, 1000)
    yp = np.where(g == "a", 0, rng.binomial(1, 0.5, 1000))  # group a: no predicted positives
    r = verdict_flip_rate(
        y, yp, sensitive_features=g, metric="PP", n_resamples=50, seed=0
    )  # PPV of a undefined
    assert (
        r.n_undefined == 50
        and np.isnan(r.vfr)
        and r.dominant_verdict == "Undefined"
        and "undefined" in r.reason
    )
    # few undefined resamples: VFR over the defined ones, flagged not auditable when > 5%
    yp2 = np.where(
        (g == "a") & (np.arange(1000) > 2), 0, rng.binomial(1, 0.5, 1000)
    )  # group a: 1-3 positives
    r2 = verdict_flip_rate(
        y, yp2, sensitive_features=g, metric="PP", n_resamples=200, resample_size=100, seed=0
    )
    assert 10 < r2.n_undefined < 200 and r2.auditable is False and np.isfinite(r2.vfr)
    assert r2.vfr == min(r2.n_pass, r2.n_defined - r2.n_pass) / r2.n_defined


def test_resample_size_larger_than_cohort_is_refused_unless_allowed_and_then_warns():
    d = _panel(400).query("model == 'm1'")
    kw = dict(sensitive_features=d.sex, metric="DI", n_resamples=10, resample_size=4000)
    with pytest.raises(FairlibInputError, match=r"`resample_size`.*allow_oversize=True"):
        verdict_flip_rate(d.y_true, d.y_pred, **kw)
    with pytest.warns(UserWarning, match="understates"):
        verdict_flip_rate(d.y_true, d.y_pred, **kw, allow_oversize=True)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(metric="Cal"), "`y_prob`"),
        (dict(metric="XYZ"), "unknown metric"),
        (dict(n_resamples=0), "`n_resamples`"),
        (dict(n_resamples=2.5), "`n_resamples`"),
        (dict(resample_size=-1), "`resample_size`"),
        (dict(method="poisson"), "`method`"),
        (dict(min_support=-1), "`min_support`"),
        (dict(n_bins=0), "`n_bins`"),
        (dict(seed="x"), "`seed`"),
    ],
)
def test_verdict_flip_rate_errors(kwargs, match):
    d = _panel(400).query("model == 'm1'")
    args = dict(metric="DI") | kwargs
    with pytest.raises(ValueError, match=match):
        verdict_flip_rate(d.y_true, d.y_pred, sensitive_features=d.sex, **args)


def test_verdict_flip_rate_input_errors():
    with pytest.raises(FairlibInputError, match="lengths differ"):
        verdict_flip_rate([1, 0, 1], [1, 0], sensitive_features=["a", "b", "a"], metric="DI")
    with pytest.raises(ValueError, match="`y_pred`"):
        verdict_flip_rate([1, 0], [1, 3], sensitive_features=["a", "b"], metric="DI")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        verdict_flip_rate(
            [1, 0], [1, 0], sensitive_features=["a", "b"], metric="Cal", y_prob=[0.2, 1.4]
        )


# --- point-estimate grid vs fairlearn -------------------------------------------------------------


def test_audit_grid_shape_and_fairlearn_oracle():
    pan = _panel()
    ag = audit_grid(pan)
    assert len(ag) == 2 * 28 and set(ag.verdict) <= {"Pass", "Fail", "Undefined"}
    cell = ag.set_index(["model", "metric", "attribute"])
    for mo, f in pan.groupby("model"):
        for a in ("sex", "ethnicity"):  # two groups: fairlearn's definitions
            sf = f[a]
            assert cell.loc[(mo, "SPD", a), "value"] == pytest.approx(
                flm.demographic_parity_difference(f.y_true, f.y_pred, sensitive_features=sf)
            )
            assert cell.loc[(mo, "DI", a), "value"] == pytest.approx(
                flm.demographic_parity_ratio(f.y_true, f.y_pred, sensitive_features=sf)
            )
            assert cell.loc[(mo, "EOD", a), "value"] == pytest.approx(
                flm.equalized_odds_difference(f.y_true, f.y_pred, sensitive_features=sf)
            )
        spec = AUDIT_METRICS["DI"]
        v = cell.loc[(mo, "DI", "race"), "value"]
        assert cell.loc[(mo, "DI", "race"), "verdict"] == (
            "Pass" if v >= spec.threshold else "Fail"
        )


def test_audit_grid_lists_excluded_groups_and_errors():
    pan = _panel(1000)  # race "A" ~ 20 records < 30
    ag = audit_grid(pan, attributes=["race"])
    assert all(isinstance(e, dict) and "A" in e for e in ag.excluded)
    with pytest.raises(ValueError, match="'model' column"):
        audit_grid(pan.drop(columns="model"))
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['age_bucket'\]"):
        audit_grid(pan.drop(columns="age_bucket"))
    with pytest.raises(ValueError, match="unknown metric"):
        audit_grid(pan, metrics=["DPR"])


# --- VFR grid ---------------------------------------------------------------------------------------


def test_vfr_grid_cells_are_order_free_and_equal_single_calls():
    pan = _panel()
    g = vfr_grid(pan, n_resamples=100, resample_size=1500, seed=3)
    assert len(g) == 56 and g.vfr.between(0, 0.5).all()
    sub = vfr_grid(
        {"m2": pan[pan.model == "m2"]},
        attributes=["age_bucket", "sex"],
        metrics=["Cal", "EOpp"],
        n_resamples=100,
        resample_size=1500,
        seed=3,
    )
    full = g.set_index(["model", "metric", "attribute"])
    for _, r in sub.iterrows():
        assert full.loc[(r.model, r.metric, r.attribute), "n_pass"] == r.n_pass
    f = pan[pan.model == "m1"]
    one = verdict_flip_rate(
        f.y_true,
        f.y_pred,
        sensitive_features=f.race,
        metric="Cal",
        y_prob=f.y_prob,
        n_resamples=100,
        resample_size=1500,
        seed=cell_seed(3, "m1", "Cal", "race"),
    )
    assert full.loc[("m1", "Cal", "race"), "n_pass"] == one.n_pass
    assert full.loc[("m1", "Cal", "race"), "ci_low"] == one.ci[0]
    g2 = vfr_grid(pan, n_resamples=100, resample_size=1500, seed=3, n_jobs=2)
    pd.testing.assert_frame_equal(g, g2)


def test_vfr_grid_point_values_match_audit_grid():
    pan = _panel()
    g = vfr_grid(pan, n_resamples=20, resample_size=1000).set_index(
        ["model", "metric", "attribute"]
    )
    a = audit_grid(pan).set_index(["model", "metric", "attribute"])
    np.testing.assert_allclose(g.value.loc[a.index], a.value, equal_nan=True)
    assert (g.verdict.loc[a.index] == a.verdict).all()


def test_axis1_summary_counts():
    pan = _panel()
    g = vfr_grid(pan, n_resamples=100, resample_size=800)
    s = axis1_summary(g)
    assert s["cells"] == 56
    assert s["flipped"] == sum(0 < n < d for n, d in zip(g.n_pass, g.n_defined))
    assert s["unstable"] == sum(v > 0.10 for v in g.vfr)
    assert s["mean_vfr"] == pytest.approx(np.nanmean(g.vfr)) and s["max_vfr"] == np.nanmax(g.vfr)
    assert s["defined"] + s["undefined"] == 56
    with pytest.raises(ValueError, match="vfr_grid"):
        axis1_summary(pd.DataFrame({"x": [1]}))


def test_vfr_grid_errors():
    pan = _panel(400)
    for kw, match in [
        (dict(n_resamples=0), "`n_resamples`"),
        (dict(resample_size=0), "`resample_size`"),
        (dict(method="x"), "`method`"),
        (dict(seed=-1), "`seed`"),
        (dict(n_jobs=0), "`n_jobs`"),
    ]:
        with pytest.raises(ValueError, match=match):
            vfr_grid(pan, **kw)
    with pytest.raises(ValueError, match="must be a DataFrame or dict"):
        vfr_grid([1, 2])


def test_categorical_attributes_give_identical_results():
    pan = _panel()
    cat = pan.astype({a: "category" for a in ("race", "sex", "ethnicity", "age_bucket")})
    a = vfr_grid(pan, n_resamples=50, resample_size=900, seed=4)
    b = vfr_grid(cat, n_resamples=50, resample_size=900, seed=4)
    pd.testing.assert_frame_equal(
        a.drop(columns=["excluded", "group_sizes"]), b.drop(columns=["excluded", "group_sizes"])
    )
    assert a.excluded.astype(str).tolist() == b.excluded.astype(str).tolist()
    with pytest.raises(ValueError, match="missing value"):
        audit_data([1, 0], [1, 0], pd.Series(["a", None], dtype="category"))
