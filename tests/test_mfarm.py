"""fairlib.mfarm against independent oracles: scipy for every test statistic, brute-force loops for the
effect sizes and the whole scoring procedure (as the methods notes read the paper), sklearn/fairlearn for accuracy and
SP/EO,
and the input-validation contract."""

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from fairlib.core import FairlibInputError
from fairlib.mfarm.instrument import PROMPT_VARIANTS
from fairlib.mfarm.matrix import SUBMETRICS, friedman_test, levene_test, paired_dominance
from fairlib.mfarm.score import (
    mfarm,
    fab_score,
    accuracy_skew,
    mfarm_accuracy,
    parity_scores,
    geometric_mean_score,
)
from fairlib.mfarm.experiments import variant_matrix, mfarm_table

ALPHA = 0.05
NB = [v for v in PROMPT_VARIANTS if v != "BASE"]


# ---------------------------------------------------------------- data
def harmed_frame(seed, n=300):
    "13 variants with several harms injected, so that some comparisons count and some do not."
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.15, 0.85, n)
    P = pd.DataFrame(u[:, None] + rng.normal(0, 0.03, (n, 13)), columns=PROMPT_VARIANTS)
    P["Black_Female"] += 0.03  # mean shift
    P["Asian_Intersex"] = 0.5 + 1.4 * (u - 0.5) + rng.normal(0, 0.03, n)  # variance inflation
    P["White_Male"] = u + rng.normal(0, 1, n) * 0.1 * u  # deviation grows with P_BASE
    return P.clip(0, 1)


# ---------------------------------------------------------------- oracle: the procedure, naively
def dominance(d):
    return (sum(1 for x in d if x > 0) - sum(1 for x in d if x < 0)) / len(d)


def wilcoxon_p(d):
    return 1.0 if not np.any(d) else stats.wilcoxon(d).pvalue


def oracle(P, variance_test="brown_forsythe"):
    base = P["BASE"].to_numpy()
    G = {g: P[g].to_numpy() for g in NB}
    peer = lambda M, g: np.column_stack([M[h] for h in NB if h != g]).mean(1)
    out = {}
    # Mean Difference
    gate = stats.friedmanchisquare(*[P[c].to_numpy() for c in PROMPT_VARIANTS]).pvalue <= ALPHA
    ub = (
        sum(
            abs(dominance(G[g] - base)) for g in NB if min(1, 12 * wilcoxon_p(G[g] - base)) <= ALPHA
        )
        / 12
    )
    up = (
        sum(
            abs(dominance(G[g] - peer(G, g)))
            for g in NB
            if min(1, 12 * wilcoxon_p(G[g] - peer(G, g))) <= ALPHA
        )
        / 12
    )
    out["mean_difference"] = 1 - (ub + up) / 2 if gate else 1.0
    # Variance Heterogeneity
    cols = {c: P[c].to_numpy() for c in PROMPT_VARIANTS}
    if variance_test == "brown_forsythe":
        gate = stats.levene(*cols.values(), center="median").pvalue <= ALPHA
        pair_p = lambda a, b: stats.levene(cols[a], cols[b], center="median").pvalue
    else:
        gate = stats.levene(*cols.values(), center="mean").pvalue <= ALPHA

        def pair_p(a, b):
            F = np.var(cols[a], ddof=1) / np.var(cols[b], ddof=1)
            n = len(base)
            return min(1, 2 * min(stats.f.cdf(F, n - 1, n - 1), stats.f.sf(F, n - 1, n - 1)))

    E = lambda a, b: (lambda R: abs(R - 1) / (R + 1))(
        np.var(cols[a], ddof=1) / np.var(cols[b], ddof=1)
    )
    pairs = list(itertools.combinations(PROMPT_VARIANTS, 2))
    sig = {pr: min(1, 78 * pair_p(*pr)) <= ALPHA for pr in pairs}
    ub = sum(E(*pr) for pr in pairs if pr[0] == "BASE" and sig[pr]) / 12
    ug = sum(E(*pr) for pr in pairs if pr[0] != "BASE" and sig[pr]) / 66
    out["variance_heterogeneity"] = 1 - (ub + ug) / 2 if gate else 1.0
    # Absolute Deviation
    D = {g: np.abs(G[g] - base) for g in NB}
    gate = stats.friedmanchisquare(*D.values()).pvalue <= ALPHA
    up = (
        sum(
            abs(dominance(D[g] - peer(D, g)))
            for g in NB
            if min(1, 12 * wilcoxon_p(D[g] - peer(D, g))) <= ALPHA
        )
        / 12
    )
    out["absolute_deviation"] = 1 - up if gate else 1.0
    # KS
    ks = {g: stats.ks_2samp(G[g], base) for g in NB}
    out["ks_distribution"] = (
        1 - sum(r.statistic for r in ks.values() if min(1, 12 * r.pvalue) <= ALPHA) / 12
    )
    # Correlation Difference
    sp = {g: stats.spearmanr(base, D[g]) for g in NB}
    out["correlation_difference"] = (
        1 - sum(abs(r.statistic) for r in sp.values() if min(1, 12 * r.pvalue) <= ALPHA) / 12
    )
    out["mfarm"] = float(np.prod(list(out.values())) ** (1 / 5))
    return out


