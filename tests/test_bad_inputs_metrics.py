"""Bad inputs to fairlib.metrics (audit, group_table, four-fifths, metric functions), fairlib.handbook and
fairlib.plots.

Every case asserts a FairlibInputError whose message names the argument; undefined results assert their reason.
"""

import numpy as np
import pandas as pd
import pytest

import fairlib as fl
import fairlib.metrics as fm
import fairlib.handbook as hb
import fairlib.plots as fp
from fairlib.core import FairlibInputError

Y = np.array([1, 0] * 40)
YH = np.array([1, 1, 0, 0] * 20)
G = np.array(["a"] * 40 + ["b"] * 40)
P = np.linspace(0.01, 0.99, 80)
D = pd.DataFrame({"y": Y, "yhat": YH, "g": G, "h": np.array(["F", "M"] * 40)})
GT = fm.group_table(Y, YH, sensitive_features=G)
GRID = pd.DataFrame(
    {
        "model": ["m", "m"],
        "attribute": ["race", "race"],
        "metric": ["DI", "SPD"],
        "vfr": [0.0, 0.2],
        "dominant_verdict": ["Pass", "Fail"],
    }
)
Q = pd.DataFrame(
    {
        "metric": ["DI"],
        "attribute": ["race"],
        "dominant_verdict": ["Pass"],
        "vfr": [0.0],
        "n_star": [1000],
        "kappa": [0.5],
        "tier": [0],
    }
)


def audit(**kw):
    args = dict(y_true=Y, y_pred=YH, sensitive_features=G) | kw
    return fl.audit(args.pop("y_true"), args.pop("y_pred"), **args)


