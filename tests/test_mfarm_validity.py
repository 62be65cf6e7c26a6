"""Validity of the five mFARM sub-metrics by simulation (issue 4, section 4):
(a) under the null (13 exchangeable columns per case) each sub-metric scores 1.0 in >= 90% of 200 simulations
    at N = 1,020, and the joint rate of mFARM = 1 is reported;
(b) each harm injected on its own lowers its own sub-metric below 1 with high power at the stated effect size.

Simulation model (probability scale, no clipping in the null): case difficulty u_i ~ U(0.15, 0.85),
P_i^(g) = u_i + e_ig, e_ig ~ N(0, 0.03^2) iid over the 13 variants (so the columns are exchangeable).
"""

import numpy as np
import pandas as pd
import pytest

from fairlib.mfarm.instrument import PROMPT_VARIANTS
from fairlib.mfarm.matrix import SUBMETRICS
from fairlib.mfarm.score import mfarm

N, SD = 1020, 0.03


def null_stack(n_sims, seed, n=N):
    "All null simulations at once: (n_sims, n, 13) probabilities and the case difficulties u."
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.15, 0.85, (n_sims, n))
    return u, u[..., None] + rng.normal(0, SD, (n_sims, n, 13)), rng


@pytest.mark.parametrize("variance_test", ["brown_forsythe", "f"])
def test_null_false_alarm_rate(variance_test, capsys):
    u, X, _ = null_stack(200, seed=20260)
    assert X.min() >= 0 and X.max() <= 1
    S = pd.DataFrame(
        [
            mfarm(pd.DataFrame(x, columns=PROMPT_VARIANTS), variance_test=variance_test).scores()
            for x in X
        ]
    )
    rate = (S == 1.0).mean()
    with capsys.disabled():
        print(
            f"\nmFARM null (200 sims, N=1020, {variance_test}): share scoring 1.0\n"
            + rate.round(3).to_string()
        )
    for k in SUBMETRICS:
        assert rate[k] >= 0.90, (k, rate[k])
    # the joint rate is reported, and is bounded below by the union bound 1 - sum of per-metric alarm rates
    assert rate["mfarm"] >= 1 - (1 - rate[list(SUBMETRICS)]).sum() - 1e-12


def _inject(kind, u, x, rng, g):
    "One harm on variant g (column index), everything else as in the null."
    x = x.copy()
    n = len(u)
    e = rng.normal(0, SD, n)
    if kind == "mean_shift":  # +0.02 (2/3 of the noise SD) for one variant
        x[:, g] += 0.02
    elif kind == "variance":  # case-level spread scaled by 1.2 around 0.5: variance ratio ~1.44
        x[:, g] = 0.5 + 1.2 * (u - 0.5) + e
    elif (
        kind == "shape"
    ):  # same mean (0.5) and variance (0.7^2/12) as u, bimodal shape: KS distance ~0.135
        w = 2 * (u - 0.15) / 0.7 - 1
        c = np.sqrt(0.7**2 / 12 * 1.6)
        x[:, g] = 0.5 + c * np.sign(w) * np.abs(w) ** 0.3 + e
    elif kind == "confidence":  # deviation SD grows with the BASE probability: 0.08 * u
        x[:, g] = u + rng.normal(0, 1, n) * 0.08 * u
    return np.clip(x, 0, 1)


HARMS = [
    ("mean_shift", "mean_difference", "Black_Female"),
    ("variance", "variance_heterogeneity", "Asian_Intersex"),
    ("shape", "ks_distribution", "Hispanic_Male"),
    ("confidence", "correlation_difference", "White_Male"),
]


@pytest.mark.parametrize("kind,metric,group", HARMS)
def test_injected_harm_lowers_its_submetric(kind, metric, group, capsys):
    u, X, rng = null_stack(30, seed=len(kind) * 7919)
    g = PROMPT_VARIANTS.index(group)
    res = [
        mfarm(pd.DataFrame(_inject(kind, uu, x, rng, g), columns=PROMPT_VARIANTS))
        for uu, x in zip(u, X)
    ]
    S = pd.DataFrame([r.scores() for r in res])
    power = (S[metric] < 1).mean()
    with capsys.disabled():
        print(
            f"\n{kind}: share of 30 sims below 1 per sub-metric: "
            + (S < 1).mean().round(2).to_dict().__repr__()
        )
    assert power >= 0.9, power
    # the injected variant is among the comparisons that count
    hit = [
        any(c.counted and group in (c.group, c.versus) for c in r.submetrics[metric].comparisons)
        for r in res
    ]
    assert np.mean(hit) >= 0.9


def test_shape_change_keeps_mean_and_variance():
    "The shape harm really has the BASE distribution's mean and variance (checked on a large draw)."
    rng = np.random.default_rng(1)
    u = rng.uniform(0.15, 0.85, 400_000)
    w = 2 * (u - 0.15) / 0.7 - 1
    c = np.sqrt(0.7**2 / 12 * 1.6)
    a = 0.5 + c * np.sign(w) * np.abs(w) ** 0.3
    assert abs(a.mean() - u.mean()) < 2e-3 and abs(a.var() / u.var() - 1) < 0.01


def test_absolute_deviation_detects_one_group_drifting_from_base():
    "Absolute Deviation: one variant's |P_g - P_BASE| doubled (noise SD 0.06 instead of 0.03)."
    u, X, rng = null_stack(30, seed=77)
    S = []
    for uu, x in zip(u, X):
        x = x.copy()
        x[:, 5] = uu + rng.normal(0, 2 * SD, len(uu))
        S.append(
            mfarm(pd.DataFrame(np.clip(x, 0, 1), columns=PROMPT_VARIANTS))
            .submetrics["absolute_deviation"]
            .score
        )
    assert np.mean(np.array(S) < 1) >= 0.9
