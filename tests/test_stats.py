"""fairlib.stats against independent oracles: statsmodels, scipy, brute-force enumeration, simulation."""

import itertools
import math
import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings, strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from fairlib.core import FairlibInputError
from fairlib.stats import (
    WILD_WEIGHTS,
    wild_cluster_bootstrap,
    smallest_attainable_p,
    weight_matrix,
    cluster_bootstrap,
    mcnemar_exact,
    mcnemar_pairs,
    fdr_adjust,
    spearman_exact,
    CONFIRMATORY_MIN_DISCORDANT,
)
from fairlib.agent.simulate import simulate_signed_differences


def _data(G=6, m=4, seed=0, effect=0.1):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(G), m)
    return effect + rng.normal(0, 0.3, G)[g] + rng.normal(0, 0.5, G * m), g


# ---------------- wild cluster bootstrap ----------------
@pytest.mark.parametrize("G,m", [(4, 3), (8, 5), (12, 1)])
def test_wcb_estimate_se_t_match_statsmodels_cluster_robust(G, m):
    y, g = _data(G, m, seed=G)
    fit = sm.OLS(y, np.ones((len(y), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": g}, use_t=True
    )
    r = wild_cluster_bootstrap(y, g, signed=True, n_resamples=199, seed=0, with_ci=False)
    assert r.estimate == pytest.approx(fit.params[0])
    assert r.se == pytest.approx(fit.bse[0])
    assert r.t_stat == pytest.approx(fit.tvalues[0])
    assert r.p_value_t == pytest.approx(fit.pvalues[0])  # t(G-1) reference
    assert r.n_clusters == G and r.approximate == (G <= 12)


def _brute_wcb_p(y, g, null, weights):
    """Independent restricted wild cluster bootstrap: refit the regression for every weight vector."""
    ids = np.unique(g)
    G = len(ids)

    def t_of(yy):
        fit = sm.OLS(yy, np.ones((len(yy), 1))).fit(cov_type="cluster", cov_kwds={"groups": g})
        return (fit.params[0] - null) / fit.bse[0]

    t0 = t_of(y)
    u = y - null
    ts = []
    for w in itertools.product(weights, repeat=G):
        wi = np.array(w)[np.searchsorted(ids, g)]
        ts.append(t_of(null + wi * u))
    return np.mean(np.abs(ts) >= abs(t0) * (1 - 1e-10))


@pytest.mark.parametrize("weights,null", [("rademacher", 0.0), ("webb", 0.0), ("webb", 0.3)])
def test_wcb_p_matches_bruteforce_refit_over_all_weight_vectors(weights, null):
    y, g = _data(4, 2, seed=3)
    r = wild_cluster_bootstrap(y, g, signed=True, null=null, weights=weights, with_ci=False)
    assert r.enumerated and r.n_resamples == len(WILD_WEIGHTS[weights]) ** 4
    assert r.p_value == pytest.approx(_brute_wcb_p(y, g, null, WILD_WEIGHTS[weights]))


@pytest.mark.parametrize("G", [4, 5])
@pytest.mark.parametrize("weights", ["rademacher", "webb"])
def test_smallest_attainable_p_by_enumeration(G, weights):
    # near-constant clusters make the observed |t| as extreme as possible: only the vectors proportional to
    # (1,...,1) reach it, so the enumerated p is the smallest attainable one
    rng = np.random.default_rng(G)
    y = 1 + 1e-3 * rng.normal(size=G)
    r = wild_cluster_bootstrap(y, np.arange(G), signed=True, weights=weights, with_ci=False)
    k = len(WILD_WEIGHTS[weights])
    assert (
        r.p_value
        == pytest.approx(k / k**G)
        == pytest.approx(smallest_attainable_p(G, weights=weights))
    )
    # and no dataset goes below it (random search over data)
    W = np.array(list(itertools.product(WILD_WEIGHTS[weights], repeat=G)))
    for _ in range(200):
        u = rng.normal(size=G) * rng.choice([0.01, 1]) + rng.choice([0, 2])
        V = W * u
        m = V.mean(1)
        t = m / np.sqrt(((V - m[:, None]) ** 2).sum(1) * G / (G - 1) / G**2)
        assert (
            np.mean(np.abs(t) >= abs(t[np.all(W == W.max(), axis=1)][0]) * (1 - 1e-9))
            >= k / k**G - 1e-12
        )


def test_attainable_p_against_paper_values():
    # Rademacher: the paper's 0.18 (G=4) and 0.09 (G=5) are the (1 + k)/(B + 1) convention
    assert round(smallest_attainable_p(4, weights="rademacher", convention="plus_one"), 2) == 0.18
    assert round(smallest_attainable_p(5, weights="rademacher", convention="plus_one"), 2) == 0.09
    # Webb: enumeration reaches far below the paper's 0.021 / 0.008 under either convention (documented discrepancy)
    for G, paper in ((4, 0.021), (5, 0.008)):
        for conv in ("share", "plus_one"):
            assert smallest_attainable_p(G, weights="webb", convention=conv) < paper
    # the substantive claim holds: Rademacher cannot reach 5% at G = 4, 5; Webb can
    assert (
        smallest_attainable_p(5, weights="rademacher")
        > 0.05
        > smallest_attainable_p(4, weights="webb")
    )


def test_rademacher_interval_unbounded_when_test_cannot_reject():
    y, g = _data(4, 3, seed=1, effect=5.0)
    r = wild_cluster_bootstrap(y, g, signed=True, weights="rademacher")
    assert np.isinf(r.ci[0]) and np.isinf(r.ci[1]) and "unbounded" in r.reason


def test_wcb_interval_is_test_inversion():
    y, g = _data(8, 5, seed=2, effect=0.4)
    kw = dict(signed=True, n_resamples=999, seed=7)
    r = wild_cluster_bootstrap(y, g, **kw)
    eps = 1e-3 * r.se
    for b, inward in ((r.ci[0], +1), (r.ci[1], -1)):
        assert (
            wild_cluster_bootstrap(y, g, null=b + inward * eps, with_ci=False, **kw).p_value > 0.05
        )
        assert (
            wild_cluster_bootstrap(y, g, null=b - inward * eps, with_ci=False, **kw).p_value <= 0.05
        )


def test_wcb_coverage_near_nominal_at_G8():
    # paper: 94.0% over 200 replications at G = 8 (MC s.e. 1.7 points). Fast version: 399 draws per
    # replication; tolerance [0.90, 0.985] is about +-3 Monte Carlo standard errors around 0.95.
    cover = 0
    for i in range(200):
        d = simulate_signed_differences(8, 5, effect=0.2, seed=i)
        r = wild_cluster_bootstrap(d.y, d.cluster, signed=True, n_resamples=399, seed=10_000 + i)
        cover += r.ci[0] <= 0.2 <= r.ci[1]
    assert 0.90 <= cover / 200 <= 0.985


def test_wcb_refusals():
    y, g = _data(6, 2)
    with pytest.raises(FairlibInputError, match="`signed`"):
        wild_cluster_bootstrap(y, g, signed=False)
    with pytest.raises(FairlibInputError, match="`signed`"):
        wild_cluster_bootstrap(y, g, signed=None)
    for name in ("CFR", "MASD", "WCFR", "wcfr"):
        with pytest.raises(FairlibInputError, match="symmetric"):
            wild_cluster_bootstrap(y, g, signed=True, statistic=name)
    with pytest.raises(FairlibInputError, match="at least 3 clusters"):
        wild_cluster_bootstrap(y[:4], [0, 0, 1, 1], signed=True)
    with pytest.raises(FairlibInputError, match="`weights`"):
        wild_cluster_bootstrap(y, g, signed=True, weights="mammen")
    with pytest.raises(FairlibInputError, match="`clusters`"):
        wild_cluster_bootstrap(y, g[:-1], signed=True)


def test_weight_matrix_draws_are_seeded_and_webb_moments():
    a, _ = weight_matrix(9, n_resamples=20000, seed=1)
    b, _ = weight_matrix(9, n_resamples=20000, seed=1)
    assert np.array_equal(a, b)
    assert abs(a.mean()) < 0.02 and abs((a**2).mean() - 1) < 0.02


# ---------------- percentile cluster bootstrap ----------------
def test_cluster_bootstrap_se_matches_theory_for_cluster_means():
    x = np.random.default_rng(0).normal(size=30)
    r = cluster_bootstrap(x, lambda s: s[..., 0].mean(-1), n_resamples=20000, seed=1)
    # bootstrap se of a mean = plug-in sd / sqrt(G)
    assert r.se == pytest.approx(x.std(ddof=0) / np.sqrt(30), rel=0.03)
    assert r.ci[0] < x.mean() < r.ci[1] and r.method == "percentile cluster bootstrap"


def test_cluster_bootstrap_ratio_resamples_whole_clusters():
    per = np.array([[0, 45], [0, 45], [45, 45]])
    r = cluster_bootstrap(per, n_resamples=3000, seed=0)
    # each resample is (#copies of cluster 3)/3: support {0, 1/3, 2/3, 1}
    assert set(np.round(np.unique(r.distribution), 6)) <= {0.0, 0.333333, 0.666667, 1.0}
    with pytest.raises(FairlibInputError, match="at least 2 clusters"):
        cluster_bootstrap(per[:1])


# ---------------- McNemar ----------------
@given(st.integers(0, 60), st.integers(0, 60))
@settings(max_examples=80, deadline=None)
def test_mcnemar_matches_scipy_binomtest(b, c):
    r = mcnemar_exact(b, c)
    if b + c == 0:
        assert not r.defined and np.isnan(r.p_value) and "undefined" in r.reason
    else:
        assert r.p_value == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue)
        assert r.confirmatory == (b + c >= 25)


def test_mcnemar_confirmatory_rule_and_refusals():
    assert CONFIRMATORY_MIN_DISCORDANT == 25
    assert not mcnemar_exact(20, 4).confirmatory and mcnemar_exact(20, 5).confirmatory
    assert "hypothesis-generating" in mcnemar_exact(3, 1).reason
    with pytest.raises(FairlibInputError, match="`b`"):
        mcnemar_exact(-1, 3)
    with pytest.raises(FairlibInputError, match="`c`"):
        mcnemar_exact(1, 2.5)
    with pytest.raises(FairlibInputError, match="`comparison`"):
        mcnemar_pairs([0, 1], [1, 1, 0])


def test_mcnemar_pairs_counts_direction():
    r = mcnemar_pairs([1, 1, 1, 0, 0], [0, 0, 1, 1, 0])
    assert (r.b, r.c) == (2, 1)


def test_mcnemar_power_claim_in_paper():
    # 25 discordant pairs, alpha 0.05: 77% power at a 19:6 split, reaching 80% before 20:5
    def power(pi):
        return sum(
            sps.binom.pmf(b, 25, pi) for b in range(26) if mcnemar_exact(b, 25 - b).p_value <= 0.05
        )

    assert round(power(19 / 25), 2) == 0.77
    assert power(20 / 25) > 0.80


# ---------------- FDR ----------------
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
@settings(max_examples=60, deadline=None)
def test_fdr_matches_statsmodels(p):
    for ours, theirs in (("by", "fdr_by"), ("bh", "fdr_bh")):
        d = fdr_adjust(p, method=ours)
        rej, adj, _, _ = multipletests(p, alpha=0.05, method=theirs)
        np.testing.assert_allclose(d.p_adjusted, adj, rtol=1e-10, atol=1e-12)
        assert d.reject.tolist() == rej.tolist()


def test_fdr_nan_excluded_from_family():
    p = [0.001, np.nan, 0.02, 0.04]
    d = fdr_adjust(p, method="bh")
    _, adj, _, _ = multipletests([0.001, 0.02, 0.04], method="fdr_bh")
    np.testing.assert_allclose(d.p_adjusted.dropna(), adj)
    assert np.isnan(d.p_adjusted[1]) and not d.reject[1] and d.family_size[0] == 3
    with pytest.raises(FairlibInputError, match="`method`"):
        fdr_adjust(p, method="holm")
    with pytest.raises(FairlibInputError, match="in \\[0, 1\\]"):
        fdr_adjust([0.2, 1.3])


# ---------------- exact rank correlation ----------------
@pytest.mark.parametrize("seed", range(4))
def test_spearman_exact_matches_bruteforce_scipy_over_all_orderings(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=6)
    y = np.round(x + rng.normal(scale=0.7, size=6), 0 if seed == 3 else 6)  # seed 3: ties
    ours = spearman_exact(x, y)
    rho = sps.spearmanr(x, y).statistic
    perm = [sps.spearmanr(x, y[list(p)]).statistic for p in itertools.permutations(range(6))]
    assert ours.rho == pytest.approx(rho)
    assert ours.exact and ours.n_permutations == 720
    assert ours.p_value == pytest.approx(np.mean(np.abs(perm) >= abs(rho) - 1e-12))


def test_spearman_paper_values():
    r = spearman_exact([1, 2, 3, 4, 5, 6], [1, 2, 4, 3, 5, 6])  # two actions swap adjacent ranks
    assert round(r.rho, 2) == 0.94 and round(r.p_value, 3) == 0.017
    assert round(spearman_exact([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]).p_value, 3) == 0.058
    # asymptotic approximation overstates the evidence (paper: 0.005)
    assert sps.spearmanr([1, 2, 3, 4, 5, 6], [1, 2, 4, 3, 5, 6]).pvalue < r.p_value


def test_spearman_refusals_and_monte_carlo():
    with pytest.raises(FairlibInputError, match="`y`"):
        spearman_exact([1, 2, 3], [1, 2])
    with pytest.raises(FairlibInputError, match="constant"):
        spearman_exact([1, 2, 3], [2, 2, 2])
    x = np.arange(12)
    r = spearman_exact(x, x, n_resamples=5000, seed=0)
    assert not r.exact and r.p_value < 0.01


def test_renamed_arguments_and_fields_keep_working_with_a_warning():
    y, g = np.r_[np.ones(6), np.zeros(6)] + np.arange(12) * 0.01, np.repeat(np.arange(6), 2)
    with pytest.warns(DeprecationWarning, match="n_resamples"):
        old = wild_cluster_bootstrap(y, g, signed=True, n_boot=99, seed=0, with_ci=False)
    new = wild_cluster_bootstrap(y, g, signed=True, n_resamples=99, seed=0, with_ci=False)
    assert old.p_value == new.p_value
    with pytest.warns(DeprecationWarning):
        assert old.n_boot == old.n_resamples and old.note == old.reason
    with pytest.raises(FairlibInputError, match="n_boot"):
        cluster_bootstrap(np.ones((4, 2)), n_boot=10, n_resamples=10)


@pytest.mark.parametrize("alpha", [5, -1, 0, 1, float("nan"), "0.05"])
def test_fdr_adjust_refuses_a_level_outside_0_1(alpha):
    "alpha=5 used to reject every hypothesis and alpha=-1 none, silently."
    with pytest.raises(FairlibInputError, match="alpha"):
        fdr_adjust([0.01, 0.2, 0.5], alpha=alpha)


def test_fdr_adjust_level_still_decides_rejection():
    "A worked example (fdr_adjust calls scipy's false_discovery_control, so the oracle is arithmetic by hand)."
    p = np.array([0.001, 0.01, 0.02, 0.04, 0.3])
    # BH: m p_(i) / i = .005, .025, .0333, .05, .3, already increasing; BY multiplies by 1 + 1/2 + ... + 1/5
    bh = np.array([0.005, 0.025, 0.02 * 5 / 3, 0.05, 0.3])
    r = fdr_adjust(p, method="bh", alpha=0.05)
    np.testing.assert_allclose(r["p_adjusted"].to_numpy(), bh, rtol=1e-12)
    assert r["reject"].tolist() == [True, True, True, True, False]
    assert fdr_adjust(p, method="bh", alpha=0.03)["reject"].tolist() == [
        True,
        True,
        False,
        False,
        False,
    ]
    by = fdr_adjust(p, method="by")["p_adjusted"].to_numpy()
    np.testing.assert_allclose(
        by, np.minimum(bh * (1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5), 1), rtol=1e-12
    )


def test_fdr_adjust_rejects_at_the_level_exactly():
    "p = .05, the largest of six, adjusts to .05 and is rejected at .05 (fairlib's own loop gave 0.05000000000000001)."
    p = [0.02, 0.05, 0.0, 0.01, 0.0, 0.03]
    r = fdr_adjust(p, method="bh", alpha=0.05)
    rej, adj, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
    assert r["p_adjusted"][1] == 0.05 and r["reject"].all() and rej.all()
    np.testing.assert_allclose(r["p_adjusted"], adj, rtol=1e-12)


def test_fdr_adjust_nan_never_rejected_and_does_not_change_the_others():
    p = np.array([0.004, np.nan, 0.03, np.nan, 0.2])
    r = fdr_adjust(p, method="by", alpha=0.9)
    assert (
        r["in_family"].tolist() == [True, False, True, False, True]
        and (r["family_size"] == 3).all()
    )
    assert not r["reject"][1] and not r["reject"][3] and r["p_adjusted"][[1, 3]].isna().all()
    _, adj, _, _ = multipletests(p[~np.isnan(p)], method="fdr_by")
    np.testing.assert_allclose(r["p_adjusted"].dropna(), adj, rtol=1e-12)
    assert fdr_adjust([np.nan, np.nan])["family_size"].tolist() == [0, 0]


@pytest.mark.parametrize("bad", ["x", "y"])
def test_spearman_exact_refuses_nan(bad):
    "A NaN used to give rho = NaN with p = 0.0 and exact = True."
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0]
    kw = {"x": x, "y": y}
    kw[bad] = [np.nan] + kw[bad][1:]
    with pytest.raises(FairlibInputError, match=f"`{bad}`|{bad}"):
        spearman_exact(kw["x"], kw["y"])


