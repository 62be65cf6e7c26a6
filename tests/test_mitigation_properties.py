"""Property tests (hypothesis) of the mitigators (issue 34 §3, issue 35): mitigated predictions do not depend on the row
order or on the index labels of the inputs, and the constraint values and the penalised score are invariant in the
same way.

Row order: `ThresholdShift` (each constraint, with its out-of-bag check on) and the reweighing weights are functions of
the multiset of rows, so permuting the rows permutes the predictions and leaves the thresholds and weights unchanged.
`GreedyRefinement` is the exception, and the test says so: its VFR objective is a seeded bootstrap drawn over row
positions (Algorithm 1 of the VFR paper, kept bit-identical for the paper's tables), so a permutation draws other
resamples, which may steer the greedy search elsewhere. It is invariant to index labels, like every mitigator: the
same rows under any (consistent) labels give identical thresholds, weights and predictions.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairlib.mitigation import (
    GreedyRefinement,
    IntersectionalReweighing,
    ThresholdShift,
    constraint_by_attribute,
    fairness_penalised_score,
)

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cohort(seed, n):
    r = np.random.default_rng(seed)
    g = pd.DataFrame(
        dict(sex=r.choice(["F", "M"], n), race=r.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]))
    )
    shift = 0.3 * (g.sex == "M").to_numpy() + 0.2 * (g.race == "a").to_numpy()
    s = np.clip(r.beta(2, 2, n) * 0.7 + shift, 0.001, 0.999).round(
        3
    )  # rounded: ties in scores happen
    y = (r.random(n) < s).astype(int)
    return s, y, g


def quiet(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f()


labels = st.sampled_from(["int", "str", "shifted", "float"])


def relabel(n, kind, seed):
    r = np.random.default_rng(seed)
    if kind == "int":
        return pd.Index(r.permutation(10 * n)[:n])
    if kind == "str":
        return pd.Index([f"id{v}" for v in r.permutation(n)])
    if kind == "shifted":
        return pd.RangeIndex(1000, 1000 + n)
    return pd.Index(r.permutation(n) / 7.0)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(300, 700),
    constraint=st.sampled_from(["demographic_parity", "equal_opportunity", "equalized_odds"]),
    kind=labels,
)
def test_threshold_shift_ignores_row_order_and_index_labels(seed, n, constraint, kind):
    s, y, g = cohort(seed, n)
    perm = np.random.default_rng(seed + 1).permutation(n)
    idx = relabel(n, kind, seed)
    kw = dict(constraint=constraint, oos_resamples=2, min_cell=20)
    a = quiet(lambda: ThresholdShift(**kw).fit(s, y, g))
    b = quiet(lambda: ThresholdShift(**kw).fit(s[perm], y[perm], g.iloc[perm]))  # rows permuted
    c = quiet(  # the same rows carrying other (consistent) index labels, as pandas objects
        lambda: ThresholdShift(**kw).fit(
            pd.Series(s, index=idx), pd.Series(y, index=idx), g.set_index(idx)
        )
    )
    for other in (b, c):
        assert other.cells_.equals(a.cells_)
        np.testing.assert_array_equal(other.thresholds_, a.thresholds_)
        assert other.feasible_ == a.feasible_
    pa = a.predict(s, g)
    np.testing.assert_array_equal(b.predict(s[perm], g.iloc[perm]), pa[perm])
    np.testing.assert_array_equal(c.predict(pd.Series(s, index=idx), g.set_index(idx)), pa)


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(200, 600), kind=labels)
def test_reweighing_weights_follow_their_rows(seed, n, kind):
    s, y, g = cohort(seed, n)
    perm = np.random.default_rng(seed + 2).permutation(n)
    idx = relabel(n, kind, seed)
    w = IntersectionalReweighing().fit(g, y).sample_weight_
    np.testing.assert_array_equal(
        IntersectionalReweighing().fit(g.iloc[perm], y[perm]).sample_weight_, w[perm]
    )
    np.testing.assert_array_equal(
        IntersectionalReweighing().fit(g.set_index(idx), pd.Series(y, index=idx)).sample_weight_, w
    )


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    constraint=st.sampled_from(["demographic_parity", "equal_opportunity"]),
    kind=labels,
)
def test_greedy_refinement_ignores_index_labels(seed, constraint, kind):
    s, y, g = cohort(seed, 500)
    idx = relabel(500, kind, seed)
    kw = dict(constraint=constraint, n_resamples=6, max_iter=6, oos_resamples=0)
    a = quiet(lambda: GreedyRefinement(**kw).fit(s, y, g))
    c = quiet(
        lambda: GreedyRefinement(**kw).fit(
            pd.Series(s, index=idx), pd.Series(y, index=idx), g.set_index(idx)
        )
    )
    np.testing.assert_array_equal(c.thresholds_, a.thresholds_)
    np.testing.assert_array_equal(
        c.predict(pd.Series(s, index=idx), g.set_index(idx)), a.predict(s, g)
    )


def test_greedy_refinement_row_order_enters_only_through_its_bootstrap_objective():
    """With no move allowed B4 is B3 and ignores row order; its moves follow a seeded bootstrap over row positions,
    so they may differ under a permutation (documented above, not hidden)."""
    s, y, g = cohort(3, 800)
    perm = np.random.default_rng(4).permutation(800)
    kw = dict(n_resamples=6, max_iter=0, oos_resamples=0)
    a = quiet(lambda: GreedyRefinement(**kw).fit(s, y, g))
    b = quiet(lambda: GreedyRefinement(**kw).fit(s[perm], y[perm], g.iloc[perm]))
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(100, 500),
    constraint=st.sampled_from(["demographic_parity", "equal_opportunity", "equalized_odds"]),
    kind=labels,
)
def test_constraint_values_and_penalised_score_ignore_order_and_labels(seed, n, constraint, kind):
    s, y, g = cohort(seed, n)
    yh = (s >= 0.5).astype(int)
    perm = np.random.default_rng(seed + 3).permutation(n)
    idx = relabel(n, kind, seed)
    v = constraint_by_attribute(y, yh, g, constraint=constraint, min_support=10)
    vp = constraint_by_attribute(
        y[perm], yh[perm], g.iloc[perm], constraint=constraint, min_support=10
    )
    vi = constraint_by_attribute(
        pd.Series(y, index=idx),
        pd.Series(yh, index=idx),
        g.set_index(idx),
        constraint=constraint,
        min_support=10,
    )
    pd.testing.assert_series_equal(v, vp, rtol=1e-12)
    pd.testing.assert_series_equal(v, vi, rtol=1e-12)
    sc = fairness_penalised_score(
        y, yh, sensitive_features=g, constraint=constraint, min_support=10
    )
    assert sc == pytest.approx(
        fairness_penalised_score(
            y[perm],
            yh[perm],
            sensitive_features=g.iloc[perm],
            constraint=constraint,
            min_support=10,
        ),
        abs=1e-12,
    )


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(50, 300))
def test_a_shuffled_label_index_is_always_refused(seed, n):
    "Whatever the labels, a y Series whose index is a non-identity shuffle of the groups' index is refused."
    s, y, g = cohort(seed, n)
    idx = relabel(n, "int", seed)
    perm = np.random.default_rng(seed).permutation(n)
    if (perm == np.arange(n)).all():
        perm = perm[::-1]
    with pytest.raises(ValueError, match="index"):
        ThresholdShift(oos_resamples=0).fit(s, pd.Series(y, index=idx[perm]), g.set_index(idx))


def _oos_outputs(est):
    return est.thresholds_, est.constraint_oos_, est.constraint_oos_draws_, est.constraint_vfr_


@pytest.mark.parametrize("make", ["threshold_shift", "greedy"])
def test_out_of_bag_refits_do_not_depend_on_the_worker_count(make):
    """The out-of-bag refits run through joblib; two worker processes give the very same
    thresholds, out-of-bag table, draws and constraint VFR as one (the draws are taken first)."""
    s, y, g = cohort(3, 1500)

    def build(n_jobs):
        if make == "threshold_shift":
            return ThresholdShift(oos_resamples=6, random_state=1, n_jobs=n_jobs)
        return GreedyRefinement(n_resamples=5, max_iter=5, oos_resamples=6, n_jobs=n_jobs)

    one = quiet(lambda: build(1).fit(s, y, sensitive_features=g))
    two = quiet(lambda: build(2).fit(s, y, sensitive_features=g))
    for a, b in zip(_oos_outputs(one), _oos_outputs(two)):
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b)
        else:
            np.testing.assert_array_equal(a, b)
    assert one.constraint_oos_["oos_mean"].notna().any()


def test_out_of_bag_refits_on_codes_match_refits_on_text_labels():
    """The refits read each group column as integer codes; on a column of text labels whose sorted
    order differs from their order of appearance, the out-of-bag values are those of refits on the
    labels themselves (computed here by hand, one refit per draw, without the codes)."""
    from sklearn.base import clone

    s, y, g = cohort(5, 1200)
    g = g.assign(race=g.race.map({"a": "zeta", "b": "alpha", "c": "mu"}))
    est = quiet(lambda: ThresholdShift(oos_resamples=5, random_state=2).fit(s, y, g))
    rng, n = np.random.default_rng(2), len(s)
    proto = clone(est).set_params(oos_resamples=0)
    for b in range(5):
        idx = rng.integers(0, n, n)
        oob = np.flatnonzero(np.bincount(idx, minlength=n) == 0)
        f = quiet(lambda: clone(proto).fit(s[idx], y[idx], g.iloc[idx]))
        yh = f.predict(s[oob], g.iloc[oob])
        for a in ["sex", "race"]:
            got = est.constraint_oos_draws_.query("resample == @b")[a].iloc[0]
            want = constraint_by_attribute(y[oob], yh, g.iloc[oob], attributes=[a])[a]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("bad", [0, 1.5, "2"])
def test_n_jobs_is_refused_by_name(bad):
    from fairlib.constraints import FairlibInputError

    with pytest.raises(FairlibInputError, match="n_jobs"):
        ThresholdShift(n_jobs=bad).fit(*cohort(0, 200)[:2], sensitive_features=cohort(0, 200)[2])
