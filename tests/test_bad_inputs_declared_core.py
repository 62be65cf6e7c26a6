"""Bad and edge inputs to the shared core's public API, now refused by declared constraints (fairlib.constraints).

Each case asserts either a FairlibInputError whose `argument` is the offending parameter, or a NaN result with a
reason where the quantity is undefined. The id's suffix says how the code behaved before the declarations:
`clear` (already a FairlibInputError naming the argument), `legit` (a correct NaN with its reason), `obscure`
(an error that did not name the argument: KeyError, TypeError, AttributeError...), `silent` (no error: a wrong or
meaningless result).
"""

import importlib
import math

import numpy as np
import pandas as pd
import pytest

from fairlib import config as fc
from fairlib import counts as fk
from fairlib import handbook as hb
from fairlib import metrics as fm
from fairlib import plots as fp
from fairlib import published as fpub
from fairlib import records as fr
from fairlib.runner import registry as freg
from fairlib import reliability as frel
from fairlib import tables as ft
from fairlib.runner import writeback as fw
from fairlib.core import FairlibInputError

fa = importlib.import_module("fairlib.audit")  # `fairlib.audit` the attribute is the function

Y = np.array([1, 0] * 40)
YH = np.array([1, 1, 0, 0] * 20)
G = np.array(["a"] * 40 + ["b"] * 40)
P = np.linspace(0.01, 0.99, 80)
CT = fk.count_table(Y, YH, G)
GT = fm.group_table(Y, YH, sensitive_features=G)
VALS = np.r_[np.full(8, 0.05), np.full(2, 0.2)]  # SPD resamples: 8 pass, 2 fail
SPD = fm.demographic_parity_difference
KW = dict(sensitive_features=G)


def _metric(**kw):
    base = dict(name="X", label="x", threshold=0.1, direction="<=")
    return fk.AuditMetric(**{**base, **kw})


def _table(**kw):
    base = dict(groups=CT.groups, codes=CT.codes, counts=CT.counts, support=CT.support)
    return fk.CountTable(**{**base, **kw})


def _summ(values=VALS, **kw):
    return frel.summarise_resamples(values, "SPD", **{"resample_size": 80, **kw})