# ---- non-finite inputs (issue 24, item 1) ---------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_wild_cluster_bootstrap_refuses_non_finite_outcome(bad):
    "An infinite outcome used to give p = 1.0 (the bootstrap t of every draw was NaN or inf) without a word."
    y, g = _data(G=6, m=4, seed=1)
    y = y.copy()
    y[3] = bad
    with pytest.raises(FairlibInputError, match=r"`y`.*wild_cluster_bootstrap.*(inf|NaN)"):
        wild_cluster_bootstrap(y, g, signed=True, n_resamples=99, seed=0, with_ci=False)


@pytest.mark.parametrize("bad", [np.inf, np.nan, "0"])
def test_wild_cluster_bootstrap_refuses_non_finite_null(bad):
    y, g = _data(G=6, m=4, seed=1)
    with pytest.raises(FairlibInputError, match="`null`"):
        wild_cluster_bootstrap(y, g, signed=True, null=bad, n_resamples=99, seed=0, with_ci=False)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_cluster_bootstrap_refuses_non_finite_rows(bad):
    "An inf in one cluster's row made every resample containing it inf or NaN and the interval meaningless."
    X = np.tile([[1.0, 4.0]], (6, 1))
    X[2, 0] = bad
    with pytest.raises(FairlibInputError, match=r"`per_cluster`.*cluster_bootstrap"):
        cluster_bootstrap(X, n_resamples=50, seed=0)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_paired_permutation_test_refuses_infinite_differences(bad):
    from fairlib.stats import paired_permutation_test

    d = np.array([0.1, -0.2, 0.3, 0.05, bad, 0.2])
    with pytest.raises(FairlibInputError, match=r"`differences`.*paired_permutation_test"):
        paired_permutation_test(d, signed=True)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_fdr_adjust_refuses_infinite_p_values(bad):
    with pytest.raises(FairlibInputError, match="`p_values`"):
        fdr_adjust([0.01, bad, 0.5])


