"""fairlib.vfr Axes 2 and 3, Fleiss' kappa, tiers.

Oracles: plain index subsampling without replacement (Axis 2's fast path must have the same
distribution: KS / Anderson-Darling over seeds, means within Monte Carlo error, and a power check),
scipy's hypergeometric law, statsmodels' fleiss_kappa, fairlib.metrics.audit_table recomputed on each
hospital fold by hand, and brute-force tier counting.
"""

import itertools
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from fairlib.core import check_rng
from fairlib.counts import AUDIT_METRICS, metric_from_counts
from fairlib.tables import audit_table
from fairlib.resample import draw_subsample_counts, draw_subsample_bins, index_subsample_values
from fairlib.records import audit_data
from fairlib.vfr.axis2 import audit_size_sensitivity, audit_size_grid, summarise_audit_sizes
from fairlib.vfr.axis3 import (
    fleiss_kappa,
    landis_koch,
    cross_hospital_agreement,
    cross_hospital_grid,
    hospital_folds,
    POOLED_HOSPITAL,
)
from fairlib.vfr.tiers import (
    reliability_tier,
    reliability_table,
    tier_sensitivity,
    tier_counts,
    RELIABILITY_TIERS,
    QUINTUPLE_COLUMNS,
)
from fairlib.vfr.axis1 import vfr_grid


def _cohort(seed=7, n=6000):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"]), n, p=[0.6, 0.33, 0.07])
    y = rng.binomial(1, np.select([g == "a", g == "b"], [0.45, 0.5], 0.4))
    logit = (
        1.3 * (2 * y - 1)
        + rng.normal(0, 1.1, n)
        + np.select([g == "a", g == "b"], [0.0, 0.12], -0.1)
    )
    p = np.clip(1 / (1 + np.exp(-logit)) + np.where(g == "c", 0.03, 0.0), 0, 1)
    return y, (p >= 0.5).astype(int), g, p


@pytest.fixture(scope="module")
def data():
    y, yh, g, p = _cohort()
    return audit_data(y, yh, g, y_prob=p, min_support=30)


# --- Axis 2: fast path == index subsampling without replacement ---------------------------------


def test_hypergeometric_counts_have_the_exact_marginal(data):
    "Each cell count of a size-N subsample is Hypergeometric(n, cell size, N) (chi-square vs scipy)."
    N, R = 1500, 20_000
    c = draw_subsample_counts(data, N, R, 3).reshape(R, -1)
    flat = data.ct.counts.reshape(-1).astype(int)
    n = flat.sum()
    assert (c.sum(1) == N).all() and (c <= flat).all()
    j = int(np.argmax(flat))
    obs = np.bincount(c[:, j].astype(int), minlength=N + 1)
    exp = stats.hypergeom.pmf(np.arange(N + 1), n, flat[j], N) * R
    keep = exp > 5
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 0.001


@pytest.fixture(scope="module")
def axis2_samples(data):
    "Per metric: subsample values at N = 800 from the fast path and from index subsampling, 1,200 each."
    N, out = 800, {}
    for m in AUDIT_METRICS:
        if AUDIT_METRICS[m].needs_prob:
            f = np.concatenate(
                [
                    np.asarray(
                        metric_from_counts(
                            m,
                            *[x[0] for x in draw_subsample_bins(data, [N, data.n], 200, s)],
                            included=data.included,
                        )
                    )
                    for s in range(6)
                ]
            )
        else:
            f = np.concatenate(
                [
                    np.asarray(
                        metric_from_counts(
                            m, draw_subsample_counts(data, N, 200, s), included=data.included
                        )
                    )
                    for s in range(6)
                ]
            )
        i = np.concatenate([index_subsample_values(data, m, N, 200, 1000 + s) for s in range(6)])
        out[m] = (f, i)
    return out


@pytest.mark.filterwarnings("ignore:p-value capped", "ignore:p-value floored")
@pytest.mark.parametrize("metric", list(AUDIT_METRICS))
def test_axis2_fast_path_matches_index_subsampling(axis2_samples, metric):
    f, i = axis2_samples[metric]
    assert not np.isnan(f).any() and not np.isnan(i).any()
    assert stats.ks_2samp(f, i).pvalue > 0.001
    assert stats.anderson_ksamp([f, i], variant="midrank").pvalue > 0.001
    se = np.sqrt(f.var(ddof=1) / f.size + i.var(ddof=1) / i.size)
    assert abs(f.mean() - i.mean()) < 4 * se
    assert 0.85 < f.std() / i.std() < 1.15


