"""Issue 24, VFR part: silent wrong results in Axis 2 / tiers, the tier table's joins, the pooled hospital code,
empty audit-size grids and the B3 -> B4 movement.

Oracles: SD and CV recomputed with numpy from the subsample values, the qualification rule applied by hand to
the returned curves, hand-built frames whose tiers are known, and movements whose sign per seed is set by
construction.
"""

import re

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.counts import AUDIT_METRICS
from fairlib.vfr.axis2 import CV_CUTOFF, N_FIELD, audit_size_grid, audit_size_sensitivity
from fairlib.vfr.axis2 import summarise_audit_sizes
from fairlib.vfr.axis3 import hospital_folds, landis_koch
from fairlib.vfr.baselines import vfr_movement
from fairlib.vfr.report import audit_report_html
from fairlib.vfr.tiers import reliability_table, reliability_tier, tier_sensitivity

SIZES = [1_000, 5_000, 9_000]


def _near_zero_values(seed=0):
    "SPD values per size (R=30) around 0.001: the SD shrinks below 0.05 x 0.10 at the second size only."
    rng = np.random.default_rng(seed)
    return np.vstack(
        [0.001 + rng.normal(0, 0.02, 30), 0.001 + rng.normal(0, 0.002, 30), np.full(30, 0.001)]
    )


# --- 1. near-zero cells: N* from the SD, not from an uninformative CV ------------------------------------


def test_near_zero_cell_gets_n_star_from_the_sd():
    vals = _near_zero_values()
    r = summarise_audit_sizes(vals, SIZES, "SPD", value=0.001)
    x = np.abs(vals)  # SPD is read in absolute value
    sd, cv = x.std(1, ddof=1), x.std(1, ddof=1) / x.mean(1)
    width = CV_CUTOFF * AUDIT_METRICS["SPD"].threshold
    assert cv[1] > CV_CUTOFF  # the CV rule would never qualify here
    want = next(s for s, d in zip(SIZES[:-1], sd[:-1]) if d < width)
    assert r.near_zero_mean and r.reached and r.n_star == want == 5_000
    assert np.allclose(r.curve.sd, sd) and "SD" in r.reason
    paper = summarise_audit_sizes(vals, SIZES, "SPD", value=0.001, near_zero_rule="paper")
    assert not paper.reached and np.isnan(
        paper.n_star
    )  # the paper's reading stays available by name


def test_zero_metric_with_zero_sd_is_reached_at_the_first_size():
    r = summarise_audit_sizes(np.zeros((3, 30)), SIZES, "SPD", value=0.0)
    assert r.reached and r.n_star == 1_000 and not r.exceeds_field
    assert not summarise_audit_sizes(
        np.zeros((3, 30)), SIZES, "SPD", value=0.0, near_zero_rule="paper"
    ).reached


def test_far_from_zero_cells_keep_the_cv_rule():
    rng = np.random.default_rng(1)
    vals = np.vstack(
        [0.5 + rng.normal(0, 0.004, 30), 0.5 + rng.normal(0, 0.002, 30), np.full(30, 0.5)]
    )
    a = summarise_audit_sizes(vals, SIZES, "SPD", value=0.5)
    b = summarise_audit_sizes(vals, SIZES, "SPD", value=0.5, near_zero_rule="paper")
    assert not a.near_zero_mean and a.n_star == b.n_star == 1_000


def test_bad_near_zero_rule_is_refused():
    with pytest.raises(FairlibInputError, match="`near_zero_rule`"):
        summarise_audit_sizes(np.zeros((3, 30)), SIZES, "SPD", value=0.0, near_zero_rule="cv")


def _constant_panel(n=4000, seed=3):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b"]), n)
    y = rng.binomial(1, 0.5, n)
    yh = rng.binomial(1, np.where(g == "a", 0.7, 0.3))
    return pd.DataFrame(
        dict(
            model=np.repeat(["const", "biased"], n),
            y_true=np.r_[y, y],
            y_pred=np.r_[np.ones(n, int), yh],
            grp=np.r_[g, g],
        )
    )


def test_grid_n_star_is_the_smallest_qualifying_size_and_tiers_agree():
    "Property over every cell: N* = the first size (the first included) whose curve row meets the stated rule."
    cells, curves = audit_size_grid(
        _constant_panel(), attributes=["grp"], sizes=[500, 1500, 3000], return_curves=True
    )
    for _, c in cells.iterrows():
        cur = curves[(curves.model == c.model) & (curves.metric == c.metric)].sort_values("size")
        if c.near_zero_mean:
            ok = cur.sd < CV_CUTOFF * AUDIT_METRICS[c.metric].threshold
        else:
            ok = cur.cv < CV_CUTOFF
        ok = (
            ok & ~cur.degenerate & (cur.n_undefined <= 0.2 * 30)
        )  # the default R and share of undefined
        assert (cur.qualifies == ok).all(), (c.model, c.metric)
        want = cur["size"][ok].min() if ok.any() else np.nan
        assert (c.n_star == want) or (np.isnan(want) and np.isnan(c.n_star)), (c.model, c.metric)
    spd = cells.set_index(["model", "metric"]).loc[("const", "SPD")]
    assert spd.value == 0 and spd.reached and spd.n_star == 500  # SPD exactly 0 with SD 0
    a1 = cells[["model", "metric", "attribute"]].assign(vfr=0.0, dominant_verdict="Pass")
    a3 = cells[["model", "metric"]].drop_duplicates().assign(kappa=0.9)
    t = reliability_table(a1, cells, a3)
    assert (t.n_star_violated == ~(t.n_star <= N_FIELD)).all()
    assert t.set_index(["model", "metric"]).loc[("const", "SPD"), "tier"] == "Practical-Stability"
    assert {"sd", "sd_size"} <= set(t.columns)