# ---- the library calls keep independent oracles (issue 26, section 6) ----------------------------------------


@pytest.mark.parametrize("b,c", [(0, 6), (1, 5), (2, 9), (12, 3), (7, 7)])
def test_mcnemar_exact_against_the_binomial_sum_by_hand(b, c):
    "mcnemar_exact calls statsmodels; the oracle is 2 * sum_{k <= min(b, c)} C(n, k) / 2^n, capped at 1."
    n = b + c
    by_hand = min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n)
    assert mcnemar_exact(b, c).p_value == pytest.approx(by_hand, rel=1e-12)


def test_mcnemar_exact_a_textbook_table():
    "Agresti's 2 x 2 example of paired approval ratings: 150 and 86 discordant pairs; exact p well below .001."
    r = mcnemar_exact(150, 86)
    assert (
        r.p_value == pytest.approx(sps.binomtest(86, 236, 0.5).pvalue, rel=1e-10)
        and r.p_value < 1e-4
    )
    assert r.confirmatory and r.n_discordant == 236


def _sign_flip_p(d):
    d = np.asarray(d, float)
    S = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
    return np.mean(np.abs((S * d).mean(1)) >= abs(d.mean()) - 1e-12)


@given(
    st.lists(
        st.sampled_from([-1.0, -2 / 3, -1 / 3, -0.5, 0.0, 1 / 3, 0.5, 2 / 3, 1.0, 0.25]),
        min_size=2,
        max_size=9,
    )
)
@settings(max_examples=60, deadline=None)
def test_paired_permutation_exact_matches_enumeration_by_hand(d):
    "scipy enumerates the 2^G sign vectors; the oracle enumerates them with itertools (ties of cancelling sums)."
    from fairlib.stats import paired_permutation_test

    r = paired_permutation_test(d, signed=True)
    if not np.any(np.asarray(d) != 0):
        assert np.isnan(r.p_value) and "no information" in r.reason
        return
    assert r.exact and r.n_resamples == 2 ** len(d)
    assert r.p_value == _sign_flip_p(d)


