"""Bad inputs to the public functions of fairlib.data.texas, fairlib.models and fairlib.vfr.

Each case asserts a FairlibInputError (a ValueError) whose message names the offending argument;
undefined results assert their reason. Never a raw numpy / pandas / sklearn error, never a silent number.
"""

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.data import texas
from fairlib import models, vfr

rng = np.random.default_rng(0)
N = 400
G = rng.choice(["a", "b"], N)
Y = rng.binomial(1, 0.5, N)
YH = rng.binomial(1, 0.5, N)
P = rng.uniform(0, 1, N)
H = rng.integers(0, 30, N)
FRAME = pd.DataFrame(
    dict(
        model="m", y_true=Y, y_pred=YH, y_prob=P, race=G, sex=rng.choice(["F", "M"], N), THCIC_ID=H
    )
)


def _vfr(**kw):
    a = dict(sensitive_features=G, metric="DI", n_resamples=5) | kw
    return vfr.verdict_flip_rate(a.pop("y_true", Y), a.pop("y_pred", YH), **a)


def _axis2(**kw):
    a = dict(sensitive_features=G, metric="DI", sizes=[100], n_resamples=3) | kw
    return vfr.audit_size_sensitivity(a.pop("y_true", Y), a.pop("y_pred", YH), **a)


def _axis3(**kw):
    a = dict(attributes=["race", "sex"], n_folds=5) | kw
    return vfr.cross_hospital_agreement(a.pop("predictions", FRAME.drop(columns="model")), **a)