def test_report_shows_the_sd_column():
    cells, _ = audit_size_grid(
        _constant_panel(), attributes=["grp"], sizes=[500, 1500], return_curves=True
    )
    a1 = cells[["model", "metric", "attribute"]].assign(vfr=0.0, dominant_verdict="Pass")
    a3 = cells[["model", "metric"]].drop_duplicates().assign(kappa=0.9)
    t = reliability_table(a1, cells, a3)
    html = audit_report_html(t, model="biased")
    assert re.search(r"<th[^>]*>SD of the metric", html)  # a column header (the template scopes it)
    sd = t.set_index(["model", "metric"]).loc[("biased", "SPD"), "sd"]
    assert np.isfinite(sd) and f"{sd:.4f}" in html


# --- 2. reliability_tier refuses impossible inputs -----------------------------------------------------


@pytest.mark.parametrize(
    "kw, argument",
    [
        (dict(kappa=[1.5]), "kappa"),
        (dict(kappa=[-1.2]), "kappa"),
        (dict(n_star=[0]), "n_star"),
        (dict(n_star=[-1000]), "n_star"),
        (dict(n_star=[1000.5]), "n_star"),
        (dict(kappa_degenerate=[True, False]), "kappa_degenerate"),
        (dict(kappa_degenerate=["no"]), "kappa_degenerate"),
    ],
)
def test_reliability_tier_refuses(kw, argument):
    args = dict(vfr=[0.05], n_star=[1000], kappa=[0.5]) | {
        k: v for k, v in kw.items() if k != "kappa_degenerate"
    }
    extra = {k: v for k, v in kw.items() if k == "kappa_degenerate"}
    with pytest.raises(FairlibInputError, match=f"`{argument}`"):
        reliability_tier(args["vfr"], args["n_star"], args["kappa"], **extra)


# --- 3. reliability_table: missing rows are Undefined, duplicated rows are refused --------------------------


def _axes():
    a1 = pd.DataFrame(
        dict(
            model="m",
            metric=["SPD", "DI"],
            attribute="race",
            vfr=[0.0, 0.0],
            dominant_verdict="Pass",
        )
    )
    a2 = pd.DataFrame(
        dict(model="m", metric=["SPD", "DI"], attribute="race", n_star=[1000.0, 1000.0])
    )
    a3 = pd.DataFrame(dict(model="m", metric=["SPD", "DI"], kappa=[0.9, 0.9]))
    return a1, a2, a3


def test_missing_axis2_row_is_undefined_not_caution():
    a1, a2, a3 = _axes()
    t = reliability_table(a1, a2.assign(attribute=["rcae", "race"]), a3).set_index(
        "metric"
    )  # a misspelled key
    assert t.loc["SPD", "tier"] == "Undefined" and "Axis 2" in t.loc["SPD", "tier_reason"]
    assert np.isnan(t.loc["SPD", "violations"])
    assert t.loc["DI", "tier"] == "Practical-Stability"


def test_missing_axis3_row_is_undefined_with_its_reason():
    a1, a2, a3 = _axes()
    t = reliability_table(a1, a2, a3.iloc[1:]).set_index("metric")
    assert t.loc["SPD", "tier"] == "Undefined" and "Axis 3" in t.loc["SPD", "tier_reason"]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_duplicated_rows_are_refused_naming_the_key(which):
    axes = list(_axes())
    axes[which] = pd.concat([axes[which], axes[which].iloc[:1]], ignore_index=True)
    with pytest.raises(FairlibInputError, match=rf"`axis{which + 1}`.*duplicated.*SPD"):
        reliability_table(*axes)


# --- 4. the pooled hospital code and empty size grids ------------------------------------------------------


@pytest.mark.parametrize(
    "ids, code",
    [
        (lambda h: h.astype(str), 999999),  # ids read as text, the default code
        (lambda h: h, "999999"),  # the code given as text
        (lambda h: h.astype(float), " 999999 "),
    ],
)
def test_pooled_code_as_text_is_removed(ids, code):
    h = np.r_[np.full(7, 999999), np.repeat(np.arange(1, 21), 3)]
    fold, n_pooled, n_h = hospital_folds(ids(h), n_folds=5, pooled_code=code)
    assert n_pooled == 7 and n_h == 20 and (fold[:7] == -1).all() and (fold[7:] >= 0).all()