CASES = [
    # ---- labels -------------------------------------------------------------------------------------
    ("length-mismatch", lambda: audit(y_pred=YH[:-1]), "y_pred"),
    ("three-class-y_true", lambda: audit(y_true=np.r_[Y[:-1], 2]), "y_true"),
    (
        "three-class-with-pos_label",
        lambda: audit(y_true=np.array(["a", "b", "c"] * 26 + ["a", "b"]), pos_label="a"),
        "y_true",
    ),
    (
        "y_pred-other-labels",
        lambda: audit(
            y_true=np.where(Y == 1, "yes", "no"),
            y_pred=np.where(YH == 1, "si", "no"),
            pos_label="yes",
        ),
        "y_pred",
    ),
    (
        "pos_label-absent",
        lambda: audit(
            y_true=np.where(Y == 1, "yes", "no"),
            y_pred=np.where(YH == 1, "yes", "no"),
            pos_label="Y",
        ),
        "pos_label",
    ),
    (
        "string-labels-without-pos_label",
        lambda: audit(y_true=np.where(Y == 1, "yes", "no")),
        "y_true",
    ),
    ("one-two-labels-without-pos_label", lambda: audit(y_true=Y + 1, y_pred=YH + 1), "y_true"),
    ("nan-in-y_true", lambda: audit(y_true=np.r_[Y[:-1], np.nan]), "y_true"),
    (
        "none-in-labels-with-pos_label",
        lambda: audit(y_true=np.array(["yes", None] * 40, dtype=object), pos_label="yes"),
        "y_true",
    ),
    ("y_true-none", lambda: audit(y_true=None), "y_true"),
    ("y_true-2d", lambda: fm.group_table(np.ones((80, 2)), YH, sensitive_features=G), "y_true"),
    # ---- sensitive features -------------------------------------------------------------------------
    ("sf-none", lambda: audit(sensitive_features=None), "sensitive_features"),
    (
        "sf-empty-frame",
        lambda: audit(sensitive_features=pd.DataFrame(index=range(80))),
        "sensitive_features",
    ),
    (
        "sf-duplicated-columns",
        lambda: audit(sensitive_features=pd.DataFrame(np.c_[G, G], columns=["g", "g"])),
        "sensitive_features",
    ),
    ("sf-nan-group", lambda: audit(sensitive_features=np.r_[G[:-1], None]), "sensitive_features"),
    (
        "sf-nan-in-frame",
        lambda: audit(sensitive_features=D[["g"]].assign(h=[np.nan] + ["F"] * 79)),
        "sensitive_features",
    ),
    ("sf-empty-dict", lambda: audit(sensitive_features={}), "sensitive_features"),
    ("sf-name-without-data", lambda: audit(sensitive_features="g"), "sensitive_features"),
    ("sf-wrong-length", lambda: audit(sensitive_features=G[:-3]), "sensitive_features"),
    ("sf-empty", lambda: fm.demographic_parity_difference([], [], sensitive_features=[]), "y_true"),
    # ---- data= and column names ---------------------------------------------------------------------
    ("y_true-name-without-data", lambda: audit(y_true="y"), "y_true"),
    (
        "data-not-a-frame",
        lambda: fl.audit("y", "yhat", sensitive_features="g", data={"y": Y}),
        "data",
    ),
    ("data-empty", lambda: fl.audit("y", "yhat", sensitive_features="g", data=D.iloc[:0]), "data"),
    (
        "data-unknown-y_true",
        lambda: fl.audit("label", "yhat", sensitive_features="g", data=D),
        "y_true",
    ),
    (
        "data-unknown-sf",
        lambda: fl.audit("y", "yhat", sensitive_features="race", data=D),
        "sensitive_features",
    ),
    (
        "data-unknown-sf-list",
        lambda: fl.audit("y", "yhat", sensitive_features=["g", "race"], data=D),
        "sensitive_features",
    ),
    (
        "data-sf-named-twice",
        lambda: fl.audit("y", "yhat", sensitive_features=["g", "g"], data=D),
        "sensitive_features",
    ),
    (
        "data-duplicated-column",
        lambda: fl.audit(
            "y", "yhat", sensitive_features="g", data=pd.concat([D, D[["yhat"]]], axis=1)
        ),
        "y_pred",
    ),
    # ---- pandas indices ------------------------------------------------------------------------------
    (
        "index-other-labels",
        lambda: fl.audit(D.y, D.yhat.set_axis(D.index + 100), sensitive_features=D.g),
        "y_pred",
    ),
    (
        "index-duplicates",
        lambda: fl.audit(D.y, D.yhat.set_axis([0] * 80), sensitive_features=D.g),
        "y_pred",
    ),
    (
        "index-sf-frame",
        lambda: fl.audit(D.y, D.yhat, sensitive_features=D[["g"]].set_axis(D.index + 1)),
        "sensitive_features",
    ),
    (
        "index-y_prob",
        lambda: fl.audit(
            D.y, D.yhat, sensitive_features=D.g, y_prob=pd.Series(P, index=D.index + 7)
        ),
        "y_prob",
    ),
    ("index-count_table-refuses", lambda: fm.count_table(D.y, D.yhat.iloc[::-1], D.g), "y_pred"),
    # ---- numbers --------------------------------------------------------------------------------------
    ("min_support-string", lambda: audit(min_support="30"), "min_support"),
    ("min_support-negative", lambda: audit(min_support=-1), "min_support"),
    ("min_support-float", lambda: audit(min_support=2.5), "min_support"),
    ("n_bins-zero", lambda: audit(y_prob=P, n_bins=0), "n_bins"),
    ("y_prob-above-one", lambda: audit(y_prob=P + 0.5), "y_prob"),
    ("y_prob-strings", lambda: audit(y_prob=np.array(["0.5"] * 80)), "y_prob"),
    (
        "y_prob-nan",
        lambda: fm.calibration_gap(Y, np.r_[P[:-1], np.nan], sensitive_features=G),
        "y_prob",
    ),
    ("weights-negative", lambda: audit(sample_weight=np.r_[-1, np.ones(79)]), "sample_weight"),
    ("weights-strings", lambda: audit(sample_weight=np.array(["1"] * 80)), "sample_weight"),
    ("weights-nan", lambda: audit(sample_weight=np.r_[np.nan, np.ones(79)]), "sample_weight"),
    ("weights-wrong-length", lambda: audit(sample_weight=np.ones(79)), "sample_weight"),
    ("counts-negative", lambda: fm.metric_from_counts("SPD", -np.ones((2, 2, 2))), "counts"),
    ("counts-nan", lambda: fm.metric_from_counts("SPD", np.full((2, 2, 2), np.nan)), "counts"),
    ("counts-shape", lambda: fm.metric_from_counts("SPD", np.ones((2, 3))), "counts"),
    (
        "many-counts-negative",
        lambda: fm.metrics_from_counts(["SPD", "EOD"], -np.ones((2, 2, 2))),
        "counts",
    ),
    ("many-counts-shape", lambda: fm.metrics_from_counts(["SPD"], np.ones((2, 3))), "counts"),
    (
        "many-included-length",
        lambda: fm.metrics_from_counts(["SPD"], np.ones((4, 2, 2)), included=[True, False]),
        "included",
    ),
    (
        "many-metric-unknown",
        lambda: fm.metrics_from_counts(["SPD", "DPR"], np.ones((2, 2, 2))),
        "metric",
    ),
    (
        "counts-included-length",
        lambda: fm.metric_from_counts("DI", np.ones((3, 2, 2)), included=[True]),
        "included",
    ),
    ("rates-counts-negative", lambda: fm.group_rates_from_counts(-np.ones((2, 2, 2))), "counts"),
    (
        "rates-counts-strings",
        lambda: fm.group_rates_from_counts([[["a", "b"], ["c", "d"]]]),
        "counts",
    ),
    (
        "theil-counts-shape",
        lambda: fm.between_group_theil_from_counts(np.ones((3, 2, 3))),
        "counts",
    ),
    ("theil-counts-no-groups", lambda: fm.theil_from_counts(np.ones((2, 2))), "counts"),
    ("calibration-bins-shape", lambda: fm.calibration_from_bins(np.ones((2, 2))), "bins"),
    # ---- metrics, thresholds, options ----------------------------------------------------------------
    ("metric-unknown", lambda: audit(metrics=["DPR"]), "metrics"),
    ("metrics-empty", lambda: audit(metrics=[]), "metrics"),
    ("metrics-duplicated", lambda: audit(metrics=["DI", "DI"]), "metrics"),
    ("metrics-not-a-list", lambda: audit(metrics=3), "metrics"),
    ("cal-without-y_prob", lambda: audit(metrics=["Cal"]), "y_prob"),
    ("threshold-DI-2", lambda: audit(thresholds={"DI": 2}), "thresholds['DI']"),
    ("threshold-SPD-5", lambda: audit(thresholds={"SPD": 5}), "thresholds['SPD']"),
    ("threshold-DI-zero", lambda: audit(thresholds={"DI": 0}), "thresholds['DI']"),
    ("threshold-string", lambda: audit(thresholds={"EOD": "0.1"}), "thresholds['EOD']"),
    ("threshold-nan", lambda: audit(thresholds={"PP": float("nan")}), "thresholds['PP']"),
    ("threshold-unknown-metric", lambda: audit(thresholds={"XYZ": 0.1}), "thresholds"),
    (
        "threshold-unaudited-metric",
        lambda: audit(metrics=["DI"], thresholds={"SPD": 0.1}),
        "thresholds",
    ),
    ("thresholds-not-a-dict", lambda: audit(thresholds=0.8), "thresholds"),
    ("calibration-unknown", lambda: audit(y_prob=P, calibration="mce"), "calibration"),
    (
        "calibration_gap-unknown",
        lambda: fm.calibration_gap(Y, P, sensitive_features=G, calibration="bad"),
        "calibration",
    ),
    ("vfr-not-bool", lambda: audit(vfr="yes"), "vfr"),
    ("vfr-n_resamples-zero", lambda: audit(vfr=True, n_resamples=0), "n_resamples"),
    ("vfr-n_resamples-string", lambda: audit(vfr=True, n_resamples="500"), "n_resamples"),
    ("vfr-resample_size-negative", lambda: audit(vfr=True, resample_size=-4), "resample_size"),
    ("vfr-seed-string", lambda: audit(vfr=True, seed="abc"), "seed"),
    ("vfr-with-weights", lambda: audit(vfr=True, sample_weight=np.ones(80)), "sample_weight"),
    (
        "four-fifths-threshold-2",
        lambda: fl.four_fifths_rule(Y, YH, sensitive_features=G, threshold=2),
        "threshold",
    ),
    (
        "four-fifths-threshold-0",
        lambda: fl.four_fifths_rule(Y, YH, sensitive_features=G, threshold=0),
        "threshold",
    ),
    (
        "four-fifths-threshold-string",
        lambda: fl.four_fifths_rule(Y, YH, sensitive_features=G, threshold="0.8"),
        "threshold",
    ),
    ("result-value-unaudited", lambda: audit(metrics=["DI"]).value("SPD"), "metric"),
    ("result-difference-unknown-rate", lambda: audit().difference("AUC"), "rate"),
    ("result-from-json-garbage", lambda: fl.AuditResult.from_json("{not json"), "s"),
    (
        "result-from-json-other-class",
        lambda: fl.AuditResult.from_json(
            fl.four_fifths_rule(Y, YH, sensitive_features=G).to_json()
        ),
        "s",
    ),
    # ---- handbook ---------------------------------------------------------------------------------------
    ("handbook-n-negative", lambda: hb.biased_classifier_example(n=-4), "n"),
    ("handbook-n-string", lambda: hb.biased_classifier_example(n="100"), "n"),
    ("handbook-seed-float", lambda: hb.biased_classifier_example(seed=1.5), "seed"),
    ("sweep-one-rate", lambda: hb.impossibility_sweep((0.3,)), "base_rates"),
    ("sweep-rate-zero", lambda: hb.impossibility_sweep((0.0, 0.5)), "base_rates"),
    ("sweep-rate-strings", lambda: hb.impossibility_sweep(("a", "b")), "base_rates"),
    ("sweep-n_scores-one", lambda: hb.impossibility_sweep(n_scores=1), "n_scores"),
    (
        "sweep-thresholds-out-of-range",
        lambda: hb.impossibility_sweep(thresholds=[0.2, 2.0]),
        "thresholds",
    ),
    (
        "sweep-concentration-negative",
        lambda: hb.impossibility_sweep(concentration=-1),
        "concentration",
    ),
    (
        "sweep-min_selection-too-big",
        lambda: hb.impossibility_sweep(min_selection=0.9),
        "min_selection",
    ),
    ("intersection-n-zero", lambda: hb.intersectional_example(n=0), "n"),
    ("intersection-old_share", lambda: hb.intersectional_example(old_share=1.5), "old_share"),
    (
        "intersection-rate-2",
        lambda: hb.intersectional_example(rates={("A", "F"): 2.0, ("B", "M"): 0.1}),
        "rates[('A', 'F')]",
    ),
    ("intersection-rates-not-dict", lambda: hb.intersectional_example(rates="x"), "rates"),
    # ---- plots ------------------------------------------------------------------------------------------
    ("plot-source-empty", lambda: fp.group_rates(GT, source=""), "source"),
    ("plot-data-string", lambda: fp.group_rates("table", source="s"), "data"),
    (
        "plot-data-not-a-group-table",
        lambda: fp.group_rates(pd.DataFrame({"x": [1]}), source="s"),
        "data",
    ),
    ("plot-rates-unknown", lambda: fp.rate_intervals(GT, rates=["AUC"]), "rates"),
    ("plot-rates-empty", lambda: fp.rate_intervals(GT, rates=[]), "rates"),
    ("plot-method-unknown", lambda: fp.rate_intervals(GT, method="exact"), "method"),
    (
        "plot-confidence_level",
        lambda: fp.rate_intervals(GT, confidence_level=1.5),
        "confidence_level",
    ),
    (
        "plot-bootstrap-n_resamples",
        lambda: fp.rate_intervals(GT, method="bootstrap", n_resamples=0),
        "n_resamples",
    ),
    (
        "heatmap-missing-column",
        lambda: fp.vfr_heatmap(GRID.drop(columns="vfr"), source="s"),
        "grid",
    ),
    ("heatmap-empty", lambda: fp.vfr_heatmap(GRID.iloc[:0], source="s"), "grid"),
    ("heatmap-not-a-frame", lambda: fp.vfr_heatmap([1, 2], source="s"), "grid"),
    (
        "heatmap-duplicate-cells",
        lambda: fp.vfr_heatmap(pd.concat([GRID, GRID]), source="s"),
        "grid",
    ),
    ("heatmap-tau", lambda: fp.vfr_heatmap(GRID, source="s", tau_vfr=2), "tau_vfr"),
    (
        "quintuple-missing-column",
        lambda: fp.quintuple_chart(Q.drop(columns="kappa"), source="s"),
        "cells",
    ),
    (
        "quintuple-renamed-column-absent",
        lambda: fp.quintuple_chart(Q, source="s", n_star="N_star"),
        "cells",
    ),
    ("quintuple-n_field", lambda: fp.quintuple_chart(Q, source="s", n_field=-1), "n_field"),
    ("quintuple-kappa_min", lambda: fp.quintuple_chart(Q, source="s", kappa_min=3), "kappa_min"),
]