CASES = [
    # --- verdict_flip_rate
    ("vfr-n_resamples-0", lambda: _vfr(n_resamples=0), "n_resamples"),
    ("vfr-n_resamples-str", lambda: _vfr(n_resamples="500"), "n_resamples"),
    ("vfr-n_resamples-float", lambda: _vfr(n_resamples=2.5), "n_resamples"),
    ("vfr-resample_size-neg", lambda: _vfr(resample_size=-4), "resample_size"),
    ("vfr-resample_size-str", lambda: _vfr(resample_size="10000"), "resample_size"),
    ("vfr-min_support-neg", lambda: _vfr(min_support=-1), "min_support"),
    ("vfr-seed-str", lambda: _vfr(seed="abc"), "seed"),
    (
        "vfr-seed-neg",
        lambda: vfr.vfr_grid(FRAME, attributes=["race"], n_resamples=5, seed=-3),
        "seed",
    ),
    ("vfr-metric-unknown", lambda: _vfr(metric="DPR"), "metric"),
    ("vfr-method-unknown", lambda: _vfr(method="poisson"), "method"),
    (
        "vfr-calibration-unknown",
        lambda: _vfr(metric="Cal", y_prob=P, calibration="brier"),
        "calibration",
    ),
    ("vfr-cal-needs-prob", lambda: _vfr(metric="Cal"), "y_prob"),
    ("vfr-3-class-label", lambda: _vfr(y_true=np.r_[Y[:-1], 2]), "y_true"),
    ("vfr-nan-label", lambda: _vfr(y_true=np.r_[Y[:-1].astype(float), np.nan]), "y_true"),
    ("vfr-string-pred", lambda: _vfr(y_pred=np.array(["yes"] * N)), "y_pred"),
    ("vfr-prob-out-of-range", lambda: _vfr(metric="Cal", y_prob=np.r_[P[:-1], 1.5]), "y_prob"),
    ("vfr-lengths", lambda: _vfr(y_pred=YH[:10]), "y_pred"),
    (
        "vfr-empty",
        lambda: vfr.verdict_flip_rate([], [], sensitive_features=[], metric="DI"),
        "y_true",
    ),
    ("vfr-sf-missing", lambda: _vfr(sensitive_features=np.r_[G[:-1], None]), "sensitive_features"),
    ("vfr-old-and-new-name", lambda: _vfr(K=5), "K"),
    ("vfr-n_bins-0", lambda: _vfr(metric="Cal", y_prob=P, n_bins=0), "n_bins"),
    # --- summaries
    ("summarise-empty", lambda: vfr.summarise_resamples([], "DI", resample_size=10), "values"),
    ("axis1_summary-not-a-frame", lambda: vfr.axis1_summary([1, 2]), "grid"),
    (
        "axis1_summary-tau",
        lambda: vfr.axis1_summary(
            pd.DataFrame(dict(vfr=[0.1], n_pass=[1], n_defined=[2], verdict=["Pass"])), tau_vfr=0.7
        ),
        "tau_vfr",
    ),
    # --- grids
    ("grid-not-a-frame", lambda: vfr.vfr_grid([1, 2, 3]), "predictions"),
    ("grid-no-model-column", lambda: vfr.vfr_grid(FRAME.drop(columns="model")), "predictions"),
    (
        "grid-missing-attribute",
        lambda: vfr.vfr_grid(FRAME, attributes=["age_bucket"]),
        "predictions",
    ),
    (
        "grid-duplicated-columns",
        lambda: vfr.vfr_grid(pd.concat([FRAME, FRAME[["race"]]], axis=1), attributes=["race"]),
        "predictions",
    ),
    ("grid-attributes-str", lambda: vfr.audit_grid(FRAME, attributes=""), "attributes"),
    (
        "grid-n_jobs-0",
        lambda: vfr.vfr_grid(FRAME, attributes=["race"], n_resamples=5, n_jobs=0),
        "n_jobs",
    ),
    ("grid-empty-dict", lambda: vfr.vfr_grid({}), "predictions"),
    # --- Axis 2
    ("axis2-n_resamples-1", lambda: _axis2(n_resamples=1), "n_resamples"),
    ("axis2-sizes-negative", lambda: _axis2(sizes=[100, -4]), "sizes"),
    ("axis2-sizes-str", lambda: _axis2(sizes="1000"), "sizes"),
    ("axis2-sizes-float", lambda: _axis2(sizes=[2.5]), "sizes"),
    ("axis2-cv_cutoff-0", lambda: _axis2(cv_cutoff=0), "cv_cutoff"),
    ("axis2-cv_cutoff-str", lambda: _axis2(cv_cutoff="0.05"), "cv_cutoff"),
    ("axis2-n_field-0", lambda: _axis2(n_field=0), "n_field"),
    ("axis2-near_zero-neg", lambda: _axis2(near_zero=-1.0), "near_zero"),
    (
        "axis2-grid-n_resamples",
        lambda: vfr.audit_size_grid(FRAME, attributes=["race"], n_resamples=0),
        "n_resamples",
    ),
    # --- Axis 3 and kappa
    ("axis3-not-a-frame", lambda: _axis3(predictions=[1, 2]), "predictions"),
    (
        "axis3-no-hospital",
        lambda: _axis3(predictions=FRAME.drop(columns=["model", "THCIC_ID"])),
        "predictions",
    ),
    ("axis3-too-many-folds", lambda: _axis3(n_folds=100), "n_folds"),
    ("axis3-one-fold", lambda: _axis3(n_folds=1), "n_folds"),
    (
        "axis3-nan-hospital",
        lambda: _axis3(
            predictions=FRAME.drop(columns="model").assign(THCIC_ID=np.r_[H[:-1], np.nan])
        ),
        "hospital",
    ),
    (
        "axis3-two-models",
        lambda: vfr.cross_hospital_agreement(
            pd.concat([FRAME, FRAME.assign(model="m2")]), attributes=["race"], n_folds=5
        ),
        "predictions",
    ),
    ("kappa-negative", lambda: vfr.fleiss_kappa([[3, -1], [2, 2]]), "table"),
    ("kappa-1d", lambda: vfr.fleiss_kappa([3, 1]), "table"),
    ("kappa-fractional", lambda: vfr.fleiss_kappa([[1.5, 2], [2, 2]]), "table"),
    ("kappa-one-category", lambda: vfr.fleiss_kappa([[3], [2]]), "table"),
    # --- tiers and report
    ("tier-vfr-above-half", lambda: vfr.reliability_tier([0.7], [1000], [0.5]), "vfr"),
    ("tier-strings", lambda: vfr.reliability_tier(["high"], [1000], [0.5]), "vfr"),
    ("tier-lengths", lambda: vfr.reliability_tier([0.1, 0.2], [1000], [0.5]), "n_star"),
    ("tier-tau", lambda: vfr.reliability_tier([0.1], [1000], [0.5], tau_vfr=2), "tau_vfr"),
    (
        "tier-degenerate-option",
        lambda: vfr.reliability_tier([0.1], [1000], [0.5], degenerate_kappa="yes"),
        "degenerate_kappa",
    ),
    (
        "table-missing-columns",
        lambda: vfr.reliability_table(pd.DataFrame({"x": [1]}), pd.DataFrame(), pd.DataFrame()),
        "axis1",
    ),
    ("tier_counts-not-table", lambda: vfr.tier_counts(pd.DataFrame({"x": [1]})), "table"),
    ("plot-not-a-grid", lambda: vfr.plot_vfr_heatmap(pd.DataFrame({"x": [1]})), "grid"),
    ("plot-curves", lambda: vfr.plot_cv_curves([1]), "curves"),
    # --- texas
    ("age-nan", lambda: texas.age_bucket_of([3, np.nan, 5]), "codes"),
    ("age-fractional", lambda: texas.age_bucket_of([3.5]), "codes"),
    ("age-out-of-range", lambda: texas.age_bucket_of([22]), "codes"),
    ("age-negative", lambda: texas.age_bucket_of([-1]), "codes"),
    ("age-strings", lambda: texas.age_bucket_of(["old"]), "codes"),
    ("age-scheme", lambda: texas.age_bucket_of([3], scheme="new"), "scheme"),
    ("twin-n-neg", lambda: texas.synthetic_texas100x(-4), "n"),
    ("twin-n-str", lambda: texas.synthetic_texas100x("100"), "n"),
    ("volume-n-zero", lambda: texas.hospital_volume_profile(0), "n"),
    ("load-n-float", lambda: texas.load_cohort("synthetic", n=2.5), "n"),
    ("load-source-int", lambda: texas.load_cohort(5), "source"),
    ("load-source-unknown", lambda: texas.load_cohort("mimic"), "source"),
    ("cohort_table-not-frame", lambda: texas.cohort_table([1, 2]), "cohort"),
    (
        "cohort_table-suppress",
        lambda: texas.cohort_table(
            pd.DataFrame(dict(race=["a"], los_gt3=[1])), attributes=["race"], suppress_below=-4
        ),
        "suppress_below",
    ),
    ("drop_pooled-not-frame", lambda: texas.drop_pooled_hospital("x"), "cohort"),
    (
        "hospital_volume-no-column",
        lambda: texas.hospital_volume(pd.DataFrame({"x": [1]})),
        "cohort",
    ),
    # --- models
    (
        "fit-3-class",
        lambda: models.fit_model("decision_tree", np.zeros((6, 2)), [0, 1, 2, 0, 1, 2]),
        "y",
    ),
    (
        "fit-nan-label",
        lambda: models.fit_model("decision_tree", np.zeros((3, 2)), [0, 1, np.nan]),
        "y",
    ),
    ("fit-one-class", lambda: models.fit_model("decision_tree", np.zeros((3, 2)), [1, 1, 1]), "y"),
    ("fit-length", lambda: models.fit_model("decision_tree", np.zeros((3, 2)), [0, 1]), "y"),
    ("fit-unknown-model", lambda: models.fit_model("svm", np.zeros((2, 2)), [0, 1]), "model"),
    (
        "predictions-threshold-2",
        lambda: models.panel_predictions(
            {"m": None}, np.zeros((1, 1)), FRAME.iloc[:1], threshold=2
        ),
        "threshold",
    ),
    (
        "predictions-threshold-5",
        lambda: models.panel_predictions(
            {"m": None}, np.zeros((1, 1)), FRAME.iloc[:1], threshold=5.0
        ),
        "threshold",
    ),
    (
        "predictions-empty-fitted",
        lambda: models.panel_predictions({}, np.zeros((1, 1)), FRAME.iloc[:1]),
        "fitted",
    ),
    ("feature-set-unknown", lambda: models.feature_columns("all"), "feature_set"),
    ("split-unknown", lambda: models.make_split(Y, "50_50"), "protocol"),
    (
        "cache-key-digest",
        lambda: models.prediction_cache_key(
            "abc", split=None, pipeline=None, train_rows=[], model="xgboost", seed=1
        ),
        "cohort_digest",
    ),
]