def test_axis2_power_with_replacement_is_detected(data, axis2_samples):
    "A bug that draws WITH replacement (multinomial) at N close to n has a visibly larger spread: the test can fail."
    N = 5000  # of 6,000: the finite-population correction matters
    rng = check_rng(5)
    flat = data.ct.counts.reshape(-1)
    wrong = rng.multinomial(N, flat / flat.sum(), size=1500).reshape(1500, *data.ct.counts.shape)
    w = np.asarray(metric_from_counts("SPD", wrong, included=data.included))
    right = np.asarray(
        metric_from_counts("SPD", draw_subsample_counts(data, N, 1500, 6), included=data.included)
    )
    assert stats.ks_2samp(w, right).pvalue < 1e-4 and w.std() > 1.5 * right.std()


def test_calibration_prefixes_are_simple_random_samples(data):
    "Nested prefixes: each size's bins equal a direct recount of that many records, and the full size is the cohort."
    c, b = draw_subsample_bins(data, [500, 2000, data.n], 4, 9)
    assert np.allclose(b[-1], np.broadcast_to(data.ct.bins, b[-1].shape)) and np.array_equal(
        c[-1][0], data.ct.counts
    )
    assert (c[0].sum((1, 2, 3)) == 500).all() and (c[1].sum((1, 2, 3)) == 2000).all()
    assert (c[1] >= c[0]).all()  # nested: the 2,000 contain the 500


def test_full_point_is_degenerate_and_never_qualifies(data):
    r = audit_size_sensitivity(
        data.y,
        data.yhat,
        sensitive_features=np.asarray(data.groups)[data.ct.codes],
        metric="Theil",
        sizes=[1000, 3000],
        seed=0,
    )
    full = r.curve.iloc[-1]
    assert full["size"] == data.n and full.degenerate and full.sd == 0 and not full.qualifies
    assert r.curve["size"].tolist() == [1000, 3000, data.n]
    # N* is the first qualifying size, by brute force over the curve (SD < width for a near-zero cell, else CV)
    small = r.curve.sd < r.sd_width if r.near_zero_mean else r.curve.cv < 0.05
    q = r.curve[(~r.curve.degenerate) & small & (r.curve.n_undefined <= 1)]
    assert (r.n_star == q["size"].iloc[0]) if len(q) else np.isnan(r.n_star)


def test_n_star_not_reached_is_reported_and_exceeds_field():
    vals = np.array(
        [[1.0, 1.2, 0.8], [1.0, 1.1, 0.9], [1.0, 1.0, 1.0]]
    )  # CV 0.2, 0.1, then degenerate 0
    r = summarise_audit_sizes(vals, [1000, 5000, 9000], "DI", value=1.0)
    assert np.isnan(r.n_star) and not r.reached and r.exceeds_field
    assert "not reached below the full partition (9,000 records)" in r.reason
    r2 = summarise_audit_sizes(
        np.array([[1.0, 1.2, 0.8], [1.0, 1.01, 0.99], [1.0] * 3]),
        [1000, 60_000, 90_000],
        "DI",
        value=1.0,
    )
    assert r2.n_star == 60_000 and r2.exceeds_field  # reached, but above N_field = 50,000


def test_near_zero_mean_is_flagged_with_sd_beside_cv():
    vals = np.array([[0.001, -0.002, 0.003], [0.0, 0.001, -0.001], [0.0005] * 3])
    r = summarise_audit_sizes(vals, [1000, 5000, 9000], "SPD", value=0.0005)
    assert r.near_zero_mean and "read SD" in r.reason and r.curve.sd.notna().all()


def test_axis2_grid_is_order_free_and_backend_free():
    y, yh, g, p = _cohort(n=3000)
    pan = pd.DataFrame(
        dict(model="m", y_true=y, y_pred=yh, y_prob=p, a=g, b=np.where(y == 1, "u", "v"))
    )
    full = audit_size_grid(pan, attributes=["a", "b"], sizes=[500, 1500], seed=4).set_index(
        ["metric", "attribute"]
    )
    sub = audit_size_grid(
        pan,
        attributes=["b", "a"],
        metrics=["Cal", "DI", "SPD", "EOpp", "EOD", "PP", "Theil"],
        sizes=[500, 1500],
        seed=4,
        n_jobs=2,
    ).set_index(["metric", "attribute"])
    pd.testing.assert_frame_equal(full.sort_index(), sub.loc[full.index].sort_index())