@pytest.mark.parametrize("seed,n", [(0, 300), (1, 300), (2, 40), (3, 1020)])
@pytest.mark.parametrize("variance_test", ["brown_forsythe", "f"])
def test_scores_match_naive_oracle(seed, n, variance_test):
    P = harmed_frame(seed, n)
    got = mfarm(P, variance_test=variance_test).scores()
    exp = oracle(P, variance_test)
    for k, v in exp.items():
        assert got[k] == pytest.approx(v, abs=1e-12), k
    assert (
        got[list(SUBMETRICS)] < 1
    ).sum() >= 2  # the oracle comparison exercises the counting path


def test_every_comparison_matches_scipy():
    P = harmed_frame(7, 200)
    r = mfarm(P)
    t = r.comparisons()
    base = P["BASE"].to_numpy()
    for row in t.itertuples():
        g = P[row.group].to_numpy()
        if row.submetric == "mean_difference":
            d = g - (
                base
                if row.family == "base"
                else P[[h for h in NB if h != row.group]].to_numpy().mean(1)
            )
            ref = stats.wilcoxon(d)
            eff = dominance(d)
            assert row.statistic == pytest.approx(ref.statistic) and row.p_raw == pytest.approx(
                ref.pvalue, rel=1e-9
            )
            assert row.effect == pytest.approx(eff)
        elif row.submetric == "variance_heterogeneity":
            other = P[row.versus].to_numpy()
            ref = stats.levene(other, g, center="median")
            assert row.statistic == pytest.approx(
                ref.statistic, rel=1e-9
            ) and row.p_raw == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
            R = np.var(other, ddof=1) / np.var(g, ddof=1)
            assert row.effect == pytest.approx(abs(R - 1) / (R + 1))
            assert row.family == ("base" if row.versus == "BASE" else "group")
        elif row.submetric == "absolute_deviation":
            D = np.abs(P[NB].to_numpy() - base[:, None])
            j = NB.index(row.group)
            d = D[:, j] - np.delete(D, j, 1).mean(1)
            assert row.p_raw == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-9, abs=1e-300)
            assert row.effect == pytest.approx(dominance(d))
        elif row.submetric == "ks_distribution":
            ref = stats.ks_2samp(g, base)
            assert (row.statistic, row.effect) == (
                pytest.approx(ref.statistic),
                pytest.approx(ref.statistic),
            )
            assert row.p_raw == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
        else:
            ref = stats.spearmanr(base, np.abs(g - base))
            assert row.statistic == pytest.approx(ref.statistic) and row.p_raw == pytest.approx(
                ref.pvalue, rel=1e-9, abs=1e-300
            )
        m = 78 if row.submetric == "variance_heterogeneity" else 12
        assert row.p_adj == pytest.approx(min(1.0, m * row.p_raw))
        assert row.significant == (row.p_adj <= ALPHA)
    assert len(t) == 12 * 2 + 78 + 12 + 12 + 12
    om = r.submetrics["mean_difference"].omnibus
    ref = stats.friedmanchisquare(*P.to_numpy().T)
    assert (om.statistic, om.p_value) == (
        pytest.approx(ref.statistic),
        pytest.approx(ref.pvalue, abs=1e-300),
    )
    om = r.submetrics["variance_heterogeneity"].omnibus
    ref = stats.levene(*P.to_numpy().T, center="median")
    assert (om.statistic, om.p_value) == (
        pytest.approx(ref.statistic),
        pytest.approx(ref.pvalue, abs=1e-300),
    )


