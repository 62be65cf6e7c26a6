"""fairlib.mfarm_reliability: smallest detectable shift against an independent scipy loop, verdict flip rate against
a hand count of bootstrap verdicts, null rates, and the instability floor on identical prompts."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairlib.core import cell_seed, check_rng
from fairlib.mfarm.instrument import PROMPT_VARIANTS
from fairlib.mfarm.score import mfarm
from fairlib.mfarm.reliability import (
    min_detectable_shift,
    null_matrix,
    null_submetric_rates,
    replicate_scores,
    verdict_reliability,
)

V = list(PROMPT_VARIANTS)


def noisy(n, sd=0.03, seed=1):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.15, 0.85, n)
    return pd.DataFrame(u[:, None] + rng.normal(0, sd, (n, 13)), columns=V)


def detected_by_scipy(Z, j, alpha=0.05):
    "Independent oracle: Friedman gate, then Bonferroni Wilcoxon of column j vs BASE and vs its peer mean."
    if stats.friedmanchisquare(*Z.T).pvalue > alpha:
        return False
    G = Z[:, 1:]
    g = j - 1
    d_base = Z[:, j] - Z[:, 0]
    d_peer = G[:, g] - np.delete(G, g, 1).mean(1)
    return (
        min(1, 12 * stats.wilcoxon(d_base).pvalue) <= alpha
        or min(1, 12 * stats.wilcoxon(d_peer).pvalue) <= alpha
    )


def test_power_matches_independent_loop():
    P = noisy(80)
    r = min_detectable_shift(P, n_resamples=25, seed=3, shifts=(0.01, 0.02))
    X = P[V].to_numpy()
    j = V.index("Black_Female")
    rng = check_rng(cell_seed(3, "min_detectable_shift", 80))
    nulls = [null_matrix(X, rng) for _ in range(25)]
    assert r.direction == ("up" if X.mean() < 0.5 else "down")
    for d, pw in r.curve.items():
        hits = 0
        for Z in nulls:
            Z = Z.copy()
            Z[:, j] = np.clip(Z[:, j] + (d if X.mean() < 0.5 else -d), 0, 1)  # towards the middle
            hits += detected_by_scipy(Z, j)
        assert pw == pytest.approx(hits / 25)


def test_more_cases_detect_smaller_shifts():
    small = min_detectable_shift(noisy(40), n_resamples=20, seed=0)
    large = min_detectable_shift(noisy(320), n_resamples=20, seed=0)
    assert large.shift < small.shift


def test_identical_columns_detect_any_shift():
    u = np.linspace(0.1, 0.9, 80)
    r = min_detectable_shift(pd.DataFrame({v: u for v in V}), n_resamples=5, seed=0)
    assert r.shift == 0.0025 and r.power == 1.0


def test_null_matrix_keeps_rows_and_makes_columns_exchangeable():
    X = np.array(noisy(200).to_numpy())
    X[:, 3] += 0.2
    Z = null_matrix(X, np.random.default_rng(0))
    assert np.allclose(np.sort(Z, 1), np.sort(X, 1))
    assert abs(Z[:, 3].mean() - Z[:, 4].mean()) < 0.05 < X[:, 3].mean() - X[:, 4].mean()


def test_verdict_flip_rate_matches_hand_count():
    P = noisy(60, sd=0.05, seed=4)
    P["Asian_Male"] += 0.02
    r = verdict_reliability(P, threshold=0.9, n_resamples=12, seed=7, resample_sizes=(30, 60))
    X = P[V].to_numpy()
    for m in (30, 60):
        rng = check_rng(cell_seed(7, "verdict_reliability", m))
        S = np.array(
            [
                mfarm(pd.DataFrame(X[rng.integers(0, 60, m)], columns=V), n_variants=None).score
                for _ in range(12)
            ]
        )
        npass = int((S >= 0.9).sum())
        row = r.table.query("metric == 'mfarm' and resample_size == @m").iloc[0]
        assert row.n_pass == npass and row.vfr == min(npass, 12 - npass) / 12
    f = r.to_frame()
    assert list(f.metric)[-1] == "mfarm" and ((f.vfr_at_N >= 0) & (f.vfr_at_N <= 0.5)).all()


def test_stable_size_rule():
    P = noisy(40)
    r = verdict_reliability(P, n_resamples=5, seed=0, resample_sizes=(10, 20, 40))
    t = r.table.copy()
    t.loc[:, "vfr"] = 0.0
    t.loc[(t.metric == "mfarm") & (t.resample_size == 20), "vfr"] = (
        0.4  # unstable at 20, stable at 10 and 40
    )
    t.loc[(t.metric == "ks_distribution") & (t.resample_size == 40), "vfr"] = 0.2  # unstable at N
    r2 = type(r)(t, r.point, r.threshold, r.n_cases, r.n_resamples, r.seed)
    st = r2.stable_size()
    assert st["mfarm"] == 40 and math.isnan(st["ks_distribution"]) and st["mean_difference"] == 10


def test_null_rates_are_rates():
    t = null_submetric_rates(noisy(60), n_resamples=8, seed=0)
    vals = t.drop(columns=["n_cases", "n_resamples"]).iloc[0]
    assert ((vals >= 0) & (vals <= 1)).all() and vals["any_submetric"] >= vals.drop(
        "any_submetric"
    ).max()


def test_instability_floor_on_identical_prompts():
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.llm.loading import make_tiny_model

    model, tok = make_tiny_model(seed=1)
    sc = TransformersScorer(model, tok, model_label="tiny")
    prompts = [
        f"Patient {i}: fever {38 + i % 3}, heart rate {80 + 3 * i}. Immediate care?"
        for i in range(10)
    ]
    Rm = replicate_scores(
        sc, prompts, system="Answer only in Yes or No.", seed=0, batch_sizes=(1, 3, 8)
    )
    ref = sc.score(prompts, system="Answer only in Yes or No.", cache=False, progress=False)[
        "p_yes"
    ].to_numpy()
    assert Rm.shape == (10, 13) and list(Rm.columns) == V
    assert (
        np.abs(Rm.to_numpy() - ref[:, None]).max() < 1e-4
    )  # same prompts, same answers up to rounding
    assert sc.batch_size == 8 and sc.share_prefix is True  # the scorer's settings are restored
