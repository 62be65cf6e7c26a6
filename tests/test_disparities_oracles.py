"""Reference-group disparities, error-rate parities, difference() / ratio() and custom metrics on UCI Adult and COMPAS
against independent oracles, to 1e-12: Aequitas's definitions computed here from the raw records, Aequitas's own
Group / Bias tables (tests/fixtures/aequitas_reference.json, written by benchmarks/compare_aequitas_fairlearn.py with
Aequitas 1.1.0 in its own venv, since Aequitas needs pandas<3), fairlearn's MetricFrame, and statsmodels' intervals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairlib as fl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compare_aequitas_fairlearn import (
    ATTRS,
    DISPARITIES,
    RATES,
    compare_aequitas,
    compare_fairlearn,
    datasets,
)  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "aequitas_reference.json"
TOL = 1e-12


@pytest.fixture(scope="module")
def data():
    return datasets()


def _by_hand(df: pd.DataFrame, attr: str) -> pd.DataFrame:
    "Aequitas's group rates from the records: tp, fp, fn, tn counted per group, then its ratios."
    y, p, g = df.y.to_numpy(), df.y_pred.to_numpy(), df[attr].to_numpy()
    rows = {}
    for v in sorted(set(g)):
        m = g == v
        tp, fp = int(((p == 1) & (y == 1) & m).sum()), int(((p == 1) & (y == 0) & m).sum())
        fn, tn = int(((p == 0) & (y == 1) & m).sum()), int(((p == 0) & (y == 0) & m).sum())
        div = lambda a, b: a / b if b else np.nan
        rows[v] = dict(
            tpr=div(tp, tp + fn),
            tnr=div(tn, tn + fp),
            fpr=div(fp, fp + tn),
            fnr=div(fn, fn + tp),
            precision=div(tp, tp + fp),
            npv=div(tn, tn + fn),
            fdr=div(fp, fp + tp),
            **{"for": div(fn, fn + tn)},
            pprev=div(tp + fp, m.sum()),
            prev=div(tp + fn, m.sum()),
            accuracy=div(tp + tn, m.sum()),
            size=int(m.sum()),
        )
    return pd.DataFrame(rows).T


@pytest.mark.parametrize("name", ["UCI Adult", "COMPAS"])
def test_disparities_equal_aequitas_definitions_from_the_records(data, name):
    df, ref = data[name]
    for given in (None, ref):
        res = fl.audit(
            "y", "y_pred", sensitive_features=list(ATTRS), data=df, min_support=0, reference=given
        )
        d = res.disparities()
        for a in ATTRS:
            t = _by_hand(df, a)
            r = (
                given[a] if given else t["size"].astype(int).idxmax()
            )  # Aequitas's "maj": the largest group
            assert res.reference[a]["group"] == r
            for aq in DISPARITIES:
                rate = RATES[aq]
                for grp in t.index:
                    row = d[(d.view == a) & (d.group == grp) & (d.metric == rate)].iloc[0]
                    want_v, want_r = float(t.loc[grp, aq]), float(t.loc[r, aq])
                    assert row.value == pytest.approx(want_v, abs=TOL, nan_ok=True)
                    assert row.reference_value == pytest.approx(want_r, abs=TOL, nan_ok=True)
                    ratio = want_v / want_r if want_r else np.nan
                    assert row.ratio == pytest.approx(ratio, abs=TOL, nan_ok=True), (a, grp, rate)
                    assert row.difference == pytest.approx(want_v - want_r, abs=TOL, nan_ok=True)
        for metric, aq in (("FNRP", "fnr"), ("FORP", "for"), ("FDRP", "fdr")):
            for a in ATTRS:
                v = _by_hand(df, a)[aq].astype(float)
                assert res.value(metric, view=a) == pytest.approx(v.min() / v.max(), abs=TOL)


@pytest.mark.parametrize("name", ["UCI Adult", "COMPAS"])
def test_disparities_equal_aequitas_own_tables(data, name):
    "Aequitas's Group and Bias tables, as Aequitas 1.1.0 computed them (the fixture), against fairlib: every number."
    fixture = json.loads(FIXTURE.read_text())
    df, ref = data[name]
    assert fixture[name]["reference"] == ref
    rows = compare_aequitas(name, df, ref, fixture[name])
    assert sum(r["compared"] for r in rows) >= 200
    worst = max(rows, key=lambda r: r["max_abs_diff"])
    assert worst["max_abs_diff"] <= TOL, worst


def test_the_aequitas_comparison_can_fail(data):
    "A negative control: one Aequitas number moved by 1e-9 is caught."
    fixture = json.loads(FIXTURE.read_text())["COMPAS"]
    fixture["given"][0]["fnr_disparity"] += 1e-9
    df, ref = data["COMPAS"]
    rows = compare_aequitas("COMPAS", df, ref, fixture)
    assert max(r["max_abs_diff"] for r in rows) > TOL


@pytest.mark.parametrize("name", ["UCI Adult", "COMPAS"])
def test_difference_ratio_and_custom_metrics_equal_fairlearn(data, name):
    df, _ = data[name]
    rows = compare_fairlearn(name, df)
    assert len(rows) == 10
    worst = max(rows, key=lambda r: r["max_abs_diff"])
    assert worst["max_abs_diff"] <= TOL, worst


def test_intervals_are_statsmodels_on_the_records(data):
    "The difference's Newcombe interval and the ratio's log-adjusted interval, from counts taken from the records."
    from statsmodels.stats.proportion import confint_proportions_2indep

    df, ref = data["COMPAS"]
    res = fl.audit(
        "y", "y_pred", sensitive_features="race", data=df, reference={"race": "Caucasian"}
    )
    d = res.disparities(metrics="FNR").set_index("group")
    r = df[df.race == "Caucasian"]
    k0, n0 = int(((r.y == 1) & (r.y_pred == 0)).sum()), int((r.y == 1).sum())
    for grp in ("African-American", "Hispanic"):
        g = df[df.race == grp]
        k1, n1 = int(((g.y == 1) & (g.y_pred == 0)).sum()), int((g.y == 1).sum())
        lo, hi = confint_proportions_2indep(k1, n1, k0, n0, method="newcomb", compare="diff")
        assert (d.loc[grp, "difference_ci_low"], d.loc[grp, "difference_ci_high"]) == pytest.approx(
            (lo, hi), abs=TOL
        )
        lo, hi = confint_proportions_2indep(k1, n1, k0, n0, method="log-adjusted", compare="ratio")
        assert (d.loc[grp, "ratio_ci_low"], d.loc[grp, "ratio_ci_high"]) == pytest.approx(
            (lo, hi), abs=TOL
        )
        assert d.loc[grp, "ratio_ci_low"] <= d.loc[grp, "ratio"] <= d.loc[grp, "ratio_ci_high"]
    assert tuple(d.loc["Caucasian", ["ratio", "ratio_ci_low", "ratio_ci_high"]]) == (1.0, 1.0, 1.0)
