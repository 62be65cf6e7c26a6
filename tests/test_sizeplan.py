"""The audit size planner (fairlib.sizeplan): agreement with independent resampling on UCI Adult and COMPAS, the
extrapolation checked against the full data, a closed-form worked example against scipy.stats.norm, undefined
cases, bad arguments, the audit() / JSON integration, and one rule of stability: a verdict the audit calls stable is
reachable in the plan and no other is (issue 35)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import fairlib as fl
from fairlib.constraints import FairlibInputError
from fairlib.counts import audit_metric
from fairlib.handbook import load_adult, load_compas
from fairlib.records import ResampleSizeWarning, audit_data
from fairlib.reliability import TAU_VFR, verdict_flip_rate
from fairlib.resample import index_subsample_values, metric_at
from fairlib.sizeplan import CV_CUTOFF, NEAR_ZERO, SizePlanResult, audit_size_plan
from fairlib.sizemodel import _fmt_n, _stable_share

VFR_TOL = 0.05  # Monte-Carlo slack on a flip rate estimated from 300 resamples (SE ~0.017 at 0.1)
CV_TOL = 0.15  # relative slack on a CV (SE ~4% from 300 resamples, plus the planner's own noise)


@pytest.fixture(scope="module")
def adult():
    df = load_adult()
    yh = (df.education_num >= 13).astype(int).to_numpy()  # a fixed rule: degree-level education
    return df.high_income.to_numpy(), yh, df.sex.astype(str).to_numpy()


@pytest.fixture(scope="module")
def compas():
    df = load_compas()
    return df.two_year_recid.to_numpy(), df.high_risk.to_numpy(), df.sex.astype(str).to_numpy()


def _empirical(y, yh, g, metric, N, seed=2024, K=300):
    """Flip rate and spread (CV, or SD for a near-zero value) at audit size N, by plain index resampling (not the
    count draws the planner uses): the flip rate from verdict_flip_rate's index path (stratified, Algorithm 1), the
    spread from N records drawn at random with replacement (not stratified, as Axis 2's samples)."""
    N = int(round(N))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResampleSizeWarning)
        r = verdict_flip_rate(
            y,
            yh,
            sensitive_features=g,
            metric=metric,
            resample_size=N,
            n_resamples=K,
            seed=seed,
            method="index",
        )
    d = audit_data(y, yh, g)
    rng = np.random.default_rng(seed)
    v = np.array([metric_at(d, rng.integers(0, len(y), N), metric) for _ in range(K)])
    spec = audit_metric(metric)
    v = v[~np.isnan(v)]
    x = np.abs(v) if spec.uses_abs else v
    sd = float(np.std(x, ddof=1))
    near_zero = abs(r.value) < NEAR_ZERO
    return r.vfr, (sd if near_zero else sd / abs(float(np.mean(x)))), near_zero


def _cut(row):
    return row.cv_cutoff * row.threshold if abs(row.value) < NEAR_ZERO else row.cv_cutoff


def _binding(row):
    "Which criterion sets n_required (the records a stable verdict needs): 'vfr' or 'support'."
    return "support" if row.n_for_support > row.n_for_vfr else "vfr"


SHARE = _stable_share(
    200, TAU_VFR
)  # the largest flip share 200 resamples show stable (the planner's default K)


def _check_against_resampling(y, yh, g, plan, n):
    """At the planned size the independent flip rate is at most the share the stability rule allows (and near it:
    the plan is the first such size), below the interval it is above it; at n_for_cv the independent CV is at the
    cutoff (a separate criterion)."""
    checked = []
    for row in plan.itertuples(index=False):
        if not row.reachable or _binding(row) == "support" or row.n_required < 200:
            continue
        vfr, crit, _ = _empirical(y, yh, g, row.metric, row.n_required)
        assert vfr <= SHARE + VFR_TOL, (row.metric, vfr)
        assert vfr >= SHARE - VFR_TOL, (row.metric, vfr)  # not far beyond the first stable size
        if (
            row.ci_low < 0.85 * row.n_required and row.ci_low >= 100
        ):  # below the interval: not yet stable
            vfr_lo, _, _ = _empirical(y, yh, g, row.metric, row.ci_low)
            assert vfr_lo > SHARE - VFR_TOL, (row.metric, vfr_lo)
        if row.ci_high <= n and row.ci_high > 1.15 * row.n_required:  # above it, stable
            vfr_hi, _, _ = _empirical(y, yh, g, row.metric, row.ci_high)
            assert vfr_hi <= SHARE + VFR_TOL, row.metric
        if math.isfinite(row.n_for_cv) and 200 <= row.n_for_cv <= n:
            _, cv, _ = _empirical(y, yh, g, row.metric, row.n_for_cv)
            assert abs(cv / _cut(row) - 1) <= CV_TOL, (row.metric, cv)
        checked.append((row.metric, round(row.n_required), round(vfr, 3)))
    return checked