@pytest.mark.parametrize("call, argument", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(FairlibInputError) as e:
        call()
    assert f"`{argument}`" in str(e.value), str(e.value)


def test_case_count():
    assert len(CASES) >= 35 and len({c[0] for c in CASES}) == len(CASES)


def test_corrupt_cache_file_is_named(tmp_path):
    f = tmp_path / "xgboost_abc.npz"
    f.write_bytes(b"not a zip file")
    with pytest.raises(
        FairlibInputError, match=r"xgboost_abc\.npz is corrupt.*delete it and rerun"
    ):
        models.load_cached_scores(f)


def test_undefined_results_carry_their_reason():
    one = vfr.verdict_flip_rate(Y, YH, sensitive_features=["a"] * N, metric="SPD", n_resamples=20)
    assert np.isnan(one.vfr) and not one.stable and "undefined" in one.reason
    k = vfr.fleiss_kappa([[5, 0], [5, 0]])
    assert np.isnan(k.kappa) and "degenerate" in k.reason
    t = vfr.reliability_tier([np.nan], [1000], [0.5])
    assert t.tier[0] == "Undefined" and t.tier_reason[0] == "VFR undefined"
    r = vfr.summarise_audit_sizes(
        np.array([[np.nan] * 3, [0.1] * 3]), [100, 400], "SPD", value=np.nan
    )
    assert np.isnan(r.n_star) and "undefined on the full partition" in r.reason
