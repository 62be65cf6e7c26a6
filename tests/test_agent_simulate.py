"""Validation on simulated trajectories with known truth: floor recovery, McNemar type-I error and power,
WCFR at band edges, the simulator's own contract."""

import numpy as np
import pytest
from fairlib.core import FairlibInputError
from fairlib.agent.simulate import (
    simulate_trajectories,
    simulate_cell_probabilities,
    simulate_bands,
    simulate_signed_differences,
)
from fairlib.agent.floor import instability_floor, floor_bootstrap
from fairlib.agent.metrics import paired_actions, within_range_flip_rate, counterfactual_flip_rate
from fairlib.stats import mcnemar_pairs, wild_cluster_bootstrap


def test_floor_recovers_simulated_truth_per_action():
    # 400 vignettes x 10 replicates: the estimator is unbiased for mean 2p(1-p); tolerance 4 binomial-ish s.e.
    s = simulate_trajectories(400, 10, seed=11)
    f = instability_floor(s.trajectories).per_action.set_index("action").floor
    truth = s.true_floor.set_index("action").true_floor
    for a in truth.index:
        assert abs(f[a] - truth[a]) < 0.02, (a, f[a], truth[a])


def test_floor_estimator_unbiased_over_seeds():
    est, tru = [], []
    for seed in range(40):
        s = simulate_trajectories(16, 10, seed=seed)
        est.append(instability_floor(s.trajectories).floor)
        tru.append(s.true_floor.true_floor.mean())  # equal comparisons per action: pooled = mean
    d = np.array(est) - np.array(tru)
    assert abs(d.mean()) < 3 * d.std(ddof=1) / np.sqrt(len(d)) + 1e-3


def test_floor_bootstrap_interval_covers_truth_mostly():
    hits = 0
    for seed in range(40):
        s = simulate_trajectories(16, 10, seed=100 + seed)
        b = floor_bootstrap(s.trajectories, n_resamples=400, seed=seed)
        hits += b.ci[0] <= s.true_floor.true_floor.mean() <= b.ci[1]
    assert (
        hits >= 32
    )  # percentile cluster bootstrap at G = 16: nominal 95%, allow under-coverage to 80%


def _mcnemar_study(effect, seed, n=300):
    eff = {("comparison", "admit"): effect} if effect else {}
    s = simulate_trajectories(
        n,
        1,
        conditions=("reference", "comparison"),
        effects=eff,
        settled_noise=0.1,
        actions=("admit",),
        seed=seed,
    )
    p = paired_actions(
        s.trajectories, action="admit", reference="reference", comparison="comparison"
    )
    return mcnemar_pairs(p.phi_ref, p.phi_cmp)


def test_mcnemar_type_one_error_under_no_effect():
    res = [_mcnemar_study(0.0, seed) for seed in range(200)]
    rate = np.mean([r.p_value <= 0.05 for r in res if r.defined])
    assert rate <= 0.05 + 0.035  # exact conditional test is conservative; +2.3 MC s.e.


def test_mcnemar_detects_injected_effect():
    res = [_mcnemar_study(-1.5, seed) for seed in range(30)]
    assert np.mean([r.p_value <= 0.05 for r in res]) > 0.8
    assert all(
        r.b > r.c for r in res[:10]
    )  # effect lowers the comparison arm: b (ref 1, cmp 0) dominates


def test_wcfr_at_band_edges_on_simulated_bands():
    s = simulate_trajectories(
        60, 1, conditions=("reference", "lep"), effects={("lep", "high_acuity"): 1.0}, seed=3
    )
    p = paired_actions(
        s.trajectories, action="high_acuity", reference="reference", comparison="lep"
    )
    vig = p.vignette.tolist()
    # no band straddles the threshold: NA with an empty denominator, never 0
    none = simulate_bands(vig, "high_acuity", straddle_share=0.0, seed=0)
    r = within_range_flip_rate(p.a_ref, p.a_cmp, vig, action="high_acuity", bands=none)
    assert np.isnan(r.value) and r.n_straddling == 0
    # every band exactly the two values at the threshold edge: rate = CFR among pairs at the edge values
    edge = simulate_bands(vig, "high_acuity", straddle_share=1.0, seed=0)
    r = within_range_flip_rate(p.a_ref, p.a_cmp, vig, action="high_acuity", bands=edge)
    at = p.a_ref.isin([2, 3]) & p.a_cmp.isin([2, 3])
    assert r.n_straddling == at.sum() and r.value == pytest.approx(
        counterfactual_flip_rate(p.phi_ref[at], p.phi_cmp[at]).value
    )
    # unadjudicated simulated bands: number with ground_truth False
    un = simulate_bands(vig, "high_acuity", straddle_share=1.0, adjudicated=False, seed=0)
    r2 = within_range_flip_rate(p.a_ref, p.a_cmp, vig, action="high_acuity", bands=un)
    assert (
        r2.value == pytest.approx(r.value)
        and not r2.ground_truth
        and r2.n_unadjudicated == len(vig)
    )


def test_wcb_holds_size_under_null_at_G8():
    rej = 0
    for i in range(200):
        d = simulate_signed_differences(8, 4, effect=0.0, seed=5000 + i)
        rej += (
            wild_cluster_bootstrap(
                d.y, d.cluster, signed=True, n_resamples=399, seed=i, with_ci=False
            ).p_value
            <= 0.05
        )
    assert rej / 200 <= 0.05 + 0.04


def test_simulator_contract():
    s = simulate_trajectories(
        8,
        4,
        models={"a": 4, "b": 2},
        conditions=("reference", "black"),
        effects={("black", "any_opioid"): -2.0},
        seed=1,
    )
    t = s.trajectories
    assert set(t.model) == {"a", "b"} and t[t.model == "b"].replicate.max() == 1
    c = s.cells.set_index(["model", "condition", "vignette", "action"]).p
    ref, blk = c.xs(("a", "reference"), level=[0, 1]), c.xs(("a", "black"), level=[0, 1])
    op = ref.index.get_level_values("action") == "any_opioid"
    assert (blk[op] <= ref[op] + 1e-12).all() and np.allclose(blk[~op], ref[~op])
    p = simulate_cell_probabilities(50, seed=0)
    assert ((p.p == 0) | (p.p == 1) | p.contested).all() and p.p.between(0, 1).all()
    with pytest.raises(FairlibInputError, match="`effects`"):
        simulate_trajectories(4, 2, effects={("reference", "teleport"): 1.0})
    with pytest.raises(FairlibInputError, match="`models`"):
        simulate_trajectories(4, 2, models={"a": 0})
    with pytest.raises(FairlibInputError, match="`action`"):
        simulate_bands(["v"], "admit")