ERRORS = [
    # fairlib.metrics
    ("metrics-min_support-negative-clear", lambda: SPD(Y, YH, **KW, min_support=-1), "min_support"),
    ("metrics-min_support-float-clear", lambda: SPD(Y, YH, **KW, min_support=2.5), "min_support"),
    ("metrics-min_support-bool-clear", lambda: SPD(Y, YH, **KW, min_support=True), "min_support"),
    (
        "metrics-sample_weight-nan-clear",
        lambda: SPD(Y, YH, **KW, sample_weight=np.r_[np.nan, np.ones(79)]),
        "sample_weight",
    ),
    (
        "metrics-sample_weight-bool-clear",
        lambda: SPD(Y, YH, **KW, sample_weight=np.ones(80, bool)),
        "sample_weight",
    ),
    (
        "metrics-sample_weight-negative-clear",
        lambda: SPD(Y, YH, **KW, sample_weight=-np.ones(80)),
        "sample_weight",
    ),
    (
        "metrics-data-list-clear",
        lambda: SPD("y", "yhat", sensitive_features="g", data=[1, 2]),
        "data",
    ),
    (
        "metrics-data-empty-clear",
        lambda: SPD("y", "yhat", sensitive_features="g", data=pd.DataFrame()),
        "data",
    ),
    ("metrics-y_true-none-clear", lambda: SPD(None, YH, **KW), "y_true"),
    ("metrics-y_pred-scalar-clear", lambda: fm.disparate_impact_ratio(Y, 1, **KW), "y_pred"),
    (
        "metrics-theil-sample_weight-inf-clear",
        lambda: fm.theil_index(Y, YH, sample_weight=np.r_[np.inf, np.ones(79)]),
        "sample_weight",
    ),
    (
        "calgap-y_prob-nan-clear",
        lambda: fm.calibration_gap(Y, np.r_[np.nan, P[1:]], **KW),
        "y_prob",
    ),
    ("calgap-y_prob-bool-clear", lambda: fm.calibration_gap(Y, P > 0.5, **KW), "y_prob"),
    ("calgap-y_prob-above-1-clear", lambda: fm.calibration_gap(Y, P + 0.5, **KW), "y_prob"),
    ("calgap-n_bins-zero-clear", lambda: fm.calibration_gap(Y, P, **KW, n_bins=0), "n_bins"),
    ("calgap-n_bins-float-clear", lambda: fm.calibration_gap(Y, P, **KW, n_bins=2.0), "n_bins"),
    (
        "calgap-calibration-unknown-clear",
        lambda: fm.calibration_gap(Y, P, **KW, calibration="ece"),
        "calibration",
    ),
    ("MetricValue-value-text-obscure", lambda: fm.MetricValue("abc", metric="DI"), "value"),
    ("MetricValue-value-bool-silent", lambda: fm.MetricValue(True, metric="DI"), "value"),
    # fairlib.counts
    (
        "count_table-min_support-negative-clear",
        lambda: fk.count_table(Y, YH, G, min_support=-3),
        "min_support",
    ),
    (
        "count_table-n_bins-zero-clear",
        lambda: fk.count_table(Y, YH, G, y_prob=P, n_bins=0),
        "n_bins",
    ),
    ("count_table-func-int-silent", lambda: fk.count_table(Y, YH, G, func=5), "func"),
    (
        "metric_from_counts-calibration-unknown-silent",
        lambda: fk.metric_from_counts("SPD", CT.counts, calibration="x"),
        "calibration",
    ),
    (
        "metric_from_counts-included-float-silent",
        lambda: fk.metric_from_counts("SPD", CT.counts, included=[1, 0.5]),
        "included",
    ),
    (
        "metric_from_counts-counts-nan-clear",
        lambda: fk.metric_from_counts("SPD", np.full((2, 2, 2), np.nan)),
        "counts",
    ),
    (
        "metrics_from_counts-names-int-obscure",
        lambda: fk.metrics_from_counts(5, CT.counts),
        "names",
    ),
    (
        "calibration_from_bins-nan-clear",
        lambda: fk.calibration_from_bins(np.full((2, 3, 3), np.nan)),
        "bins",
    ),
    ("group_rates_from_counts-text-clear", lambda: fk.group_rates_from_counts("abc"), "counts"),
    ("AuditMetric-direction-typo-silent", lambda: _metric(direction="=>"), "direction"),
    ("AuditMetric-threshold-nan-silent", lambda: _metric(threshold=float("nan")), "threshold"),
    ("AuditMetric-uses_abs-int-silent", lambda: _metric(uses_abs=2), "uses_abs"),
    ("CountTable-min_support-text-silent", lambda: _table(min_support="30"), "min_support"),
    ("CountTable-min_support-negative-silent", lambda: _table(min_support=-1), "min_support"),
    # fairlib.audit and fairlib.tables
    ("audit-vfr-text-clear", lambda: fa.audit(Y, YH, **KW, vfr="yes"), "vfr"),
    (
        "audit-n_resamples-zero-clear",
        lambda: fa.audit(Y, YH, **KW, vfr=True, n_resamples=0),
        "n_resamples",
    ),
    (
        "audit-n_resamples-zero-without-vfr-silent",
        lambda: fa.audit(Y, YH, **KW, n_resamples=0),
        "n_resamples",
    ),
    (
        "audit-seed-negative-clear",
        lambda: fa.audit(Y, YH, **KW, vfr=True, n_resamples=5, seed=-1),
        "seed",
    ),
    (
        "audit-resample_size-zero-clear",
        lambda: fa.audit(Y, YH, **KW, vfr=True, n_resamples=5, resample_size=0),
        "resample_size",
    ),
    ("audit-thresholds-list-clear", lambda: fa.audit(Y, YH, **KW, thresholds=[0.1]), "thresholds"),
    ("audit-metrics-int-clear", lambda: fa.audit(Y, YH, **KW, metrics=5), "metrics"),
    (
        "audit-metrics-unknown-name-obscure",
        lambda: fa.audit(Y, YH, **KW, metrics=["nope"]),
        "metrics",
    ),
    (
        "audit_table-thresholds-unknown-key-obscure",
        lambda: ft.audit_table(Y, YH, **KW, thresholds={"NOPE": 0.1}),
        "thresholds",
    ),
    (
        "audit-calibration-unknown-clear",
        lambda: fa.audit(Y, YH, **KW, calibration="x"),
        "calibration",
    ),
    (
        "four_fifths-threshold-above-1-clear",
        lambda: fa.four_fifths_rule(Y, YH, **KW, threshold=1.5),
        "threshold",
    ),
    (
        "four_fifths-threshold-nan-clear",
        lambda: fa.four_fifths_rule(Y, YH, **KW, threshold=float("nan")),
        "threshold",
    ),
    (
        "four_fifths-threshold-bool-clear",
        lambda: fa.four_fifths_rule(Y, YH, **KW, threshold=True),
        "threshold",
    ),
    (
        "group_table-n_bins-zero-clear",
        lambda: ft.group_table(Y, YH, **KW, y_prob=P, n_bins=0),
        "n_bins",
    ),
    (
        "audit_table-min_support-negative-clear",
        lambda: ft.audit_table(Y, YH, **KW, min_support=-1),
        "min_support",
    ),
    (
        "audit_table-calibration-none-clear",
        lambda: ft.audit_table(Y, YH, **KW, calibration=None),
        "calibration",
    ),
    # fairlib.records and fairlib.reliability
    (
        "audit_data-resample_size-zero-clear",
        lambda: fr.audit_data(Y, YH, G, resample_size=0),
        "resample_size",
    ),
    (
        "audit_data-resample_size-bool-clear",
        lambda: fr.audit_data(Y, YH, G, resample_size=True),
        "resample_size",
    ),
    (
        "audit_data-n_bins-negative-clear",
        lambda: fr.audit_data(Y, YH, G, y_prob=P, n_bins=-2),
        "n_bins",
    ),
    ("summarise-max_undefined-5-silent", lambda: _summ(max_undefined=5), "max_undefined"),
    ("summarise-max_undefined-negative-silent", lambda: _summ(max_undefined=-0.1), "max_undefined"),
    ("summarise-values-bool-silent", lambda: _summ(values=np.array([True, False] * 5)), "values"),
    ("summarise-values-text-obscure", lambda: _summ(values=["a", "b"]), "values"),
    ("summarise-resample_size-zero-silent", lambda: _summ(resample_size=0), "resample_size"),
    ("summarise-resample_size-float-silent", lambda: _summ(resample_size=12.7), "resample_size"),
    ("summarise-value-bool-silent", lambda: _summ(value=True), "value"),
    ("summarise-method-unknown-silent", lambda: _summ(method="bogus"), "method"),
    (
        "summarise-confidence_level-1.5-clear",
        lambda: _summ(confidence_level=1.5),
        "confidence_level",
    ),
    ("summarise-values-empty-clear", lambda: _summ(values=[]), "values"),
    (
        "summarise-metric-int-clear",
        lambda: frel.summarise_resamples(VALS, 3, resample_size=80),
        "metric",
    ),
    (
        "vfr-n_resamples-zero-clear",
        lambda: frel.verdict_flip_rate(Y, YH, **KW, metric="SPD", n_resamples=0),
        "n_resamples",
    ),
    (
        "vfr-method-unknown-clear",
        lambda: frel.verdict_flip_rate(Y, YH, **KW, metric="SPD", method="x"),
        "method",
    ),
    (
        "vfr-confidence_level-zero-clear",
        lambda: frel.verdict_flip_rate(
            Y, YH, **KW, metric="SPD", n_resamples=5, confidence_level=0
        ),
        "confidence_level",
    ),
    (
        "vfr-seed-text-clear",
        lambda: frel.verdict_flip_rate(Y, YH, **KW, metric="SPD", n_resamples=5, seed="x"),
        "seed",
    ),
    # fairlib.handbook, fairlib.plots, fairlib.published
    ("biased_example-n-zero-clear", lambda: hb.biased_classifier_example(n=0), "n"),
    (
        "intersectional-old_share-1.5-clear",
        lambda: hb.intersectional_example(old_share=1.5),
        "old_share",
    ),
    (
        "intersectional-old_share-nan-clear",
        lambda: hb.intersectional_example(old_share=float("nan")),
        "old_share",
    ),
    (
        "sweep-concentration-negative-clear",
        lambda: hb.impossibility_sweep(concentration=-1.0),
        "concentration",
    ),
    (
        "sweep-min_selection-2-clear",
        lambda: hb.impossibility_sweep(min_selection=2.0),
        "min_selection",
    ),
    ("rate_intervals-method-unknown-clear", lambda: fp.rate_intervals(GT, method="x"), "method"),
    (
        "rate_intervals-confidence_level-1-clear",
        lambda: fp.rate_intervals(GT, confidence_level=1.0),
        "confidence_level",
    ),
    (
        "rate_intervals-n_resamples-zero-clear",
        lambda: fp.rate_intervals(GT, method="bootstrap", n_resamples=0),
        "n_resamples",
    ),
    ("rate_intervals-data-list-clear", lambda: fp.rate_intervals([1, 2]), "data"),
    ("published_values-paper-unknown-clear", lambda: fpub.published_values("nope"), "paper"),
    ("published_value-id-int-clear", lambda: fpub.published_value("vfr", 5), "id"),
    ("published_table-table-none-clear", lambda: fpub.published_table("vfr", None), "table"),
    # fairlib.config, fairlib.runner.registry, fairlib.runner.writeback
    ("user_dir-kind-unknown-obscure", lambda: fc.user_dir("tmp"), "kind"),
    ("get_setting-key-int-clear", lambda: fc.get_setting(5), "key"),
    ("load_profile-empty-clear", lambda: freg.load_profile(""), "profile"),
    ("load_registry-path-int-obscure", lambda: freg.load_registry(5), "path"),
    ("load_paper_meta-path-empty-silent", lambda: freg.load_paper_meta(""), "path"),
    ("write_back-job-text-obscure", lambda: fw.write_back_notebook("x"), "job"),
    (
        "write_back-job-missing-keys-obscure",
        lambda: fw.write_back_notebook({"input": "a.ipynb"}),
        "job",
    ),
    (
        "write_back-cfg-list-obscure",
        lambda: fw.write_back_notebook({"input": "a", "output": "b"}, cfg=[1]),
        "cfg",
    ),
]