@pytest.mark.parametrize("stack_bytes", [None, 1])
def test_axis2_panel_metrics_stacked_across_models_equal_each_model_alone(monkeypatch, stack_bytes):
    """The count metrics of a panel are evaluated stacked across models (per attribute and audited-group layout):
    every cell equals that model audited on its own, bit for bit, also when one model's groups differ (a group
    below min_support, a different category set) and when the stacks are split to one model each."""
    import fairlib.vfr.axis2 as V

    if stack_bytes is not None:
        monkeypatch.setattr(V, "_STACK_MAX_BYTES", stack_bytes)
    rng = np.random.default_rng(11)
    y, yh, g, p = _cohort(n=3000)
    frames = {}
    for k in range(4):
        flip = rng.random(len(y)) < 0.1 * (k + 1)
        a = g.copy()
        if k == 2:
            a = np.where(a == a[0], "rare", a)
            a[rng.choice(len(a), 3000 - 20, replace=False)] = g[0]  # a 20-record group
        frames[f"m{k}"] = pd.DataFrame(
            dict(
                y_true=y,
                y_pred=np.where(flip, 1 - yh, yh),
                y_prob=p,
                a=a,
                b=pd.Categorical(np.where(p > 0.5, "u", "v")),
            )
        )
    pan = pd.concat([f.assign(model=m) for m, f in frames.items()], ignore_index=True)
    grid, curves = audit_size_grid(
        pan, attributes=["a", "b"], sizes=[500, 1500], seed=2, return_curves=True
    )
    for m in frames:
        one, oc = audit_size_grid(
            {m: frames[m]}, attributes=["a", "b"], sizes=[500, 1500], seed=2, return_curves=True
        )
        pd.testing.assert_frame_equal(
            grid[grid.model == m].reset_index(drop=True), one, check_exact=True
        )
        pd.testing.assert_frame_equal(
            curves[curves.model == m].reset_index(drop=True), oc, check_exact=True
        )
    assert grid[grid.model == "m2"].value.ne(grid[grid.model == "m0"].value).any()


def test_joblib_parallel_config_backend_gives_identical_results():
    from joblib import parallel_config

    y, yh, g, p = _cohort(n=2000)
    pan = pd.DataFrame(
        dict(model=np.repeat(["m1", "m2"], 1000), y_true=y, y_pred=yh, y_prob=p, a=g)
    )
    ref = vfr_grid(pan, attributes=["a"], n_resamples=50, seed=1, n_jobs=1)
    with parallel_config(backend="loky", n_jobs=2):
        par = vfr_grid(pan, attributes=["a"], n_resamples=50, seed=1)
    pd.testing.assert_frame_equal(ref, par)


# --- Fleiss' kappa --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    items, cats, raters = rng.integers(2, 12), rng.integers(2, 5), rng.integers(2, 25)
    table = np.stack([rng.multinomial(raters, rng.dirichlet(np.ones(cats))) for _ in range(items)])
    ours = fleiss_kappa(table)
    ref = sm_fleiss_kappa(table, method="fleiss")
    if ours.degenerate:  # statsmodels divides 0 by 0; fairlib says so
        assert (
            np.isnan(ours.kappa) and ours.p_expected == pytest.approx(1.0) and "0/0" in ours.reason
        )
    else:
        assert abs(ours.kappa - ref) < 1e-12


def test_fleiss_kappa_worked_examples():
    "fleiss_kappa calls statsmodels for equal raters, so the oracles are worked by hand and Fleiss (1971)."
    # 3 items, 2 raters: P_i = 1, 1, 0 so P-bar = 2/3; p = (1/2, 1/2) so P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    r = fleiss_kappa([[2, 0], [0, 2], [1, 1]])
    assert r.kappa == pytest.approx(1 / 3, abs=1e-15) and r.p_observed == pytest.approx(2 / 3)
    assert r.p_expected == pytest.approx(0.5) and r.band == "fair"
    # Fleiss (1971), 10 subjects rated by 14 raters into 5 categories: P-bar = 0.378, P_e = 0.213, kappa = 0.210
    fleiss = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    r = fleiss_kappa(fleiss)
    assert (
        round(r.kappa, 3) == 0.210
        and round(r.p_observed, 3) == 0.378
        and round(r.p_expected, 3) == 0.213
    )
    assert r.n_items == 10 and r.n_ratings == 140