@pytest.mark.parametrize("name", ["adult", "compas"])
def test_planned_size_agrees_with_index_resampling(name, request):
    y, yh, g = request.getfixturevalue(name)
    plan = audit_size_plan(y, yh, sensitive_features=g).to_frame()
    checked = _check_against_resampling(y, yh, g, plan, len(y))
    assert checked, f"no reachable metric to check on {name}: {plan[['metric', 'n_required']]}"
    print(name, checked)


def test_cv_agrees_with_subsampling_without_replacement(adult):
    "Axis 2's subsampling without replacement, corrected by the finite-population factor, gives the same CV."
    y, yh, g = adult
    plan = audit_size_plan(y, yh, sensitive_features=g).to_frame().set_index("metric")
    row = plan.loc["PP"]
    assert (
        row.reachable and row.n_for_cv >= row.n_for_vfr
    )  # PP's value is precise long after its verdict is stable
    N = int(round(row.n_for_cv))
    d = audit_data(y, yh, g)
    v = np.abs(index_subsample_values(d, "PP", N, 300, 7))
    cv = v.std(ddof=1) / v.mean() / math.sqrt(1 - N / len(y))
    assert abs(cv / CV_CUTOFF - 1) <= CV_TOL, cv


@pytest.mark.parametrize("name,n0", [("adult", 3_000), ("compas", 1_500)])
def test_extrapolation_from_fewer_records(name, n0, request):
    """Plan from n0 random records (beyond them by the model) and compare with the answer on all the records (found
    by resampling, with 500 resamples per size): over six draws of the n0 records the full answer lies in the 95%
    interval in at least 80% of the comparisons, and at the interval's low end the full data's verdict is not yet
    stable."""
    y, yh, g = request.getfixturevalue(name)
    full = (
        audit_size_plan(y, yh, sensitive_features=g, n_resamples=500, seed=1)
        .to_frame()
        .set_index("metric")
    )
    seen, low_checked = [], 0
    for draw in range(6):
        idx = np.random.default_rng(draw).choice(len(y), n0, replace=False)
        small = (
            audit_size_plan(y[idx], yh[idx], sensitive_features=g[idx], seed=draw)
            .to_frame()
            .set_index("metric")
        )
        for m, row in small.iterrows():
            f = full.loc[m]
            if row.method != "extrapolated" or not f.reachable or _binding(f) == "support":
                continue
            assert not row.reachable and row.n_required > n0 and "not reachable" in row.reason
            seen.append((m, draw, round(row.ci_low), round(f.n_required), round(row.ci_high)))
            seen[-1] += (bool(row.ci_low <= f.n_required <= row.ci_high),)
            if draw == 0 and row.ci_low < len(y):
                vfr_lo, _, _ = _empirical(y, yh, g, m, row.ci_low)
                assert vfr_lo > SHARE - VFR_TOL, (m, vfr_lo)
                low_checked += 1
    assert len(seen) >= 4 and low_checked >= 1, seen
    assert sum(s[-1] for s in seen) >= 0.8 * len(seen), seen
    print(name, seen)