def test_paired_permutation_averages_within_clusters_first():
    from fairlib.stats import paired_permutation_test

    d = [1.0, 0.0, 1.0, 1.0, -1.0, 0.0, 1.0, 1.0]
    cl = ["a", "a", "b", "b", "c", "c", "d", "d"]
    r = paired_permutation_test(d, cl, signed=True)
    means = [0.5, 1.0, -0.5, 1.0]
    assert r.n_clusters == 4 and r.estimate == pytest.approx(np.mean(means))
    assert r.p_value == _sign_flip_p(means)  # by hand: |sum| >= 2 in 6 of the 16 sign vectors
    assert r.p_value == 6 / 16


def test_paired_permutation_monte_carlo_is_close_to_exact():
    from fairlib.stats import paired_permutation_test

    d = np.random.default_rng(4).normal(0.3, 1, 16)
    exact = paired_permutation_test(d, signed=True)
    mc = paired_permutation_test(d, signed=True, enumerate_limit=100, n_resamples=20000, seed=2)
    assert exact.exact and not mc.exact and mc.n_resamples == 20000
    hits = mc.p_value * 20001 - 1
    assert abs(hits - round(hits)) < 1e-6  # (1 + hits) / (1 + B)
    assert (
        abs(mc.p_value - exact.p_value)
        < 4 * np.sqrt(exact.p_value * (1 - exact.p_value) / 20000) + 1e-4
    )
    again = paired_permutation_test(d, signed=True, enumerate_limit=100, n_resamples=20000, seed=2)
    assert again.p_value == mc.p_value
    # asked for at least 2^G random vectors, scipy enumerates them all: the exact p, flagged exact
    small = paired_permutation_test(
        d[:10], signed=True, enumerate_limit=100, n_resamples=5000, seed=2
    )
    assert small.exact and small.n_resamples == 1024 and small.p_value == _sign_flip_p(d[:10])


