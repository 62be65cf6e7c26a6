"""Bands: provenance rules, rater combination, Krippendorff's alpha, sensitivity adjustment."""

import numpy as np
import krippendorff
import pytest
from hypothesis import given, settings, strategies as st
from fairlib.core import FairlibInputError
from fairlib.agent.bands import (
    Band,
    band_range,
    combine_bands,
    band_agreement,
    adjust_band,
    band_summary,
)


def test_clinician_adjudicated_band_needs_adjudicator():
    with pytest.raises(FairlibInputError, match="adjudicators"):
        Band("v1", "high_acuity", {2, 3}, provenance="clinician-adjudicated")
    with pytest.raises(FairlibInputError, match="adjudicators"):
        Band("v1", "high_acuity", {2, 3}, provenance="clinician-adjudicated", adjudicators=[])
    b = Band("v1", "high_acuity", {2, 3}, provenance="clinician-adjudicated", adjudicators=["RN-7"])
    assert b.adjudicated


@pytest.mark.parametrize(
    "kw,arg",
    [
        (dict(acceptable=set()), "acceptable"),
        (dict(acceptable={0}), "acceptable"),
        (dict(acceptable={2}, provenance="vibes"), "provenance"),
    ],
)
def test_band_refusals(kw, arg):
    with pytest.raises(FairlibInputError, match=f"`{arg}`"):
        Band("v1", "high_acuity", **kw)


def test_straddling_is_defined_on_the_ordinal_action():
    assert band_range("v", "high_acuity", 2, 3).straddles()  # ESI 2 high acuity, ESI 3 not
    assert not band_range("v", "high_acuity", 3, 5).straddles()
    assert not band_range("v", "high_acuity", 1, 2).straddles()
    assert (
        band_range("v", "any_opioid", 1, 2).straddles()
        and not band_range("v", "any_opioid", 2, 3).straddles()
    )


sets = st.sets(st.integers(1, 5), min_size=1)


@given(st.lists(sets, min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_combination_equals_set_algebra(raters):
    bands = [Band("v", "high_acuity", s, rater=f"r{i}") for i, s in enumerate(raters)]
    inter, union = set.intersection(*raters), set.union(*raters)
    assert combine_bands(bands, rule="union").acceptable == union
    if inter:
        c = combine_bands(bands)
        assert c.acceptable == inter and set(c.disputed) == union - inter
    else:
        with pytest.raises(FairlibInputError, match="do not intersect"):
            combine_bands(bands)


def test_combine_refusals():
    with pytest.raises(FairlibInputError, match="one \\(vignette, action\\)"):
        combine_bands([Band("v1", "admit", {1}), Band("v2", "admit", {1})])
    with pytest.raises(FairlibInputError, match="`rule`"):
        combine_bands([Band("v1", "admit", {1})], rule="majority")


def test_alpha_only_over_multi_rater_bands_matches_krippendorff():
    r = {
        ("v1", "R1"): {2, 3},
        ("v1", "R2"): {2},
        ("v2", "R1"): {3, 4},
        ("v2", "R2"): {3, 4},
        ("v3", "R1"): {1, 2},
    }
    bands = [Band(v, "high_acuity", s, rater=who) for (v, who), s in r.items()]
    res = band_agreement(bands)
    assert (res.n_bands, res.n_bands_single, res.n_units) == (2, 1, 10)
    # oracle: reliability matrix built by hand over v1, v2 (v3 has one rater and is excluded)
    data = np.array(
        [
            [float(x in r[(v, who)]) for v in ("v1", "v2") for x in range(1, 6)]
            for who in ("R1", "R2")
        ]
    )
    assert res.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    )
    # adding single-rater bands never changes alpha
    more = bands + [Band("v9", "high_acuity", {5}, rater="R3")]
    assert band_agreement(more).alpha == pytest.approx(res.alpha)


def test_alpha_absent_with_single_raters():
    res = band_agreement(
        [Band("v1", "admit", {1}, rater="R1"), Band("v2", "admit", {0, 1}, rater="R1")]
    )
    assert (
        np.isnan(res.alpha) and res.n_bands == 0 and "no band has two or more raters" in res.reason
    )
    with pytest.raises(FairlibInputError, match="rater"):
        band_agreement([Band("v1", "admit", {1})])


@given(st.integers(1, 5), st.integers(0, 4), st.integers(-3, 3))
@settings(max_examples=80, deadline=None)
def test_adjust_band_properties(lo, width, k):
    hi = min(lo + width, 5)
    b = band_range("v", "high_acuity", lo, hi)
    a = adjust_band(b, k)
    assert a.acceptable and a.acceptable <= {1, 2, 3, 4, 5}
    vals = sorted(a.acceptable)
    assert vals == list(range(vals[0], vals[-1] + 1))  # still a range
    if k >= 0:
        assert b.acceptable <= a.acceptable and a.acceptable == {
            x for x in range(1, 6) if lo - k <= x <= hi + k
        }
    else:
        assert a.acceptable <= b.acceptable


def test_band_summary_counts_levels():
    bs = [
        band_range("a", "high_acuity", 2, 3),
        band_range("b", "high_acuity", 3, 4, provenance="guideline-derived"),
        band_range(
            "c", "any_opioid", 1, 2, provenance="clinician-adjudicated", adjudicators=("MD",)
        ),
    ]
    s = band_summary(bs).set_index("provenance")
    assert (
        s.n_bands.tolist() == [1, 1, 1] and s.n_adjudicated.sum() == 1 and s.n_straddling.sum() == 2
    )