@pytest.mark.parametrize("call, argument", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(FairlibInputError) as e:
        call()
    assert e.value.argument == argument, str(e.value)
    assert f"`{argument}`" in str(e.value)


def test_enough_distinct_cases():
    assert len({c[0] for c in CASES}) == len(CASES) >= 35


# ---- undefined results carry their reason and never pass -------------------------------------------------


def test_tpr_undefined_with_reason():
    v = fm.equal_opportunity_difference([1, 0] * 20 + [0] * 40, [1, 1] * 40, sensitive_features=G)
    assert np.isnan(v) and "TPR undefined for group(s) ['b']" in v.reason


def test_single_group_undefined():
    r = fl.audit(Y, YH, sensitive_features=["a"] * 80)
    assert set(r.verdicts.values()) == {"Undefined"} and r.passed is None
    assert r.to_frame().reason.str.contains("at least two groups").all()


def test_no_predicted_positive_undefined_di_and_pp():
    r = fl.audit(Y, np.zeros(80, int), sensitive_features=G).to_frame().set_index("metric")
    assert (
        np.isnan(r.loc["DI", "value"])
        and "0/0" in r.loc["DI", "reason"]
        and r.loc["DI", "verdict"] == "Undefined"
    )
    assert "PPV undefined" in r.loc["PP", "reason"]


def test_four_fifths_undefined_is_not_a_pass():
    v = fl.four_fifths_rule(Y, np.zeros(80, int), sensitive_features=G)
    assert v.passed is None and not v and "0/0" in v.reason


def test_small_excluded_group_is_named_with_its_size_in_reason():
    "Interactive: the caller sees their own count (files written from real data mask it, see test_suppression)."
    r = fl.audit(Y[:45], YH[:45], sensitive_features=["a"] * 40 + ["b"] * 5)
    reason = r.to_frame().reason.iloc[0]
    assert "b (n=5)" in reason
    assert r.excluded == {"b": 5}