def test_spearman_exact_ties_against_the_permutation_distribution_by_hand():
    "Midranks: the exact p is the share of the 5! orderings of y's ranks with |rho*| >= |rho| (scipy.spearmanr each)."
    x, y = [1, 2, 2, 3, 4], [2, 1, 3, 3, 5]
    r = spearman_exact(x, y)
    rho = sps.spearmanr(x, y).statistic
    perm = np.array(
        [
            sps.spearmanr(x, np.asarray(y)[list(p)]).statistic
            for p in itertools.permutations(range(5))
        ]
    )
    assert r.rho == pytest.approx(rho) and r.n_permutations == 120 and r.exact
    assert r.p_value == pytest.approx(np.mean(np.abs(perm) >= abs(rho) - 1e-12))


def test_spearman_monte_carlo_branch_is_seeded_and_never_zero():
    x = np.arange(11.0)
    a = spearman_exact(x, x, n_resamples=2000, seed=5)
    b = spearman_exact(x, x, n_resamples=2000, seed=5)
    assert not a.exact and a.n_permutations == 2000 and a.p_value == b.p_value
    assert a.p_value == pytest.approx(
        1 / 2001
    )  # only the identity and its reverse reach |rho| = 1: (1 + 0)/(1 + B)
    assert spearman_exact(
        [1, 2, 3, 5], [2, 1, 4, 3], max_exact_n=3, n_resamples=24
    ).exact  # 4! drawn: enumerated


