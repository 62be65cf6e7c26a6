"""Instability floor against brute-force enumeration of replicate pairs and disjoint groups."""

import itertools
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from fairlib.core import FairlibInputError
from fairlib.agent.floor import (
    instability_floor,
    majority_vote_floor,
    majority_vote_curve,
    null_majority_vote_curve,
    floor_bootstrap,
    floor_rank_correlation,
)
from fairlib.agent.simulate import simulate_trajectories


@pytest.fixture(scope="module")
def study():
    return simulate_trajectories(12, 7, seed=5)


def _cells(t):
    return {
        k: g.sort_values("replicate").value.to_numpy() for k, g in t.groupby(["vignette", "action"])
    }


def test_floor_equals_bruteforce_pair_enumeration(study):
    t = study.trajectories
    f = instability_floor(t)
    flips = comps = 0
    per = {}
    for (v, a), x in _cells(t).items():
        fl = sum(x[i] != x[j] for i, j in itertools.combinations(range(len(x)), 2))
        per.setdefault(a, [0, 0])
        per[a][0] += fl
        per[a][1] += len(x) * (len(x) - 1) // 2
        flips += fl
        comps += len(x) * (len(x) - 1) // 2
    assert (f.flips, f.comparisons) == (flips, comps) and f.floor == pytest.approx(flips / comps)
    pa = f.per_action.set_index("action")
    for a, (fl, c) in per.items():
        assert pa.loc[a, "flips"] == fl and pa.loc[a, "comparisons"] == c
    # homogeneous null 2p(1-p) from each action's positive rate, and the ratio
    p = t.groupby("action").value.mean()
    np.testing.assert_allclose(pa.homogeneous_null, (2 * p * (1 - p)).reindex(pa.index))
    np.testing.assert_allclose(pa.null_ratio, pa.floor / pa.homogeneous_null)
    un = sum(len(set(x)) == 1 for x in _cells(t).values())
    assert f.n_unanimous == un and pa.unanimous_cells.sum() == un


def test_paper_arithmetic_for_comparison_counts():
    t = simulate_trajectories(16, 10, seed=0).trajectories
    f = instability_floor(t)
    assert f.comparisons == 4320 and set(f.per_action.comparisons) == {
        720
    }  # 45 pairs x 16 vignettes (x 6 actions)


@pytest.mark.parametrize("depth", [1, 3])
def test_majority_vote_floor_equals_bruteforce_disjoint_groups(study, depth):
    t = study.trajectories
    flips = comps = 0
    for x in _cells(t).values():
        R = len(x)
        for g1 in itertools.combinations(range(R), depth):
            rest = [i for i in range(R) if i not in g1]
            for g2 in itertools.combinations(rest, depth):
                if g2 < g1:
                    continue  # unordered pair of disjoint groups
                m1, m2 = x[list(g1)].sum() * 2 > depth, x[list(g2)].sum() * 2 > depth
                flips += m1 != m2
                comps += 1
    assert majority_vote_floor(t, depth) == pytest.approx(flips / comps)


def test_majority_vote_refusals(study):
    t = study.trajectories
    with pytest.raises(FairlibInputError, match="odd"):
        majority_vote_floor(t, 2)
    with pytest.raises(FairlibInputError, match="at least 10 replicates"):
        majority_vote_floor(t, 5)
    c = majority_vote_curve(t, (1, 3))
    assert c.share_removed.iloc[0] == 0 and c.floor.iloc[0] == pytest.approx(
        instability_floor(t).floor
    )


def test_floor_refuses_mixed_models_conditions_and_ragged_cells(study):
    t = study.trajectories
    with pytest.raises(FairlibInputError, match="mixes 2 models"):
        instability_floor(pd.concat([t, t.assign(model="other")]))
    with pytest.raises(FairlibInputError, match="one repeated condition"):
        instability_floor(pd.concat([t, t.assign(condition="lep")]))
    with pytest.raises(FairlibInputError, match="missing action"):
        instability_floor(t.drop(index=t.index[0]))
    with pytest.raises(FairlibInputError, match="same replicates"):
        instability_floor(t[~((t.vignette == t.vignette.iloc[0]) & (t.replicate == 0))])
    assert (
        instability_floor(pd.concat([t, t.assign(model="other")]), model="other").floor
        == instability_floor(t).floor
    )