def test_empty_size_grid_is_refused():
    p = _constant_panel()
    f = p[p.model == "biased"]
    with pytest.raises(FairlibInputError, match="`sizes`"):
        audit_size_sensitivity(f.y_true, f.y_pred, sensitive_features=f.grp, metric="SPD", sizes=[])
    with pytest.raises(FairlibInputError, match="`sizes`"):
        audit_size_grid(p, attributes=["grp"], sizes=[])
    with pytest.raises(
        FairlibInputError, match="`sizes`"
    ):  # every size at or above the cohort: nothing to test
        audit_size_grid(p, attributes=["grp"], sizes=[10_000])


# --- 5. the B3 -> B4 movement over seeds ----------------------------------------------------------------


def _movement_grids(n_seeds=6):
    "Age always falls from B3 to B4; race rises in seeds 0, 2, 4 and falls in the others."
    out = {}
    for s in range(n_seeds):
        rows = []
        for m in ("DI", "SPD"):
            rows += [
                dict(model="B3", metric=m, attribute="age_bucket", vfr=0.40 + 0.01 * s),
                dict(model="B4", metric=m, attribute="age_bucket", vfr=0.25 + 0.01 * s),
                dict(model="B3", metric=m, attribute="race", vfr=0.40),
                dict(
                    model="B4",
                    metric=m,
                    attribute="race",
                    vfr=0.40 + (0.05 if s % 2 == 0 else -0.03),
                ),
            ]
        out[s] = pd.DataFrame(rows)
    return out


def test_movement_reports_the_spread_over_seeds():
    grids = _movement_grids()
    mv = vfr_movement(grids).to_frame().set_index(["metric", "attribute"])
    age, race = mv.loc[("DI", "age_bucket")], mv.loc[("DI", "race")]
    assert age.n_seeds == 6 and age.direction == "down" and age.share_down == 1.0
    assert np.isclose(age.change_min, -0.15) and np.isclose(age.change_max, -0.15)
    assert race.direction == "mixed" and race.share_up == 0.5 and race.share_down == 0.5
    assert np.isclose(race.change_min, -0.03) and np.isclose(race.change_max, 0.05)
    long = pd.concat(
        [g.assign(seed=s) for s, g in grids.items()], ignore_index=True
    )  # one frame with a seed column
    pd.testing.assert_frame_equal(vfr_movement(long).to_frame(), vfr_movement(grids).to_frame())


def test_movement_of_one_grid_says_it_is_one_seed():
    mv = vfr_movement(_movement_grids()[0])
    t = mv.to_frame()
    assert (t.n_seeds == 1).all() and "one seed" in " ".join(mv._notes())


def test_tier_sensitivity_keeps_a_missing_row_undefined():
    a1, a2, a3 = _axes()
    t = reliability_table(a1, a2.iloc[1:], a3)
    s = tier_sensitivity(t, taus=(0.05, 0.2))
    assert (s["Undefined"] == 1).all() and (s["Caution-Required"] == 0).all()


# --- the curve summary and the kappa band refuse what they cannot read --------------------------------------


@pytest.mark.parametrize(
    "values, sizes, kw, argument",
    [
        (np.ones((0, 5)), [], {}, "sizes"),
        (np.ones((3, 5)), [10, 20], {}, "values"),  # one row per size
        (np.ones((2, 5)), [20, 10], {}, "sizes"),  # sizes must increase
        (np.ones((2, 5)), [0, 10], {}, "sizes"),
        (np.ones((2, 5)), [10, 20], dict(cv_cutoff=-1), "cv_cutoff"),
        (np.ones((2, 5)), [10, 20], dict(value="high"), "value"),
    ],
)
def test_summarise_audit_sizes_refuses(values, sizes, kw, argument):
    kw = dict(value=0.9) | kw
    with pytest.raises(FairlibInputError, match=f"`{argument}`"):
        summarise_audit_sizes(values, sizes, "DI", **kw)


@pytest.mark.parametrize("kappa", [1.5, -1.01, "high", None])
def test_landis_koch_refuses_what_is_not_a_kappa(kappa):
    with pytest.raises(FairlibInputError, match="`kappa`"):
        landis_koch(kappa)
    assert (
        landis_koch(np.nan) == "undefined"
        and landis_koch(-1) == "poor"
        and landis_koch(1) == "almost perfect"
    )


@pytest.mark.parametrize(
    "ids", [["999999", "12", "999999 "], [999999.0, 12.0, 999999.0]], ids=["text", "float"]
)
def test_drop_pooled_hospital_matches_the_code_as_a_number(ids):
    from fairlib.vfr.cohort import drop_pooled_hospital, hospital_volume

    c = pd.DataFrame({"THCIC_ID": ids, "x": [1, 2, 3]})
    kept, removed = drop_pooled_hospital(c)
    assert removed == 2 and len(kept) == 1
    assert hospital_volume(c)["pooled_999999_records"] == 2
