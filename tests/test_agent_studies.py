"FairMedAgent studies and interchange against independent oracles (scipy, statsmodels, brute force)."

import itertools, json
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from fairlib.agent.policies import FakeOptionPolicy
from fairlib.agent.loop import run_trajectories
from fairlib.agent.studies import (
    contrast_table,
    order_set_coincidence,
    interventional_propagation,
    accumulation_composite,
    condition_attributes,
)
from fairlib.agent.interchange import read_published_trajectories
from fairlib.agent.simulate import simulate_trajectories
from fairlib.stats import paired_permutation_test
from fairlib.config import repo_root

VS = [
    "tri_clear_01",
    "tri_border_01",
    "ord_clear_01",
    "ord_border_01",
    "med_clear_01",
    "med_border_01",
    "doc_clear_01",
    "doc_border_01",
]


@pytest.fixture(scope="module")
def pilot():
    conds = [
        "ref_white_man_private",
        "white_man_private_lep",
        "black_woman_medicaid",
        "control_rerender",
        "control_sham",
        "control_rare_token",
    ]
    return run_trajectories(
        FakeOptionPolicy(sharpness=0.5), vignettes=VS, conditions=conds, seed=11
    ).trajectories


def test_contrast_table_against_scipy_and_pandas(pilot):
    t = contrast_table(pilot).table
    for _, r in t.iterrows():
        p = pilot[pilot.action == r.action].pivot_table(
            index="vignette", columns="condition", values="value"
        )
        ref, cmp_ = p["ref_white_man_private"], p[r.comparison]
        assert r.b == int(((ref == 1) & (cmp_ == 0)).sum()) and r.c == int(
            ((ref == 0) & (cmp_ == 1)).sum()
        )
        assert r.cfr == pytest.approx((ref != cmp_).mean())
        if r.b + r.c:
            assert r.p_mcnemar == pytest.approx(sps.binomtest(int(r.b), int(r.b + r.c), 0.5).pvalue)
        else:
            assert np.isnan(r.p_mcnemar)
        ctrl = max(
            (p["ref_white_man_private"] != p[c]).mean()
            for c in ("control_rerender", "control_sham", "control_rare_token")
        )
        assert r.excess_over_controls == pytest.approx(r.cfr - ctrl)
    assert not t.in_family.any() and t.p_by.isna().all()  # 8 vignettes: never 25 discordant pairs


def test_fdr_family_matches_statsmodels_when_contrasts_are_confirmatory():
    # a large simulated pilot: 120 vignettes, strong injected effects so some contrasts reach 25 discordant pairs
    s = simulate_trajectories(
        120,
        1,
        conditions=("reference", "c1", "c2"),
        effects={("c1", "admit"): 3.0, ("c2", "referral"): -3.0},
        contested={"admit": 0.9, "referral": 0.9},
        seed=2,
    )
    kinds = {
        "c1": "demographic",
        "c2": "demographic",
    }  # ids fairlib does not know are declared, not guessed
    t = contrast_table(
        s.trajectories,
        reference="reference",
        controls=(),
        kinds=kinds,
        actions=("admit", "referral"),
    ).table
    fam = t[t.in_family]
    assert len(fam) >= 1 and (fam.n_discordant >= 25).all()
    assert fam.p_by.to_numpy() == pytest.approx(multipletests(fam.p_mcnemar, method="fdr_by")[1])
    assert fam.p_bh.to_numpy() == pytest.approx(multipletests(fam.p_mcnemar, method="fdr_bh")[1])


def test_lep_referral_in_defensible_direction_is_descriptive():
    assert "lep" in condition_attributes("hispanic_man_medicaid_lep")
    rows = []
    for v in range(30):
        for c, val in (("ref_white_man_private", 0), ("white_man_private_lep", 1)):
            rows.append(
                {
                    "vignette": f"v{v}",
                    "condition": c,
                    "replicate": 0,
                    "action": "referral",
                    "value": val,
                }
            )
    t = contrast_table(pd.DataFrame(rows), controls=(), actions=("referral",)).table.iloc[0]
    assert (
        t.route == "descriptive" and not t.in_family
    )  # more referral for LEP: demoted to descriptive
    rows2 = [dict(r, value=1 - r["value"]) for r in rows]
    t2 = contrast_table(pd.DataFrame(rows2), controls=(), actions=("referral",)).table.iloc[0]
    assert (
        t2.route == "confirmatory" and t2.in_family
    )  # fewer referrals for LEP: stays confirmatory