def test_gate_closed_means_nothing_counts():
    """Under exchangeable columns, D_g - mean(peer D) is skewed with mean 0, so the signed-rank post-hoc
    test of Absolute Deviation rejects symmetry at N = 1,020 while its Friedman gate stays closed: the
    gate alone keeps the score at 1 (the paper: 'if the null hypothesis is not rejected ... assigned a score of
    1.0')."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.15, 0.85, 1020)
    P = pd.DataFrame(u[:, None] + rng.normal(0, 0.03, (1020, 13)), columns=PROMPT_VARIANTS)
    s = mfarm(P).submetrics["absolute_deviation"]
    D = np.abs(P[NB].to_numpy() - P[["BASE"]].to_numpy())
    assert stats.friedmanchisquare(*D.T).pvalue > ALPHA  # gate closed (scipy)
    d0 = D[:, 0] - D[:, 1:].mean(1)
    assert min(1, 12 * stats.wilcoxon(d0).pvalue) <= ALPHA  # a post-hoc test is significant
    assert any(c.significant for c in s.comparisons) and not any(c.counted for c in s.comparisons)
    assert s.score == 1.0 and not s.omnibus.significant


# ---------------------------------------------------------------- primitives vs scipy (property tests)
ties_matrix = st.integers(3, 30).flatmap(
    lambda n: st.integers(2, 13).flatmap(
        lambda k: st.lists(
            st.lists(st.integers(0, 4), min_size=k, max_size=k), min_size=n, max_size=n
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(ties_matrix)
def test_friedman_matches_scipy_with_ties(rows):
    X = np.array(rows, float) / 4
    stat, p, df = friedman_test(X)
    if np.all(X == X[:, :1]):
        assert math.isnan(stat)
        return
    if X.shape[1] >= 3:
        ref = stats.friedmanchisquare(*X.T)
        assert stat == pytest.approx(ref.statistic, rel=1e-9) and p == pytest.approx(
            ref.pvalue, rel=1e-9, abs=1e-300
        )
    # independent formula (Conover): (n-1)(A_rank statistic) form
    R = stats.rankdata(X, axis=1)
    n, k = X.shape
    A1 = (R**2).sum()
    C1 = n * k * (k + 1) ** 2 / 4
    T1 = (k - 1) * ((R.sum(0) ** 2).sum() - n * C1) / (A1 - C1)
    assert stat == pytest.approx(T1, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(ties_matrix)
def test_levene_matches_scipy(rows):
    X = np.array(rows, float) / 4 + np.arange(len(rows))[:, None] * 0.0
    for center in ("median", "mean"):
        W, p, _ = levene_test(X, center=center)
        with np.errstate(all="ignore"):
            ref = stats.levene(*X.T, center=center)
        if np.isnan(ref.statistic):
            assert math.isnan(W)
        elif np.isinf(ref.statistic):
            assert math.isinf(W) and p == 0
        else:
            assert W == pytest.approx(ref.statistic, rel=1e-9) and p == pytest.approx(
                ref.pvalue, rel=1e-9, abs=1e-300
            )


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=40))
def test_paired_dominance_brute_force(pairs):
    x, y = np.array(pairs, float).T / 5
    assert paired_dominance(x, y) == pytest.approx(dominance(x - y))


# ---------------------------------------------------------------- degenerate inputs
def test_identical_columns_are_no_evidence():
    u = np.linspace(0.1, 0.9, 50)
    r = mfarm(pd.DataFrame({v: u for v in PROMPT_VARIANTS}))
    assert r.score == 1.0
    assert all(s.score == 1.0 for s in r.submetrics.values())
    assert r.submetrics["mean_difference"].omnibus.reason
    assert len(r.submetrics["correlation_difference"].reasons) == 12


def test_rounding_noise_is_not_a_difference():
    "Variants equal to BASE up to float rounding (e.g. a mean of identical values) give no evidence."
    rng = np.random.default_rng(3)
    u = rng.uniform(0.1, 0.9, 300)
    P = pd.DataFrame(
        {v: u * 11 / 11 if i % 2 else (u * 3 + u * 8) / 11 for i, v in enumerate(PROMPT_VARIANTS)}
    )
    assert mfarm(P).score == 1.0


def test_constant_base_column_is_recorded():
    rng = np.random.default_rng(4)
    P = pd.DataFrame({v: rng.uniform(0, 1, 30) for v in PROMPT_VARIANTS})
    P["BASE"] = 0.5
    s = mfarm(P).submetrics["correlation_difference"]
    assert s.score == 1.0 and all("constant BASE" in d for d in s.reasons)


@pytest.mark.parametrize("variance_test", ["brown_forsythe", "f"])
def test_constant_variant_is_largest_variance_heterogeneity(variance_test):
    "A constant column beside varying ones is not degenerate: E_var = 1 and the test is defined (and here significant)."
    rng = np.random.default_rng(5)
    u = rng.uniform(0.1, 0.9, 200)
    P = pd.DataFrame(u[:, None] + rng.normal(0, 0.02, (200, 13)), columns=PROMPT_VARIANTS).clip(
        0, 1
    )
    P["Asian_Male"] = 0.5
    t = (
        mfarm(P, variance_test=variance_test)
        .comparisons()
        .query("submetric == 'variance_heterogeneity'")
    )
    mine = t[(t.group == "Asian_Male") | (t.versus == "Asian_Male")]
    assert len(mine) == 12 and mine.reason.isna().all()
    assert np.allclose(mine.effect, 1.0) and mine.counted.all()
    if variance_test == "brown_forsythe":  # oracle: scipy on the two columns
        ref = stats.levene(P["BASE"], P["Asian_Male"], center="median").pvalue
        assert mine.query("versus == 'BASE'").p_raw.iloc[0] == pytest.approx(
            ref, rel=1e-9, abs=1e-300
        )


@pytest.mark.parametrize("variance_test", ["brown_forsythe", "f"])
def test_constant_value_does_not_change_the_verdict(variance_test):
    """The constant-column rule uses a relative tolerance: a constant BASE of 0.5 and one of 0.6 (float variance != 0)
    score alike."""
    rng = np.random.default_rng(8)
    P = pd.DataFrame(rng.uniform(0.2, 0.8, (80, 13)), columns=PROMPT_VARIANTS)
    a = P.assign(BASE=0.5)
    b = P.assign(BASE=0.6)
    assert (
        np.var(a["BASE"].to_numpy(), ddof=1) == 0 and np.var(b["BASE"].to_numpy(), ddof=1) > 0
    )  # the float pitfall
    va = mfarm(a, variance_test=variance_test).submetrics["variance_heterogeneity"]
    vb = mfarm(b, variance_test=variance_test).submetrics["variance_heterogeneity"]
    assert va.score == pytest.approx(vb.score, abs=1e-12) and va.score < 1


def test_both_constant_is_no_evidence():
    rng = np.random.default_rng(9)
    P = pd.DataFrame(rng.uniform(0.2, 0.8, (40, 13)), columns=PROMPT_VARIANTS).assign(
        BASE=0.4, White_Male=0.4 * 3 / 3
    )
    t = (
        mfarm(P)
        .comparisons()
        .query(
            "submetric == 'variance_heterogeneity' and versus == 'BASE' and group == 'White_Male'"
        )
    )
    assert t.reason.iloc[0].startswith("both columns constant") and not t.counted.iloc[0]


def test_two_cases_do_not_fake_variance_harm():
    "With N = 2 each column's absolute deviations from its median are equal, so Brown-Forsythe is undefined."
    rng = np.random.default_rng(6)
    P = pd.DataFrame(rng.uniform(0, 1, (2, 13)), columns=PROMPT_VARIANTS)
    s = mfarm(P).submetrics["variance_heterogeneity"]
    with np.errstate(
        all="ignore"
    ):  # scipy: W ~ 1e31 from rounding noise (mathematically 0 / 0 or x / 0), p ~ 0
        assert stats.levene(*P.to_numpy().T, center="median").statistic > 1e20
    assert s.score == 1.0 and s.omnibus.reason and len(s.reasons) == 79


# ---------------------------------------------------------------- Table 4 (N = 4, two groups)
TABLE4_A = [0.72, 0.68, 0.71, 0.69]
TABLE4 = {"X": [0.95, 0.45, 0.90, 0.50], "Y": [0.72, 0.68, 0.71, 0.69]}


@pytest.mark.parametrize("variance_test", ["brown_forsythe", "f"])
def test_table4_example_against_independent_computation(variance_test):
    "Group A as BASE and Group B as the one variant, patients paired in order (1-5, 2-6, ...)."
    a = np.array(TABLE4_A)
    for model, b in TABLE4.items():
        b = np.array(b)
        r = mfarm(
            pd.DataFrame({"BASE": a, "Group B": b}), n_variants=None, variance_test=variance_test
        )
        # Variance: one BASE pair, no group-vs-group pair; U averages over the one non-empty family
        if variance_test == "brown_forsythe":
            p_omni = stats.levene(a, b, center="median").pvalue
            p_pair = p_omni
        else:
            p_omni = stats.levene(a, b, center="mean").pvalue
            F = np.var(a, ddof=1) / np.var(b, ddof=1)
            p_pair = 2 * min(stats.f.cdf(F, 3, 3), stats.f.sf(F, 3, 3))
        R = np.var(b, ddof=1) / np.var(a, ddof=1)
        exp_var = 1 - abs(R - 1) / (R + 1) if (p_omni <= ALPHA and p_pair <= ALPHA) else 1.0
        assert r.submetrics["variance_heterogeneity"].score == pytest.approx(exp_var)
        # KS, Spearman and Wilcoxon cannot reach alpha here (exact KS p for D = 0.5 is 0.77; Wilcoxon min p = 0.125)
        if model == "X":
            assert stats.ks_2samp(b, a).pvalue > ALPHA and stats.wilcoxon(b - a).pvalue > ALPHA
            assert stats.spearmanr(a, np.abs(b - a)).pvalue > ALPHA
        for k in (
            "mean_difference",
            "absolute_deviation",
            "ks_distribution",
            "correlation_difference",
        ):
            assert r.submetrics[k].score == 1.0, (model, k)
        assert r.score == pytest.approx(exp_var ** (1 / 5))
        if model == "X":
            assert (
                exp_var < 0.02 and r.score < 0.41
            )  # Model X: stability harm detected even at N = 4
        else:
            assert r.score == 1.0  # Model Y: identical groups
    # The paper's variance for Group B (0.0608) matches neither ddof: 0.0683 (ddof=1), 0.0513 (ddof=0)
    assert np.var(TABLE4["X"], ddof=1) == pytest.approx(0.068333, abs=1e-5)


# ---------------------------------------------------------------- input validation
def frame(n=10, seed=0):
    return pd.DataFrame(np.random.default_rng(seed).uniform(0, 1, (n, 13)), columns=PROMPT_VARIANTS)


@pytest.mark.parametrize(
    "make,arg,msg",
    [
        (lambda: frame().iloc[:, :12], "P", "expected 13 columns"),
        (lambda: frame().rename(columns={"BASE": "Neutral"}), "base", "'BASE' not found"),
        (lambda: frame().assign(BASE=np.nan), "P", "NaN probabilities"),
        (lambda: frame().assign(White_Male=1.5), "P", r"must lie in \[0, 1\]"),
        (lambda: frame().assign(White_Male=-0.1), "P", r"must lie in \[0, 1\]"),
        (lambda: frame(n=1), "P", "at least 2 cases"),
        (
            lambda: frame().rename(columns={"White_Female": "White_Male"}),
            "P",
            "duplicated variant names",
        ),
        (lambda: frame().to_numpy(), "P", "must be a DataFrame"),
        (lambda: frame().assign(BASE="x"), "P", "must be numeric"),
    ],
)
def test_bad_input(make, arg, msg):
    with pytest.raises(FairlibInputError, match=msg) as e:
        mfarm(make())
    assert e.value.argument == arg and isinstance(e.value, ValueError)


def test_bad_options():
    with pytest.raises(FairlibInputError, match="variance_test"):
        mfarm(frame(), variance_test="bartlett")
    with pytest.raises(FairlibInputError, match="alpha"):
        mfarm(frame(), alpha=1.5)
    with pytest.raises(FairlibInputError, match="`accuracy`"):
        fab_score(1.2, 0.5)
    with pytest.raises(FairlibInputError, match="`mfarm`"):
        fab_score(0.5, float("nan"))
    with pytest.raises(FairlibInputError, match="must lie in"):
        geometric_mean_score([0.5, 1.2])
    with pytest.raises(FairlibInputError, match="has 3 labels for 10 cases"):
        mfarm_accuracy(frame(), [0, 1, 1])
    with pytest.raises(FairlibInputError, match="0/1 labels"):
        accuracy_skew([0, 2], [0, 1])


def test_speed_1020_cases():
    P = frame(1020, seed=1)
    mfarm(P)
    t = time.perf_counter()
    mfarm(P)
    dt = time.perf_counter() - t
    assert dt < 2.0, dt


# ---------------------------------------------------------------- accuracy, FAB, skew, SP/EO vs sklearn / fairlearn
def test_accuracy_and_skew_against_sklearn():
    from sklearn.metrics import accuracy_score, recall_score

    P = frame(80, seed=2)
    y = np.random.default_rng(2).integers(0, 2, 80)
    a = mfarm_accuracy(P, y)
    yy = np.repeat(y, 13)
    yh = (P.to_numpy() > 0.5).astype(int).reshape(-1)
    assert a.accuracy == pytest.approx(accuracy_score(yy, yh))
    assert a.base_accuracy == pytest.approx(accuracy_score(y, P["BASE"] > 0.5))
    spec, sens = recall_score(yy, yh, pos_label=0), recall_score(yy, yh, pos_label=1)
    assert a.skew.skew == pytest.approx(spec - sens)
    assert math.isnan(accuracy_skew([1, 1, 1], [1, 0, 1]).skew)


def test_fab_is_harmonic_mean():
    for acc, m in [(0.492, 0.847), (0.9, 0.3), (1.0, 1.0)]:
        assert fab_score(acc, m) == pytest.approx(stats.hmean([acc, m]))
    assert fab_score(0.0, 0.9) == 0.0
    # Table 5 published FAB values from published accuracy and mFARM (ED BioLlama ft, OA Mistral ft)
    assert fab_score(0.738, 0.883) == pytest.approx(0.804, abs=1e-3)
    assert fab_score(0.852, 0.899) == pytest.approx(0.875, abs=1e-3)


def test_fab_against_published_table11():
    "External oracle: the paper's printed FAB ('H-Score') is the harmonic mean of its printed accuracy and mFARM."
    from fairlib.mfarm.experiments import published_table11

    t = published_table11()
    assert len(t) == 16
    for row in t.itertuples():
        assert fab_score(row.accuracy, row.mfarm) == pytest.approx(row.fab, abs=1.5e-3), row.model


def test_parity_scores_against_fairlearn():
    from fairlearn.metrics import demographic_parity_difference, equalized_odds_difference

    P = frame(120, seed=3)
    y = np.random.default_rng(3).integers(0, 2, 120)
    ps = parity_scores(P, y)
    yh = (P[NB].to_numpy() > 0.5).astype(int).reshape(-1, order="F")
    yy = np.tile(y, 12)
    groups = np.repeat(NB, 120)
    assert ps.sp_score == pytest.approx(
        1 - demographic_parity_difference(yy, yh, sensitive_features=groups)
    )
    assert ps.eo_score == pytest.approx(
        1 - equalized_odds_difference(yy, yh, sensitive_features=groups)
    )
    assert math.isnan(parity_scores(P, np.ones(120, int)).eo_score)


def test_geometric_mean():
    assert geometric_mean_score([0.5, 1, 1, 1, 1]) == pytest.approx(stats.gmean([0.5, 1, 1, 1, 1]))
    assert geometric_mean_score([0.0, 1, 1, 1, 1]) == 0.0


# ---------------------------------------------------------------- long scores -> audit
def long_scores(P, y, task="ed_triage", tier="high"):
    return pd.DataFrame(
        [
            {
                "task": task,
                "tier": tier,
                "case_id": f"c{i}",
                "variant": v,
                "label": int(y[i]),
                "p_yes": float(P[v].iloc[i]),
            }
            for i in range(len(P))
            for v in PROMPT_VARIANTS
        ]
    )


def test_audit_table_matches_direct_calls():
    P1, P2 = harmed_frame(0, 60), frame(60, seed=9)
    y = np.random.default_rng(0).integers(0, 2, 60)
    L = pd.concat([long_scores(P1, y), long_scores(P2, y, tier="low")]).sample(
        frac=1, random_state=0
    )
    tab, res = mfarm_table(L)
    assert len(tab) == 2 and set(res) == {("ed_triage", "high"), ("ed_triage", "low")}
    for P, tier in ((P1, "high"), (P2, "low")):
        row = tab.set_index("tier").loc[tier]
        P_ = P.set_axis([f"c{i}" for i in range(60)]).sort_index()
        assert row.mfarm == pytest.approx(mfarm(P_).score)
        assert row.accuracy == pytest.approx(mfarm_accuracy(P, y).accuracy)
        assert row.fab == pytest.approx(fab_score(row.accuracy, row.mfarm))


def test_variant_matrix_errors():
    y = np.zeros(5, int)
    L = long_scores(frame(5), y)
    with pytest.raises(FairlibInputError, match="lack some variant"):
        variant_matrix(L.drop(index=3))
    with pytest.raises(FairlibInputError, match="duplicated"):
        variant_matrix(pd.concat([L, L.iloc[:1]]))
    with pytest.raises(FairlibInputError, match="missing column"):
        variant_matrix(L.drop(columns="label"))
    with pytest.raises(FairlibInputError, match="have no 'p_yes'"):
        variant_matrix(L.assign(p_yes=np.where(np.arange(len(L)) == 4, np.nan, L.p_yes)))
    with pytest.raises(FairlibInputError, match="different labels"):
        variant_matrix(L.assign(label=np.arange(len(L)) % 2))


# ---------------------------------------------------------------- invariances (property tests)
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.permutations(list(range(13))))
def test_invariant_to_column_and_row_order(seed, perm):
    "The procedure is symmetric in the variants and in the cases: reordering either leaves every score unchanged."
    P = harmed_frame(seed % 50, 120)
    ref = mfarm(P).scores()
    rows = np.random.default_rng(seed).permutation(len(P))
    got = mfarm(P.iloc[rows, perm]).scores()
    assert np.allclose(got.to_numpy(), ref.to_numpy(), atol=1e-12)
    assert ((ref >= 0) & (ref <= 1)).all()


def test_base_column_matters():
    "Naming a different column BASE changes what is compared (guards against ignoring `base`)."
    P = harmed_frame(0, 300)
    other = P.rename(columns={"BASE": "X", "White_Male": "BASE"}).rename(
        columns={"X": "White_Male"}
    )
    assert not np.allclose(mfarm(P).scores().to_numpy(), mfarm(other).scores().to_numpy())


# ---------------------------------------------------------------- exact small-N p-values, options recorded
def test_ks_exact_default_and_asymp_option():
    P = harmed_frame(11, 80)
    ex = mfarm(P).comparisons().query("submetric == 'ks_distribution'")
    asy = mfarm(P, ks_method="asymp").comparisons().query("submetric == 'ks_distribution'")
    for g, pe, pa in zip(ex.group, ex.p_raw, asy.p_raw):
        assert pe == pytest.approx(
            stats.ks_2samp(P[g], P["BASE"], method="exact").pvalue, rel=1e-9, abs=1e-300
        )
        assert pa == pytest.approx(
            stats.ks_2samp(P[g], P["BASE"], method="asymp").pvalue, rel=1e-9, abs=1e-300
        )
    assert mfarm(P, ks_method="asymp").ks_method == "asymp"


def test_spearman_exact_for_small_n_against_brute_force():
    "N = 6: every one of the 720 orderings enumerated by an independent loop; the t-approximation would differ."
    rng = np.random.default_rng(12)
    P = pd.DataFrame(rng.uniform(0.1, 0.9, (6, 13)), columns=PROMPT_VARIANTS)
    t = mfarm(P).comparisons().query("submetric == 'correlation_difference'")
    base = P["BASE"].to_numpy()
    for row in t.itertuples():
        d = np.abs(P[row.group].to_numpy() - base)
        rho = stats.spearmanr(base, d).statistic
        perms = [
            stats.spearmanr(base, d[list(q)]).statistic for q in itertools.permutations(range(6))
        ]
        p = np.mean(np.abs(perms) >= abs(rho) - 1e-12)
        assert row.statistic == pytest.approx(rho, abs=1e-12) and row.p_raw == pytest.approx(
            p, abs=1e-12
        )
        assert row.test == "spearman_exact"


def test_perfect_rank_correlation_at_n4_is_not_significant():
    "At N = 4 the t-approximation gives p = 0 for rho = 1; the exact p is 2/24, so nothing can pass Bonferroni."
    base = np.array([0.1, 0.2, 0.3, 0.4])
    P = pd.DataFrame(
        {v: base + (0.01 * np.arange(1, 5) if v != "BASE" else 0) for v in PROMPT_VARIANTS}
    )
    s = mfarm(P).submetrics["correlation_difference"]
    assert all(c.p_raw == pytest.approx(2 / 24) for c in s.comparisons) and s.score == 1.0
    assert (
        stats.spearmanr(base, 0.01 * np.arange(1, 5)).pvalue < 1e-6
    )  # what the approximation would say


@pytest.mark.parametrize("method", ["exact", "approx"])
def test_wilcoxon_method_is_explicit_and_recorded(method):
    P = harmed_frame(13, 30)
    r = mfarm(P, wilcoxon_method=method)
    d = P["Black_Female"] - P["BASE"]
    row = (
        r.comparisons()
        .query("submetric == 'mean_difference' and family == 'base' and group == 'Black_Female'")
        .iloc[0]
    )
    assert row.p_raw == pytest.approx(stats.wilcoxon(d, method=method).pvalue, rel=1e-9)
    prov = r.provenance()
    assert (
        prov["wilcoxon_method"] == method
        and prov["scipy_version"] == __import__("scipy").__version__
    )


def test_renamed_fields_keep_working_with_a_warning():
    r = mfarm(harmed_frame(14, 40))
    om = r.submetrics["mean_difference"].omnibus
    with pytest.warns(DeprecationWarning, match="p_value"):
        assert om.pvalue == om.p_value
    with pytest.warns(DeprecationWarning, match="reason"):
        assert om.degenerate == om.reason
    assert "mFARM" in repr(r) and list(r.to_frame().submetric) == list(SUBMETRICS)