def test_fleiss_kappa_unequal_raters_where_statsmodels_refuses():
    "statsmodels asserts equal raters per item; fairlib applies the item-wise formula instead of failing."
    table = np.array([[3, 0], [0, 2], [1, 1], [2, 2]])
    with pytest.raises(AssertionError):
        sm_fleiss_kappa(table, method="fleiss")
    # by hand: P_i = 1, 1, 0, 1/3; P-bar = 7/12; p = (6/11, 5/11); P_e = 61/121
    pbar, pe = 7 / 12, 61 / 121
    assert fleiss_kappa(table).kappa == pytest.approx((pbar - pe) / (1 - pe), abs=1e-14)
    # items with fewer than two ratings are left out, so an equal-raters table after dropping them goes to statsmodels
    padded = np.vstack([table[:1], [[1, 0]], [[0, 0]], [[0, 3]]])
    r = fleiss_kappa(padded)
    assert r.n_items == 2 and r.kappa == pytest.approx(
        sm_fleiss_kappa(np.array([[3, 0], [0, 3]]), method="fleiss")
    )


def test_fleiss_kappa_unequal_raters_is_the_itemwise_formula():
    table = np.array([[5, 1], [2, 4], [3, 0], [0, 6]])
    n_i = table.sum(1)
    P_i = (table * (table - 1)).sum(1) / (n_i * (n_i - 1))
    p_j = table.sum(0) / table.sum()
    Pe = (p_j**2).sum()
    assert fleiss_kappa(table).kappa == pytest.approx((P_i.mean() - Pe) / (1 - Pe), abs=1e-15)
    assert fleiss_kappa(table[[2, 0, 3, 1]]).kappa == pytest.approx(
        fleiss_kappa(table).kappa, abs=1e-15
    )  # item order free


def test_fleiss_kappa_degenerate_and_bands():
    r = fleiss_kappa([[20, 0]] * 4, categories=["Pass", "Fail"])
    assert (
        np.isnan(r.kappa)
        and r.degenerate
        and "every rating is Pass" in r.reason
        and r.band == "undefined"
    )
    assert fleiss_kappa([[20, 0], [0, 20]]).kappa == pytest.approx(1.0)
    assert [landis_koch(k) for k in (-0.035, 0.003, 0.117, 0.315, 0.465, 0.587, 0.75, 0.95)] == [
        "poor",
        "slight",
        "slight",
        "fair",
        "moderate",
        "moderate",
        "substantial",
        "almost perfect",
    ]


# --- Axis 3 ---------------------------------------------------------------------------------------


def _hospital_frame(n=8000, seed=3, n_h=80):
    rng = np.random.default_rng(seed)
    h = rng.integers(0, n_h, n)
    h[rng.random(n) < 0.03] = POOLED_HOSPITAL
    race = rng.choice(["W", "B", "O", "A"], n, p=[0.6, 0.25, 0.13, 0.02])
    sex = rng.choice(["F", "M"], n)
    y = rng.binomial(1, 0.45, n)
    p = 1 / (
        1
        + np.exp(-(1.4 * (2 * y - 1) + rng.normal(0, 1, n) + 0.15 * (sex == "F") + 0.02 * (h % 7)))
    )
    return pd.DataFrame(
        dict(y_true=y, y_prob=p, y_pred=(p >= 0.5).astype(int), race=race, sex=sex, THCIC_ID=h)
    )


def test_hospital_folds_keep_hospitals_whole_and_pooled_out():
    f = _hospital_frame()
    fold, n_pooled, n_h = hospital_folds(f.THCIC_ID, n_folds=20)
    assert (
        n_pooled == int((f.THCIC_ID == POOLED_HOSPITAL).sum())
        and (fold[f.THCIC_ID == POOLED_HOSPITAL] == -1).all()
    )
    per_h = pd.Series(fold).groupby(f.THCIC_ID.to_numpy()).nunique()
    assert (per_h == 1).all() and set(fold[fold >= 0]) == set(range(20)) and n_h == 80