def test_cluster_bootstrap_resamples_are_numpy_cluster_draws():
    "scipy.stats.bootstrap draws the cluster indices; the oracle redraws them with numpy and takes np.percentile."
    per = np.array([[3, 45], [0, 45], [10, 45], [1, 45], [6, 40], [2, 30]])
    r = cluster_bootstrap(per, n_resamples=3000, confidence_level=0.9, seed=11)
    idx = np.random.default_rng(11).integers(0, 6, size=(3000, 6))
    dist = per[idx, 0].sum(1) / per[idx, 1].sum(1)
    np.testing.assert_array_equal(r.distribution, dist)
    np.testing.assert_allclose(r.ci, np.percentile(dist, [5, 95]), rtol=1e-12)
    assert r.se == pytest.approx(dist.std(ddof=1), rel=1e-12) and r.n_undefined == 0
    assert r.estimate == pytest.approx(22 / 250)


def test_cluster_bootstrap_undefined_resamples_are_counted_and_left_out():
    "A resample of clusters with no comparison gives 0/0: counted in n_undefined, not turned into an interval of NaN."
    per = np.array([[0, 0], [0, 0], [3, 10]])
    r = cluster_bootstrap(per, n_resamples=2000, seed=0)
    idx = np.random.default_rng(0).integers(0, 3, size=(2000, 3))
    undefined = int((idx == 2).sum(1).__eq__(0).sum())  # resamples without cluster 2
    assert r.n_undefined == undefined > 0
    # every defined resample pools only cluster 2's rows: 0.3
    assert r.ci == pytest.approx((0.3, 0.3)) and np.isnan(r.distribution).sum() == undefined
    allnan = cluster_bootstrap(np.array([[0, 0], [0, 0]]), n_resamples=50, seed=0)
    assert np.isnan(allnan.ci).all() and allnan.n_undefined == 50 and np.isnan(allnan.estimate)