def _two_groups(rate_b=0.35, n=20_000):
    "Two groups of n, every label 0: each group's selection rate is binomial."
    yh = np.r_[
        np.ones(n // 2), np.zeros(n // 2), np.ones(int(rate_b * n)), np.zeros(n - int(rate_b * n))
    ]
    return np.zeros(2 * n, int), yh.astype(int), np.repeat(["a", "b"], n)


def test_worked_example_closed_form():
    """SPD = 0.5 - 0.35 = 0.15 against τ = 0.1; SD(N) = sqrt((0.25 + 0.2275) / (N/2)); flip rate Φ(-0.05 / SD(N));
    400 resamples show a verdict stable at a flip share of at most p* (the stability rule)."""
    y, yh, g = _two_groups()
    res = audit_size_plan(y, yh, sensitive_features=g, metrics=["SPD"], n_resamples=400)
    row = res.to_frame().iloc[0]
    sd1 = math.sqrt((0.5 * 0.5 + 0.35 * 0.65) / 0.5)
    z = stats.norm.isf(_stable_share(400, TAU_VFR))
    n_vfr, n_cv = (z * sd1 / 0.05) ** 2, (sd1 / (0.05 * 0.15)) ** 2
    assert row.n_model == pytest.approx(n_vfr, rel=0.15)  # the model from SD(n) and the value
    # the first size from which every larger size tried is stable: Monte-Carlo noise near p* can only push it up
    assert 0.8 * n_vfr <= row.n_for_vfr <= 1.45 * n_vfr, (row.n_for_vfr, n_vfr)
    assert row.n_for_cv == pytest.approx(n_cv, rel=0.12)  # the value's precision, reported apart
    assert row.n_required == row.n_for_vfr and row.method == "subsampling" and row.reachable
    assert all(float(row[c]).is_integer() for c in ("n_required", "ci_low", "ci_high", "n_for_cv"))
    assert row.ci_low <= row.n_required <= row.ci_high
    c = res.curve[(res.curve["size"] >= 400) & (res.curve["size"] < len(y))]
    sd = sd1 / np.sqrt(c["size"].to_numpy())
    np.testing.assert_allclose(c.sd, sd, rtol=0.12)  # binomial SD per size
    want = stats.norm.cdf(-0.05 / sd)
    assert np.all(np.abs(c.flip_rate - want) <= 4 * np.sqrt(want * (1 - want) / 400) + 0.01)


def test_value_at_threshold_is_never_stable():
    y, yh, g = _two_groups(rate_b=0.4)
    di = fl.audit(y, yh, sensitive_features=g, metrics=["DI"]).value("DI")
    assert di == 0.8  # min/max selection rate 0.4 / 0.5, exactly at the threshold
    row = audit_size_plan(y, yh, sensitive_features=g, metrics=["DI"]).to_frame().iloc[0]
    assert math.isnan(row.n_required) and math.isnan(row.n_for_vfr) and math.isnan(row.ci_low)
    assert not row.reachable and "never stable" in row.reason


def test_undefined_metric_is_nan_with_reason():
    y, yh, g = _two_groups()  # every label 0: no true positives, the TPR is undefined
    plan = (
        audit_size_plan(y, yh, sensitive_features=g, metrics=["EOpp", "SPD"])
        .to_frame()
        .set_index("metric")
    )
    r = plan.loc["EOpp"]
    assert (
        math.isnan(r.n_required) and math.isnan(r.n_for_cv) and not r.reachable and r.method is None
    )
    assert r.reason.startswith("metric undefined")
    assert math.isfinite(plan.loc["SPD", "n_required"])


def test_near_zero_value_reads_the_sd():
    "Equal selection rates: SPD = 0, the CV is uninformative; N from SD(|SPD|) < 0.05 × 0.1 (half-normal SD)."
    y, yh, g = _two_groups(rate_b=0.5)
    row = (
        audit_size_plan(y, yh, sensitive_features=g, metrics=["SPD"], n_resamples=400)
        .to_frame()
        .iloc[0]
    )
    assert row.value == 0 and "not informative" in row.reason
    sd1 = math.sqrt(0.25 / 0.5 * 2) * math.sqrt(1 - 2 / math.pi)  # SD of |X|, X normal with mean 0
    assert row.n_for_cv == pytest.approx((sd1 / (0.05 * 0.1)) ** 2, rel=0.15)
    assert row.reachable


def test_min_support():
    y, yh, g = _two_groups()
    g = g.copy()
    g[:20] = "c"  # a group of 20 < min_support: excluded, as in audit()
    res = audit_size_plan(y, yh, sensitive_features=g, metrics=["SPD"])
    assert res.excluded == {"c": 20} and "excluded groups" in res.summary()
    one = audit_size_plan(
        y[:20_000], yh[:20_000], sensitive_features=g[:20_000], metrics=["SPD"]
    ).to_frame()
    assert math.isnan(one.n_required[0]) and one.reason[0].startswith(
        "metric undefined"
    )  # one group left
    g2 = np.repeat(["a", "b"], 20_000)
    g2[:40] = "c"  # 40 records: audited, but a smaller audit would drop it
    row = audit_size_plan(y, yh, sensitive_features=g2, metrics=["SPD"]).to_frame().iloc[0]
    assert row.n_for_support == math.ceil(30 * 40_000 / 40) and row.n_required >= row.n_for_support


@pytest.mark.parametrize(
    "kw,arg",
    [
        (dict(target_vfr=0.5), "target_vfr"),
        (dict(target_vfr=0), "target_vfr"),
        (dict(cv_cutoff=0), "cv_cutoff"),
        (dict(n_resamples=1), "n_resamples"),
        (dict(level=1.0), "level"),
        (dict(sizes=[0, 10]), "sizes"),
        (dict(metrics=["nope"]), "metrics"),
        (dict(thresholds={"SPD": -1}), "thresholds['SPD']"),
        (dict(seed=-1), "seed"),
        (dict(min_support=-1), "min_support"),
    ],
)
def test_bad_arguments_are_named(kw, arg):
    y, yh, g = _two_groups(n=200)
    with pytest.raises(FairlibInputError) as e:
        audit_size_plan(y, yh, sensitive_features=g, **kw)
    assert e.value.argument == arg


def test_audit_integration_and_json(compas):
    y, yh, g = compas
    res = fl.audit(y, yh, sensitive_features=g, size_plan=True, n_resamples=300, seed=3)
    plan = audit_size_plan(y, yh, sensitive_features=g, n_resamples=300, seed=3)
    pd.testing.assert_frame_equal(res.required_size(), plan.to_frame())
    assert "records needed for a stable verdict" in str(res) and "you have 6,172" in str(res)
    assert list(res.required_size().view.unique()) == ["group"]
    back = fl.AuditResult.from_json(res.to_json())
    pd.testing.assert_frame_equal(back.required_size(), res.required_size())
    again = SizePlanResult.from_json(plan.to_json())
    pd.testing.assert_frame_equal(again.to_frame(), plan.to_frame())
    pd.testing.assert_frame_equal(again.curve, plan.curve)
    assert (
        fl.AuditResult.from_json(fl.audit(y, yh, sensitive_features=g).to_json()).size_plan is None
    )
    with pytest.raises(FairlibInputError) as e:
        fl.audit(y, yh, sensitive_features=g).required_size()
    assert e.value.argument == "size_plan"
    with pytest.raises(FairlibInputError) as e:
        fl.audit(y, yh, sensitive_features=g, size_plan=True, sample_weight=np.ones(len(y)))
    assert e.value.argument == "sample_weight"
    with pytest.raises(FairlibInputError) as e:
        fl.audit(y, yh, sensitive_features=g, size_plan=True, target_vfr=0.7)
    assert e.value.argument == "target_vfr"


def test_unbounded_interval_survives_json():
    "JSON has no infinity: a defined size whose interval has no upper end comes back as inf, not as NaN."
    y, yh, g = _two_groups(n=400)
    res = audit_size_plan(y, yh, sensitive_features=g, metrics=["SPD"])
    plan = res.plan.copy()
    plan.loc[0, "ci_high"] = np.inf
    res = SizePlanResult(plan, res.curve, res.n_available, res.sensitive_features)
    back = SizePlanResult.from_json(res.to_json())
    assert back.plan.ci_high[0] == np.inf and "no upper bound" in str(back)


def test_text_reads_plainly(adult):
    y, yh, g = adult
    res = audit_size_plan(y, yh, sensitive_features=g)
    lines = {ln.split(": ")[1]: ln for ln in str(res).splitlines()[1:]}
    di = res.to_frame().set_index("metric").loc["DI"]
    assert lines["DI"].startswith(
        "group: DI: its verdict is stable (flip probability at most 10%, 95% upper bound) from "
    )
    assert (
        f"from {di.n_required:,.0f} records (95% interval {di.ci_low:,.0f} to {di.ci_high:,.0f}); you have 48,842"
        in lines["DI"]
    )
    assert "its value is precise (CV < 0.05, a separate criterion) from" in lines["DI"]
    spd = res.to_frame().set_index("metric").loc["SPD"]
    assert spd.n_for_cv > 48_842 and "(more than you have, extrapolated)" in lines["SPD"]
    assert not any("stable" in ln and "not reachable" in ln for ln in lines.values())


def test_constants_are_axis2s():
    from fairlib.vfr import axis2

    assert CV_CUTOFF == axis2.CV_CUTOFF and NEAR_ZERO == axis2.NEAR_ZERO


def test_one_rule_audit_stability_and_plan_agree(compas):
    """Issue 35: the audit's stability and the size plan use one rule on the same resamples at the records you have,
    in every view: a verdict is reachable in the plan if and only if the audit calls it stable, and a record count is
    a whole number printed the same way in the text and the plan."""
    df = load_compas()
    res = fl.audit(
        "two_year_recid",
        "high_risk",
        sensitive_features=["race", "sex"],
        data=df,
        vfr=True,
        size_plan=True,
        n_resamples=200,
        seed=5,
    )
    m = res.to_frame().set_index(["view", "metric"])
    p = res.required_size().set_index(["view", "metric"])
    assert set(m.index) == set(p.index) and len(set(m.index.get_level_values(0))) == 3
    for key, row in p.iterrows():
        stable = m.loc[key, "vfr_stability"] == "Stable"
        assert bool(row.reachable) == stable, (key, m.loc[key, "vfr_stability"], row.n_required)
        if math.isfinite(row.n_required):
            assert float(row.n_required).is_integer()
            assert _fmt_n(row.n_required) in str(res)
    assert (m.vfr_stability != "Stable").any() and (
        m.vfr_stability == "Stable"
    ).any()  # both cases are checked