def test_axis3_fold_verdicts_match_audit_table_per_fold():
    f = _hospital_frame()
    r = cross_hospital_agreement(f, attributes=["race", "sex"], n_folds=10, min_support=30)
    fold, _, _ = hospital_folds(f.THCIC_ID, n_folds=10)
    for k in (0, 4, 9):
        sub = f[fold == k]
        for a in ("race", "sex"):
            ref = audit_table(
                sub.y_true, sub.y_pred, sensitive_features=sub[a], y_prob=sub.y_prob, min_support=0
            ).set_index("metric")
            got = r.folds[(r.folds.fold == k) & (r.folds.attribute == a)].set_index("metric")
            small = (sub[a].value_counts().reindex(f[a].unique(), fill_value=0) < 30).any()
            if small:
                assert (got.verdict == "No verdict").all() and got.reason.str.contains(
                    "fewer than 30"
                ).all()
            else:
                np.testing.assert_allclose(got.value, ref.value.loc[got.index], rtol=1e-12)
                assert (got.verdict == ref.verdict.loc[got.index]).all()
    # race A (2%) falls below 30 records in some of the ~720-record folds: those items give no verdict, and are counted
    assert (r.folds[(r.folds.attribute == "race")].verdict == "No verdict").any()
    assert (r.kappa.n_no_verdict > 0).all() and r.n_pooled_removed == int(
        (f.THCIC_ID == POOLED_HOSPITAL).sum()
    )


def test_axis3_kappa_is_fleiss_over_the_verdict_matrix():
    f = _hospital_frame(n=20000, n_h=120)
    r = cross_hospital_agreement(f, attributes=["race", "sex"], n_folds=20, min_support=5)
    for m in ("DI", "EOD"):
        V = r.verdict_matrix(m)
        table = np.stack([[(V[a] == 1).sum(), (V[a] == 0).sum()] for a in V.columns])
        k = r.kappa.set_index("metric").loc[m]
        ref = fleiss_kappa(table)
        assert (np.isnan(k.kappa) and ref.degenerate) or k.kappa == pytest.approx(
            ref.kappa, abs=1e-15
        )
    theil = r.kappa.set_index("metric").loc[
        "Theil"
    ]  # Theil passes in every fold: degenerate, not 1.0
    assert theil.degenerate and np.isnan(theil.kappa) and "degenerate" in theil.reason


def test_cross_hospital_grid_runs_every_model():
    f = _hospital_frame(n=6000)
    pan = pd.concat(
        [f.assign(model="m1"), f.assign(model="m2", y_pred=1 - f.y_pred)], ignore_index=True
    )
    kappa, folds = cross_hospital_grid(pan, attributes=["race", "sex"], n_folds=10)
    assert set(kappa.model) == {"m1", "m2"} and len(kappa) == 14 and len(folds) == 2 * 10 * 2 * 7


# --- tiers ----------------------------------------------------------------------------------------


def test_tiers_brute_force():
    vfrs, stars, kappas = [0.05, 0.2], [1000.0, 60_000.0, np.nan], [0.1, 0.5]
    combos = list(itertools.product(vfrs, stars, kappas))
    t = reliability_tier(*map(list, zip(*combos)))
    for (v, s, k), tier in zip(combos, t.tier):
        n = int(v > 0.10) + int(not (s <= 50_000)) + int(k < 0.40)
        assert tier == RELIABILITY_TIERS[n]


def test_tier_sensitivity_is_monotone_and_quintuple_columns():
    rng = np.random.default_rng(0)
    n = 56
    a1 = pd.DataFrame(
        dict(
            model="m",
            metric=np.tile(list(AUDIT_METRICS), 8),
            attribute=np.repeat([f"a{i}" for i in range(8)], 7),
            vfr=rng.uniform(0, 0.5, n),
            dominant_verdict="Pass",
        )
    )
    a2 = a1[["model", "metric", "attribute"]].assign(n_star=rng.choice([1000, 100_000, np.nan], n))
    a3 = pd.DataFrame(dict(model="m", metric=list(AUDIT_METRICS), kappa=rng.uniform(-0.2, 1, 7)))
    t = reliability_table(a1, a2, a3)
    assert (
        tuple(t.columns[:8]) == QUINTUPLE_COLUMNS and len(t) == n and int(tier_counts(t).sum()) == n
    )
    s = tier_sensitivity(t, taus=(0.05, 0.1, 0.2, 0.3))
    stab = s["Practical-Stability"].to_numpy()
    assert (np.diff(stab) >= 0).all() and (
        s[list(RELIABILITY_TIERS) + ["Undefined"]].sum(1) == n
    ).all()