def test_null_curve_expected_value_at_depth1():
    t = simulate_trajectories(16, 10, seed=4).trajectories
    f = instability_floor(t)
    p = (f.cells.k / f.cells.n).to_numpy()
    # paper's version: binomial draws at p = k/R, so the depth-1 null mean is mean 2 p (1 - p) (biased low)
    obs = null_majority_vote_curve(t, (1, 3), n_resamples=400, seed=0, cell_rates="observed")
    assert abs(obs.null_mean.iloc[0] - np.mean(2 * p * (1 - p))) < 0.003
    # default debiased rates: the depth-1 null mean reproduces the observed floor in expectation
    # (exactly, except that cells split so evenly that k(R-k)/(R(R-1)) > 1/4 are capped at p = 1/2)
    deb = null_majority_vote_curve(t, (1, 3), n_resamples=400, seed=0)
    k, R = f.cells.k.to_numpy(), 10
    q = k * (R - k) / (R * (R - 1))
    assert abs(deb.null_mean.iloc[0] - np.mean(2 * np.minimum(q, 0.25))) < 0.0015
    assert abs(np.mean(2 * q) - f.floor) < 1e-12  # uncapped, it is the observed floor itself
    for nc in (obs, deb):
        assert (nc.null_lo <= nc.null_mean).all() and (nc.null_mean <= nc.null_hi).all()
    pd.testing.assert_frame_equal(deb, null_majority_vote_curve(t, (1, 3), n_resamples=400, seed=0))
    with pytest.raises(FairlibInputError, match="cell_rates"):
        null_majority_vote_curve(t, (1,), n_resamples=10, cell_rates="plug-in")


def test_null_curve_holds_size_when_cells_are_independent_bernoulli():
    # data generated exactly as the null assumes: the observed deepest-depth floor falls inside the
    # debiased 95% null band in most studies
    inside = 0
    for seed in range(25):
        t = simulate_trajectories(16, 10, seed=200 + seed).trajectories
        nc = null_majority_vote_curve(t, (5,), n_resamples=200, seed=seed)
        fl = majority_vote_floor(t, 5)
        inside += nc.null_lo.iloc[0] <= fl <= nc.null_hi.iloc[0]
    assert inside >= 20


def test_floor_bootstrap_clusters_on_vignette(study):
    t = study.trajectories
    b = floor_bootstrap(t, n_resamples=1000, seed=0)
    f = instability_floor(t)
    assert (
        b.estimate == pytest.approx(f.floor)
        and b.n_clusters == 12
        and b.ci[0] <= f.floor <= b.ci[1]
    )
    # a floor carried by one vignette has a wide interval reaching 0
    one = t.copy()
    one["value"] = 0
    one["ordinal"] = np.nan
    sel = (one.vignette == one.vignette.iloc[0]) & (one.action == "admit")
    one.loc[sel, "value"] = (one.loc[sel, "replicate"] % 2).to_numpy()
    bo = floor_bootstrap(one, n_resamples=1000, seed=0)
    assert bo.ci[0] == 0 and bo.ci[1] > bo.estimate
    with pytest.raises(FairlibInputError, match="no cells for action"):
        floor_bootstrap(t, action="teleport")


def test_rank_correlation_two_models():
    s = simulate_trajectories(16, 10, models={"a": 10, "b": 6}, model_shift=0.3, seed=3)
    r, fl = floor_rank_correlation(s.trajectories)
    ref = sps.spearmanr(fl["a"], fl["b"]).statistic
    assert r.rho == pytest.approx(ref) and r.exact and r.n == len(fl)
    with pytest.raises(FairlibInputError, match="exactly two models"):
        floor_rank_correlation(simulate_trajectories(4, 3, seed=0).trajectories)
