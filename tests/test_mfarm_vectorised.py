"""The mFARM sub-metrics run scipy once per family of tests (not once per column) and the power search runs only the
shifted variant's tests: the answers must be exactly those of one scipy call per column and of the full Mean
Difference, to the last bit (the main job's tables may not move)."""

import numpy as np
import pytest
from scipy import stats

from fairlib.mfarm.instrument import PROMPT_VARIANTS
from fairlib.mfarm.submetrics import (
    _mean_difference_counts,
    absolute_deviation,
    ks_distribution,
    mean_difference,
)

V = list(PROMPT_VARIANTS)


def matrix(n, kind, seed):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.uniform(0.1, 0.9, n)[:, None] + rng.normal(0, 0.05, (n, 13)), 0, 1)
    if kind == "rounded":  # tied values and tied differences
        X = np.round(X, 2)
    elif (
        kind == "repeated"
    ):  # one column equal to BASE (all-zero differences), a few cases tied to BASE
        X[:, 3] = X[:, 0]
        X[:7, 5] = X[:7, 0]
    elif kind == "shifted":
        X[:, 4] = np.clip(X[:, 4] + 0.05, 0, 1)
    return X


def per_column_wilcoxon(D, method):
    "Oracle: one scipy call per column; a column of zeros is p = 1."
    return [
        (None, 1.0) if not np.any(d) else tuple(map(float, stats.wilcoxon(d, method=method)))
        for d in D.T
    ]


def peer(G, j):
    return G[:, j] - np.delete(G, j, axis=1).mean(1)


def zap(d):
    return np.where(np.abs(d) < 1e-12, 0.0, d)


@pytest.mark.parametrize("n", [51, 80, 200])
@pytest.mark.parametrize("kind", ["plain", "rounded", "repeated", "shifted"])
@pytest.mark.parametrize("method", ["auto", "approx"])
def test_wilcoxon_families_equal_one_call_per_column(n, kind, method):
    X = matrix(n, kind, seed=n)
    G = X[:, 1:]
    md = mean_difference(X, V, wilcoxon_method=method).comparisons
    want = per_column_wilcoxon(zap(G - X[:, [0]]), method) + per_column_wilcoxon(
        zap(np.column_stack([peer(G, j) for j in range(12)])), method
    )
    for c, (s, p) in zip(md, want):
        assert c.p_raw == p and (s is None and np.isnan(c.statistic) or c.statistic == s)
    D = np.abs(G - X[:, [0]])
    ad = absolute_deviation(X, V, wilcoxon_method=method).comparisons
    for c, (s, p) in zip(
        ad, per_column_wilcoxon(zap(np.column_stack([peer(D, j) for j in range(12)])), method)
    ):
        assert c.p_raw == p and (s is None and np.isnan(c.statistic) or c.statistic == s)


@pytest.mark.parametrize("n", [4, 20, 80])
@pytest.mark.parametrize("method", ["exact", "asymp"])
def test_ks_family_equals_one_call_per_variant(n, method):
    X = matrix(n, "rounded", seed=7 + n)
    got = [(c.statistic, c.p_raw) for c in ks_distribution(X, V, ks_method=method).comparisons]
    assert got == [
        tuple(map(float, stats.ks_2samp(X[:, j], X[:, 0], method=method))) for j in range(1, 13)
    ]


@pytest.mark.parametrize("seed", range(6))
def test_counts_equal_the_full_mean_difference(seed):
    n = (80, 12, 51)[seed % 3]
    X = matrix(n, ("plain", "shifted", "rounded", "repeated")[seed % 4], seed)
    full = mean_difference(X, V).comparisons
    for j in range(1, 13):
        assert _mean_difference_counts(X, j) == any(c.counted and c.group == V[j] for c in full)


def test_counts_equal_the_full_mean_difference_on_the_power_search_matrices():
    """As the power search uses it: permuted null matrices, one variant shifted along the grid. Both outcomes and both
    families (a variant detected only against its peers: BASE moved with it) must occur, or the test shows nothing."""
    from fairlib.mfarm.reliability import DEFAULT_SHIFTS, null_matrix

    rng = np.random.default_rng(2024)
    seen, families = set(), set()
    for n, method in ((80, "auto"), (51, "approx"), (30, "auto"), (12, "auto")):
        X = matrix(n, "plain", seed=n)
        for r in range(3):
            Z0 = null_matrix(X, rng)
            j = 1 + r * 5  # 1, 6, 11
            for d in DEFAULT_SHIFTS[::2]:
                for with_base in (False, True):
                    Z = Z0.copy()
                    Z[:, j] = np.clip(Z[:, j] + d, 0, 1)
                    if (
                        with_base
                    ):  # BASE moves too: no evidence against BASE, evidence against the peers
                        Z[:, 0] = np.clip(Z[:, 0] + d, 0, 1)
                    full = [
                        c
                        for c in mean_difference(Z, V, wilcoxon_method=method).comparisons
                        if c.group == V[j]
                    ]
                    want = any(c.counted for c in full)
                    assert _mean_difference_counts(Z, j, wilcoxon_method=method) == want, (
                        n,
                        r,
                        d,
                        with_base,
                    )
                    seen.add(want)
                    families |= {c.family for c in full if c.counted}
    assert seen == {True, False} and families == {"base", "peer"}