# --- Axis 2 calibration: the joint path (one bincount per repetition for all attributes) -------------------


def _shared_datas(n=3000, seed=11):
    y, yh, g, p = _cohort(seed=seed, n=n)
    rng = np.random.default_rng(seed + 1)
    cols = [
        g,
        rng.choice(np.array(["u", "v"]), n),
        rng.choice(np.array(["p", "q", "r", "s"]), n, p=[0.4, 0.3, 0.2, 0.1]),
    ]
    return [audit_data(y, yh, c, y_prob=p, min_support=30) for c in cols]


def test_joint_calibration_subsamples_are_direct_recounts_of_the_same_draws():
    "Oracle: replay the rng.choice sequence and recount every prefix with count_table; the joint path matches it."
    from fairlib.counts import count_table

    datas = _shared_datas()
    sizes, R, seed = [300, 1200, 3000], 4, 21
    out = draw_subsample_bins(datas[0], sizes, R, seed)  # single attribute: the per-attribute path
    from fairlib.resample import draw_subsample_bins_shared

    joint = draw_subsample_bins_shared(datas, sizes, R, seed)
    rng = np.random.default_rng(seed)
    picks = [rng.choice(3000, 1200, replace=False) for _ in range(R)]
    for d, (c, b) in zip(datas, joint):
        G = len(d.groups)
        for r, pick in enumerate(picks):
            for k, s in enumerate(sizes):
                idx = pick[:s] if s < 3000 else np.arange(3000)
                ct = count_table(
                    d.y[idx], d.yhat[idx], d.ct.codes[idx], y_prob=d.prob[idx], min_support=0
                )
                cc = np.zeros((G, 2, 2))
                cc[ct.groups.to_numpy()] = ct.counts
                bb = np.zeros((G, 10, 3))
                bb[ct.groups.to_numpy()] = ct.bins
                assert np.array_equal(c[k, r], cc) and np.array_equal(b[k, r, ..., :2], bb[..., :2])
                assert np.allclose(b[k, r, ..., 2], bb[..., 2], rtol=1e-12, atol=1e-12)
    assert np.array_equal(out[0], joint[0][0])


def test_joint_calibration_path_equals_the_per_attribute_path():
    """Same draws: counts identical, score sums equal up to summation order; the fallbacks are the per-attribute path
    exactly."""
    import fairlib.resample as R

    V = R  # the subsampling draws live in the shared resampling engine
    datas = _shared_datas()
    sizes = [250, 1000, 2500, 3000]
    ref = R._subsample_bins_per_attribute(datas, sizes, 6, 5)
    joint = V.draw_subsample_bins_shared(datas, sizes, 6, 5)
    for (c0, b0), (c1, b1) in zip(ref, joint):
        assert np.array_equal(c0, c1) and np.array_equal(b0[..., :2], b1[..., :2])
        assert np.allclose(b0[..., 2], b1[..., 2], rtol=1e-12, atol=0) and np.array_equal(
            b0[-1], b1[-1]
        )
    old = V._JOINT_MAX_CELLS
    try:  # joint space over the memory bound: per-attribute path
        V._JOINT_MAX_CELLS = 0
        small = V.draw_subsample_bins_shared(datas, sizes, 6, 5)
    finally:
        V._JOINT_MAX_CELLS = old
    other = [
        datas[0],
        audit_data(
            datas[1].y,
            datas[1].yhat,
            np.asarray(datas[1].groups)[datas[1].ct.codes],
            y_prob=np.clip(datas[1].prob * 0.9, 0, 1),
            min_support=30,
        ),
    ]
    differ = V.draw_subsample_bins_shared(other, sizes, 6, 5)  # different scores: no joint code
    for got, want in ((small, ref), (differ, R._subsample_bins_per_attribute(other, sizes, 6, 5))):
        for (c0, b0), (c1, b1) in zip(want, got):
            assert np.array_equal(c0, c1) and np.array_equal(b0, b1)


