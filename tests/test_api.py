"""The public API: `import fairlib as fl`, `fl.audit` and its result, input handling, and the figures of
fairlib.plots."""

import io
import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import fairlib as fl
from fairlib.core import FairlibInputError

warnings.filterwarnings("ignore", category=DeprecationWarning)
import fairlearn.metrics as flm  # noqa: E402

HEAVY = ("torch", "transformers", "xgboost", "lightgbm", "catboost")


def cohort(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C", "D"], n, p=[0.5, 0.3, 0.19, 0.01])
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    p = np.clip(
        0.3 + 0.4 * y + 0.08 * (race == "B") - 0.05 * (sex == "F") + 0.2 * rng.standard_normal(n),
        0,
        1,
    )
    return pd.DataFrame({"race": race, "sex": sex, "y": y, "yhat": (p > 0.5).astype(int), "p": p})


# ---- the namespace ---------------------------------------------------------------------------------


def test_import_fairlib_is_light():
    code = (
        "import sys, fairlib as fl; fl.audit; fl.four_fifths_rule; fl.group_table; fl.AuditResult; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_lazy_attributes_and_subpackages():
    assert callable(fl.audit) and callable(fl.four_fifths_rule) and callable(fl.group_table)
    from fairlib.reliability import verdict_flip_rate, VFRResult

    assert fl.verdict_flip_rate is verdict_flip_rate and fl.VFRResult is VFRResult
    import fairlib.vfr, fairlib.agent, fairlib.data, fairlib.plots, fairlib.mfarm

    assert fl.vfr is fairlib.vfr and fl.agent is fairlib.agent and fl.data is fairlib.data
    assert fl.plots is fairlib.plots and fl.mfarm is fairlib.mfarm
    assert {"audit", "vfr", "plots", "verdict_flip_rate"} <= set(dir(fl))
    with pytest.raises(AttributeError):
        fl.no_such_thing
    assert isinstance(fl.__version__, str)


def test_lazy_vfr_does_not_import_heavy_modules():
    code = (
        "import sys, fairlib as fl; fl.verdict_flip_rate; fl.plots; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# ---- fl.audit against fairlearn ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_audit_matches_fairlearn_on_intersections(seed):
    d = cohort(seed)
    d = d[d.race != "D"].reset_index(
        drop=True
    )  # D x sex cells are tiny: fairlib says undefined where fairlearn says 0
    res = fl.audit(d.y, d.yhat, sensitive_features=d[["race", "sex"]], min_support=0)
    kw = dict(sensitive_features=d[["race", "sex"]])
    assert res.value("SPD") == pytest.approx(
        flm.demographic_parity_difference(d.y, d.yhat, **kw), abs=1e-12
    )
    assert res.value("DI") == pytest.approx(
        flm.demographic_parity_ratio(d.y, d.yhat, **kw), abs=1e-12
    )
    assert res.value("EOD") == pytest.approx(
        flm.equalized_odds_difference(d.y, d.yhat, **kw), abs=1e-12
    )
    mf = flm.MetricFrame(
        metrics={"selection_rate": flm.selection_rate, "count": flm.count},
        y_true=d.y,
        y_pred=d.yhat,
        **kw,
    )
    bg = res.by_group
    for key, row in mf.by_group.iterrows():
        assert bg.loc[key, "selection_rate"] == pytest.approx(row.selection_rate, abs=1e-12)
        assert bg.loc[key, "support"] == row["count"]
    assert res.difference("selection_rate") == pytest.approx(
        mf.difference()["selection_rate"], abs=1e-12
    )
    assert res.ratio("selection_rate") == pytest.approx(mf.ratio()["selection_rate"], abs=1e-12)
    assert res.group_min("selection_rate") == pytest.approx(
        mf.group_min()["selection_rate"], abs=1e-12
    )
    assert res.group_max("selection_rate") == pytest.approx(
        mf.group_max()["selection_rate"], abs=1e-12
    )
    assert res.overall["selection_rate"] == pytest.approx(d.yhat.mean(), abs=1e-12)


def test_audit_equals_audit_table_and_metric_functions():
    d = cohort(1)
    res = fl.audit(d.y, d.yhat, sensitive_features=d.race, y_prob=d.p)
    tab = fl.audit_table(d.y, d.yhat, sensitive_features=d.race, y_prob=d.p)
    pd.testing.assert_frame_equal(
        pd.DataFrame(res.to_frame().drop(columns="view")), tab.drop(columns="excluded")
    )
    assert res.value("PP") == pytest.approx(
        fl.metrics.predictive_parity_difference(d.y, d.yhat, sensitive_features=d.race)
    )
    assert res.value("Cal") == pytest.approx(
        fl.metrics.calibration_gap(d.y, d.p, sensitive_features=d.race)
    )
    assert list(res.to_frame().metric) == list(
        fl.metricdefs.ALL_METRICS
    )  # the seven and the three parities
    assert res.excluded == {"D": int((d.race == "D").sum())}


# ---- the ways of passing inputs give the same audit ---------------------------------------------------


def test_column_names_arrays_series_dicts_agree():
    d = cohort(2)
    base = fl.audit(
        d.y.to_numpy(), d.yhat.to_numpy(), sensitive_features=d.race.to_numpy()
    ).to_frame()
    base = base.drop(
        columns="view"
    )  # the view is named after the attribute: "group" for an unnamed array
    for kw in (
        dict(y_true="y", y_pred="yhat", sensitive_features="race", data=d),
        dict(y_true="y", y_pred="yhat", sensitive_features=["race"], data=d),
        dict(y_true=d.y, y_pred=d.yhat, sensitive_features=d.race),
        dict(y_true=list(d.y), y_pred=list(d.yhat), sensitive_features=list(d.race)),
        dict(y_true=d.y, y_pred=d.yhat, sensitive_features={"race": d.race.to_numpy()}),
    ):
        pd.testing.assert_frame_equal(fl.audit(**kw).to_frame().drop(columns="view"), base)
    two = fl.audit("y", "yhat", sensitive_features=["race", "sex"], data=d).to_frame()
    pd.testing.assert_frame_equal(
        two, fl.audit(d.y, d.yhat, sensitive_features={"race": d.race, "sex": d.sex}).to_frame()
    )


@pytest.mark.parametrize(
    "labels, pos", [(("yes", "no"), "yes"), ((2, 1), 2), ((1, 2), 1), ((True, False), True)]
)
def test_pos_label_equals_zero_one(labels, pos):
    d = cohort(3)
    base = fl.audit(d.y, d.yhat, sensitive_features=d.race).to_frame()
    m = {1: labels[0], 0: labels[1]}
    res = fl.audit(d.y.map(m), d.yhat.map(m), sensitive_features=d.race, pos_label=pos)
    pd.testing.assert_frame_equal(res.to_frame(), base)


def test_pandas_indices_aligned_by_label_never_by_position():
    d = cohort(4)
    base = fl.audit(d.y, d.yhat, sensitive_features=d.race).to_frame()
    shuffled = d.sample(frac=1, random_state=0)
    res = fl.audit(d.y, shuffled.yhat, sensitive_features=shuffled.race)  # same labels, other order
    pd.testing.assert_frame_equal(res.to_frame(), base)
    by_position = fl.audit(
        d.y.to_numpy(), shuffled.yhat.to_numpy(), sensitive_features=shuffled.race.to_numpy()
    )
    assert not np.allclose(
        by_position.to_frame().value, base.value
    )  # pairing by position would be wrong
    with pytest.raises(FairlibInputError) as e:
        fl.audit(d.y, d.yhat.set_axis(d.index + 1), sensitive_features=d.race)
    assert e.value.argument == "y_pred" and "by position" in str(e.value)
    with pytest.raises(FairlibInputError) as e:
        fl.group_table(d.y, d.yhat, sensitive_features=d.race.set_axis(d.index[::-1] + 5))
    assert e.value.argument == "sensitive_features"


def test_thresholds_override():
    d = cohort(5)
    res = fl.audit(d.y, d.yhat, sensitive_features=d.race, thresholds={"DI": 0.5, "SPD": 0.5})
    t = res.to_frame().set_index("metric")
    assert t.loc["DI", "threshold"] == 0.5 and t.loc["DI", "rule"] == "x >= 0.5"
    assert t.loc["DI", "verdict"] == ("Pass" if t.loc["DI", "value"] >= 0.5 else "Fail")
    assert t.loc["EOD", "threshold"] == fl.AUDIT_METRICS["EOD"].threshold


# ---- results that show themselves ------------------------------------------------------------------------


def test_audit_result_json_round_trip_and_display():
    d = cohort(6)
    res = fl.audit("y", "yhat", sensitive_features=["race", "sex"], data=d)
    s = res.to_json()
    json.loads(s)
    back = fl.AuditResult.from_json(s)
    assert isinstance(back.excluded, dict) and back.excluded == res.excluded and back.excluded
    assert all(isinstance(v, int) for v in back.excluded.values())
    pd.testing.assert_frame_equal(back.to_frame(), res.to_frame())
    assert back.by_group.support.tolist() == res.by_group.support.tolist()
    assert back.metrics.value.dtype == np.float64 and back.groups.TPR.dtype == np.float64
    text = str(res)
    assert "per group" in text and "per metric" in text and "excluded groups" in text
    assert (
        "0.0000000" not in text and len(max(text.splitlines(), key=len)) < 140
    )  # rounded, not 16 digits
    html = res._repr_html_()
    assert html.count("<table") == len(res.views) + 1  # a group table per view, and the metrics
    assert res.summary() == text


def test_interactive_excluded_sizes_show_the_users_own_counts():
    """The result holds the caller's own counts; its text report, a document teams share, hides sizes under 11 unless
    asked (issue 35)."""
    d = cohort(7)
    res = fl.audit(d.y, d.yhat, sensitive_features=d.race)
    n_small = int((d.race == "D").sum())
    assert 0 < n_small < 30
    assert res.excluded["D"] == n_small
    assert f"D (n={n_small})" in res.summary(show_small_counts=True)
    tab = fl.audit(d.y[:60], d.yhat[:60], sensitive_features=["a"] * 55 + ["b"] * 5)
    assert "b (n=5)" in tab.metrics.reason.dropna().iloc[0] and "b (n=5)" not in str(tab)


def test_four_fifths_verdict_is_a_result():
    yhat = [1] * 50 + [0] * 50 + [1] * 30 + [0] * 70
    v = fl.four_fifths_rule(None, yhat, sensitive_features=["A"] * 100 + ["B"] * 100)
    assert isinstance(v, fl.Result) and v.passed is False and v.ratio == pytest.approx(0.6)
    assert "FAIL" in str(v) and "<table" in v._repr_html_()
    back = fl.FourFifthsVerdict.from_json(v.to_json())
    assert (
        back.passed is False
        and back.ratio == pytest.approx(0.6)
        and isinstance(back.selection_rates, pd.Series)
    )
    t = v.to_frame()
    assert t.set_index("group").role.to_dict() == {"A": "highest", "B": "lowest"}


def test_metric_value_prints_rounded():
    v = fl.metrics.demographic_parity_difference(
        [1, 0] * 40, [1, 1, 0, 0] * 20, sensitive_features=["a"] * 40 + ["b"] * 40
    )
    assert repr(v).startswith("SPD=") and len(repr(v)) < 20
    assert "included" in v.summary() and "a " in v.summary()
    assert "<table" in v._repr_html_()


# ---- VFR per metric ----------------------------------------------------------------------------------


def test_audit_vfr_matches_verdict_flip_rate():
    d = cohort(8, n=1500)
    res = fl.audit(
        d.y,
        d.yhat,
        sensitive_features=d.race,
        vfr=True,
        n_resamples=200,
        seed=3,
        metrics=["SPD", "PP"],
    )
    t = res.to_frame().set_index("metric")
    from fairlib.core import cell_seed

    codes = pd.factorize(d.race, sort=True)[0]
    for m in ("SPD", "PP"):
        r = fl.verdict_flip_rate(
            d.y.to_numpy(),
            d.yhat.to_numpy(),
            sensitive_features=codes,
            metric=m,
            n_resamples=200,
            resample_size=len(d),
            seed=cell_seed(3, "audit", m),
        )
        assert (
            t.loc[m, "vfr"] == pytest.approx(r.vfr)
            and t.loc[m, "dominant_verdict"] == r.dominant_verdict
        )
    assert res.vfr_settings == dict(n_resamples=200, resample_size=1500, seed=3)
    again = fl.audit(
        d.y,
        d.yhat,
        sensitive_features=d.race,
        vfr=True,
        n_resamples=200,
        seed=3,
        metrics=["SPD", "PP"],
    )
    pd.testing.assert_frame_equal(again.to_frame(), res.to_frame())  # seeded: bit-identical
    assert 0 <= t.vfr.min() and t.vfr.max() <= 0.5


# ---- figures -------------------------------------------------------------------------------------------


def _axes_overlap_footer(fig):
    from fairlib.plots import FOOTER_GID

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    foot = [t for t in fig.texts if t.get_gid() == FOOTER_GID]
    assert len(foot) == 1 and foot[0].get_text().strip()
    fb = foot[0].get_window_extent(r)
    return [ax for ax in fig.axes if ax.get_visible() and fb.overlaps(ax.get_tightbbox(r))]


def _renders(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=60, bbox_inches="tight")
    assert buf.tell() > 1000


def _has_title_and_labels(fig):
    axes = [ax for ax in fig.axes if ax.axison and ax.get_xlabel()]
    assert axes and any(ax.get_title() for ax in fig.axes)
    assert any(ax.get_ylabel() for ax in fig.axes)


@pytest.mark.parametrize("method", ["wilson", "bootstrap"])
def test_group_rates_figure(method):
    from fairlib.plots import group_rates

    d = cohort(9)
    fig = group_rates(
        fl.audit(d.y, d.yhat, sensitive_features=d.race),
        source="Source: synthetic test cohort",
        method=method,
    )
    _renders(fig)
    _has_title_and_labels(fig)
    assert fig.axes[0].get_legend() is not None
    assert _axes_overlap_footer(fig) == []


def test_rate_intervals_against_statsmodels():
    from statsmodels.stats.proportion import proportion_confint
    from fairlib.plots import rate_intervals

    d = cohort(10)
    gt = fl.group_table(d.y, d.yhat, sensitive_features=d.race, min_support=0)
    ri = rate_intervals(gt, rates=["TPR"], confidence_level=0.9).set_index("group")
    for g in gt.index:
        sub = d[(d.race == g) & (d.y == 1)]
        lo, hi = proportion_confint(int(sub.yhat.sum()), len(sub), alpha=0.1, method="wilson")
        assert ri.loc[g, "ci_low"] == pytest.approx(lo) and ri.loc[g, "ci_high"] == pytest.approx(
            hi
        )


def test_vfr_heatmap_from_vfr_grid():
    from fairlib.vfr.figures import vfr_heatmap

    d = cohort(11, n=1200)
    pred = pd.concat(
        [
            d.assign(model=m, y_true=d.y, y_pred=(d.p > t).astype(int))
            for m, t in (("m1", 0.5), ("m2", 0.45))
        ]
    )
    grid = fl.vfr_grid(pred, attributes=["race", "sex"], n_resamples=50, progress=False)
    fig = vfr_heatmap(grid, source="Source: synthetic test cohort (not real patients)")
    _renders(fig)
    _has_title_and_labels(fig)
    leg = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert leg and {"✓", "✗"} <= {t.get_text()[0] for t in leg[0].get_texts()}
    assert _axes_overlap_footer(fig) == []


def test_quintuple_chart_takes_column_names():
    from fairlib.vfr.figures import quintuple_chart

    q = pd.DataFrame(
        {
            "m": ["DI", "SPD", "Theil", "PP"],
            "a": ["race", "sex", "age", "race"],
            "dv": ["Pass", "Fail", "Pass", "Fail"],
            "flip": [0.02, 0.31, 0.0, np.nan],
            "nstar": [2500, np.nan, 1000, 8000],
            "k": [0.8, 0.1, np.nan, 0.5],
            "tr": [
                "Practical-Stability",
                "Catastrophic-Instability",
                "Caution-Required",
                "Undefined",
            ],
        }
    )
    fig = quintuple_chart(
        q,
        source="Source: hand-made cells",
        cell=["m", "a"],
        verdict="dv",
        vfr="flip",
        n_star="nstar",
        kappa="k",
        tier="tr",
    )
    _renders(fig)
    _has_title_and_labels(fig)
    assert any(ax.get_legend() is not None for ax in fig.axes)
    assert _axes_overlap_footer(fig) == []


def test_long_footer_wraps_and_still_clears_the_axes():
    from fairlib.plots import group_rates

    d = cohort(12)
    src = (
        "Source: "
        + "a very long description of a synthetic twin, its seed and its calibration targets; " * 6
    )
    fig = group_rates(fl.group_table(d.y, d.yhat, sensitive_features=d.race), source=src)
    assert _axes_overlap_footer(fig) == []
