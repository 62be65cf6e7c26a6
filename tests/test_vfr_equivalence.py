"""The fast Verdict Flip Rate (count / bin draws) has the same distribution as plain index resampling.

Both paths are run over many seeds on a cohort built so that every metric sits near its threshold
(so verdicts really flip). Agreement is checked with two-sample tests (KS and Anderson-Darling) that
must not reject, and means that must agree within Monte Carlo error. A power check shows the same
tests do reject a plausible bug (the wrong resample size).
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairlib.core import check_rng
from fairlib.counts import AUDIT_METRICS, metric_from_counts
from fairlib.resample import draw_counts, draw_counts_bins, index_resample_values
from fairlib.records import audit_data
from fairlib.reliability import verdict_flip_rate

METRICS = list(AUDIT_METRICS)
N = 800


def _cohort(seed=7, n=4000):
    "Three groups (one small), label-dependent scores, a group-dependent calibration offset."
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"]), n, p=[0.6, 0.33, 0.07])
    base = np.select([g == "a", g == "b"], [0.45, 0.5], 0.4)
    y = rng.binomial(1, base)
    logit = (
        1.3 * (2 * y - 1)
        + rng.normal(0, 1.1, n)
        + np.select([g == "a", g == "b"], [0.0, 0.12], -0.1)
    )
    p = 1 / (1 + np.exp(-logit))
    p = np.clip(p + np.where(g == "c", 0.03, 0.0), 0, 1)
    return y, (p >= 0.5).astype(int), g, p


@pytest.fixture(scope="module")
def data():
    y, yh, g, p = _cohort()
    return audit_data(y, yh, g, y_prob=p, resample_size=N, min_support=30)


def _fast(data, metric, K, seed, N_override=None):
    d = (
        data
        if N_override is None
        else audit_data(
            data.y,
            data.yhat,
            np.asarray(data.groups)[data.ct.codes],
            y_prob=data.prob,
            resample_size=N_override,
            min_support=30,
        )
    )
    rng = check_rng(seed)
    if AUDIT_METRICS[metric].needs_prob:
        c, b = draw_counts_bins(d, K, rng)
    else:
        c, b = draw_counts(d, K, rng), None
    return np.asarray(metric_from_counts(metric, c, b, included=d.included), float)


@pytest.fixture(scope="module")
def samples(data):
    "Metric values from both paths, pooled over 6 seeds x 250 resamples each (1,500 per path and metric)."
    out = {}
    for m in METRICS:
        f = np.concatenate([_fast(data, m, 250, s) for s in range(6)])
        i = np.concatenate([index_resample_values(data, m, 250, 1000 + s) for s in range(6)])
        out[m] = (f, i)
    return out


def test_cohort_is_near_thresholds(samples):
    "The check is only informative if verdicts actually flip: most metrics have 5%..95% pass rates."
    spread = [m for m, (f, i) in samples.items() if 0.05 < AUDIT_METRICS[m].passes(i).mean() < 0.95]
    assert len(spread) >= 4, spread


@pytest.mark.filterwarnings("ignore:p-value capped", "ignore:p-value floored")
@pytest.mark.parametrize("metric", METRICS)
def test_metric_distribution_matches_index_resampling(samples, metric):
    f, i = samples[metric]
    assert not np.isnan(f).any() and not np.isnan(i).any()
    alpha = 0.001  # per test; 2 tests x 7 metrics
    assert stats.ks_2samp(f, i).pvalue > alpha
    assert stats.anderson_ksamp([f, i], variant="midrank").pvalue > alpha  # p is floored at 0.001
    se = np.sqrt(f.var(ddof=1) / f.size + i.var(ddof=1) / i.size)
    assert abs(f.mean() - i.mean()) < 4 * se
    assert 0.85 < f.std() / i.std() < 1.15  # same spread (1,500 draws each: SE of the ratio ~ 2%)


@pytest.mark.parametrize("metric", ["EOD", "PP", "Cal"])
def test_vfr_distribution_matches_over_seeds(data, metric):
    "VFR per seed (K = 100) from both paths: same distribution across 24 seeds, same mean pass rate."
    K, S = 100, 24
    f = [_fast(data, metric, K, s) for s in range(S)]
    i = [index_resample_values(data, metric, K, 5000 + s) for s in range(S)]
    spec = AUDIT_METRICS[metric]
    pf = np.array([spec.passes(v).sum() for v in f])
    pi = np.array([spec.passes(v).sum() for v in i])
    vf, vi = np.minimum(pf, K - pf) / K, np.minimum(pi, K - pi) / K
    assert 0 < vi.mean() < 0.5  # the cell really is unstable
    assert stats.mannwhitneyu(vf, vi).pvalue > 0.001
    qf, qi = pf.sum() / (K * S), pi.sum() / (K * S)
    se = np.sqrt(qf * (1 - qf) / (K * S) + qi * (1 - qi) / (K * S))
    assert abs(qf - qi) < 4 * se


def test_power_wrong_resample_size_is_detected(data, samples):
    "The same tests reject a fast path run at the wrong N (2N, spread / sqrt 2): they can fail."
    _, i = samples["SPD"]
    wrong = np.concatenate([_fast(data, "SPD", 250, s, N_override=2 * N) for s in range(6)])
    assert stats.ks_2samp(wrong, i).pvalue < 1e-4
    assert not 0.85 < wrong.std() / i.std() < 1.15


def test_count_draws_are_binomial(data):
    "Per-stratum resampled predicted positives follow Binomial(m_gy, c_gy1 / n_gy) (chi-square vs scipy)."
    c = draw_counts(data, 20_000, 3)
    g, y = 0, 1
    m = data.m[g, y]
    p = data.ct.counts[g, y, 1] / data.n_gy[g, y]
    obs = np.bincount(c[:, g, y, 1].astype(int), minlength=m + 1)
    exp = stats.binom.pmf(np.arange(m + 1), m, p) * c.shape[0]
    keep = exp > 5
    o, e = obs[keep], exp[keep]
    e = e * o.sum() / e.sum()
    assert stats.chisquare(o, e).pvalue > 0.001
    assert (c.sum(-1) == data.m).all()


def test_bin_draws_match_index_bins_in_mean(data):
    "Mean resampled calibration bins (count, sum y, sum p) equal their exact expectation under index resampling."
    K = 3000
    _, bins = draw_counts_bins(data, K, 11)
    y, p, codes = data.y, data.prob, data.ct.codes
    b = np.minimum((p * 10).astype(int), 9)
    exp = np.zeros(bins.shape[1:])
    for gi in range(len(data.groups)):
        for yy in (0, 1):
            sel = (codes == gi) & (y == yy)
            for k in range(10):
                inb = sel & (b == k)
                exp[gi, k] += (
                    data.m[gi, yy]
                    * np.array([inb.sum(), (inb * y).sum(), (p * inb).sum()])
                    / sel.sum()
                )
    sd = bins.std(0) / np.sqrt(K)
    z = np.abs(bins.mean(0) - exp) / np.where(sd > 0, sd, 1)
    assert z.max() < 5, z.max()


def test_fast_is_bit_identical_for_a_seed(data):
    for m in ("DI", "Cal"):
        a = verdict_flip_rate(
            data.y,
            data.yhat,
            sensitive_features=np.asarray(data.groups)[data.ct.codes],
            metric=m,
            y_prob=data.prob,
            n_resamples=50,
            resample_size=N,
            seed=123,
        )
        b = verdict_flip_rate(
            data.y,
            data.yhat,
            sensitive_features=np.asarray(data.groups)[data.ct.codes],
            metric=m,
            y_prob=data.prob,
            n_resamples=50,
            resample_size=N,
            seed=123,
        )
        assert np.array_equal(a.metric_values, b.metric_values) and a == b


def test_bin_draws_are_internally_consistent(data):
    "Every resampled bin table agrees with its count table, and each bin's score sum lies inside the bin."
    counts, bins = draw_counts_bins(data, 400, 21)
    n_bins = bins.shape[-2]
    assert (counts.sum((-1, -2)) == data.m.sum(1)).all()  # group sizes are fixed
    assert (counts.sum(-1) == data.m).all()  # stratum sizes are fixed
    assert np.array_equal(
        bins[..., 0].sum(-1), counts.sum((-1, -2))
    )  # bin counts add up to the group
    assert np.array_equal(bins[..., 1].sum(-1), counts[..., 1, :].sum(-1))  # sum of y = positives
    lo = np.arange(n_bins) / n_bins
    c, s = bins[..., 0], bins[..., 2]
    assert (s >= lo * c - 1e-9).all() and (s <= (lo + 1 / n_bins) * c + 1e-9).all()
    # predicted positives by bin: with y_pred = 1[p >= 0.5], all of them sit in bins >= 5
    assert np.array_equal(counts[..., 1].sum(-1), c[..., n_bins // 2 :].sum(-1))


def test_within_bin_score_sums_are_exact_binomial_mixtures():
    """Stage 2 is exact: in a bin holding scores 0.21 and 0.29 half-and-half, the resampled score sum of m picks is
    m*0.21 + 0.08*Binomial(m, 1/2) — a bin-count-only shortcut (m * 0.25) would fail this."""
    n = 2000
    g = np.repeat(["a", "b"], n // 2)
    y = np.zeros(n, int)
    p = np.where(np.arange(n) % 2 == 0, 0.21, 0.29)
    d = audit_data(y, np.zeros(n, int), g, y_prob=p, resample_size=200, min_support=1)
    _, bins = draw_counts_bins(d, 20_000, 5)
    m = d.m[0, 0]  # all of group a's draws land in bin 2
    assert (bins[:, 0, 2, 0] == m).all()
    k = np.rint((bins[:, 0, 2, 2] - m * 0.21) / 0.08).astype(int)
    assert np.allclose(bins[:, 0, 2, 2], m * 0.21 + 0.08 * k)
    obs = np.bincount(k, minlength=m + 1)
    exp = stats.binom.pmf(np.arange(m + 1), m, 0.5) * k.size
    keep = exp > 5
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 0.001


# ---- a panel's models share their audit records: the shared preparation is reused only when it is safe ----

PANEL_ATTRS = ["race", "sex", "age"]


def _panel_model(seed, n=3000, rec_seed=0):
    """One model's frame on a fixed set of records (labels and attributes from rec_seed; predictions and scores from
    seed)."""
    rr = np.random.default_rng(rec_seed)
    race = rr.choice(np.array(["w", "b", "a", "o", "n"]), n, p=[0.6, 0.2, 0.12, 0.06, 0.02])
    sex = rr.choice(np.array(["f", "m"]), n)
    age = rr.choice(np.array(["young", "mid", "old"]), n, p=[0.3, 0.3, 0.4])
    y = rr.binomial(1, 0.45, n)
    r = np.random.default_rng(100 + seed)
    p = 1 / (
        1 + np.exp(-((1.2 + 0.2 * seed) * (2 * y - 1) + r.normal(0, 1.2, n) + 0.3 * (race == "b")))
    )
    return pd.DataFrame(
        dict(
            y_true=y,
            y_prob=p,
            y_pred=(p >= 0.5).astype(np.int8),
            race=pd.Categorical(race, categories=["w", "b", "a", "o", "n", "unused"]),
            sex=pd.Categorical(sex),
            age=pd.Categorical(age, categories=["young", "mid", "old"]),
        )
    )


def _variants():
    "Models 0-1 on the same records, then one model each whose records differ in one way from model 0's."
    base = [_panel_model(0), _panel_model(1)]
    f = _panel_model(2)
    y_flip = f.assign(
        y_true=np.where(np.arange(len(f)) == 17, 1 - f.y_true, f.y_true)
    )  # one label differs
    race = f.race.copy()
    race.iloc[5] = "n" if race.iloc[5] != "n" else "w"
    attr = f.assign(race=race)  # one attribute value differs
    fewer = _panel_model(4).iloc[:2500]  # other records (a subset)
    same_again = _panel_model(5)  # the same records again
    order = f.assign(
        age=f.age.cat.reorder_categories(["old", "mid", "young"])
    )  # same values, other codes
    renamed = f.assign(
        sex=f.sex.cat.rename_categories({"f": "F", "m": "M"})
    )  # same codes, other groups
    return base + [y_flip, attr, fewer, same_again, order, renamed]


def _long(frames, start=0):
    "The long predictions frame of the models m{start}, m{start + 1}, ... (a categorical model column, one run each)."
    return pd.concat(
        [f.assign(model=f"m{start + i}") for i, f in enumerate(frames)], ignore_index=True
    ).astype({"model": "category"})


def _each_alone(fn, frames, **kw):
    "The grid of each model run on its own (a one-model panel prepares its own records), concatenated."
    out = [fn({f"m{i}": f}, **kw) for i, f in enumerate(frames)]
    if isinstance(out[0], tuple):
        return tuple(pd.concat([o[j] for o in out], ignore_index=True) for j in range(len(out[0])))
    return pd.concat(out, ignore_index=True)


def _assert_same(a, b):
    for x, y in zip(a, b) if isinstance(a, tuple) else [(a, b)]:
        pd.testing.assert_frame_equal(
            x.reset_index(drop=True), y.reset_index(drop=True), check_exact=True
        )


def test_panel_records_reused_only_for_the_same_records():
    from fairlib.records import _panel_records, _reuses

    frames = _variants()
    rec = _panel_records(frames[0], PANEL_ATTRS, "audit_size_grid")
    got = [
        _reuses(rec, f.y_true.to_numpy(), {a: f[a] for a in PANEL_ATTRS}, PANEL_ATTRS)
        for f in frames
    ]
    assert got == [True, True, False, False, False, True, False, False]
    # not categorical (no codes to compare), float labels (other dtype), no records at all: never reused
    f = frames[1]
    assert not _reuses(
        rec,
        f.y_true.to_numpy(),
        {**{a: f[a] for a in PANEL_ATTRS}, "sex": f.sex.astype(str)},
        ["race", "age"],
    )
    assert not _reuses(
        rec, f.y_true.to_numpy().astype(float), {a: f[a] for a in PANEL_ATTRS}, PANEL_ATTRS
    )
    assert not _reuses(None, f.y_true.to_numpy(), {a: f[a] for a in PANEL_ATTRS}, PANEL_ATTRS)
    # a first model with invalid records gives no shared records (each model then raises as before)
    bad = frames[0].assign(race=frames[0].race.where(np.arange(3000) != 3))  # one missing value
    assert _panel_records(bad, PANEL_ATTRS, "audit_size_grid") is None


def test_shared_model_audit_datas_equal_the_unshared_ones():
    "Every field of every attribute's audit data is the same with and without the panel's records."
    from fairlib.records import _model_audit_datas, _panel_records

    frames = _variants()
    rec = _panel_records(frames[0], PANEL_ATTRS, "vfr_grid")
    for f in frames:
        for prob, N in ((None, None), (f.y_prob.to_numpy(), 1000)):
            sh = _model_audit_datas(
                f, PANEL_ATTRS, prob, 30, 10, "vfr_grid", resample_size=N, records=rec
            )
            own = _model_audit_datas(f, PANEL_ATTRS, prob, 30, 10, "vfr_grid", resample_size=N)
            for a in PANEL_ATTRS:
                d, w = sh[a], own[a]
                assert (
                    d.groups.equals(w.groups)
                    and d.groups.name == w.groups.name
                    and d.groups.dtype == w.groups.dtype
                )
                for x, z in (
                    (d.ct.codes, w.ct.codes),
                    (d.ct.counts, w.ct.counts),
                    (d.ct.support, w.ct.support),
                    (d.m, w.m),
                    (d.y, w.y),
                    (d.yhat, w.yhat),
                    (d.included, w.included),
                ):
                    assert np.array_equal(x, z) and x.dtype == z.dtype
                assert (d.ct.bins is None) == (prob is None) and (
                    prob is None or np.array_equal(d.ct.bins, w.ct.bins)
                )
                assert (d.resample_size, d.excluded, d.group_sizes) == (
                    w.resample_size,
                    w.excluded,
                    w.group_sizes,
                )
    shared = _model_audit_datas(frames[1], PANEL_ATTRS, None, 30, 10, "vfr_grid", records=rec)[
        "race"
    ]
    assert (
        shared.y is rec.y and not shared.y.flags.writeable and not shared.ct.codes.flags.writeable
    )  # shared, read-only


@pytest.mark.parametrize("layout", ["dict", "long"])
@pytest.mark.parametrize("which", ["axis2", "axis1"])
def test_panel_grid_equals_each_model_alone(which, layout):
    """A panel mixing models on the same records with models whose labels, attribute codes or records differ gives,
    model by model, exactly the grid of that model audited alone. A long frame keeps the attributes categorical only
    when every model has the same categories (so there, the last two models are left out)."""
    from fairlib.vfr.axis2 import audit_size_grid
    from fairlib.vfr.axis1 import vfr_grid

    frames = _variants()
    if layout == "long":
        frames = frames[:-2]
    panel = {f"m{i}": f for i, f in enumerate(frames)} if layout == "dict" else _long(frames)
    if layout == "long":
        assert all(isinstance(panel[a].dtype, pd.CategoricalDtype) for a in PANEL_ATTRS)
    if which == "axis2":
        fn, kw = (
            audit_size_grid,
            dict(sizes=[300, 1000], n_resamples=6, seed=3, n_jobs=1, return_curves=True),
        )
    else:
        fn, kw = vfr_grid, dict(n_resamples=20, resample_size=800, seed=3, n_jobs=1)
    _assert_same(
        fn(panel, attributes=PANEL_ATTRS, **kw),
        _each_alone(fn, frames, attributes=PANEL_ATTRS, **kw),
    )


def test_panel_grid_equals_the_unshared_path(monkeypatch):
    """On a panel of models on the same records, the shared preparation gives the grids of the unshared path, bit for
    bit."""
    import fairlib.vfr as vfr

    frames = [_panel_model(s) for s in range(4)]
    kw2 = dict(attributes=PANEL_ATTRS, sizes=[300, 1000], n_resamples=6, seed=1, return_curves=True)
    kw1 = dict(attributes=PANEL_ATTRS, n_resamples=20, resample_size=800, seed=1)
    shared = [vfr.audit_size_grid(_long(frames), n_jobs=nj, **kw2) for nj in (1, 2)] + [
        vfr.vfr_grid(_long(frames), n_jobs=1, **kw1)
    ]
    import fairlib.records as records

    monkeypatch.setattr(records, "_panel_records", lambda *a, **k: None)
    unshared = [vfr.audit_size_grid(_long(frames), n_jobs=1, **kw2)] * 2 + [
        vfr.vfr_grid(_long(frames), n_jobs=1, **kw1)
    ]
    for a, b in zip(shared, unshared):
        _assert_same(a, b)


def test_power_reusing_other_records_is_detected(monkeypatch):
    "The equality above can fail: reusing model 0's records for a model whose one label differs changes its cells."
    import fairlib.vfr as vfr

    frames = _variants()[:3]  # model 2's label 17 differs
    kw = dict(attributes=PANEL_ATTRS, sizes=[300, 1000], n_resamples=6, seed=3, n_jobs=1)
    want = _each_alone(vfr.audit_size_grid, frames, **kw)
    import fairlib.records as records

    monkeypatch.setattr(
        records, "_reuses", lambda rec, *a: rec is not None
    )  # reuse without checking
    got = vfr.audit_size_grid(_long(frames), **kw)
    with pytest.raises(AssertionError):
        _assert_same(got, want)
    _assert_same(got[got.model != "m2"], want[want.model != "m2"])