def test_size_stats_over_many_cells_equals_one_cell_at_a_time():
    "The per-model statistics call (mixed uses_abs, NaNs, constant rows) equals the per-cell calls exactly."
    from fairlib.vfr.axis2 import _size_stats

    rng = np.random.default_rng(3)
    v = rng.normal(0.1, 0.05, (7, 5, 30))
    v[1, 2, :4] = np.nan
    v[2, 3] = 0.2
    v[3, :, :] = np.nan
    v[4, 0, 1:] = np.nan
    ua = [True, False, True, True, False, True, False]
    many = _size_stats(v, ua, 0.05, 0.05)
    for j in range(7):
        one = _size_stats(v[j][None], ua[j], 0.05, 0.05)
        for k in one:
            np.testing.assert_array_equal(many[k][j], one[k][0])


def test_axis2_grid_values_are_the_cohort_metric():
    "Each cell's value (computed beside the subsamples in one metric call) equals the metric on the cohort's table."
    y, yh, g, p = _cohort(n=3000)
    pan = pd.DataFrame(
        dict(model="m", y_true=y, y_pred=yh, y_prob=p, a=g, b=np.where(p > 0.7, "u", "v"))
    )
    cells = audit_size_grid(pan, attributes=["a", "b"], sizes=[500, 1500], seed=4)
    for r in cells.itertuples():
        d = audit_data(y, yh, pan[r.attribute], y_prob=p, min_support=30)
        want = float(metric_from_counts(r.metric, d.ct.counts, d.ct.bins, included=d.included))
        assert (r.value == want) or (np.isnan(r.value) and np.isnan(want)), (r.metric, r.attribute)


def test_model_audit_datas_equal_audit_data_per_attribute():
    """Categorical attributes read from their codes (unused categories, unsorted order) == audit_data; others pass
    through."""
    from fairlib.records import _model_audit_datas

    y, yh, g, p = _cohort(n=2000)
    f = pd.DataFrame(
        dict(
            y_true=y,
            y_pred=yh,
            a=pd.Categorical(g, categories=["z", "c", "a", "b"]),
            b=pd.Categorical(np.where(p > 0.6, "hi", "lo")),
            c=g,
        )
    )
    for prob in (p, None):
        got = _model_audit_datas(f, ["a", "b", "c"], prob, 30, 10, "audit_size_grid")
        for at, d in got.items():
            want = audit_data(y, yh, f[at], y_prob=prob, min_support=30, n_bins=10)
            assert (
                d.groups.equals(want.groups)
                and d.groups.name == want.groups.name
                and d.groups.dtype == want.groups.dtype
            )
            for x, w in (
                (d.ct.codes, want.ct.codes),
                (d.ct.counts, want.ct.counts),
                (d.ct.support, want.ct.support),
                (d.m, want.m),
                (d.y, want.y),
                (d.yhat, want.yhat),
                (d.included, want.included),
            ):
                assert np.array_equal(x, w) and x.dtype == w.dtype
            assert (d.ct.bins is None) == (prob is None) and (
                prob is None or np.array_equal(d.ct.bins, want.ct.bins)
            )
            assert d.resample_size == want.resample_size and d.ct.min_support == want.ct.min_support
    bad = f.assign(a=pd.Categorical([None] + list(g[1:]), categories=["a", "b", "c"]))
    with pytest.raises(Exception, match="missing value"):
        _model_audit_datas(bad, ["a"], p, 30, 10, "audit_size_grid")


def test_n_star_is_the_first_size_when_the_first_size_qualifies():
    "N* is the smallest qualifying size: index 0 counts (it was reported 'not reached'); same answer as the grid path."
    rng = np.random.default_rng(0)
    stable = 0.5 + rng.normal(
        0, 1e-4, (3, 30)
    )  # CV ~ 2e-4, far below the 0.05 cutoff at every size
    r = summarise_audit_sizes(stable, [1_000, 2_000, 5_000], "DI", value=0.5)
    assert r.reached and r.n_star == 1_000 and not r.exceeds_field
    # a curve that first qualifies at the second size still reports the second size
    later = np.vstack([0.5 + rng.normal(0, 0.2, 30), stable[1:]])
    r2 = summarise_audit_sizes(later, [1_000, 2_000, 5_000], "DI", value=0.5)
    assert r2.reached and r2.n_star == 2_000