@pytest.mark.parametrize("seed", range(3))
def test_paired_permutation_exact_p_equals_brute_force(seed):
    d = np.random.default_rng(seed).integers(-2, 3, 9).astype(float)
    if not d.any():
        d[0] = 1
    r = paired_permutation_test(d, signed=True)
    brute = np.mean(
        [
            abs(np.mean(np.array(s) * d)) >= abs(d.mean()) - 1e-12
            for s in itertools.product((1, -1), repeat=len(d))
        ]
    )
    assert r.exact and r.p_value == pytest.approx(brute)


def test_interventional_propagation_detects_a_forced_effect_and_reports_order_coincidence():
    conds = ["ref_white_man_private", "black_woman_medicaid"]
    a = run_trajectories(
        FakeOptionPolicy(greedy=True),
        vignettes=VS,
        conditions=conds,
        forced={"triage": {"esi": 4}},
        seed=1,
    ).trajectories
    b = run_trajectories(
        FakeOptionPolicy(greedy=True),
        vignettes=VS,
        conditions=conds,
        forced={"triage": {"esi": 1}},
        seed=1,
    ).trajectories
    ip = interventional_propagation(a, b, n_resamples=99).table.set_index("action")
    # same seeds and greedy: any difference is caused by the forced upstream value (the prompt changed)
    assert ip.order_sets_coincide.between(0, 1).all() and ip.exact.all()
    same = interventional_propagation(a, a.copy(), n_resamples=99).table
    assert (same.effect == 0).all() and same.p_permutation.isna().all()
    s, n = order_set_coincidence(a, reference=conds[0], comparison=conds[1])
    assert n == len(VS) and 0 <= s <= 1


def test_accumulation_composite_of_aligned_shifts_exceeds_independent_reference():
    rows = []
    for v in range(12):
        for a in ("admit", "icu_escalation", "referral"):
            shift = 1 if v < 6 else 0  # the same six vignettes shift on every action
            rows += [
                {"vignette": f"v{v}", "condition": "ref", "replicate": 0, "action": a, "value": 0},
                {
                    "vignette": f"v{v}",
                    "condition": "cmp",
                    "replicate": 0,
                    "action": a,
                    "value": shift,
                },
            ]
    acc = accumulation_composite(
        pd.DataFrame(rows), reference="ref", comparison="cmp", n_resamples=500, seed=0
    )
    assert acc.composite == pytest.approx(1.5) and acc.mean_sq_composite == pytest.approx(4.5)
    assert acc.independent_mean_sq < 4.0 and acc.share_null_at_least < 0.05


def test_reader_maps_the_authors_names_from_the_raw_json():
    fx = repo_root() / "tests" / "fixtures" / "fairmedagent_published"
    t = read_published_trajectories(fx).set_index(["vignette", "condition", "replicate", "action"])
    for rep in (1, 2, 3):
        doc = json.loads((fx / f"rep{rep:02d}" / "trajectories.json").read_text())
        for rec in doc["trajectories"]:
            if not rec["complete"]:
                continue
            k = (rec["vignette_id"], rec["condition_id"], rep)
            a = rec["actions"]
            assert t.loc[(*k, "icu_escalation"), "value"] == int(a["reassess"]["escalate_icu"])
            assert t.loc[(*k, "controlled_substance_caution"), "value"] == int(
                a["prescribe"]["cs_caution"]
            )
            assert t.loc[(*k, "high_acuity"), "ordinal"] == a["triage"]["esi_acuity"]
            assert t.loc[(*k, "follow_up_interval"), "ordinal"] == a["document"]["followup_days"]
            assert (
                *k,
                "stigmatizing_language",
            ) not in t.index  # their flags list language avoided: not read
    assert len(t.attrs["exclusions"]) == t.attrs["n_incomplete"]  # every record left out is listed