@pytest.mark.parametrize("call, argument", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_refused_naming_the_argument(call, argument):
    with pytest.raises(FairlibInputError) as e:
        call()
    assert e.value.argument == argument, str(e.value)
    assert f"`{argument}`" in str(e.value)


NAN_CASES = [
    (
        "metrics-one-group-left-legit",
        lambda: SPD(Y, YH, sensitive_features=G, min_support=41),
        "at least two groups",
    ),
    (
        "metrics-no-positives-in-a-group-legit",
        lambda: fm.equal_opportunity_difference(np.r_[np.zeros(40, int), Y[40:]], YH, **KW),
        "TPR undefined",
    ),
    (
        "four_fifths-all-excluded-legit",
        lambda: fa.four_fifths_rule(Y, YH, **KW, min_support=100).ratio,
        "two groups",
    ),
    (
        "summarise-all-undefined-legit",
        lambda: _summ(values=np.full(10, np.nan)),
        "no defined resample",
    ),
    ("summarise-point-undefined-legit", lambda: _summ(value=float("nan")), "point estimate"),
]


@pytest.mark.parametrize("call, reason", [c[1:] for c in NAN_CASES], ids=[c[0] for c in NAN_CASES])
def test_undefined_is_nan_with_reason(call, reason):
    out = call()
    if isinstance(out, frel.VFRResult):
        assert math.isnan(out.vfr) and out.dominant_verdict == "Undefined" and not out.stable
        assert reason in out.reason
    elif isinstance(out, fm.MetricValue):
        assert math.isnan(out) and reason in out.reason
    else:  # four-fifths: the ratio alone
        v = fa.four_fifths_rule(Y, YH, **KW, min_support=100)
        assert math.isnan(v.ratio) and v.passed is None and reason in v.reason


def test_valid_calls_still_work():
    "The declarations refuse what is wrong, not what is right: a worked example per module."
    assert SPD(Y, YH, **KW) == pytest.approx(0.0)  # both groups select half of their records
    assert fk.metric_from_counts(
        "SPD", CT.counts, included=np.array([True, True])
    ) == pytest.approx(0.0)
    r = _summ()
    assert r.vfr == pytest.approx(0.2) and r.dominant_verdict == "Pass" and r.auditable
    assert _metric(direction=">=").passes(0.2)
    assert fc.user_dir("cache").name == "fairlib"
