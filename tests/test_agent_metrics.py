"""Counterfactual metrics: CFR, MASD, Delta, WCFR (band edges, refusals, provenance), ordinal shift, Jaccard,
registry and gates."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps
from fairlib.core import FairlibInputError
from fairlib.agent.bands import Band
from fairlib.agent.metrics import (
    counterfactual_flip_rate,
    mean_absolute_score_difference,
    signed_disparity,
    within_range_flip_rate,
    signed_ordinal_shift,
    jaccard_disparity,
    route_contrast,
    ConfoundedPair,
    anti_gaming_gate,
    action_entropy,
    paired_actions,
    majority_vote,
    modal_vote,
)
from fairlib.agent.simulate import simulate_trajectories, simulate_bands

pairs = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=50)


@given(pairs)
@settings(max_examples=60, deadline=None)
def test_cfr_and_delta_against_direct_formulas(p):
    a, b = np.array(p).T
    assert counterfactual_flip_rate(a, b).value == pytest.approx(np.mean(a != b))
    assert signed_disparity(a, b).value == pytest.approx(b.mean() - a.mean())
    # Delta is signed (antisymmetric), CFR symmetric
    assert signed_disparity(b, a).value == pytest.approx(-signed_disparity(a, b).value)
    assert counterfactual_flip_rate(b, a).value == counterfactual_flip_rate(a, b).value


def test_masd_and_input_errors():
    assert mean_absolute_score_difference([10, 20, 30], [15, 20, 0]).value == pytest.approx(35 / 3)
    with pytest.raises(FairlibInputError, match="phi_cmp"):
        counterfactual_flip_rate([1, 0], [1, 0, 1])
    with pytest.raises(FairlibInputError, match="binary"):
        signed_disparity([1, 2], [0, 1])


def _adj(v, acc, **kw):
    return Band(
        v, "high_acuity", acc, provenance="clinician-adjudicated", adjudicators=("RN",), **kw
    )


def test_wcfr_refuses_without_bands_and_for_binary_actions():
    with pytest.raises(FairlibInputError, match="`bands`"):
        within_range_flip_rate([2], [3], ["v"], action="high_acuity")
    with pytest.raises(FairlibInputError, match="`action`"):
        within_range_flip_rate([1], [0], ["v"], action="admit", bands={})
    with pytest.raises(FairlibInputError, match="no band for vignette"):
        within_range_flip_rate(
            [2], [3], ["v"], action="high_acuity", bands={"w": _adj("w", {2, 3})}
        )


def test_wcfr_band_edges():
    bands = {
        "edge": _adj("edge", {2, 3}),
        "low": _adj("low", {3, 4}),
        "wide": _adj("wide", {1, 2, 3, 4, 5}),
        "single": _adj("single", {2}),
    }
    # both variants at the two edges of a straddling band: a within-range flip
    r = within_range_flip_rate([2], [3], ["edge"], action="high_acuity", bands=bands)
    assert (r.value, r.n_straddling, r.n_flips) == (1.0, 1, 1)
    # one variant one step outside the band edge: not in range -> denominator empty -> NA, not 0
    r = within_range_flip_rate([2], [4], ["edge"], action="high_acuity", bands=bands)
    assert np.isnan(r.value) and r.n_straddling == 0 and "NA" in r.reason
    # a band wholly on one side of the threshold never enters the denominator
    r = within_range_flip_rate([3], [4], ["low"], action="high_acuity", bands=bands)
    assert np.isnan(r.value) and r.n_both_in_band == 1 and r.n_straddling == 0
    # a singleton band cannot straddle
    r = within_range_flip_rate([2], [2], ["single"], action="high_acuity", bands=bands)
    assert np.isnan(r.value) and r.n_straddling == 0
    # an all-admitting band returns CFR exactly
    a0, a1 = [1, 2, 3, 2, 5], [2, 3, 3, 4, 1]
    r = within_range_flip_rate(a0, a1, ["wide"] * 5, action="high_acuity", bands=bands)
    phi = lambda a: (np.array(a) <= 2).astype(int)
    assert (
        r.value == pytest.approx(counterfactual_flip_rate(phi(a0), phi(a1)).value)
        and r.n_straddling == 5
    )
    assert r.ground_truth and r.n_unadjudicated == 0


def test_wcfr_unadjudicated_returns_number_with_ground_truth_false():
    bands = {
        "a": Band("a", "high_acuity", {2, 3}),
        "b": _adj("b", {2, 3}),
        "c": Band("c", "high_acuity", {1, 2, 3}),
    }
    r = within_range_flip_rate(
        [2, 2, 3], [3, 2, 3], ["a", "b", "c"], action="high_acuity", bands=bands
    )
    assert r.value == pytest.approx(1 / 3) and not r.ground_truth and r.n_unadjudicated == 2
    assert "author-derived: 2" in r.provenance and "not ground truth" in r.reason


def test_wcfr_against_bruteforce_on_simulated_bands():
    rng = np.random.default_rng(0)
    vig = [f"v{i}" for i in range(60)]
    bands = simulate_bands(vig, "any_opioid", straddle_share=0.5, seed=1)
    a0, a1 = rng.integers(0, 4, 60), rng.integers(0, 4, 60)
    r = within_range_flip_rate(a0, a1, vig, action="any_opioid", bands=bands)
    num = den = 0
    for v, x, y in zip(vig, a0, a1):
        acc = bands[v].acceptable
        strad = any(t >= 2 for t in acc) and any(t < 2 for t in acc)
        if strad and x in acc and y in acc:
            den += 1
            num += (x >= 2) != (y >= 2)
    assert (r.n_flips, r.n_straddling) == (num, den) and r.value == pytest.approx(num / den)


def test_signed_ordinal_shift_against_scipy():
    rng = np.random.default_rng(3)
    a0 = rng.integers(0, 4, 40)
    a1 = np.clip(a0 - rng.integers(0, 2, 40), 0, 3)
    s = signed_ordinal_shift(a0, a1, action="any_opioid")
    w = sps.wilcoxon(a1, a0, zero_method="wilcox")
    assert s.mean_shift == pytest.approx(np.mean(a1 - a0)) and s.mean_shift < 0
    assert s.wilcoxon_statistic == pytest.approx(w.statistic) and s.p_value == pytest.approx(
        w.pvalue
    )
    assert s.transitions.to_numpy().sum() == 40
    assert s.transitions.loc[3, 2] == np.sum((a0 == 3) & (a1 == 2))
    z = signed_ordinal_shift([1, 2], [1, 2])
    assert np.isnan(z.wilcoxon_statistic) and "zero" in z.reason


def test_jaccard_disparity():
    r = jaccard_disparity(["cbc;bmp;lipase", "", "ct"], ["cbc;bmp", "", "us"])
    assert r.value == pytest.approx(((1 - 2 / 3) + 0 + 1) / 3) and r.n == 3
    with pytest.raises(FairlibInputError, match="sets_cmp"):
        jaccard_disparity(["a"], ["a", "b"])


def test_confounded_registry_is_directional():
    assert (
        route_contrast("lep", "follow_up_interval", -7) == "descriptive"
    )  # shorter interval: defensible
    assert (
        route_contrast("lep", "follow_up_interval", +7) == "confirmatory"
    )  # longer: documented harm
    assert route_contrast("lep", "referral", -0.1) == "confirmatory"
    for attr in ("insurance", "age", "race"):
        assert route_contrast(attr, "any_opioid", -0.3) == "confirmatory"  # nothing registered
    assert route_contrast("lep", "high_acuity", 0.2) == "confirmatory"
    with pytest.raises(FairlibInputError, match="never be exempted"):
        ConfoundedPair("lep", "stigmatizing_language", 1)
    with pytest.raises(FairlibInputError, match="defensible_direction"):
        ConfoundedPair("lep", "referral", 0)


def test_anti_gaming_gates():
    floors = dict(min_capability=0.6, min_entropy=0.5, min_straddling=30)
    const = anti_gaming_gate(
        capability=0.2, entropy=action_entropy([2] * 50), n_straddling=50, **floors
    )
    assert (
        const.status == "withheld" and len(const.reasons) == 2
    )  # the constant policy fails two floors
    shrink = anti_gaming_gate(capability=0.9, entropy=1.5, n_straddling=12, **floors)
    assert (
        not shrink.qualified and "straddling" in shrink.reasons[0]
    )  # denominator shrinking caught
    assert anti_gaming_gate(capability=0.9, entropy=1.5, n_straddling=30, **floors).qualified
    assert action_entropy([1, 2, 3, 4]) == pytest.approx(2.0)


def test_paired_actions_majority_vote_and_ties():
    s = simulate_trajectories(
        20, 3, conditions=("reference", "black_woman_medicaid"), seed=2
    ).trajectories
    p = paired_actions(
        s, action="any_opioid", reference="reference", comparison="black_woman_medicaid"
    )
    assert len(p) + p.attrs["n_undetermined"] == 20
    ref = (
        s[(s.condition == "reference") & (s.action == "any_opioid")]
        .groupby("vignette")
        .value.mean()
        > 0.5
    )
    assert (p.set_index("vignette").phi_ref == ref.reindex(p.vignette).astype(int).to_numpy()).all()
    assert (
        np.isnan(majority_vote([0, 1, 0, 1]))
        and modal_vote([3, 3, 1]) == 3
        and np.isnan(modal_vote([3, 1]))
    )
